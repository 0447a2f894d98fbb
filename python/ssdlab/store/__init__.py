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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

import ssdlab
from ssdlab import locks
from ssdlab.errors import SsdlabError
from ssdlab.model import Run, RunStatus, Step, StepResult, Test, TestStatus, Wait
from ssdlab.store import records
from ssdlab.store.failures import Damaged, translating_errors
from ssdlab.store.opening import Access, open_database
from ssdlab.store.records import (
    COMMANDS,
    ENGINE,
    HEALTH,
    HOST,
    IDENTITY,
    OPTIONS,
    RESULT,
    SCORE,
    STEP,
    TEMPERATURES,
    TEST,
)
from ssdlab.store.sql import write_transaction
from ssdlab.store.sweeps import SweepTables
from ssdlab.telemetry.meters import StepEnergy
from ssdlab.telemetry.results import StepTelemetry, TestHealth
from ssdlab.telemetry.throttle import ThrottleEvent


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
    error: str | None  # why it failed, or why it was skipped
    health: TestHealth | None = None  # None: no health log was read


@dataclass(frozen=True)
class StepRecord:
    idx: int
    step: Step
    result: StepResult
    commands: tuple[str, ...]
    telemetry: StepTelemetry = field(default_factory=StepTelemetry)
    throttles: tuple[ThrottleEvent, ...] = ()


@dataclass(frozen=True)
class TelemetryNote:
    seq: int | None  # the test it concerns; None: the whole run
    idx: int | None  # the step; None: the whole test or run
    note: str


# A retention wait w is over once its off step is stored; test t's wait is open until then
_WAIT_OVER = "EXISTS (SELECT 1 FROM steps s WHERE s.run_id = w.run_id AND s.seq = w.seq AND s.idx = w.idx)"
_OPEN_WAIT = f"SELECT 1 FROM retention_waits w WHERE w.run_id = t.run_id AND w.seq = t.seq AND NOT {_WAIT_OVER}"

# The tables that hold a test's telemetry, children of its steps first.
_TEST_TELEMETRY = ("step_temperatures", "step_energy", "step_health", "throttle_events", "test_health",
                   "telemetry_notes")
_THROTTLE_COLUMNS = ("start_s", "length_s", "mbps_before", "mbps_during", "start_temperature_c",
                     "peak_temperature_c", "threshold")


