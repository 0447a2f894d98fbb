"""The SLC cache's size a whole-drive fill measured, read into the twin as the search's start.

The fill analysis finds the first phase of a fill of an empty drive: the data written at the
cache's speed (the score's `slc_cache_gib`), known once the fill went on past the cache (a
later phase follows). A dynamic cache holds, on an empty drive, at most `max_cell_share` of
all superblocks in SLC mode, each holding 1/bits of its native data, so the share that gives
the measured size is cache bytes x bits / raw bytes (docs/simulator.md, the SLC cache); a
static cache's size is its `static_gb`. The search starts from that value and still moves
it: the fill's curve is among its figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import tomlkit

from ssdlab import _ssdsim
from ssdlab.twin.sources import Source
from ssdlab.units import GiB

FILL = "whole-drive-fill"


def measured_cache(sources: Sequence[Source]) -> tuple[int, float] | None:
    """(run id, SLC cache GiB) of the first run whose whole-drive fill went on past its cache."""
    for source in sources:
        score = source.scores.get(FILL) or {}
        phases = score.get("phases") or []
        if score.get("slc_cache_gib") and len(phases) > 1 and phases[0].get("kind") == "cache":
            return source.run.id, float(score["slc_cache_gib"])
    return None


def apply_cache(doc: tomlkit.TOMLDocument, run_id: int, gib: float) -> tuple[str, str]:
    """Set the cache's size in `doc` from the measured one, within the simulator's bounds: the
    key set, and a line saying what was set."""
    drive: Any = doc["drive"]
    cache = drive["cache"]
    if cache["policy"] == "static":
        key, value = "static_gb", gib * GiB / 1e9
    else:
        bits = int(drive["nand"][str(drive.get("native_mode", "tlc"))]["bits_per_cell"])
        key, value = "max_cell_share", gib * GiB * bits / raw_bytes(drive)
    bound = next(b for b in _ssdsim.preset_bounds(tomlkit.dumps(doc)) if b["key"] == f"drive.cache.{key}")
    value = float(f"{min(max(value, bound['min']), bound['max']):.4g}")
    cache[key] = value
    cache[key].comment(f"read from run {run_id}: its whole-drive fill's SLC cache of about {gib:.0f} GiB")
    return f"drive.cache.{key}", f"drive.cache.{key} = {value:g}, from the SLC cache of about {gib:.0f} GiB run " \
        f"{run_id}'s fill measured"


def raw_bytes(drive: Any) -> int:
    g = drive["geometry"]
    return math.prod(int(g[k]) for k in ("channels", "dies_per_channel", "planes_per_die", "blocks_per_plane",
                                         "pages_per_block", "page_bytes"))
