"""Exclusive holds that the kernel releases when their process dies.

Two things must belong to one process at a time:

- a target: two runs on one file or device contaminate each other's results, and
  the purge of one erases the data the other is measuring;
- a stored run: resuming a run that is still running would run its tests twice.

Both are BSD locks (flock) on a file, taken without waiting: the kernel drops them
when the holder exits, however it exits (SIGKILL and power loss included), so a
dead run never blocks anyone and needs no clean-up. A block device is locked on its
device node (udev's convention too: it leaves a locked disk alone) and is also
opened with O_EXCL, the kernel's own claim, which mount, swapon, mkfs, md and
device-mapper honour: while it is held nothing can start using the device under
the run. Who holds a lock is read from /proc/locks, so a refusal names the process.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import SsdlabError, UnsafeTarget

PROC_LOCKS = Path("/proc/locks")


class DeviceClaimed(UnsafeTarget):
    """The kernel refused the exclusive claim: something else uses the device."""


@dataclass
class Hold:
    """Open descriptors whose locks last as long as they stay open."""

    path: Path
    fds: list[int]

    def release(self) -> None:
        while self.fds:
            os.close(self.fds.pop())

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold_file(path: Path) -> Hold:
    """The target file, for this process only; UnsafeTarget naming the holder if taken."""
    fd = _open(path, os.O_RDONLY | os.O_NOFOLLOW)
    _flock_or_close(fd, path, _target_in_use(path))
    return Hold(path, [fd])


def hold_device(path: Path) -> Hold:
    """The block device: its node locked, then the kernel's exclusive claim.

    DeviceClaimed when the kernel refuses the claim (mounted, swap, RAID/LVM/dm
    member, or opened exclusively by another program)."""
    fd = _open(path, os.O_RDONLY)
    _flock_or_close(fd, path, _target_in_use(path))
    try:
        claim = os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        os.close(fd)
        if exc.errno != errno.EBUSY:
            raise SsdlabError(f"cannot open {path}: {exc.strerror}.") from None
        raise DeviceClaimed(
            f"refusing to write to {path}: the kernel says it is in use (mounted, active swap, "
            "part of a RAID, LVM or device-mapper device, or opened exclusively by another "
            "program such as a partitioning tool). Stop what uses it, or choose another "
            "device. Nothing was written.") from None
    return Hold(path, [fd, claim])


def _target_in_use(path: Path) -> Callable[[str], SsdlabError]:
    return lambda who: UnsafeTarget(
        f"{path} is in use by another run ({who}): two runs on one target spoil both. "
        "Wait for it to finish, or stop it first. Nothing was written.")


def run_lock_path(db: Path, run_id: int) -> Path:
    """Beside the database, so every process using that database finds it."""
    return db.with_name(db.name + ".locks") / f"run-{run_id}.lock"


def hold_run(db: Path, run_id: int) -> Hold:
    """Run `run_id` of database `db`, for this process; SsdlabError naming the holder."""
    path = run_lock_path(db, run_id)
    try:
        path.parent.mkdir(exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise SsdlabError(f"cannot create the run lock {path}: {exc.strerror}; the directory "
                          f"of the database must be writable") from None
    _flock_or_close(fd, path, lambda who: SsdlabError(
        f"run {run_id} is running in {who}: wait for it to finish, or stop it first "
        f"(`kill`); then `ssdlab resume {run_id}` continues it."))
    return Hold(path, [fd])


def run_is_held(db: Path, run_id: int) -> bool:
    """Whether a live process holds run `run_id`; reads only, never takes the lock."""
    return bool(holders(run_lock_path(db, run_id)))


def holders(path: Path) -> list[int]:
    """Process ids holding a BSD lock on `path`, from /proc/locks (empty when none)."""
    try:
        st = os.stat(path, follow_symlinks=False)
        table = PROC_LOCKS.read_text()
    except OSError:
        return []
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found = []
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 8790 00:06:94 0 EOF"; waiters are "1: -> FLOCK ..."
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
            found.append(int(fields[4]))
    return found


def describe_process(pid: int) -> str:
    """'process 1234 (ssdlab run /var/tmp/x.img)', as far as /proc tells."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"process {pid}"
    words = [os.path.basename(argv[0].decode(errors="replace"))] + [
        a.decode(errors="replace") for a in argv[1:] if a]
    command = " ".join(words)
    return f"process {pid} ({command[:117] + '...' if len(command) > 120 else command})"


def _open(path: Path, flags: int) -> int:
    try:
        return os.open(path, flags)
    except OSError as exc:
        raise SsdlabError(f"cannot open {path}: {exc.strerror}.") from None


def _flock_or_close(fd: int, path: Path, refusal: Callable[[str], SsdlabError]) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise SsdlabError(f"cannot lock {path}: {exc.strerror}.") from None
        pids = [p for p in holders(path) if p != os.getpid()]
        who = ", ".join(describe_process(p) for p in pids) or "another process"
        raise refusal(who) from None
