"""Idle wake-up latency (METHODOLOGY.md section 4, idle-wake): the first read after an idle
minus a warm read, per idle length.

Each idle length's fio run reads once more than its repetitions: its first read follows
fio's start-up, not a timed idle, and is left out. Medians, so that one read that meets
the drive's own background work does not move the figure; the maximum beside it. Beside
them, when known, the power state after each idle length and what that state is: "reached"
or "allowed by APST" (analysis/power_states.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

IdleStates = tuple[str, Mapping[float, int]]  # what the states are, and the state per idle length (s)


def wake_table(warm_ns: Sequence[int], first_reads_ns: Mapping[float, Sequence[int]],
               power_states: IdleStates | None = None) -> dict[str, Any]:
    """`first_reads_ns`: idle length (s) -> the timed reads after it (ns), first read left out."""
    warm = median(warm_ns)
    states = power_states[1] if power_states else {}
    rows = {}
    for idle_s, reads in first_reads_ns.items():
        wake = [r - warm for r in reads]
        rows[f"{idle_s:g}"] = {"wake_us": round(median(wake) / 1000, 1), "max_wake_us": round(max(wake) / 1000, 1),
                               "first_read_us": round(median(reads) / 1000, 1), "repetitions": len(reads),
                               **({"power_state": states[idle_s]} if idle_s in states else {})}
    table = {"warm_read_us": round(warm / 1000, 1), "by_idle_s": rows}
    return table | ({"power_state_is": power_states[0]} if power_states else {})
