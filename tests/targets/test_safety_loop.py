"""Safety checks, consent and purge on real loop devices (root only).

Each device is detached, and each mount undone, in the fixtures' teardown even
when a test fails (tests/loop_devices.py).
"""

import os
import subprocess
from pathlib import Path

import pytest

from ssdlab.errors import UnsafeTarget
from ssdlab.external import Commands
from ssdlab.targets import TargetKind
from ssdlab.targets.consent import confirm_destroy
from ssdlab.targets.identity import device_identity
from ssdlab.targets.mounts import read_mounts
from ssdlab.targets.purge import purge_device
from ssdlab.targets.resolve import resolve
from ssdlab.targets.safety import check_device
from ssdlab.targets.sysfs import device_from_number, partitions
from ssdlab.units import MiB
from tests.loop_devices import active_swap, loop_device, mounted, reasons, require, run, snapshot

pytestmark = pytest.mark.root


def test_mounted_ext4_device_is_refused_and_its_files_are_untouched(tmp_path):
    require("mkfs.ext4", "mount", "wipefs")
    with loop_device(tmp_path / "disk.img") as device:
        run("mkfs.ext4", "-q", str(device))
        with mounted(device, tmp_path / "mnt") as mnt:
            for i in range(3):
                (mnt / f"file{i}").write_bytes(os.urandom(64 * 1024))
            os.sync()
            before = snapshot(mnt)
            with pytest.raises(UnsafeTarget) as excinfo:
                check_device(device, Commands())
            found = reasons(excinfo)
            assert any(f"{device} is mounted at {mnt} (ext4)" in r for r in found)
            assert any("(ext4)" in r and "signatures" in r for r in found)
            assert snapshot(mnt) == before


def test_partitioned_device_is_refused(tmp_path):
    require("sfdisk", "wipefs")
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(64 * MiB)
    subprocess.run(["sfdisk", "-q", str(image)], input="label: dos\n,16M\n,\n", text=True,
                   check=True, capture_output=True)
    with loop_device(image, partscan=True) as device:
        parts = partitions(device.name)
        if not parts:
            pytest.skip("the kernel did not list the loop device's partitions")
        with pytest.raises(UnsafeTarget) as excinfo:
            check_device(device, Commands())
        found = reasons(excinfo)
        assert any(f"holds partitions ({', '.join(parts)})" in r for r in found)
        assert any("(dos)" in r for r in found)


def test_unmounted_device_with_a_filesystem_is_refused_for_its_signature_alone(tmp_path):
    require("mkfs.ext4", "wipefs")
    with loop_device(tmp_path / "disk.img") as device:
        run("mkfs.ext4", "-q", str(device))
        with pytest.raises(UnsafeTarget) as excinfo:
            check_device(device, Commands())
        [reason] = reasons(excinfo)
        assert "signatures of a filesystem" in reason and "(ext4)" in reason


def test_device_mapper_holder_is_refused(tmp_path):
    require("dmsetup", "wipefs")
    with loop_device(tmp_path / "disk.img") as device:
        name = f"ssdlab-test-{os.getpid()}"
        try:
            run("dmsetup", "create", name, "--table", f"0 {64 * MiB // 512} linear {device} 0")
        except subprocess.CalledProcessError as exc:
            pytest.skip("cannot create a device-mapper device here: "
                        f"{exc.stderr.strip().splitlines()[0]}")
        try:
            with pytest.raises(UnsafeTarget) as excinfo:
                check_device(device, Commands())
            [reason] = reasons(excinfo)
            assert f"({name}), a device-mapper, LVM or RAID device" in reason
        finally:
            subprocess.run(["dmsetup", "remove", name], capture_output=True)


def test_active_swap_is_refused(tmp_path):
    require("wipefs")
    with loop_device(tmp_path / "disk.img") as device, active_swap(device):
        with pytest.raises(UnsafeTarget) as excinfo:
            check_device(device, Commands())
        found = reasons(excinfo)
        assert any(f"{device} is active swap: turn it off (`swapoff {device}`)" in r
                   for r in found)
        assert any("(swap)" in r for r in found)


def test_blank_device_passes_then_consent_then_purge(tmp_path):
    require("wipefs", "blkdiscard")
    with loop_device(tmp_path / "disk.img") as device:
        with open(device, "r+b") as f:  # data, but nothing that looks like a signature
            f.write(b"\xa5" * MiB)
        commands = Commands()
        target = resolve(str(device), size=None, force=False, commands=commands)
        assert (target.kind, target.capacity, target.logical_block_size) == (
            TargetKind.DEVICE, 64 * MiB, 512)
        check_device(device, commands)

        ident = device_identity(device, commands)
        assert (ident["name"], ident["serial"], ident["capacity_bytes"]) == (device.name, None,
                                                                             64 * MiB)
        with pytest.raises(UnsafeTarget, match=f"pass `--destroy-data {device.name}`"):
            confirm_destroy(device, ident, "loop999")
        cleared = confirm_destroy(device, ident, device.name)

        ran = purge_device(cleared, commands)
        assert ran.commands[0] == f"blkdiscard --force {device}"  # util-linux 2.36+ here
        with open(device, "rb") as f:
            assert f.read(MiB) == bytes(MiB)


def test_the_root_device_is_refused():
    require()
    root = next(m for m in reversed(read_mounts()) if m.mount_point == "/")
    name = device_from_number(root.dev)
    if name is None or not Path(f"/dev/{name}").is_block_device():
        pytest.skip(f"/ is not on a block device here ({root.source})")
    with pytest.raises(UnsafeTarget) as excinfo:
        check_device(Path(f"/dev/{name}"), Commands())
    assert any("holds the root filesystem /" in r for r in reasons(excinfo))
