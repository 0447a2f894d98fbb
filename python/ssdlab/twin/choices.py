"""The parameters a twin's search weighs as choices rather than slopes: the drive's parallelism
(dies per channel, planes per die), its write buffer and its firmware's work.

A slope cannot find them. The dies and planes are whole numbers; the buffer and the firmware
work move the figures in steps (a burst outruns the NAND or not, a checkpoint's stall falls in
a test or not), so a 10 % difference measures an edge, or nothing. Instead each is weighed at
a few values (CHOICES: half and twice a count, a quarter and four times a size or a cost)
against the base's, the other parameters fitted again around each (`search.py`).

A drive with twice the dies, each half as fast, has the same ceilings: what tells them apart
is how the rates grow with the queue depth, and how long a single read takes. So an option
of parallelism carries the fitted NAND times that keep the ceilings (FOLLOWS: with twice the
dies a die reads and programs in twice the time, with twice the planes a program takes twice
as long; an untold time stays the typical time of one die), and the blocks per plane and the
garbage collector's thresholds that keep the capacity, the spare and the collector's reserve
in bytes. What is left to tell the options apart is then the shape, not the level the
continuous parameters give anyway.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace

import tomlkit

from ssdlab import _ssdsim
from ssdlab.twin.evaluate import Values, candidate_text

# (key within [drive], what it shapes, its options as factors of the base's value)
CHOICES = (
    ("geometry.dies_per_channel", "dies per channel: how the rates grow with the queue depth", (0.5, 2.0)),
    ("geometry.planes_per_die", "planes per die: how much one program writes", (0.5, 2.0)),
    ("controller.write_buffer_kib", "the write buffer: how long a burst of writes outruns the NAND", (0.25, 4.0)),
    ("firmware.checkpoint_mib", "journal between the mapping table's checkpoints: how often writes stall",
     (0.25, 4.0)),
    ("firmware.relocate_unit_ns", "firmware time per relocated unit: writes while the drive cleans up", (0.25, 4.0)),
)
# what follows an option, as a power of its factor: `{mode}`, each cell mode of the base's NAND
_KEEP_BYTES = (("geometry.blocks_per_plane", -1.0), ("ftl.gc_low_superblocks", -1.0),
               ("ftl.gc_idle_superblocks", -1.0))
FOLLOWS = {
    "geometry.dies_per_channel": (("nand.{mode}.t_read_us", 1.0), ("nand.{mode}.t_prog_us", 1.0), *_KEEP_BYTES),
    "geometry.planes_per_die": (("nand.{mode}.t_prog_us", 1.0), *_KEEP_BYTES),
}


@dataclass(frozen=True)
class Follower:
    key: str  # dotted, from `drive.`
    power: float  # its value scales by the option's factor to this power
    base: float
    low: float  # the simulator's bounds
    high: float
    integer: bool


@dataclass(frozen=True)
class Choice:
    key: str  # dotted, from `drive.`
    what: str
    base: float
    options: tuple[float, ...]  # the values weighed against the base's, each a valid drive
    follows: tuple[Follower, ...] = ()

    def changes(self, option: float, current: Values) -> Values:
        """The values that make `option` of this choice, from `current` (the followers' values
        there; the base's where it has none)."""
        factor = option / self.base
        out: Values = {self.key: option}
        for f in self.follows:
            value = min(max(current.get(f.key, f.base) * factor ** f.power, f.low), f.high)
            out[f.key] = round(value) if f.integer else float(f"{value:.6g}")
        return out


def choices(doc: tomlkit.TOMLDocument) -> list[Choice]:
    """The choices the base document has, each with the options the simulator takes (within its
    bounds, and a drive it builds: twice the dies with the same capacity still leaves a spare)."""
    base_text = tomlkit.dumps(doc)
    drive = tomllib.loads(base_text)["drive"]
    modes = [mode for mode, table in drive["nand"].items() if isinstance(table, dict) and "t_prog_us" in table]
    bounds = {b["key"]: b for b in _ssdsim.preset_bounds(base_text)}
    found = []
    for pattern, what, factors in CHOICES:
        key = "drive." + pattern
        if key not in bounds:
            continue  # the base has no such field (no firmware work)
        b = bounds[key]
        follows = tuple(Follower(k, power, _typed(bounds[k]), bounds[k]["min"], bounds[k]["max"], bounds[k]["integer"])
                        for follower, power in FOLLOWS.get(pattern, ())
                        for k in dict.fromkeys("drive." + follower.format(mode=m) for m in modes))
        choice = Choice(key, what, _typed(b), (), follows)
        options = []
        for factor in factors:
            option = round(b["value"] * factor) if b["integer"] else b["value"] * factor
            if b["min"] <= option <= b["max"] and option != b["value"] and _builds(doc, choice, option):
                options.append(option)
        if options:
            found.append(replace(choice, options=tuple(options)))
    return found


def _typed(bound: dict) -> float:
    """A bound's value as the preset has it: an integer field's as an int."""
    return int(bound["value"]) if bound["integer"] else float(bound["value"])


def _builds(doc: tomlkit.TOMLDocument, choice: Choice, option: float) -> bool:
    try:
        _ssdsim.preset_bounds(candidate_text(doc, choice.changes(option, {})))
    except _ssdsim.PresetError:
        return False
    return True
