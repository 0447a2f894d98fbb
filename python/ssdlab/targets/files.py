"""File targets: created at --size by ssdlab, recognised later, never someone else's file.

A file ssdlab created is marked by a sidecar `<file>.ssdlab` holding its inode
and size. A sidecar rather than a user xattr because it works on every
filesystem (vfat, exFAT, some NFS setups have no user xattrs) and a user can see
why ssdlab treats the file as its own. Both must match: filesystems reuse a freed
inode at once, so a file replaced behind ssdlab's back usually keeps the inode
number but not the size.

Links are never written through. The target path may be a link to an existing file
(the file itself is the target, and its marker lies beside it), but a new file is
never created through a link. The marker is read with O_NOFOLLOW and replaced by
renaming a new file over it, so a link or a hard link planted at its name cannot
make ssdlab write another file; a marker that is a link or not a regular file is
refused.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ssdlab.errors import SsdlabError
from ssdlab.targets import Target, TargetKind
from ssdlab.units import format_bytes

_MARKER_BYTES = 4096  # a marker is tens of bytes: a longer file is not one, and is not read whole


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".ssdlab")


def real_path(path: Path) -> Path:
    """The file a target path names, every link resolved: what ssdlab writes and marks."""
    return Path(os.path.realpath(path))


def created_by_ssdlab(path: Path) -> bool:
    """Reads only. SsdlabError when the marker is a link or not a regular file."""
    real = real_path(path)
    marker = _read_marker(sidecar(real))
    try:
        st = real.stat()
        return (marker["inode"], marker["size"]) == (st.st_ino, st.st_size)
    except (OSError, KeyError, TypeError):
        return False


def file_target(spec: str, path: Path, size: int | None, force: bool, reuse: bool) -> Target:
    """The file at `path` (a link is followed to an existing file), created or resized to
    `size` bytes.

    `reuse` (resuming a run) requires the file to be there already.
    """
    refuse_dangling_link(path)
    path = real_path(path)
    if not path.parent.is_dir():
        raise SsdlabError(f"cannot create {path}: the directory {path.parent} does not exist. "
                          f"Create it (`mkdir -p {path.parent}`) or choose another path.")
    if size is not None and size <= 0:
        raise SsdlabError(f"--size must be more than 0 bytes for {path}.")
    if path.exists():
        size = _existing(path, size, force, reuse)
    elif reuse:
        raise SsdlabError(f"the target file {path} is gone: start a new run instead of resuming.")
    elif size is None:
        raise SsdlabError(f"{path} does not exist: pass --size (e.g. --size 64GiB) so ssdlab "
                          "can create it at that size.")
    else:
        create(path, size)
    return Target(spec, TargetKind.FILE, path, size)


def refuse_foreign(path: Path, force: bool, reuse: bool = False) -> None:
    """Refuse an existing file ssdlab did not create, unless --force; a resume (`reuse`)
    has no --force: only the run's own file will do. Reads only."""
    if not path.exists() or created_by_ssdlab(path):
        return
    if reuse:
        raise SsdlabError(f"{path} is no longer the file this run wrote: its marker "
                          f"{sidecar(path)} is missing or does not match it, so it may have been "
                          "replaced. A run resumes only on its own file: start a new run.")
    if not force:
        raise SsdlabError(f"{path} already exists and ssdlab did not create it: the tests would "
                          "overwrite it. Choose a new path, or pass --force to overwrite it.")


def refuse_dangling_link(path: Path) -> None:
    """A link to nothing is refused rather than followed to create a file where it points:
    that place (another disk, a mistyped device) is not what the user named. Reads only."""
    if path.is_symlink() and not path.exists():
        raise SsdlabError(
            f"{path} is a symbolic link to {real_path(path)}, which does not exist: ssdlab "
            "creates a new target file only at a path that is not a link. Give the path to "
            f"create itself, or remove the link (`rm {path}`).")


def create(path: Path, size: int) -> None:
    """A new file of `size` bytes at the real path `path`, fully allocated, marked as ssdlab's."""
    _refuse_unsafe_marker(sidecar(path))  # before the file exists: a refusal leaves nothing
    # O_EXCL: never over an existing file, nor through a link planted at `path`
    with _open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL) as fd:
        try:
            _require_direct_io(path)
            _allocate(fd, path, size)
            _mark(path, os.fstat(fd))
        except BaseException:
            path.unlink()  # ours: O_EXCL made it just now
            raise


