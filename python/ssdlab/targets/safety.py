"""Refuse destructive work on a block device that is in use.

`refusal_reasons` reads mountinfo, /proc/swaps, sysfs and the on-disk signatures
(`wipefs -n`, which only lists); it writes nothing. It collects every reason to
refuse, each with what to do, so the user fixes everything in one round (and a dry
run can say what the real run will refuse); `check_device` raises them as one
UnsafeTarget.

A device is judged with what lies under it: a loop device by its backing file (or
device) and the window it maps, a device-mapper or md device by the devices it is
built on, all the way down. A device with no signature, mount or holder of its own
can still be a window into a mounted filesystem's image.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import UnsafeTarget
from ssdlab.external import Commands
from ssdlab.targets import mounts, sysfs
from ssdlab.targets.sysfs import SYSFS
from ssdlab.units import format_bytes

ELSEWHERE = "choose another device"


@dataclass(frozen=True)
class _Host:
    """What the checks read, once per check: a consistent picture of the machine."""

    commands: Commands
    sys_root: Path
    mounts: list[mounts.Mount]
    swaps: list[str]
    root: set[str]                          # every device under /
    loops: dict[str, sysfs.LoopBacking]     # attached loop devices
    backing_stats: dict[str, os.stat_result]  # theirs, where the backing path can be read

    @classmethod
    def read(cls, commands: Commands, sys_root: Path, mountinfo: Path, swaps: Path) -> _Host:
        all_mounts = mounts.read_mounts(mountinfo)
        loops = sysfs.attached_loops(sys_root)
        return cls(commands, sys_root, all_mounts, mounts.swap_devices(swaps),
                   root_devices(all_mounts, sys_root), loops,
                   {name: st for name, loop in loops.items()
                    if (st := _backing_stat(loop)) is not None})


def check_device(path: Path, commands: Commands, sys_root: Path = SYSFS,
                 mountinfo: Path = mounts.MOUNTINFO, swaps: Path = mounts.SWAPS) -> None:
    reasons = refusal_reasons(path, commands, sys_root, mountinfo, swaps)
    if reasons:
        listed = "\n".join(f"  - {reason}" for reason in reasons)
        raise UnsafeTarget(f"refusing to write to {path}: it is in use or holds data\n{listed}\n"
                           "Nothing was written.")


def refusal_reasons(path: Path, commands: Commands, sys_root: Path = SYSFS,
                    mountinfo: Path = mounts.MOUNTINFO, swaps: Path = mounts.SWAPS) -> list[str]:
    """Every reason to refuse writing to block device `path`, each saying what to do;
    empty when it is safe. Reads only, raises nothing for an unsafe device."""
    host = _Host.read(commands, sys_root, mountinfo, swaps)
    return _device_reasons(path, sysfs.kernel_name(path, sys_root), host, frozenset())


def refuse_looped_file(path: Path, sys_root: Path = SYSFS) -> None:
    """A file behind a loop device is a disk in use (its filesystem may be mounted through
    the loop device): never a target, --force or not. Reads only."""
    st = _stat(str(path))
    if st is None:
        return
    loops = [f"/dev/{name}" for name, loop in sysfs.attached_loops(sys_root).items()
             if _same_file(st, _backing_stat(loop))]
    if loops:
        listed = ", ".join(loops)
        raise UnsafeTarget(f"refusing to write to {path}: it is the backing file of {listed}, "
                           f"whose data (perhaps a mounted filesystem) it holds. Detach it "
                           f"(`losetup -d {loops[0]}`) if nothing uses it, or choose another "
                           "file. Nothing was written.")


def _device_reasons(path: Path, name: str, host: _Host, own: frozenset[str]) -> list[str]:
    """`own`: the devices the caller is checking through (those built on `name`): they
    may hold `name` or map it without refusing it."""
    own = own | {name} | sysfs.devices_below(name, host.sys_root)
    return [
        *_in_use(name, host, own),
        *_partitioned(path, name, host.sys_root),
        *_signatures(path, host.commands),
        *_beneath(name, host, own),
    ]


def _in_use(name: str, host: _Host, own: frozenset[str]) -> list[str]:
    """`name` or one of its partitions is mounted, swap, held, looped, or under /."""
    family = [name, *sysfs.partitions(name, host.sys_root)]
    return [
        *_mounted(family, host),
        *_swap(family, host),
        *_held(family, host, own),
        *_looped(family, host, own),
        *_root(name, host),
    ]


def _beneath(name: str, host: _Host, own: frozenset[str]) -> list[str]:
    """What `name` is built on: a loop device's backing file, and every device under a
    device-mapper or md device, each checked for use."""
    found = _loop_beneath(name, host, own)
    for lower in sorted(sysfs.devices_below(name, host.sys_root)):
        found += _built_on(f"/dev/{name} is built on /dev/{lower}",
                           [*_in_use(lower, host, own), *_loop_beneath(lower, host, own)])
    return found


def _loop_beneath(name: str, host: _Host, own: frozenset[str]) -> list[str]:
    """For a loop device (or a partition of one): its backing file or device."""
    device = sysfs.whole_disk(name, host.sys_root)
    loop = host.loops.get(device)
    if loop is None:
        return []
    if loop.deleted:
        return [f"the backing file of /dev/{device}, {loop.path}, has been deleted: ssdlab cannot "
                f"tell what else uses it. Detach the loop device (`losetup -d /dev/{device}`) and "
                f"attach an existing file, or {ELSEWHERE}"]
    try:
        st = os.stat(loop.path)
    except OSError as exc:
        return [f"cannot read the backing file of /dev/{device}, {loop.path} "
                f"({exc.strerror}): fix that and run again, or {ELSEWHERE}"]
    if stat.S_ISBLK(st.st_mode):
        lower = sysfs.kernel_name(Path(loop.path), host.sys_root)
        return _built_on(f"/dev/{device} maps {loop.path}",
                         _device_reasons(Path(loop.path), lower, host, own))
    return [*_shared_backing(device, loop, st, host, own),
            *_swap_file(device, loop, st, host),
            *_window(device, loop, host.commands)]


def _shared_backing(device: str, loop: sysfs.LoopBacking, st: os.stat_result, host: _Host,
                    own: frozenset[str]) -> list[str]:
    """Other loop devices over the same file (by inode: a path can be a hard link, a
    bind mount or relative) that are in use: writing this one changes what they show.
    Loop devices over deleted files cannot be matched (their old path may name another
    file now); a target over one is refused in _loop_beneath."""
    found = []
    for other, other_st in host.backing_stats.items():
        # `device` itself: a partition of it is judged like a disk's, apart from its siblings
        if other != device and other not in own and _same_file(st, other_st):
            found += _built_on(f"{loop.path}, which /dev/{device} maps, is also the backing file "
                               f"of /dev/{other}", _in_use(other, host, own))
    return found


def _swap_file(device: str, loop: sysfs.LoopBacking, st: os.stat_result,
               host: _Host) -> list[str]:
    return [f"{loop.path}, which /dev/{device} maps, is active swap: turn it off "
            f"(`swapoff {swap}`) or {ELSEWHERE}"
            for swap in host.swaps if _same_file(st, _stat(swap))]


def _window(device: str, loop: sysfs.LoopBacking, commands: Commands) -> list[str]:
    """A loop device that starts inside an image with signatures at its start maps a
    part of that filesystem or disk image, though nothing shows at its own start.
    (At offset 0 the image's signatures are the device's own, found by _signatures.)"""
    if loop.offset == 0:
        return []
    found, problems = _probe_signatures(Path(loop.path), commands)
    if problems or not found:
        return problems
    end = format_bytes(loop.offset + loop.sizelimit) if loop.sizelimit else "the end"
    return [f"/dev/{device} maps bytes {format_bytes(loop.offset)} to {end} of {loop.path}, "
            "which carries signatures of a filesystem, RAID/LVM member or partition table "
            f"({', '.join(found)}) at its start: the loop device is a part of that filesystem "
            "or disk image, and writing it corrupts the image. "
            f"{ELSEWHERE.capitalize()}, or if the image's data is not needed, erase its "
            f"signatures (`wipefs -a {loop.path}`)"]


def _mounted(family: list[str], host: _Host) -> list[str]:
    numbers = {sysfs.dev_number(n, host.sys_root): n for n in family}
    found = []
    for mount in host.mounts:
        # btrfs and friends report an anonymous major:minor; the source names the device
        owner = numbers.get(mount.dev) or next(
            (n for n in family if mount.source.startswith("/dev/")
             and sysfs.kernel_name(Path(mount.source), host.sys_root) == n), None)
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
    found, problems = _probe_signatures(path, commands)
    if problems or not found:
        return problems
    return [f"{path} carries signatures of a filesystem, RAID/LVM member or partition table "
            f"({', '.join(found)}): {ELSEWHERE}, or if its data is not needed, erase them "
            f"(`wipefs -a {path}`)"]


def _probe_signatures(path: Path, commands: Commands) -> tuple[list[str], list[str]]:
    """(signature types on the device or file `path`, reasons they could not be read)."""
    if commands.which("wipefs") is None:
        return [], [f"cannot look for filesystem signatures on {path}: wipefs is not installed "
                    "(install util-linux)"]
    done = commands.run(["wipefs", "-n", "-J", str(path)])
    found = _signature_types(done.stdout) if done.returncode == 0 else None
    if found is None:
        return [], [f"cannot look for filesystem signatures on {path} (`wipefs -n -J {path}`: "
                    f"{done.stderr.strip() or 'unreadable output'}): fix that and run again"]
    return found, []


def _signature_types(wipefs_json: str) -> list[str] | None:
    """Sorted signature types from `wipefs -J` (which prints nothing at all when
    there are none, in some versions); None when the output is unreadable."""
    try:
        signatures = json.loads(wipefs_json)["signatures"] if wipefs_json.strip() else []
        return sorted({s.get("type") or "unknown" for s in signatures})
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _swap(family: list[str], host: _Host) -> list[str]:
    active = [s for s in host.swaps if sysfs.kernel_name(Path(s), host.sys_root) in family]
    return [f"{s} is active swap: turn it off (`swapoff {s}`) or {ELSEWHERE}" for s in active]


def _held(family: list[str], host: _Host, own: frozenset[str]) -> list[str]:
    found = []
    for name in family:
        for holder in sysfs.listing(name, "holders", host.sys_root):
            if holder in own:
                continue
            mapped = sysfs.attr(holder, "dm/name", host.sys_root)
            label = f"{holder} ({mapped})" if mapped else holder
            found.append(f"/dev/{name} is held by {label}, a device-mapper, LVM or RAID device "
                         f"built on it: stop that first (`dmsetup ls`, `lvs`, `cat /proc/mdstat`) "
                         f"or {ELSEWHERE}")
    return found


def _looped(family: list[str], host: _Host, own: frozenset[str]) -> list[str]:
    """Loop devices that map `family` (which holders/ does not show)."""
    numbers = {sysfs.dev_number(n, host.sys_root): n for n in family}
    found = []
    for loop, st in host.backing_stats.items():
        if not stat.S_ISBLK(st.st_mode) or loop in own:
            continue
        name = numbers.get(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
        if name:
            found.append(f"/dev/{name} is the backing device of /dev/{loop}: detach it "
                         f"(`losetup -d /dev/{loop}`) or {ELSEWHERE}")
    return found


def _root(name: str, host: _Host) -> list[str]:
    if name in host.root or sysfs.whole_disk(name, host.sys_root) in host.root:
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
    if start is None:
        return set()
    chain = {start, *sysfs.devices_below(start, sys_root)}
    return chain | {sysfs.whole_disk(name, sys_root) for name in chain}


def _built_on(relation: str, reasons: list[str]) -> list[str]:
    """Reasons found under a device, each saying how it lies under the target."""
    return [f"{relation}, and {reason}" for reason in reasons]


def _backing_stat(loop: sysfs.LoopBacking) -> os.stat_result | None:
    """A deleted file's old path may name another file now: no stat for it."""
    return None if loop.deleted else _stat(loop.path)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _same_file(a: os.stat_result, b: os.stat_result | None) -> bool:
    return b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
