"""Hole 4 of issue 9 on real loop devices (root only): what lies under a loop or
device-mapper device is checked too.

The issue's scenario: an ext4 image mounted through its own loop device, and a second
loop device over part of the same image (`losetup -o 64M --sizelimit 512M`, scaled down
here), had no signature at its start, no holders, no mount, and passed every check.
The fake-sysfs tests of the same logic are in test_safety_stack_sysfs.py.
"""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ssdlab.errors import UnsafeTarget
from ssdlab.external import Commands
from ssdlab.targets.safety import check_device, refusal_reasons
from ssdlab.units import MiB
from tests.loop_devices import active_swap, loop_device, mounted, reasons, require, run, snapshot

pytestmark = pytest.mark.root


@contextmanager
def mounted_ext4_image(image: Path, mount_point: Path) -> Iterator[tuple[Path, Path]]:
    """A 96 MiB ext4 image mounted through its own loop device, with files in it:
    (that loop device, the mount point)."""
    require("mkfs.ext4", "mount", "wipefs")
    with loop_device(image, 96 * MiB) as device:
        run("mkfs.ext4", "-q", str(device))
        with mounted(device, mount_point) as mnt:
            for i in range(3):
                (mnt / f"file{i}").write_bytes(os.urandom(256 * 1024))
            os.sync()
            yield device, mnt


def test_a_loop_window_into_a_mounted_image_is_refused_and_its_files_are_untouched(scratch):
    image = scratch / "disk.img"
    with mounted_ext4_image(image, scratch / "mnt") as (lower, mnt):
        before = snapshot(mnt)
        alias = scratch / "same-file.img"
        os.link(image, alias)  # another name for the same inode: matched by inode, not path
        with loop_device(alias, offset=16 * MiB, sizelimit=32 * MiB) as window:
            with pytest.raises(UnsafeTarget) as excinfo:
                check_device(window, Commands())
            found = reasons(excinfo)
            assert any(f"{alias}, which {window} maps, is also the backing file of {lower}, "
                       f"and {lower} is mounted at {mnt} (ext4)" in r for r in found), found
            assert any(f"{window} maps bytes 16 MiB to 48 MiB of {alias}, which carries "
                       "signatures of a filesystem, RAID/LVM member or partition table (ext4) "
                       "at its start" in r for r in found), found
            assert refusal_reasons(window, Commands()) == [r[4:] for r in found]
        assert snapshot(mnt) == before


def test_a_loop_over_a_plain_file_passes_at_offset_0_and_beyond(scratch):
    require("wipefs")
    image = scratch / "blank.img"
    with loop_device(image, 64 * MiB) as whole:
        assert refusal_reasons(whole, Commands()) == []
        with loop_device(image, offset=16 * MiB, sizelimit=16 * MiB) as window:
            assert refusal_reasons(window, Commands()) == []


def test_a_loop_over_a_deleted_file_is_refused(scratch):
    require("wipefs")
    image = scratch / "gone.img"
    with loop_device(image) as device:
        image.unlink()
        [reason] = refusal_reasons(device, Commands())
        assert reason.startswith(f"the backing file of {device}, {image}, has been deleted")
        assert f"`losetup -d {device}`" in reason


def test_a_loop_over_a_mounted_device_is_refused_and_so_is_that_device(scratch):
    with mounted_ext4_image(scratch / "disk.img", scratch / "mnt") as (lower, mnt):
        before = snapshot(mnt)
        with loop_device(lower, offset=16 * MiB) as upper:
            found = refusal_reasons(upper, Commands())
            assert any(f"{upper} maps {lower}, and {lower} is mounted at {mnt}" in r
                       for r in found), found
            found = refusal_reasons(lower, Commands())
            assert any(f"{lower} is the backing device of {upper}: detach it (`losetup -d "
                       f"{upper}`)" in r for r in found), found
        assert snapshot(mnt) == before


def test_a_loop_window_into_an_image_in_use_as_swap_is_refused(scratch):
    require("wipefs")
    image = scratch / "swap.img"
    with loop_device(image, 64 * MiB) as lower, active_swap(lower):
        with loop_device(image, offset=16 * MiB) as window:
            found = refusal_reasons(window, Commands())
            assert any(f"is also the backing file of {lower}, and {lower} is active swap" in r
                       for r in found), found


def test_a_loop_over_an_active_swap_file_is_refused(scratch):
    require("wipefs", "fallocate")
    swap_file = scratch / "swapfile"
    run("fallocate", "-l", str(32 * MiB), str(swap_file))  # swapon refuses files with holes
    swap_file.chmod(0o600)
    with active_swap(swap_file), loop_device(swap_file) as device:
        found = refusal_reasons(device, Commands())
        assert any(f"{swap_file}, which {device} maps, is active swap: turn it off "
                   f"(`swapoff {swap_file}`)" in r for r in found), found


def test_a_device_mapper_device_over_a_window_into_a_mounted_image_is_refused(scratch):
    require("dmsetup")
    image = scratch / "disk.img"
    with mounted_ext4_image(image, scratch / "mnt") as (lower, mnt):
        with loop_device(image, offset=16 * MiB, sizelimit=32 * MiB) as window:
            name = f"ssdlab-test-{os.getpid()}"
            try:
                run("dmsetup", "create", name, "--table",
                    f"0 {32 * MiB // 512} linear {window} 0")
            except subprocess.CalledProcessError as exc:
                pytest.skip("cannot create a device-mapper device here: "
                            f"{exc.stderr.strip().splitlines()[0]}")
            try:
                found = refusal_reasons(Path(f"/dev/mapper/{name}"), Commands())
                assert any(f"is built on {window}, and {image}, which {window} maps, is also "
                           f"the backing file of {lower}, and {lower} is mounted at {mnt}" in r
                           for r in found), found
            finally:
                subprocess.run(["dmsetup", "remove", name], capture_output=True)


def test_the_image_behind_a_mounted_loop_device_is_refused_as_a_file_target_even_forced(
        tmp_path):
    image = tmp_path / "disk.img"
    with mounted_ext4_image(image, tmp_path / "mnt") as (device, mnt):
        before = snapshot(mnt)
        proc = subprocess.run(
            [sys.executable, "-m", "ssdlab", "run", str(image), "--force", "--scale", "0.01",
             "--tests", "rand-read-burst", "--db", str(tmp_path / "x.db")],
            capture_output=True, text=True)
        said = " ".join(proc.stderr.split())
        assert proc.returncode == UnsafeTarget.exit_code, proc.stderr
        assert f"it is the backing file of {device}" in said and "Traceback" not in said
        dry = subprocess.run([sys.executable, "-m", "ssdlab", "run", str(image), "--force",
                              "--dry-run"], capture_output=True, text=True)
        assert dry.returncode == UnsafeTarget.exit_code, dry.stdout
        assert snapshot(mnt) == before  # (the image's mtime moves: the mount writes it)
