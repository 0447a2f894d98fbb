"""Targets: where I/O goes. A block device, a file, or `sim:PRESET`.

`resolve` (in targets.resolve) turns the user's TARGET argument into a Target;
`safety` refuses destructive work on a device that is in use; `identity` reads
what the run must record; `purge` returns a target to fresh-out-of-box.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class TargetKind(StrEnum):
    DEVICE = "device"
    FILE = "file"
    SIM = "sim"


@dataclass(frozen=True)
class Target:
    spec: str                   # as the user wrote it
    kind: TargetKind
    path: Path | None           # the device node or file; None for sim
    capacity: int               # bytes usable for I/O
    logical_block_size: int = 512
