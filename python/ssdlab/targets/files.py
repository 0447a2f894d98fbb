"""File targets: created at --size by ssdlab, recognised later, never someone else's file.

A file ssdlab created is marked by a sidecar `<file>.ssdlab` holding its inode
and size. A sidecar rather than a user xattr because it works on every
filesystem (vfat, exFAT, some NFS setups have no user xattrs) and a user can see
why ssdlab treats the file as its own. Both must match: filesystems reuse a freed
inode at once, so a file replaced behind ssdlab's back usually keeps the inode
number but not the size.
"""

from __future__ import annotations

import errno
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ssdlab.errors import SsdlabError
from ssdlab.targets import Target, TargetKind
from ssdlab.units import format_bytes


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".ssdlab")


def created_by_ssdlab(path: Path) -> bool:
    try:
        marker = json.loads(sidecar(path).read_text())
        st = path.stat()
        return (marker["inode"], marker["size"]) == (st.st_ino, st.st_size)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def file_target(spec: str, path: Path, size: int | None, force: bool, reuse: bool) -> Target:
    """The file at `path`, created or resized to `size` bytes.

    `reuse` (resuming a run) requires the file to be there already.
    """
    if not path.parent.is_dir():
        raise SsdlabError(f"cannot create {path}: the directory {path.parent} does not exist. "
                          f"Create it (`mkdir -p {path.parent}`) or choose another path.")
    if size is not None and size <= 0:
        raise SsdlabError(f"--size must be more than 0 bytes for {path}.")
    if path.exists():
        size = _existing(path, size, force)
    elif reuse:
        raise SsdlabError(f"the target file {path} is gone: start a new run instead of resuming.")
    elif size is None:
        raise SsdlabError(f"{path} does not exist: pass --size (e.g. --size 64GiB) so ssdlab "
                          "can create it at that size.")
    else:
        create(path, size)
    return Target(spec, TargetKind.FILE, path, size)


def refuse_foreign(path: Path, force: bool) -> None:
    """Refuse an existing file ssdlab did not create, unless --force. Reads only."""
    if path.exists() and not created_by_ssdlab(path) and not force:
        raise SsdlabError(f"{path} already exists and ssdlab did not create it: the tests would "
                          "overwrite it. Choose a new path, or pass --force to overwrite it.")


def _existing(path: Path, size: int | None, force: bool) -> int:
    refuse_foreign(path, force)
    current = path.stat().st_size
    size = current if size is None else size
    if size <= 0:
        raise SsdlabError(f"{path} is empty: pass --size (e.g. --size 64GiB) to set its size.")
    _require_direct_io(path)
    try:
        with _open(path, os.O_RDWR) as fd:
            if size < current:
                os.ftruncate(fd, size)
            _allocate(fd, path, size)  # also fills any holes, so writes never find the disk full
    finally:
        _mark(path, path.stat().st_size)  # still ours if growing failed half way
    return size


def create(path: Path, size: int) -> None:
    """A new file of `size` bytes, fully allocated, marked as ssdlab's."""
    with _open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL) as fd:
        try:
            _require_direct_io(path)
            _allocate(fd, path, size)
        except BaseException:
            path.unlink()  # ours: O_EXCL made it just now
            raise
    _mark(path, size)


def recreate(path: Path, size: int) -> tuple[str, ...]:
    """Purge of a file: delete it and allocate it afresh, as a new drive would be."""
    path.unlink()
    create(path, size)
    return (f"unlink {path}", f"posix_fallocate {path} 0 {size}")


def _require_direct_io(path: Path) -> None:
    """fio runs with direct=1, which filesystems without O_DIRECT refuse
    (ramfs; tmpfs before Linux 6.6)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise SsdlabError(f"cannot open {path}: {exc.strerror}.") from exc
        raise SsdlabError(f"the filesystem holding {path} does not support direct I/O (O_DIRECT), "
                          "which the tests need: put the target file on a disk-backed "
                          "filesystem (ext4, xfs, btrfs), not tmpfs or ramfs.") from exc


def _allocate(fd: int, path: Path, size: int) -> None:
    vfs = os.statvfs(path.parent)
    free = vfs.f_bavail * vfs.f_frsize  # before allocating, so the message names what there was
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EFBIG):
            raise SsdlabError(f"cannot allocate {format_bytes(size)} for {path}: "
                              f"{exc.strerror}.") from exc
        raise SsdlabError(
            f"not enough space for {path}: it needs {format_bytes(size)} and its filesystem had "
            f"{format_bytes(free)} free. Choose a smaller --size or another filesystem.") from exc


def _mark(path: Path, size: int) -> None:
    sidecar(path).write_text(json.dumps({"inode": path.stat().st_ino, "size": size}) + "\n")


@contextmanager
def _open(path: Path, flags: int) -> Iterator[int]:
    """os.open that closes on every path and turns errors into a message."""
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise SsdlabError(f"cannot open {path}: {exc.strerror}.") from exc
    try:
        yield fd
    finally:
        os.close(fd)
