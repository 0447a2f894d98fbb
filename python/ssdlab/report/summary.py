"""The primary-score table: one row per test, one cell per run, each with its
relative difference to the first run. The report's summary and `ssdlab compare`
both print it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ssdlab.repeats import alike
from ssdlab.report.data import ReportData


@dataclass(frozen=True)
class ScoreCell:
    value: float
    unit: str
    relative_pct: float | None  # vs the first run; None for the first run or no comparable value
    # with `run --repeat`: (min, max, runs) of the score over the runs
    spread: tuple[float, float, int] | None = None
    # the difference to the first run is inside the runs' spread (repeats.alike)
    within_spread: bool = False


# A run without a score for a test: the test's state (skipped, failed, pending, ...), or
# NOT_IN_RUN when its suite has no such test
Unscored = str
NOT_IN_RUN = ""


@dataclass(frozen=True)
class ScoreRow:
    test: str
    title: str
    score_name: str
    cells: tuple[ScoreCell | Unscored, ...]  # one per run


def score_rows(data: ReportData) -> list[ScoreRow]:
    rows = []
    for group in data.tests:
        scores = {tr.run.run.id: tr.record.score for tr in group.runs
                  if tr.record.score and tr.record.score.get("value") is not None}
        states = {tr.run.run.id: tr.record.status.value for tr in group.runs}
        named = next(iter(scores.values()), None)
        first = scores.get(data.runs[0].run.id)
        cells = tuple(_cell(scores.get(run.run.id), first, is_first=(k == 0))
                      or states.get(run.run.id, NOT_IN_RUN) for k, run in enumerate(data.runs))
        rows.append(ScoreRow(group.id, group.title, named["name"] if named else "", cells))
    return rows


def _cell(score: dict[str, Any] | None, first: dict[str, Any] | None,
          is_first: bool) -> ScoreCell | None:
    if score is None:
        return None
    comparable = (not is_first and first is not None and first["value"]
                  and first["unit"] == score["unit"])
    relative = (score["value"] - first["value"]) / first["value"] * 100 if comparable else None
    known = score.get("spread")
    return ScoreCell(score["value"], score["unit"], relative,
                     (known["min"], known["max"], known["runs"]) if known else None,
                     bool(comparable and first is not None and alike(score, first)))


def format_value(cell: ScoreCell | Unscored) -> str:
    """'4,660.0 MB/s', '0.0931 ms': one decimal, or three significant digits below 10; a
    count as a whole number ('3 alarms'); for a run without a score, the test's state."""
    if isinstance(cell, Unscored):
        return cell
    if isinstance(cell.value, int):
        number = f"{cell.value:,}"
    else:
        number = f"{cell.value:,.1f}" if abs(cell.value) >= 10 else f"{cell.value:.3g}"
    return f"{number} {cell.unit}"


def format_relative(cell: ScoreCell | Unscored) -> str:
    """'+12.3 %', '-4.0 %'; '+0.4 % (within spread)' where the difference is inside what
    repeating the runs showed; empty for the first run and where nothing compares."""
    if isinstance(cell, Unscored) or cell.relative_pct is None:
        return ""
    return f"{cell.relative_pct:+.1f} %" + (" (within spread)" if cell.within_spread else "")


def format_spread(cell: ScoreCell | Unscored) -> str:
    """'105.8-106.0 over 3 runs' with `run --repeat`; else empty."""
    if isinstance(cell, Unscored) or cell.spread is None:
        return ""
    low, high, runs = cell.spread
    return f"{low:,.1f}-{high:,.1f} over {runs} runs"


def summary_json(data: ReportData) -> dict[str, Any]:
    """What `compare --json` prints: the runs, then per test each run's score."""
    return {"runs": [{"id": r.run.id, "label": r.label} for r in data.runs],
            "tests": [{"id": row.test, "title": row.title, "score": row.score_name,
                       "runs": [_cell_json(c) for c in row.cells]}
                      for row in score_rows(data)]}


def _cell_json(cell: ScoreCell | Unscored) -> dict[str, Any] | None:
    """None where the run has no such test; else its score, or the state it is in."""
    if isinstance(cell, Unscored):
        return {"value": None, "status": cell} if cell else None
    out = {"value": cell.value, "unit": cell.unit,
           "relative_pct": None if cell.relative_pct is None else round(cell.relative_pct, 2)}
    if cell.spread is not None:
        low, high, runs = cell.spread
        out["spread"] = {"min": low, "max": high, "runs": runs}
    if cell.spread is not None or cell.within_spread:
        out["within_spread"] = cell.within_spread
    return out
