"""The store: every run, test and step in SQLite (WAL), with numbered migrations.

Where: --db PATH, else $SSDLAB_DB, else $XDG_DATA_HOME/ssdlab/ssdlab.db
(~/.local/share/ssdlab/ssdlab.db). `Store(path)` opens it for writing (creating it);
`Store.open_existing(path)` opens an existing one for reading only. Only ssdlab's
own databases are opened (opening.py); every JSON value is a versioned record
(records.py); every database error leaves as an SsdlabError (failures.py).

Several processes may write to one database at once: each write is one short
transaction that takes the write lock first and waits up to a minute for it.

Consistency: a step's result is committed in one transaction as soon as it
ends, and a test becomes `done` in the transaction that records its score. A
process killed at any moment (SIGKILL included) leaves every finished test
intact; `resume` reruns the first unfinished test from its first step.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ssdlab
from ssdlab import locks
from ssdlab.errors import SsdlabError
from ssdlab.model import Run, RunStatus, Step, StepResult, Test, TestStatus
from ssdlab.store import records
from ssdlab.store.failures import translating_errors
from ssdlab.store.opening import Access, open_database
from ssdlab.store.records import COMMANDS, ENGINE, HOST, IDENTITY, OPTIONS, RESULT, SCORE, STEP, TEST
from ssdlab.store.sql import write_transaction


def default_path() -> Path:
    if env := os.environ.get("SSDLAB_DB"):
        return Path(env)
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "ssdlab" / "ssdlab.db"


MAX_RUN_ID = 2**63 - 1  # SQLite's largest integer


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def ssdlab_version() -> str:
    """The version of this ssdlab, recorded with every run it makes."""
    return ssdlab.__version__


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


@translating_errors
class Store:
    def __init__(self, path: Path | str | None = None, access: Access = Access.CREATE):
        self.path = Path(path) if path else default_path()
        self._conn = open_database(self.path, access)

    @classmethod
    def open_existing(cls, path: Path | str | None = None, readonly: bool = True) -> Store:
        """A database that must exist already (else a message saying there is none);
        `readonly` for commands that only read: they write nothing to it."""
        return cls(path, Access.READ if readonly else Access.WRITE)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------

    def create_run(self, *, name: str | None, target: str, target_kind: str, suite: str,
                   suite_toml: str, scale: float, tests: list[Test], identity: dict,
                   host: dict, engine: dict, options: dict,
                   before_commit: Callable[[int], object] | None = None) -> int:
        """A new run, stored as running; `before_commit(run_id)` runs inside the transaction
        (to hold the run before any other process can see it)."""
        with write_transaction(self._conn) as db:
            cur = db.execute(
                "INSERT INTO runs (name, target, target_kind, suite, suite_toml, scale, status,"
                " created_at, identity, host, engine, options, ssdlab_version)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (name, target, target_kind, suite, suite_toml, scale, RunStatus.RUNNING, now(),
                 records.dump(IDENTITY, identity), records.dump(HOST, host),
                 records.dump(ENGINE, engine), records.dump(OPTIONS, options), ssdlab_version()))
            run_id = cur.lastrowid
            db.executemany(
                "INSERT INTO tests (run_id, seq, test_id, definition, status) VALUES (?,?,?,?,?)",
                [(run_id, seq, t.id, records.dump(TEST, t), TestStatus.PENDING)
                 for seq, t in enumerate(tests)])
            if before_commit is not None:
                before_commit(run_id)
        return run_id

    def run(self, run_id: int) -> Run:
        row = self._conn.execute(
            "SELECT id, name, target, target_kind, suite, scale, status, created_at, finished_at,"
            " identity, host, ssdlab_version FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise SsdlabError(f"there is no run {run_id} in {self.path}: `ssdlab runs` lists them")
        status = row[6]
        if status == RunStatus.RUNNING and not locks.run_is_held(self.path, run_id):
            status = RunStatus.INTERRUPTED  # its process is gone (killed, crashed, power lost)
        return Run(id=row[0], name=row[1], target=row[2], target_kind=row[3], suite=row[4],
                   scale=row[5], status=status, created_at=row[7], finished_at=row[8],
                   identity=records.load(IDENTITY, row[9]), host=records.load(HOST, row[10]),
                   ssdlab_version=row[11])

    def run_extras(self, run_id: int) -> dict[str, Any]:
        """What a run recorded beyond the Run value: engine, options, suite TOML."""
        self.run(run_id)
        engine, options, suite_toml = self._conn.execute(
            "SELECT engine, options, suite_toml FROM runs WHERE id = ?", (run_id,)).fetchone()
        return {"engine": records.load(ENGINE, engine), "options": records.load(OPTIONS, options),
                "suite_toml": suite_toml}

    def resolve_run_id(self, text: str) -> int:
        """A run id as the user wrote it: a number, or `latest`."""
        if text == "latest":
            row = self._conn.execute("SELECT max(id) FROM runs").fetchone()
            if row[0] is None:
                raise SsdlabError(f"there are no runs in {self.path} yet: start one with `ssdlab run`")
            return row[0]
        if not (text.isascii() and text.isdigit() and int(text) <= MAX_RUN_ID):
            raise SsdlabError(f"{text!r} is not a run id: give a number from `ssdlab runs`, or `latest`")
        return int(text)

    def runs(self) -> list[Run]:
        ids = [r[0] for r in self._conn.execute("SELECT id FROM runs ORDER BY id")]
        return [self.run(i) for i in ids]

    def set_run_engine(self, run_id: int, engine: dict) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE runs SET engine = ? WHERE id = ?",
                       (records.dump(ENGINE, engine), run_id))

    def finish_run(self, run_id: int, status: RunStatus) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?",
                       (status, now() if status is RunStatus.DONE else None, run_id))

    # -- tests and steps --------------------------------------------------

    def tests(self, run_id: int) -> list[TestRecord]:
        rows = self._conn.execute(
            "SELECT seq, definition, status, started_at, finished_at, score, error FROM tests"
            " WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [TestRecord(seq, records.load(TEST, d), TestStatus(st), sa, fa,
                           records.load(SCORE, sc) if sc else None, err)
                for seq, d, st, sa, fa, sc, err in rows]

    def start_test(self, run_id: int, seq: int) -> None:
        """Mark a test running, dropping steps of an earlier, interrupted attempt."""
        with write_transaction(self._conn) as db:
            db.execute("DELETE FROM steps WHERE run_id = ? AND seq = ?", (run_id, seq))
            db.execute("UPDATE tests SET status = ?, started_at = ?, finished_at = NULL,"
                       " score = NULL, error = NULL WHERE run_id = ? AND seq = ?",
                       (TestStatus.RUNNING, now(), run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.RUNNING, run_id))

    def save_step(self, run_id: int, seq: int, idx: int, step: Step, result: StepResult,
                  commands: tuple[str, ...]) -> None:
        with write_transaction(self._conn) as db:
            db.execute("INSERT INTO steps (run_id, seq, idx, step, result, commands)"
                       " VALUES (?,?,?,?,?,?)",
                       (run_id, seq, idx, records.dump(STEP, step), records.dump(RESULT, result),
                        records.dump(COMMANDS, {"commands": list(commands)})))

    def finish_test(self, run_id: int, seq: int, score: dict[str, Any]) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE tests SET status = ?, finished_at = ?, score = ?"
                       " WHERE run_id = ? AND seq = ?",
                       (TestStatus.DONE, now(), records.dump(SCORE, score), run_id, seq))

    def fail_test(self, run_id: int, seq: int, error: str) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE tests SET status = ?, error = ? WHERE run_id = ? AND seq = ?",
                       (TestStatus.FAILED, error, run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.FAILED, run_id))

    def steps(self, run_id: int, seq: int) -> list[StepRecord]:
        rows = self._conn.execute(
            "SELECT idx, step, result, commands FROM steps WHERE run_id = ? AND seq = ?"
            " ORDER BY idx", (run_id, seq)).fetchall()
        return [StepRecord(i, records.load(STEP, s), records.load(RESULT, r),
                           tuple(records.load(COMMANDS, c)["commands"])) for i, s, r, c in rows]

    def integrity_check(self) -> str:
        return self._conn.execute("PRAGMA integrity_check").fetchone()[0]
