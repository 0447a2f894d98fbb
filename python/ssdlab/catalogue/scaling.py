"""--scale: shrink a suite for quick runs and CI without changing its shape.

`Scale(F)` with 0 < F <= 1 multiplies spans, data present, byte limits, burst
sizes, time limits and idle times. Queue depths, block sizes, I/O rates, read shares,
burst counts and duty cycles never change. At F = 1 every figure is exactly
METHODOLOGY.md's. The floors, so that a small scale still measures something:

- spans and data present: at least 256 MiB, rounded down to whole MiB;
- the whole-drive fill: capacity x F, at least 1 GiB (or the whole target
  when it is smaller), rounded down to whole MiB;
- byte limits (io_size): at least 64 MiB, whole blocks;
- bursts: at least 1 MiB each, whole blocks (their count stays the same);
- time limits: at least 1 s (a per-second series needs one second);
- idle times: no floor; they scale linearly;
- repetitions (idle-wake's reads after each idle length, its warm reads): at least the
  floor each test gives (3 timed reads per idle length, 100 warm reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.errors import SsdlabError
from ssdlab.units import GiB, MiB

SPAN_FLOOR = 256 * MiB
FILL_FLOOR = GiB
IO_SIZE_FLOOR = 64 * MiB
BURST_FLOOR = MiB
RUNTIME_FLOOR_S = 1.0


def _round_down(value: float, unit: int) -> int:
    return max(unit, int(value) // unit * unit)


@dataclass(frozen=True)
class Scale:
    factor: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.factor <= 1:
            raise SsdlabError(f"--scale must be in (0, 1], got {self.factor:g}: "
                              "use 1 for the full methodology, 0.01 for a quick run")

    def span(self, nbytes: int) -> int:
        if self.factor == 1:
            return nbytes
        return _round_down(max(nbytes * self.factor, SPAN_FLOOR), MiB)

    def whole_drive(self, capacity: int) -> int:
        if self.factor == 1:
            return capacity // MiB * MiB
        return _round_down(max(capacity * self.factor, min(capacity, FILL_FLOOR)), MiB)

    def io_size(self, nbytes: int, bs: int) -> int:
        if self.factor == 1:
            return nbytes
        return _round_down(max(nbytes * self.factor, IO_SIZE_FLOOR), bs)

    def burst(self, nbytes: int, bs: int) -> int:
        if self.factor == 1:
            return nbytes
        return _round_down(max(nbytes * self.factor, BURST_FLOOR), bs)

    def runtime(self, seconds: float) -> float:
        return max(seconds * self.factor, RUNTIME_FLOOR_S) if self.factor != 1 else seconds

    def idle(self, seconds: float) -> float:
        return seconds * self.factor

    def repetitions(self, count: int, floor: int) -> int:
        return count if self.factor == 1 else max(floor, round(count * self.factor))
