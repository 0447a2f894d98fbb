"""Runs measured elsewhere, stored beside ssdlab's own (importing/ reads them).

An imported run is stored finished, in one transaction: its run, its one test and every
step with its result, or nothing at all. It is marked as imported by its suite name, and
its engine record says where it came from; `runs`, `show`, `export`, `report` and `compare`
read it as any other run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ssdlab.model import RunStatus, StepResult, Test, TestStatus
from ssdlab.store import Store
from ssdlab.store import records as rec


@dataclass(frozen=True)
class ImportedRun:
    """A run as another program measured it: one test whose steps carry what was measured."""

    name: str | None
    target: str
    target_kind: str            # device or file: what the workload was run on, as far as known
    suite: str                  # names the format: "fio-json (imported)"
    identity: dict[str, Any]
    host: dict[str, Any]
    engine: dict[str, Any]      # the program and its version, and the file imported
    options: dict[str, Any]     # what the import found beyond the figures
    test: Test
    results: tuple[tuple[StepResult, tuple[str, ...]], ...]  # each test step's result and commands
    score: dict[str, Any]
    started_at: str             # ISO 8601 UTC, as measured
    finished_at: str


def save_imported(store: Store, run: ImportedRun) -> int:
    """The run's id; the run, its test and steps are committed together, finished."""
    if len(run.results) != len(run.test.steps):
        raise ValueError("an imported run needs one result per step")

    def finish(run_id: int) -> None:
        # inside create_run's transaction: nothing is seen before all of it is written
        db = store._conn
        db.executemany(
            "INSERT INTO steps (run_id, seq, idx, step, result, commands) VALUES (?,?,?,?,?,?)",
            [(run_id, 0, idx, rec.dump(rec.STEP, step), rec.dump(rec.RESULT, result),
              rec.dump(rec.COMMANDS, {"commands": list(commands)}))
             for idx, (step, (result, commands)) in enumerate(zip(run.test.steps, run.results))])
        db.execute("UPDATE tests SET status = ?, started_at = ?, finished_at = ?, score = ?"
                   " WHERE run_id = ? AND seq = 0",
                   (TestStatus.DONE, run.started_at, run.finished_at, rec.dump(rec.SCORE, run.score), run_id))
        db.execute("UPDATE runs SET status = ?, created_at = ?, finished_at = ? WHERE id = ?",
                   (RunStatus.DONE, run.started_at, run.finished_at, run_id))

    return store.create_run(
        name=run.name, target=run.target, target_kind=run.target_kind, suite=run.suite,
        suite_toml=f"# {run.suite}: no ssdlab suite ran; the steps are the imported jobs\n", scale=1.0,
        tests=[run.test], identity=run.identity, host=run.host, engine=run.engine, options=run.options,
        before_commit=finish)
