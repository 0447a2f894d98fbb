"""What a drive declares of itself, read into its twin: the power-state table and the thermal
thresholds its power-states test recorded (Identify Controller's power states, WCTEMP and
CCTEMP; the host-controlled thermal management feature's TMT1 and TMT2).

A declared table replaces the base's (the measured powers some presets add, `measured_w`,
are the base drive's and go with it); a threshold the drive does not report (None, or a TMT
of 0: not set) stays the base's. A table the simulator refuses (fewer operational states
than the base throttles through, say) is not read, and the twin says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tomlkit

from ssdlab import _ssdsim
from ssdlab.twin.sources import Source

TEST = "power-states"
THRESHOLDS = ("wctemp_c", "cctemp_c", "tmt1_c", "tmt2_c")


def declared(sources: Sequence[Source]) -> tuple[int, dict[str, Any]] | None:
    """(run id, the power-states test's score) of the first run that has one."""
    for source in sources:
        if TEST in source.scores:
            return source.run.id, source.scores[TEST]
    return None


def apply_declared(doc: tomlkit.TOMLDocument, run_id: int, score: dict[str, Any]) -> list[str]:
    """Set the declared table and thresholds in `doc`, each line saying it was read; the keys
    set, or why nothing was (the simulator refused the result)."""
    trial = tomlkit.parse(tomlkit.dumps(doc))
    set_keys = _set(trial, run_id, score)
    try:
        _ssdsim.preset_bounds(tomlkit.dumps(trial))  # validates the whole preset
    except _ssdsim.PresetError as exc:
        return [f"not read: the simulator refuses the drive's declared table in this base ({exc})"]
    _set(doc, run_id, score)
    return set_keys


def _set(doc: Any, run_id: int, score: dict[str, Any]) -> list[str]:
    drive, keys = doc["drive"], []
    note = f"read from run {run_id}: the drive's power-states test"
    for key in THRESHOLDS:
        value = score.get(key)
        if value:  # None: not reported; a TMT of 0: not set
            drive["thermal"][key] = float(value)
            drive["thermal"][key].comment(note)
            keys.append(f"drive.thermal.{key}")
    if states := score.get("states"):
        table = tomlkit.table()
        table.add(tomlkit.comment(f"{note} (Identify Controller's power states)"))
        for ps in states:
            entry = tomlkit.inline_table()
            entry.update({"max_w": float(ps["max_power_w"]), "entry_us": float(ps["entry_latency_us"]),
                          "exit_us": float(ps["exit_latency_us"]), "operational": bool(ps["operational"])})
            table[f"ps{ps['index']}"] = entry
        drive["power"]["states"] = table
        keys.append("drive.power.states")
    return keys
