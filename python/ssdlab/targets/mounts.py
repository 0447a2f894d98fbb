"""What is mounted where, from /proc/self/mountinfo (read only)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
SWAPS = Path("/proc/swaps")

_OCTAL = re.compile(r"\\([0-7]{3})")


def unescape(field: str) -> str:
    """The kernel writes space, tab, newline and backslash in paths as octal escapes."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


@dataclass(frozen=True)
class Mount:
    mount_point: str
    dev: str            # 'major:minor' of the filesystem
    fstype: str
    source: str         # e.g. /dev/nvme0n1p2, tmpfs


def read_mounts(mountinfo: Path = MOUNTINFO) -> list[Mount]:
    mounts = []
    for line in mountinfo.read_text().splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        mounts.append(Mount(unescape(fields[4]), fields[2], after[0],
                            unescape(after[1]) if len(after) > 1 else ""))
    return mounts


def mount_of(path: Path, mounts: list[Mount]) -> Mount | None:
    """The mount holding `path`: the longest mount point that is a prefix of it; when
    several mounts share that point, the last one is on top."""
    real = os.path.realpath(path)
    best: Mount | None = None
    for mount in mounts:
        point = mount.mount_point
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best.mount_point)):
            best = mount
    return best


def swap_devices(swaps: Path = SWAPS) -> list[str]:
    """Paths of active swap areas (devices or files)."""
    try:
        lines = swaps.read_text().splitlines()[1:]
    except OSError:
        return []
    return [unescape(line.split()[0]) for line in lines if line.strip()]
