"""TARGET as the user wrote it -> Target: a block device, a file, or `sim:PRESET`."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import Target, TargetKind, files, mounts, safety, sysfs
from ssdlab.targets.sysfs import SYSFS

SIM_PREFIX = "sim:"
# HOST:/dev/NAME: a drive of a fleet, reached on its host (distributed/fleet.py); a local path
# never starts with a host name and a colon
FLEET_TARGET = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9A-Fa-f:.]+\]):(?P<path>/dev/\S+)")

# Where only the kernel makes entries: a file made there lives in memory (devtmpfs, tmpfs
# under /dev) or cannot be made at all, so it tests nothing, and a target that is missing
# there is nearly always a mistyped device or a partition the kernel has not listed yet.
KERNEL_DIRECTORIES = ("/dev", "/proc", "/sys")
PSEUDO_FILESYSTEMS = frozenset({
    "devtmpfs", "proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs",
    "configfs", "pstore", "bpf", "devpts", "mqueue", "hugetlbfs", "efivarfs", "binfmt_misc",
    "fusectl", "autofs", "rpc_pipefs", "nsfs", "selinuxfs"})

FILE_EXAMPLE = "/var/tmp/ssdlab.img --size 64GiB"


def resolve(spec: str, size: int | None, force: bool, commands: Commands,
            reuse: bool = False) -> Target:
    """`size` and `force` apply to file targets (create at `size`; overwrite a foreign
    file only with `force`); `reuse` (resume) requires an existing file.
    `commands` is unused for now; callers pass it so every target step has the same seam."""
    if spec.startswith(SIM_PREFIX):
        if not spec[len(SIM_PREFIX):]:
            raise SsdlabError("`sim:` needs a preset name, e.g. sim:wd-sn850-1tb.")
        return Target(spec, TargetKind.SIM, None, 0)
    path = Path(spec).expanduser()
    mode = _file_type(path)
    if mode is not None and stat.S_ISBLK(mode):
        return _device_target(spec, path)
    if mode is not None and stat.S_ISCHR(mode):
        hint = (f" (for an NVMe controller, use a namespace such as {path}n1)"
                if re.fullmatch(r"nvme\d+", path.name) else "")
        raise SsdlabError(f"{path} is a character device, not a block device: give a block "
                          f"device such as /dev/nvme0n1{hint}, or a file path.")
    refuse_pseudo_path(path)
    if mode is None or stat.S_ISREG(mode):
        safety.refuse_looped_file(path)
        return files.file_target(spec, path, size, force, reuse)
    if stat.S_ISDIR(mode):
        raise SsdlabError(f"{path} is a directory: give a file inside it, e.g. "
                          f"`{path / 'ssdlab.img'} --size 64GiB`, or a block device.")
    raise SsdlabError(f"{path} is neither a regular file nor a block device: choose a file "
                      "path or a block device such as /dev/nvme0n1.")


def refuse_file_path(path: Path, force: bool) -> None:
    """Every refusal of a TARGET that is not a block device which needs nothing written:
    a path where only the kernel makes entries, the backing file of a loop device, a link
    to nothing, someone else's file.
    Planning (--dry-run) calls it where the run calls `resolve`. Reads only."""
    refuse_pseudo_path(path)
    safety.refuse_looped_file(path)
    files.refuse_dangling_link(path)
    files.refuse_foreign(path, force)


def refuse_pseudo_path(path: Path, mountinfo: Path = mounts.MOUNTINFO) -> None:
    """Refuse a path under /dev, /proc or /sys, or on a filesystem the kernel keeps in
    memory (devtmpfs, proc, sysfs, cgroup, debugfs...), unless it is an existing block
    device. Judged by where links lead. Reads only."""
    real = files.real_path(path)
    mode = _file_type(real)
    if mode is not None and stat.S_ISBLK(mode):
        return
    place = _pseudo_place(real, mountinfo)
    if place is None:
        return
    shown = f"{path}" if real == path else f"{path} (a link to {real})"
    if mode is None:
        raise SsdlabError(
            f"{shown} does not exist, and ssdlab creates no files on {place}: a file there "
            "would live in memory and test nothing. For a device, check its name with `lsblk`: "
            "a partition just made appears once the kernel rereads the table (`partprobe "
            "DISK` or `partx -a DISK`), a device-mapper device once `dmsetup create` has "
            f"succeeded. For a file target, give a path on a disk ({FILE_EXAMPLE}).")
    raise SsdlabError(
        f"{shown} is {files.describe_type(mode)} on {place}, not a block device: ssdlab tests "
        "block devices (`lsblk` lists them) or files on a disk-backed filesystem "
        f"({FILE_EXAMPLE}).")


def device_capacity(path: Path, sys_root: Path = SYSFS) -> int:
    size = sysfs.size_bytes(sysfs.kernel_name(path, sys_root), sys_root)
    if not size:
        raise SsdlabError(f"{path} reports no capacity (an empty card reader, a detached loop "
                          "device?): choose a device with media in it.")
    return size


def _file_type(path: Path) -> int | None:
    """st_mode of what `path` leads to; None when nothing is there (yet)."""
    try:
        return path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SsdlabError(f"cannot read {path}: {exc.strerror}.") from exc


def _pseudo_place(real: Path, mountinfo: Path) -> str | None:
    """'devtmpfs (mounted at /dev)' when `real` lies where only the kernel makes entries;
    None on an ordinary filesystem."""
    try:
        mount = mounts.mount_of(real, mounts.read_mounts(mountinfo))
    except OSError:
        mount = None  # no mount table (a bare chroot): the directories alone decide
    under = next((d for d in KERNEL_DIRECTORIES if real.is_relative_to(d)), None)
    if mount is not None and (under or mount.fstype in PSEUDO_FILESYSTEMS):
        return f"{mount.fstype} (mounted at {mount.mount_point})"
    return under


def _device_target(spec: str, path: Path) -> Target:
    try:
        os.close(os.open(path, os.O_RDONLY))  # read-only: nothing is touched yet
    except OSError as exc:
        hint = (" Run as root, or add your user to the `disk` group."
                if exc.errno in (errno.EPERM, errno.EACCES) and os.geteuid() != 0 else "")
        raise SsdlabError(f"cannot open {path}: {exc.strerror}.{hint}") from exc
    name = sysfs.kernel_name(path)
    return Target(spec, TargetKind.DEVICE, path, device_capacity(path),
                  sysfs.int_attr(name, "queue/logical_block_size") or 512)


def fleet_target(spec: str) -> tuple[str, str] | None:
    """(host, path) of a HOST:/dev/NAME target; None for any other target."""
    found = FLEET_TARGET.fullmatch(spec)
    return None if found is None else (found["host"].strip("[]"), found["path"])
