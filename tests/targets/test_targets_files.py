"""File targets: created at --size, marked, reused, never someone else's file."""

import json
import os
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import TargetKind
from ssdlab.targets.files import created_by_ssdlab, sidecar
from ssdlab.targets.resolve import resolve
from ssdlab.units import MiB
from tests.loop_devices import loop_device, mounted, require, run


def target(path: Path, size: int | None = None, force: bool = False, reuse: bool = False):
    return resolve(str(path), size=size, force=force, commands=Commands(), reuse=reuse)


def allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def test_new_file_is_created_fully_allocated_and_marked(tmp_path):
    path = tmp_path / "drive.img"
    made = target(path, 8 * MiB)
    assert (made.kind, made.path, made.capacity) == (TargetKind.FILE, path, 8 * MiB)
    assert path.stat().st_size == 8 * MiB and allocated(path) >= 8 * MiB
    assert json.loads(sidecar(path).read_text()) == {"inode": path.stat().st_ino, "size": 8 * MiB}
    assert created_by_ssdlab(path)


def test_new_file_needs_a_size(tmp_path):
    with pytest.raises(SsdlabError, match="does not exist: pass --size"):
        target(tmp_path / "drive.img")
    assert not (tmp_path / "drive.img").exists()


def test_zero_size_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match="--size must be more than 0"):
        target(tmp_path / "drive.img", 0)


def test_foreign_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "photos.tar"
    path.write_bytes(b"precious")
    with pytest.raises(SsdlabError, match="ssdlab did not create it.*--force"):
        target(path, 8 * MiB)
    assert path.read_bytes() == b"precious" and not sidecar(path).exists()


def test_force_adopts_a_foreign_file(tmp_path):
    path = tmp_path / "old.img"
    path.write_bytes(b"x" * 4096)
    made = target(path, 8 * MiB, force=True)
    assert made.capacity == 8 * MiB and path.stat().st_size == 8 * MiB
    assert created_by_ssdlab(path)
    assert target(path).capacity == 8 * MiB  # ours from now on, no --force needed


def test_own_file_is_reused_keeping_its_size_or_resized(tmp_path):
    path = tmp_path / "drive.img"
    target(path, 8 * MiB)
    inode = path.stat().st_ino
    assert target(path).capacity == 8 * MiB
    assert target(path, 12 * MiB).capacity == 12 * MiB
    assert path.stat().st_size == 12 * MiB and allocated(path) >= 12 * MiB
    assert target(path, 4 * MiB).capacity == 4 * MiB and path.stat().st_size == 4 * MiB
    assert path.stat().st_ino == inode
    assert json.loads(sidecar(path).read_text())["size"] == 4 * MiB


def test_a_file_replaced_behind_our_back_is_foreign(tmp_path):
    path = tmp_path / "drive.img"
    target(path, 8 * MiB)
    path.unlink()
    path.write_bytes(b"someone else's")
    with pytest.raises(SsdlabError, match="did not create it"):
        target(path, 8 * MiB)


def test_resume_needs_the_file_to_be_there(tmp_path):
    with pytest.raises(SsdlabError, match="is gone: start a new run"):
        target(tmp_path / "drive.img", 8 * MiB, reuse=True)


@pytest.mark.root
def test_full_filesystem_fails_at_once_naming_the_free_space(tmp_path):
    require("mkfs.ext4", "mount")
    with loop_device(tmp_path / "small.img", 16 * MiB) as device:
        run("mkfs.ext4", "-q", str(device))
        with mounted(device, tmp_path / "mnt") as mnt:
            with pytest.raises(SsdlabError, match=r"not enough space .* needs 64 MiB and its "
                                                  r"filesystem had .*MiB free"):
                target(mnt / "drive.img", 64 * MiB)
            assert not (mnt / "drive.img").exists() and not sidecar(mnt / "drive.img").exists()


def direct_io_refused(directory: Path) -> bool:
    probe = directory / ".ssdlab-probe"
    try:
        os.close(os.open(probe, os.O_RDWR | os.O_CREAT | os.O_DIRECT))
        return False
    except OSError:
        return True
    finally:
        probe.unlink(missing_ok=True)


@pytest.mark.root
def test_tmpfs_without_direct_io_is_refused_clearly(tmp_path):
    """On a tmpfs of its own: the one under /dev is refused before this check
    (test_safety_pseudo_paths.py)."""
    require("mount")
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    try:
        run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt))
    except Exception as exc:
        pytest.skip(f"cannot mount tmpfs here: {exc}")
    try:
        if not direct_io_refused(mnt):
            pytest.skip("tmpfs accepts O_DIRECT here (since Linux 6.6); "
                        "the ramfs test covers the refusal")
        with pytest.raises(SsdlabError, match="put the target file on a disk-backed filesystem"):
            target(mnt / "drive.img", MiB)
        assert list(mnt.iterdir()) == []
    finally:
        run("umount", str(mnt))


@pytest.mark.root
def test_ramfs_without_direct_io_is_refused_clearly(tmp_path):
    require("mount")
    mnt = tmp_path / "ram"
    mnt.mkdir()
    try:
        run("mount", "-t", "ramfs", "ramfs", str(mnt))
    except Exception as exc:
        pytest.skip(f"cannot mount ramfs here: {exc}")
    try:
        with pytest.raises(SsdlabError, match="does not support direct I/O .* put the target file "
                                              "on a disk-backed filesystem"):
            target(mnt / "drive.img", MiB)
        assert list(mnt.iterdir()) == []  # the half-made file is gone
    finally:
        run("umount", str(mnt))
