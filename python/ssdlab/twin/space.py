"""The parameters a twin's search estimates, and where it may look for them.

Each is a preset key whose mechanism shapes figures the client and lab suites measure: NAND
program and read times behind the write and read ceilings, the channel rate behind sequential
reads, the controller's per-command costs behind the random ceilings and its fixed latencies
behind QD1, the SLC cache's cap behind the fill's first phase and the folding ratio behind its
second. The search moves each in log space within a window around the base preset's value
(WINDOW either way), clipped to the simulator's own bounds (bounds.rs, `_ssdsim.preset_bounds`):
a twin is a drive of the same kind as its base, not any preset the bounds allow.

Where the runs hold the drive's temperatures, the heat it makes is searched too (THERMAL):
the resistance of the mounting the runs had (`{cooling}`: the run's cooling, the simulator's
own where a run names none) behind the level the drive settles at, the board's heat capacity
behind how slowly it gets there, the controller's own resistance behind its quick rise. They
absorb what the base's power model gives differently from the drive's: a twin's temperatures
are fitted, its watts are the base's.

The parallelism, the write buffer and firmware work are weighed as choices (`choices.py`).
Everything else (the rest of the geometry, power, wear, errors) is not estimated: it is read
from the runs where they say it (capacity) or kept at the base preset's typical values.
"""

from __future__ import annotations

import inspect
import math
import tomllib
from collections.abc import Collection
from dataclasses import dataclass

from ssdlab import _ssdsim

WINDOW = 10.0  # the search's range around the base's value, either way
# a value the bounds allow to be 0 (a fixed latency) is searched from this floor, in log space
FLOOR = {"µs": 0.05, "": 0.01}

# (key within [drive], what it sets); `{native}` is the drive's native cell mode (tlc, qlc)
PARAMETERS = (
    ("nand.slc.t_prog_us", "SLC program time: writes into the cache"),
    ("nand.{native}.t_prog_us", "native program time: writes past the cache, folding"),
    ("nand.slc.t_read_us", "SLC read time: reads of data still in the cache"),
    ("nand.{native}.t_read_us", "native read time: random reads"),
    ("nand.channel_mbps", "channel rate: sequential reads"),
    ("controller.read_cmd_us", "controller time per read command: the random read ceiling"),
    ("controller.write_cmd_us", "controller time per write command: the random write ceiling"),
    ("controller.read_latency_us", "fixed read latency: QD1 reads"),
    ("controller.write_latency_us", "fixed write latency: QD1 writes"),
    ("cache.max_cell_share", "SLC cache cap: the fill's first phase"),
    ("cache.busy_fold_ratio", "folding while writing: the fill's later phases"),
)
THERMAL = (
    ("thermal.rc.{cooling}_k_per_w", "the mounting's thermal resistance: the temperature the drive settles at"),
    ("thermal.rc.board_j_per_k", "the board's heat capacity: how slowly the drive warms"),
    ("thermal.rc.controller_k_per_w", "the controller's own resistance: its quick rise over the board"),
)
# the simulator's cooling where a run names none (the default of `_ssdsim.Drive`)
SIMULATOR_COOLING = inspect.signature(_ssdsim.Drive).parameters["cooling"].default
# A real drive's run does not record the air around it: where it holds temperatures, its
# ambient is searched beside the preset's parameters (a condition of that run, not of the
# twin), from a few kelvins under its coolest reading, within the range of a room or a lab
AMBIENT_RANGE_C = (5.0, 50.0)
AMBIENT_BELOW_COOLEST_K = 5.0


@dataclass(frozen=True)
class Parameter:
    key: str  # dotted, from `drive.`
    what: str
    base: float  # the base preset's value
    low: float  # the search's window, within the simulator's bounds
    high: float
    integer: bool

    def to_x(self, value: float) -> float:
        return math.log(max(value, self.low))

    def from_x(self, x: float) -> float:
        value = min(max(math.exp(x), self.low), self.high)
        return round(value) if self.integer else float(f"{value:.6g}")  # an integer field takes no 4096.0


def parameters(base_toml: str, coolings: Collection[str] = ()) -> list[Parameter]:
    """The parameters the base preset has, each with its search window; with the thermal ones
    for each of `coolings` (the runs' with temperatures), when there are any."""
    native = tomllib.loads(base_toml)["drive"].get("native_mode", "tlc")
    bounds = {b["key"]: b for b in _ssdsim.preset_bounds(base_toml)}
    patterns = list(PARAMETERS)
    for cooling in sorted(coolings):
        patterns += [(pattern.format(cooling=cooling), what) for pattern, what in THERMAL
                     if (pattern.format(cooling=cooling), what) not in patterns]
    found = []
    for pattern, what in patterns:
        key = "drive." + pattern.format(native=native)
        if key not in bounds:
            continue  # the base has no such field (a static cache has no max_cell_share)
        b = bounds[key]
        floor = max(b["min"], FLOOR.get(b["unit"], 0.01))
        start = max(b["value"], floor)
        found.append(Parameter(key, what, b["value"], max(floor, start / WINDOW), min(b["max"], start * WINDOW),
                               b["integer"]))
    return found


def ambient_key(source: int) -> str:
    """The searched value of source `source`'s ambient (a condition, not a preset key)."""
    return f"ambient_c of source {source}"


def source_of_ambient(key: str) -> int | None:
    """The source whose ambient `key` is; None for a preset key."""
    return int(key.rsplit(" ", 1)[1]) if key.startswith("ambient_c of source ") else None


def ambient_parameter(source: int, run_id: int, coolest_c: float) -> Parameter:
    low, high = AMBIENT_RANGE_C
    start = min(max(coolest_c - AMBIENT_BELOW_COOLEST_K, low), high)
    return Parameter(ambient_key(source), f"the air around the drive in run {run_id} (not recorded)", start, low,
                     high, False)
