"""Refuse destructive work on a block device that is in use.

`check_device` reads mountinfo, /proc/swaps, sysfs and the on-disk signatures
(`wipefs -n`, which only lists); it writes nothing. It collects every reason
to refuse and raises one UnsafeTarget that lists them all, each with what to do,
so the user fixes everything in one round.
"""

from __future__ import annotations

import json
from pathlib import Path

from ssdlab.errors import UnsafeTarget
from ssdlab.external import Commands
from ssdlab.targets import mounts, sysfs
from ssdlab.targets.sysfs import SYSFS

ELSEWHERE = "choose another device"


def check_device(path: Path, commands: Commands, sys_root: Path = SYSFS,
                 mountinfo: Path = mounts.MOUNTINFO, swaps: Path = mounts.SWAPS) -> None:
    name = sysfs.kernel_name(path, sys_root)
    family = [name, *sysfs.partitions(name, sys_root)]
    all_mounts = mounts.read_mounts(mountinfo)
    reasons = [
        *_mounted(family, all_mounts, sys_root),
        *_partitioned(path, name, sys_root),
        *_signatures(path, commands),
        *_swap(family, swaps, sys_root),
        *_held(family, sys_root),
        *_root(name, all_mounts, sys_root),
    ]
    if reasons:
        listed = "\n".join(f"  - {reason}" for reason in reasons)
        raise UnsafeTarget(f"refusing to write to {path}: it is in use or holds data\n{listed}\n"
                           "Nothing was written.")


def _mounted(family: list[str], all_mounts: list[mounts.Mount], sys_root: Path) -> list[str]:
    numbers = {sysfs.dev_number(n, sys_root): n for n in family}
    found = []
    for mount in all_mounts:
        # btrfs and friends report an anonymous major:minor; the source names the device
        owner = numbers.get(mount.dev) or next(
            (n for n in family if mount.source.startswith("/dev/")
             and sysfs.kernel_name(Path(mount.source), sys_root) == n), None)
        if owner:
            found.append(f"/dev/{owner} is mounted at {mount.mount_point} ({mount.fstype}): "
                         f"unmount it (`umount {mount.mount_point}`) or {ELSEWHERE}")
    return found


def _partitioned(path: Path, name: str, sys_root: Path) -> list[str]:
    parts = sysfs.partitions(name, sys_root)
    if not parts:
        return []
    return [f"{path} holds partitions ({', '.join(parts)}): {ELSEWHERE}, or if none of "
            f"their data is needed, remove the partition table (`wipefs -a {path}`) first"]


def _signatures(path: Path, commands: Commands) -> list[str]:
    if commands.which("wipefs") is None:
        return [f"cannot look for filesystem signatures on {path}: wipefs is not installed "
                "(install util-linux)"]
    done = commands.run(["wipefs", "-n", "-J", str(path)])
    found = _signature_types(done.stdout) if done.returncode == 0 else None
    if found is None:
        return [f"cannot look for filesystem signatures on {path} (`wipefs -n -J {path}`: "
                f"{done.stderr.strip() or 'unreadable output'}): fix that and run again"]
    if not found:
        return []
    kinds = ", ".join(found)
    return [f"{path} carries signatures of a filesystem, RAID/LVM member or partition table "
            f"({kinds}): {ELSEWHERE}, or if its data is not needed, erase them "
            f"(`wipefs -a {path}`)"]


def _signature_types(wipefs_json: str) -> list[str] | None:
    """Sorted signature types from `wipefs -J` (which prints nothing at all when
    there are none, in some versions); None when the output is unreadable."""
    try:
        signatures = json.loads(wipefs_json)["signatures"] if wipefs_json.strip() else []
        return sorted({s.get("type") or "unknown" for s in signatures})
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _swap(family: list[str], swaps: Path, sys_root: Path) -> list[str]:
    active = [s for s in mounts.swap_devices(swaps)
              if sysfs.kernel_name(Path(s), sys_root) in family]
    return [f"{s} is active swap: turn it off (`swapoff {s}`) or {ELSEWHERE}" for s in active]


def _held(family: list[str], sys_root: Path) -> list[str]:
    found = []
    for name in family:
        for holder in sysfs.listing(name, "holders", sys_root):
            mapped = sysfs.attr(holder, "dm/name", sys_root)
            label = f"{holder} ({mapped})" if mapped else holder
            found.append(f"/dev/{name} is held by {label}, a device-mapper, LVM or RAID device "
                         f"built on it: stop that first (`dmsetup ls`, `lvs`, `cat /proc/mdstat`) "
                         f"or {ELSEWHERE}")
    return found


def _root(name: str, all_mounts: list[mounts.Mount], sys_root: Path) -> list[str]:
    chain = root_devices(all_mounts, sys_root)
    if name in chain or sysfs.whole_disk(name, sys_root) in chain:
        return [f"/dev/{name} is on the disk that holds the root filesystem /: "
                f"never test the system disk; {ELSEWHERE}"]
    return []


def root_devices(all_mounts: list[mounts.Mount], sys_root: Path = SYSFS) -> set[str]:
    """Every block device under /: its device, what that is built on (dm, md), and their disks."""
    root = next((m for m in reversed(all_mounts) if m.mount_point == "/"), None)  # last is on top
    if root is None:
        return set()
    start = sysfs.device_from_number(root.dev, sys_root)
    if start is None and root.source.startswith("/dev/"):
        start = sysfs.kernel_name(Path(root.source), sys_root)
    chain: set[str] = set()
    pending = [start] if start else []
    while pending:
        name = pending.pop()
        if name in chain:
            continue
        chain.add(name)
        pending.append(sysfs.whole_disk(name, sys_root))
        pending.extend(sysfs.listing(name, "slaves", sys_root))
    return chain