@translating_errors
class Store(SweepTables):
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
        status, until = row[6], None
        if status == RunStatus.RUNNING and not locks.run_is_held(self.path, run_id):
            # its process is gone: it stopped to wait (a retention test), or was killed, crashed, lost power
            wait = self.pending_wait(run_id)
            status, until = ((RunStatus.WAITING, wait.until) if wait is not None and not wait.over
                             else (RunStatus.INTERRUPTED, None))
        return Run(id=row[0], name=row[1], target=row[2], target_kind=row[3], suite=row[4],
                   scale=row[5], status=status, created_at=row[7], finished_at=row[8],
                   identity=records.load(IDENTITY, row[9]), host=records.load(HOST, row[10]),
                   ssdlab_version=row[11], waiting_until=until)

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
            "SELECT t.seq, definition, CASE WHEN skipped IS NOT NULL THEN 'skipped'"
            f" WHEN status = 'running' AND EXISTS ({_OPEN_WAIT}) THEN 'waiting' ELSE status END,"
            " started_at, finished_at, score, coalesce(error, skipped),"
            " h.seq IS NOT NULL, before, after FROM tests t"
            " LEFT JOIN test_health h ON h.run_id = t.run_id AND h.seq = t.seq"
            " WHERE t.run_id = ? ORDER BY t.seq", (run_id,)).fetchall()
        return [TestRecord(seq, records.load(TEST, d), TestStatus(st), sa, fa,
                           records.load(SCORE, sc) if sc else None, err,
                           TestHealth(before=_load_optional(HEALTH, before), after=_load_optional(HEALTH, after))
                           if read else None)
                for seq, d, st, sa, fa, sc, err, read, before, after in rows]

    def start_test(self, run_id: int, seq: int) -> None:
        """Mark a test running, dropping the steps, telemetry and wait of an earlier, interrupted attempt."""
        with write_transaction(self._conn) as db:
            for table in (*_TEST_TELEMETRY, "retention_waits", "steps"):
                db.execute(f"DELETE FROM {table} WHERE run_id = ? AND seq = ?", (run_id, seq))
            db.execute("UPDATE tests SET status = ?, started_at = ?, finished_at = NULL,"
                       " score = NULL, error = NULL WHERE run_id = ? AND seq = ?",
                       (TestStatus.RUNNING, now(), run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.RUNNING, run_id))

    def continue_test(self, run_id: int, seq: int, keep: int) -> None:
        """Mark a test running again with its first `keep` stored steps kept (a retention test
        read back after its wait, an endurance or PTS test resumed goes on from them) and those
        after them dropped, with their telemetry. The throttle events go: the test's end finds
        them again among all its steps."""
        with write_transaction(self._conn) as db:
            db.execute("DELETE FROM throttle_events WHERE run_id = ? AND seq = ?", (run_id, seq))
            for table in ("steps", "step_temperatures", "step_energy", "step_health", "telemetry_notes"):
                db.execute(f"DELETE FROM {table} WHERE run_id = ? AND seq = ? AND idx >= ?", (run_id, seq, keep))
            db.execute("UPDATE tests SET status = ?, finished_at = NULL, score = NULL, error = NULL"
                       " WHERE run_id = ? AND seq = ?", (TestStatus.RUNNING, run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.RUNNING, run_id))

    # -- a retention test's wait -----------------------------------------

    def begin_wait(self, run_id: int, wait: Wait) -> None:
        """The run stops here: its test `wait.seq` waits for the drive to be read back."""
        with write_transaction(self._conn) as db:
            db.execute("INSERT OR REPLACE INTO retention_waits (run_id, seq, idx, seed, since, until)"
                       " VALUES (?,?,?,?,?,?)", (run_id, wait.seq, wait.idx, wait.seed, wait.since, wait.until))

    def wait(self, run_id: int, seq: int) -> Wait | None:
        """The test's wait, over or not; None when it has not waited."""
        found = self._waits("w.run_id = ? AND w.seq = ?", (run_id, seq))
        return found[0] if found else None

    def pending_wait(self, run_id: int) -> Wait | None:
        """The wait of the run's test that is not done yet, over or not (a run stops at its
        first wait, so it has at most one)."""
        found = self._waits("w.run_id = ? AND t.status != ? AND t.skipped IS NULL", (run_id, TestStatus.DONE))
        return found[0] if found else None

    def _waits(self, where: str, params: tuple[Any, ...]) -> list[Wait]:
        rows = self._conn.execute(
            f"SELECT w.seq, w.idx, w.seed, w.since, w.until, {_WAIT_OVER} FROM retention_waits w"
            f" JOIN tests t ON t.run_id = w.run_id AND t.seq = w.seq WHERE {where} ORDER BY w.seq",
            params).fetchall()
        return [_row(Wait, seq=seq, idx=idx, seed=seed, since=since, until=until, over=bool(over))
                for seq, idx, seed, since, until, over in rows]

    def save_step(self, run_id: int, seq: int, idx: int, step: Step, result: StepResult,
                  commands: tuple[str, ...], telemetry: StepTelemetry | None = None) -> None:
        with write_transaction(self._conn) as db:
            db.execute("INSERT INTO steps (run_id, seq, idx, step, result, commands)"
                       " VALUES (?,?,?,?,?,?)",
                       (run_id, seq, idx, records.dump(STEP, step), records.dump(RESULT, result),
                        records.dump(COMMANDS, {"commands": list(commands)})))
            if telemetry is not None and telemetry.temperature is not None:
                db.execute("INSERT INTO step_temperatures (run_id, seq, idx, series) VALUES (?,?,?,?)",
                           (run_id, seq, idx, records.dump(TEMPERATURES, telemetry.temperature)))
            if telemetry is not None and (energy := telemetry.energy) is not None:
                db.execute("INSERT INTO step_energy (run_id, seq, idx, meter, energy_j, span_s, covered_s)"
                           " VALUES (?,?,?,?,?,?,?)",
                           (run_id, seq, idx, energy.meter, energy.energy_j, energy.span_s, energy.covered_s))
            if telemetry is not None and telemetry.health is not None:
                db.execute("INSERT INTO step_health (run_id, seq, idx, log) VALUES (?,?,?,?)",
                           (run_id, seq, idx, records.dump(HEALTH, telemetry.health)))

    def save_test_telemetry(self, run_id: int, seq: int, health: TestHealth,
                            throttles: Mapping[int, Sequence[ThrottleEvent]] | None = None) -> None:
        """A test's health logs, replacing those saved before (none when neither was read),
        and its steps' throttle events."""
        with write_transaction(self._conn) as db:
            if health.before is not None or health.after is not None:
                db.execute("INSERT OR REPLACE INTO test_health (run_id, seq, before, after) VALUES (?,?,?,?)",
                           (run_id, seq, _dump_optional(HEALTH, health.before),
                            _dump_optional(HEALTH, health.after)))
            db.executemany(
                f"INSERT INTO throttle_events (run_id, seq, idx, {', '.join(_THROTTLE_COLUMNS)})"
                f" VALUES (?,?,?,{','.join('?' * len(_THROTTLE_COLUMNS))})",
                [(run_id, seq, idx, *(getattr(e, c) for c in _THROTTLE_COLUMNS))
                 for idx, events in (throttles or {}).items() for e in events])

    def add_telemetry_notes(self, run_id: int, notes: Sequence[str], seq: int | None = None,
                            idx: int | None = None) -> None:
        """Notes on what telemetry could not read; one already stored for the same place is
        not repeated (a resumed run probes its target again)."""
        if not notes:
            return
        with write_transaction(self._conn) as db:
            for note in notes:
                db.execute("INSERT INTO telemetry_notes (run_id, seq, idx, note) SELECT ?,?,?,?"
                           " WHERE NOT EXISTS (SELECT 1 FROM telemetry_notes WHERE run_id = ?"
                           " AND seq IS ? AND idx IS ? AND note = ?)",
                           (run_id, seq, idx, note, run_id, seq, idx, note))

    def telemetry_notes(self, run_id: int) -> list[TelemetryNote]:
        rows = self._conn.execute("SELECT seq, idx, note FROM telemetry_notes WHERE run_id = ? ORDER BY id",
                                  (run_id,)).fetchall()
        return [TelemetryNote(*row) for row in rows]

    def finish_test(self, run_id: int, seq: int, score: dict[str, Any]) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE tests SET status = ?, finished_at = ?, score = ?"
                       " WHERE run_id = ? AND seq = ?",
                       (TestStatus.DONE, now(), records.dump(SCORE, score), run_id, seq))

    def skip_test(self, run_id: int, seq: int, reason: str) -> None:
        """The test cannot run on this target: done without a score, `reason` as its error."""
        with write_transaction(self._conn) as db:
            db.execute("UPDATE tests SET status = ?, skipped = ?, finished_at = ? WHERE run_id = ? AND seq = ?",
                       (TestStatus.DONE, reason, now(), run_id, seq))

    def fail_test(self, run_id: int, seq: int, error: str) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE tests SET status = ?, error = ? WHERE run_id = ? AND seq = ?",
                       (TestStatus.FAILED, error, run_id, seq))
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (RunStatus.FAILED, run_id))

    def steps(self, run_id: int, seq: int, first: int = 0) -> list[StepRecord]:
        """The test's stored steps, from index `first` on."""
        rows = self._conn.execute(
            "SELECT idx, step, result, commands, series, meter, energy_j, span_s, covered_s, log FROM steps"
            " LEFT JOIN step_temperatures USING (run_id, seq, idx) LEFT JOIN step_energy USING (run_id, seq, idx)"
            " LEFT JOIN step_health USING (run_id, seq, idx)"
            " WHERE run_id = ? AND seq = ? AND idx >= ? ORDER BY idx", (run_id, seq, first)).fetchall()
        throttles: dict[int, list[ThrottleEvent]] = {}
        for idx, *values in self._conn.execute(
                f"SELECT idx, {', '.join(_THROTTLE_COLUMNS)} FROM throttle_events"
                " WHERE run_id = ? AND seq = ? AND idx >= ? ORDER BY idx, start_s", (run_id, seq, first)):
            throttles.setdefault(idx, []).append(_row(ThrottleEvent, **dict(zip(_THROTTLE_COLUMNS, values))))
        found = []
        for i, s, r, c, series, meter, energy_j, span_s, covered_s, log in rows:
            energy = None if meter is None else _row(StepEnergy, meter=meter, energy_j=energy_j, span_s=span_s,
                                                     covered_s=covered_s)
            found.append(StepRecord(i, records.load(STEP, s), records.load(RESULT, r),
                                    tuple(records.load(COMMANDS, c)["commands"]),
                                    StepTelemetry(temperature=_load_optional(TEMPERATURES, series), energy=energy,
                                                  health=_load_optional(HEALTH, log)),
                                    tuple(throttles.get(i, ()))))
        return found

    # -- drive setting changes (drive_settings.py) ---------------------------

    def record_setting_change(self, run_id: int, setting: str, place: str, original: str,
                              drive: str | None = None, boot_id: str | None = None) -> int:
        """Committed before the setting is written: the original survives a kill. `drive`: the
        serial number of the drive whose setting it is; `boot_id`: the kernel's, then."""
        with write_transaction(self._conn) as db:
            return db.execute("INSERT INTO setting_changes (run_id, setting, place, original, changed_at, drive,"
                              " boot_id) VALUES (?,?,?,?,?,?,?)",
                              (run_id, setting, place, original, now(), drive, boot_id)).lastrowid

    def unrestored_setting_changes(self) -> list[tuple[int, int, str, str, str, str | None, str | None]]:
        """(id, run id, setting, place, original, drive, boot id) of every change not yet undone,
        newest first: undone in that order, the oldest original is the one left."""
        return self._conn.execute("SELECT id, run_id, setting, place, original, drive, boot_id FROM setting_changes"
                                  " WHERE restored_at IS NULL ORDER BY id DESC").fetchall()

    def setting_restored(self, change_id: int) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE setting_changes SET restored_at = ? WHERE id = ? AND restored_at IS NULL",
                       (now(), change_id))

    def integrity_check(self) -> str:
        return self._conn.execute("PRAGMA integrity_check").fetchone()[0]


def _dump_optional(kind: records.RecordKind, value: BaseModel | None) -> str | None:
    return None if value is None else records.dump(kind, value)


def _load_optional(kind: records.RecordKind, text: str | None) -> Any:
    return None if text is None else records.load(kind, text)


M = TypeVar("M", bound=BaseModel)


def _row(model: type[M], **values: Any) -> M:
    """A record kept in columns rather than JSON, validated as it is read."""
    try:
        return model(**values)
    except ValidationError as exc:
        raise Damaged(f"a stored {model.__name__} is not valid: {exc.errors()[0]['msg']}") from None
