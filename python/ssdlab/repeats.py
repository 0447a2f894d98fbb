"""`run --repeat N`: each measured step run N times in a row, its result all of them together
(their I/O and latencies added up, so its throughput is the mean over the N runs' time) with
each run kept; a test's score is computed from the runs together and from each run alone,
and its spread over those N scores stored beside it (`spread`). Comparisons call two
scores alike when their spreads overlap: their difference is inside what repeating showed.

Power tests are not repeated: their procedures set their own repetitions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from ssdlab.backends import StepOutcome
from ssdlab.model import SecondPoint, Step, StepResult
from ssdlab.model.results import merged_directions

MAX_REPEAT = 10
# Counters of the drive that are states at the step's end, not flows over it: the last
# run's are the step's.
STATES = frozenset({"slc_used_bytes", "slc_limit_bytes", "free_superblocks", "superblocks",
                    "mapped_bytes", "write_amplification"})


def repeated(outcomes: Sequence[StepOutcome]) -> StepOutcome:
    """The outcomes of a step's runs, in order, as one: the runs end to end."""
    results = [o.result for o in outcomes]
    first = results[0]
    seconds, offset = [], 0.0
    for r in results:
        seconds += [SecondPoint(t_s=offset + p.t_s, mbps=p.mbps, iops=p.iops) for p in r.per_second]
        offset += r.busy_s + r.idle_s
    energy = [r.energy_j for r in results]
    result = StepResult(
        started_at=first.started_at, busy_s=sum(r.busy_s for r in results),
        idle_s=sum(r.idle_s for r in results), bursts=sum(r.bursts for r in results),
        per_second=tuple(seconds), per_gib=first.per_gib, engine=first.engine,
        device=_device([r.device for r in results]),
        notes=tuple(dict.fromkeys(n for r in results for n in r.notes)),
        energy_j=sum(energy) if all(e is not None for e in energy) else None,  # type: ignore[arg-type]
        repetitions=tuple(results), **merged_directions(results))
    temperatures = [o.temperature_c for o in outcomes]
    transitions = [o.thermal_transitions for o in outcomes]
    return StepOutcome(result, tuple(c for o in outcomes for c in o.commands),
                       tuple(c for t in temperatures for c in t) if all(t is not None for t in temperatures) else None,
                       tuple(c for t in transitions for c in t) if all(t is not None for t in transitions) else None)


def _device(devices: list[dict[str, float] | None]) -> dict[str, float] | None:
    """Flows added up, states the last run's, the write amplification of the flows."""
    if any(d is None for d in devices):
        return None
    out: dict[str, float] = {}
    for d in devices:
        for key, value in d.items():  # type: ignore[union-attr]
            out[key] = value if key in STATES else out.get(key, 0.0) + value
    host, nand = out.get("host_write_bytes"), out.get("nand_write_bytes")
    if host is not None and nand is not None and "write_amplification" in out:
        out["write_amplification"] = nand / host if host else 0.0
    return out


def spread(score: dict[str, Any], measured: list[tuple[Step, StepResult]],
           score_of: Callable[[list[tuple[Step, StepResult]]], dict[str, Any]]) -> dict[str, Any]:
    """`score` with the spread of its value over the runs of its repeated steps: the score of
    each run alone (`score_of` the steps with that run's result)."""
    runs = max((len(r.repetitions) for _, r in measured), default=0)
    if runs < 2 or score.get("value") is None:
        return score
    values = []
    for k in range(runs):
        alone = [(step, r.repetitions[k] if len(r.repetitions) > k else r) for step, r in measured]
        value = score_of(alone).get("value")
        if isinstance(value, (int, float)) and math.isfinite(value):
            values.append(float(value))
    if len(values) < 2:
        return score
    return {**score, "spread": {"runs": len(values), "min": min(values), "max": max(values),
                                "stdev": statistics.stdev(values)}}


def alike(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Are two scores inside each other's spread (one known at least)? A score without a
    spread is its value alone."""
    if "spread" not in a and "spread" not in b:
        return False

    def bounds(s: dict[str, Any]) -> tuple[float, float]:
        known = s.get("spread")
        return (known["min"], known["max"]) if known else (s["value"], s["value"])

    (a_low, a_high), (b_low, b_high) = bounds(a), bounds(b)
    return a_low <= b_high and b_low <= a_high
