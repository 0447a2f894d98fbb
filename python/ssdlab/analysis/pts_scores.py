"""What a SNIA PTS test's score says (catalogue/pts.py), in rows and words: the measurement
window's matrices and each loop's steady state, for the report (report/pts_sections.py),
`export --format pts-csv` and the PTS benchmark, without the charts' libraries."""

from __future__ import annotations

from typing import Any

MATRIX_HEADER = ("run", "test", "loop", "cell", "figure", "window mean", "steady", "steady at round", "rounds run")


def matrix_rows(run_id: int, test_id: str, score: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The measurement window's mean of every cell of every loop: the PTS matrices, a row each
    (the report's tables and `export --format pts-csv`)."""
    rows = []
    for loop in score.get("loops", []):
        steady = loop["steady"]
        for cell, mean in loop["window_means"].items():
            rows.append((run_id, test_id, loop["name"], cell, loop["figure"], mean, steady["reached"],
                         steady["round"], steady["rounds_run"]))
    return rows


def steadiness(steady: dict[str, Any]) -> str:
    """A loop's steady state in words: where it was reached, or that it was not."""
    said = f"steady at round {steady['round']}" if steady["reached"] else "NOT steady"
    return f"{said} ({steady['rounds_run']} of at most {steady['max_rounds']} rounds)"
