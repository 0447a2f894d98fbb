"""Safety checks on a fake sysfs tree, mountinfo and swaps; wipefs outputs are recordings.

The real thing, on loop devices, is in test_safety_loop.py.
"""

from pathlib import Path

import pytest

from ssdlab.errors import UnsafeTarget
from ssdlab.external import Completed, ReplayCommands
from ssdlab.targets import mounts
from ssdlab.targets.safety import check_device, root_devices
from tests.fake_sysfs import FakeSysfs, mountinfo
from tests.paths import GOLDEN_DEVICES as GOLDEN


def wipefs(device: str, recording: str = "wipefs-blank.json") -> ReplayCommands:
    return ReplayCommands({f"wipefs -n -J {device}": Completed(
        (), 0, (GOLDEN / recording).read_text(), "")})


@pytest.fixture
def host(tmp_path):
    """Root on an LVM volume (dm-0) on nvme0n1p2; a spare disk sdb with two partitions."""
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.disk("nvme0n1", "259:0", 2000)
    sysfs.partition("nvme0n1", "nvme0n1p1", "259:1", 1000)
    sysfs.partition("nvme0n1", "nvme0n1p2", "259:2", 1000)
    sysfs.disk("dm-0", "253:0", 1000, attrs={"dm/name": "vg-root"})
    sysfs.hold("nvme0n1p2", "dm-0")
    sysfs.disk("sdb", "8:16", 4000)
    sysfs.partition("sdb", "sdb1", "8:17", 1000)
    sysfs.partition("sdb", "sdb2", "8:18", 1000)
    sysfs.disk("sdc", "8:32", 4000)
    sysfs.disk("sdd", "8:48", 4000)
    info = mountinfo(tmp_path / "mountinfo", ("253:0", "/", "ext4", "/dev/mapper/vg-root"),
                     ("259:1", "/boot/efi", "vfat", "/dev/nvme0n1p1"))
    swaps = tmp_path / "swaps"
    swaps.write_text("Filename\tType\tSize\tUsed\tPriority\n")
    return sysfs, info, swaps


def check(host, device: str, commands: ReplayCommands) -> None:
    sysfs, info, swaps = host
    check_device(Path(f"/dev/{device}"), commands, sysfs.root, info, swaps)


def reasons(excinfo) -> list[str]:
    return [line for line in str(excinfo.value).splitlines() if line.startswith("  - ")]


def test_a_blank_unused_disk_passes_and_only_wipefs_runs(host):
    commands = wipefs("/dev/sdc")
    check(host, "sdc", commands)
    assert commands.calls == [("wipefs", "-n", "-J", "/dev/sdc")]


def test_every_reason_is_listed_with_what_to_do(host):
    sysfs, info, swaps = host
    info.write_text(info.read_text() + "40 1 8:17 / /data rw - xfs /dev/sdb1 rw\n")
    swaps.write_text(swaps.read_text() + "/dev/sdb2\tpartition\t1000\t0\t-2\n")
    sysfs.disk("md0", "9:0", 1000)
    sysfs.hold("sdb", "md0")
    with pytest.raises(UnsafeTarget) as excinfo:
        check(host, "sdb", wipefs("/dev/sdb", "wipefs-gpt.json"))
    found = reasons(excinfo)
    assert len(found) == 5, found
    mounted, swap, held, partitioned, signed = found  # in use first, then holding data
    assert "/dev/sdb1 is mounted at /data (xfs)" in mounted and "`umount /data`" in mounted
    assert "holds partitions (sdb1, sdb2)" in partitioned
    assert "(PMBR, gpt)" in signed and "`wipefs -a /dev/sdb`" in signed
    assert "/dev/sdb2 is active swap" in swap and "`swapoff /dev/sdb2`" in swap
    assert "held by md0" in held
    assert str(excinfo.value).endswith("Nothing was written.")


def test_holder_names_the_device_mapper_volume(host):
    with pytest.raises(UnsafeTarget) as excinfo:
        check(host, "nvme0n1p2", wipefs("/dev/nvme0n1p2"))
    assert any("held by dm-0 (vg-root)" in r for r in reasons(excinfo))


@pytest.mark.parametrize("device", ["nvme0n1", "nvme0n1p1", "nvme0n1p2", "dm-0"])
def test_the_root_disk_its_partitions_and_the_root_volume_are_refused(host, device):
    with pytest.raises(UnsafeTarget) as excinfo:
        check(host, device, wipefs(f"/dev/{device}"))
    assert any("holds the root filesystem" in r for r in reasons(excinfo))


def test_root_chain_walks_through_device_mapper_to_the_disk(host):
    sysfs, info, _ = host
    assert root_devices(mounts.read_mounts(info), sysfs.root) == {"dm-0", "nvme0n1p2", "nvme0n1"}


def test_mount_with_an_anonymous_device_number_is_found_by_its_source(host):
    _, info, _ = host
    info.write_text(info.read_text() + "41 1 0:45 / /srv rw - btrfs /dev/sdd rw\n")
    with pytest.raises(UnsafeTarget) as excinfo:
        check(host, "sdd", wipefs("/dev/sdd"))
    assert reasons(excinfo) == [
        "  - /dev/sdd is mounted at /srv (btrfs): unmount it (`umount /srv`) "
        "or choose another device"]


def test_a_lone_filesystem_signature_is_refused(host):
    with pytest.raises(UnsafeTarget) as excinfo:
        check(host, "sdc", wipefs("/dev/sdc", "wipefs-ext4.json"))
    [reason] = reasons(excinfo)
    assert "partition table (ext4)" in reason


@pytest.mark.parametrize("commands, expected", [
    (ReplayCommands(), "wipefs is not installed"),
    (ReplayCommands({"wipefs -n -J /dev/sdc": Completed((), 1, "", "wipefs: error: /dev/sdc: "
                                                        "probing initialization failed")}),
     "probing initialization failed"),
])
def test_signatures_that_cannot_be_read_refuse(host, commands, expected):
    with pytest.raises(UnsafeTarget) as excinfo:
        check(host, "sdc", commands)
    [reason] = reasons(excinfo)
    assert expected in reason
