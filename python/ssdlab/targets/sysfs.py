"""Block devices as sysfs describes them: names, sizes, partitions, holders, what
loop and device-mapper devices are built on.

Every function takes the sysfs root so tests can point it at a fake tree;
reads only, and a missing attribute is None rather than an exception.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

SYSFS = Path("/sys")


def kernel_name(path: Path, sysfs: Path = SYSFS) -> str:
    """The kernel's name for a device node: /dev/disk/by-id/... -> nvme0n1,
    /dev/mapper/x -> dm-0."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISBLK(st.st_mode):
        link = sysfs / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        if link.exists():
            return link.resolve().name
    # udev names device nodes after the kernel, so the node's own name is the fallback
    return Path(os.path.realpath(path)).name


def block_dir(name: str, sysfs: Path = SYSFS) -> Path:
    return sysfs / "class" / "block" / name


def attr(name: str, relative: str, sysfs: Path = SYSFS) -> str | None:
    """A sysfs attribute of block device `name`, stripped; None when absent or unreadable."""
    try:
        return (block_dir(name, sysfs) / relative).read_text(errors="replace").strip()
    except OSError:
        return None


def int_attr(name: str, relative: str, sysfs: Path = SYSFS) -> int | None:
    text = attr(name, relative, sysfs)
    return int(text) if text is not None and text.isdigit() else None


def size_bytes(name: str, sysfs: Path = SYSFS) -> int | None:
    """sysfs counts 512-byte sectors whatever the logical block size."""
    sectors = int_attr(name, "size", sysfs)
    return None if sectors is None else sectors * 512


def is_partition(name: str, sysfs: Path = SYSFS) -> bool:
    return (block_dir(name, sysfs) / "partition").exists()


def whole_disk(name: str, sysfs: Path = SYSFS) -> str:
    """The disk a partition lives on (sysfs nests partitions in their disk's directory)."""
    if is_partition(name, sysfs):
        return block_dir(name, sysfs).resolve().parent.name
    return name


def partitions(name: str, sysfs: Path = SYSFS) -> list[str]:
    directory = block_dir(name, sysfs).resolve()
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir() if (p / "partition").exists())


def dev_number(name: str, sysfs: Path = SYSFS) -> str | None:
    """'major:minor', as /proc/self/mountinfo spells it."""
    return attr(name, "dev", sysfs)


def device_from_number(major_minor: str, sysfs: Path = SYSFS) -> str | None:
    link = sysfs / "dev" / "block" / major_minor
    return link.resolve().name if link.exists() else None


def listing(name: str, relative: str, sysfs: Path = SYSFS) -> list[str]:
    """Entries of a sysfs directory such as holders/ or slaves/."""
    try:
        return sorted(p.name for p in (block_dir(name, sysfs) / relative).iterdir())
    except OSError:
        return []


def devices_below(name: str, sysfs: Path = SYSFS) -> set[str]:
    """Every device `name` is built on, through slaves/ (device-mapper, md), all the way
    down; a partition is built on what its disk is built on (a partitioned md array)."""
    found: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        lower = {*listing(current, "slaves", sysfs),
                 *listing(whole_disk(current, sysfs), "slaves", sysfs)}
        pending.extend(lower - found)
        found |= lower
    return found


@dataclass(frozen=True)
class LoopBacking:
    """What an attached loop device maps: `sizelimit` bytes (0: all) of `path` from `offset`."""

    path: str           # as the kernel shows it, a file or a block device
    deleted: bool       # unlinked since it was attached: `path` may now name another file
    offset: int
    sizelimit: int


_DELETED = " (deleted)"


def loop_backing(name: str, sysfs: Path = SYSFS) -> LoopBacking | None:
    """What loop device `name` maps; None when it is not a loop device or is detached."""
    shown = attr(name, "loop/backing_file", sysfs)
    if not shown:
        return None
    return LoopBacking(shown.removesuffix(_DELETED), shown.endswith(_DELETED),
                       int_attr(name, "loop/offset", sysfs) or 0,
                       int_attr(name, "loop/sizelimit", sysfs) or 0)


def attached_loops(sysfs: Path = SYSFS) -> dict[str, LoopBacking]:
    """Every attached loop device by kernel name."""
    try:
        names = sorted(p.name for p in (sysfs / "class" / "block").iterdir())
    except OSError:
        return {}
    backings = {name: loop_backing(name, sysfs) for name in names}
    return {name: backing for name, backing in backings.items() if backing is not None}


def is_nvme_namespace(name: str) -> bool:
    """nvme0n1 (a namespace), not nvme0 (a controller) nor nvme0n1p1 (a partition)."""
    return re.fullmatch(r"nvme\d+n\d+", name) is not None
