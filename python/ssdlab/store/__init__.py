"""The store: every run, test and step in SQLite (WAL), with numbered migrations.

Where: --db PATH, else $SSDLAB_DB, else $XDG_DATA_HOME/ssdlab/ssdlab.db
(~/.local/share/ssdlab/ssdlab.db).

Consistency: a step's result is committed in one transaction as soon as it
ends, and a test becomes `done` in the transaction that records its score. A
process killed at any moment (SIGKILL included) leaves every finished test
intact; `resume` reruns the first unfinished test from its first step.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ssdlab.errors import SsdlabError
from ssdlab.model import Run, RunStatus, Step, StepResult, Test, TestStatus
from ssdlab.store.migrations import migrate


def default_path() -> Path:
    if env := os.environ.get("SSDLAB_DB"):
        return Path(env)
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "ssdlab" / "ssdlab.db"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class TestRecord:
    seq: int
    test: Test
    status: TestStatus
    started_at: str | None
    finished_at: str | None
    score: dict[str, Any] | None
    error: str | None


@dataclass(frozen=True)
class StepRecord:
    idx: int
    step: Step
    result: StepResult
    commands: tuple[str, ...]


class Store:
    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path else default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.execute("PRAGMA busy_timeout = 10000")
            migrate(self._conn)
        except sqlite3.DatabaseError as exc:
            raise SsdlabError(f"cannot open the database {self.path}: {exc}; "
                              "give another path with --db or SSDLAB_DB") from None
        except OSError as exc:
            raise SsdlabError(f"cannot create the database {self.path}: {exc.strerror}; "
                              "give another path with --db or SSDLAB_DB") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- runs -------------------------------------------------------------

    def create_run(self, *, name: str | None, target: str, target_kind: str, suite: str,
                   suite_toml: str, scale: float, tests: list[Test], identity: dict,
                   host: dict, engine: dict, options: dict) -> int:
        with self._transaction() as db:
            cur = db.execute(
                "INSERT INTO runs (name, target, target_kind, suite, suite_toml, scale, status,"
                " created_at, identity, host, engine, options) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (name, target, target_kind, suite, suite_toml, scale, RunStatus.RUNNING, now(),
                 json.dumps(identity), json.dumps(host), json.dumps(engine), json.dumps(options)))
            run_id = cur.lastrowid
            db.executemany(
                "INSERT INTO tests (run_id, seq, test_id, definition, status) VALUES (?,?,?,?,?)",
                [(run_id, seq, t.id, t.model_dump_json(), TestStatus.PENDING)
                 for seq, t in enumerate(tests)])
        return run_id

    def run(self, run_id: int) -> Run:
        row = self._conn.execute(
            "SELECT id, name, target, target_kind, suite, scale, status, created_at, finished_at,"
            " identity, host FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise SsdlabError(f"there is no run {run_id} in {self.path}: `ssdlab runs` lists them")
        return Run(id=row[0], name=row[1], target=row[2], target_kind=row[3], suite=row[4],
                   scale=row[5], status=row[6], created_at=row[7], finished_at=row[8],
                   identity=json.loads(row[9]), host=json.loads(row[10]))

    def run_extras(self, run_id: int) -> dict[str, Any]:
        """What a run recorded beyond the Run value: engine, options, suite TOML."""
        self.run(run_id)
        engine, options, suite_toml = self._conn.execute(
            "SELECT engine, options, suite_toml FROM runs WHERE id = ?", (run_id,)).fetchone()
        return {"engine": json.loads(engine), "options": json.loads(options),
                "suite_toml": suite_toml}

    def resolve_run_id(self, text: str) -> int:
        """A run id as the user wrote it: a number, or `latest`."""
        if text == "latest":
            row = self._conn.execute("SELECT max(id) FROM runs").fetchone()
            if row[0] is None:
                raise SsdlabError(f"there are no runs in {self.path} yet: start one with `ssdlab run`")
            return row[0]
        if not text.isdigit():
            raise SsdlabError(f"{text!r} is not a run id: give a number from `ssdlab runs`, or `latest`")
        return int(text)

    def runs(self) -> list[Run]:
        ids = [r[0] for r in self._conn.execute("SELECT id FROM runs ORDER BY id")]
        return [self.run(i) for i in ids]

    def set_run_engine(self, run_id: int, engine: dict) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET engine = ? WHERE id = ?", (json.dumps(engine), run_id))

    def finish_run(self, run_id: int, status: RunStatus) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?",
                       (status, now() if status is RunStatus.DONE else None, run_id))

    # -- tests and steps --------------------------------------------------

    def tests(self, run_id: int) -> list[TestRecord]:
        rows = self._conn.execute(
            "SELECT seq, definition, status, started_at, finished_at, score, error FROM tests"
            " WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [TestRecord(seq, Test.model_validate_json(d), TestStatus(st), sa, fa,
                           json.loads(sc) if sc else None, err)
                for seq, d, st, sa, fa, sc, err in rows]

    def start_test(self, run_id: int, seq: int) -> None:
        """Mark a test running, dropping steps of an earlier, interrupted attempt."""
        with self._transaction() as db:
            db.execute("DELETE FROM steps WHERE run_id = ? AND seq = ?", (run_id, seq))
            db.execute("UPDATE tests SET status = ?, started_at = ?, finished_at = NULL,"
                       " score = NULL, error = NULL WHERE run_id = ? AND seq = ?",
                       (TestStatus.RUNNING, now(), run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.RUNNING, run_id))

    def save_step(self, run_id: int, seq: int, idx: int, step: Step, result: StepResult,
                  commands: tuple[str, ...]) -> None:
        with self._transaction() as db:
            db.execute("INSERT INTO steps (run_id, seq, idx, step, result, commands)"
                       " VALUES (?,?,?,?,?,?)",
                       (run_id, seq, idx, step.model_dump_json(), result.model_dump_json(),
                        json.dumps(list(commands))))

    def finish_test(self, run_id: int, seq: int, score: dict[str, Any]) -> None:
        with self._transaction() as db:
            db.execute("UPDATE tests SET status = ?, finished_at = ?, score = ?"
                       " WHERE run_id = ? AND seq = ?",
                       (TestStatus.DONE, now(), json.dumps(score), run_id, seq))

    def fail_test(self, run_id: int, seq: int, error: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE tests SET status = ?, error = ? WHERE run_id = ? AND seq = ?",
                       (TestStatus.FAILED, error, run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.FAILED, run_id))

    def steps(self, run_id: int, seq: int) -> list[StepRecord]:
        rows = self._conn.execute(
            "SELECT idx, step, result, commands FROM steps WHERE run_id = ? AND seq = ?"
            " ORDER BY idx", (run_id, seq)).fetchall()
        return [StepRecord(i, Step.model_validate_json(s), StepResult.model_validate_json(r),
                           tuple(json.loads(c))) for i, s, r, c in rows]

    def integrity_check(self) -> str:
        return self._conn.execute("PRAGMA integrity_check").fetchone()[0]