def recreate(path: Path, size: int) -> tuple[str, ...]:
    """Purge of a file: every block freed and allocated afresh, as on a new drive.

    The same inode, emptied and reallocated, rather than a new file: the run holds a
    lock on this file (locks.hold_file) that an unlink would leave on an orphan."""
    with _open(path, os.O_RDWR | os.O_NOFOLLOW) as fd:
        try:
            os.ftruncate(fd, 0)
            _allocate(fd, path, size)
        finally:
            _mark(path, os.fstat(fd))  # still ours, at whatever size it has now
    return (f"truncate -s 0 {path}", f"posix_fallocate {path} 0 {size}")


def _existing(path: Path, size: int | None, force: bool, reuse: bool) -> int:
    refuse_foreign(path, force, reuse)  # also refuses an unsafe marker, before anything is resized
    current = path.stat().st_size
    size = current if size is None else size
    if size <= 0:
        raise SsdlabError(f"{path} is empty: pass --size (e.g. --size 64GiB) to set its size.")
    _require_direct_io(path)
    with _open(path, os.O_RDWR | os.O_NOFOLLOW) as fd:
        try:
            if size < current:
                os.ftruncate(fd, size)
            _allocate(fd, path, size)  # also fills any holes, so writes never find the disk full
        finally:
            _mark(path, os.fstat(fd))  # still ours if growing failed half way
    return size


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


def _read_marker(marker: Path) -> dict[str, Any]:
    """The marker's content; empty when there is none or it is not ssdlab's JSON.

    O_NOFOLLOW so a link is refused, not read through; O_NONBLOCK so a FIFO planted
    there cannot hang the open."""
    try:
        fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _unsafe_marker(marker, stat.S_IFLNK) from None
        raise SsdlabError(f"cannot read {marker}: {exc.strerror}.") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _unsafe_marker(marker, mode)
        text = os.read(fd, _MARKER_BYTES)
    finally:
        os.close(fd)
    try:
        content = json.loads(text)
    except ValueError:
        return {}
    return content if isinstance(content, dict) else {}


def _mark(path: Path, st: os.stat_result) -> None:
    """Record that the file `st` describes, at `path`, is ssdlab's.

    Written to a new file (O_EXCL | O_NOFOLLOW: never an existing file, never through a
    link), synced, then renamed over the marker: a rename replaces the name itself, so a
    link or a hard link planted there never leads the write to another file, and a crash
    leaves either the old marker or the new one, never half of one."""
    marker = sidecar(path)
    _refuse_unsafe_marker(marker)
    temporary = marker.with_name(f".{marker.name}.{os.getpid()}.{secrets.token_hex(4)}")
    content = json.dumps({"inode": st.st_ino, "size": st.st_size}) + "\n"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(content)
                f.flush()
                os.fsync(f.fileno())
            os.rename(temporary, marker)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SsdlabError(f"cannot write the marker {marker}: {exc.strerror}.") from exc


def _refuse_unsafe_marker(marker: Path) -> None:
    """Refuse a marker that is a link or not a regular file; reads only."""
    try:
        mode = os.lstat(marker).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise _unsafe_marker(marker, mode)


def _unsafe_marker(marker: Path, mode: int) -> SsdlabError:
    if stat.S_ISLNK(mode):
        return SsdlabError(
            f"{marker} is a symbolic link (to {os.readlink(marker)}), not ssdlab's marker file, "
            "which is always a regular file: ssdlab neither reads nor writes through it. Remove "
            f"the link (`rm {marker}`; what it points to is left alone) and run again.")
    return SsdlabError(f"{marker} is {describe_type(mode)}, not ssdlab's marker file, which is "
                       "always a regular file: ssdlab does not touch it. Remove it (or rename "
                       "it) and run again.")


def describe_type(mode: int) -> str:
    """'a directory', 'a FIFO'... for a message about what a path is."""
    kinds = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
             (stat.S_ISLNK, "a symbolic link"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a special file")


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
