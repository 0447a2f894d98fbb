"""Recovering a damaged database: every run, test and step that can still be read,
copied into a new database (`ssdlab db recover`).

The damaged database is only read: it is copied, with its WAL, and the copy is read. The
new one must not exist: it is made by the store's migrations at the damaged database's
schema version, every readable row is copied into it as it was stored (its JSON records
keep their versions: the store upgrades them when it reads them, as before), and it is
then opened as the store opens any database of an older version, which migrates it and
switches it to WAL. A run that lost nothing is the same in it as it was.

Each table is read around its damaged pages (salvage.py). A row is copied when its
records load as the store loads them and its parent rows (its run, test, step) were
copied: the new database's constraints refuse the others. Which rows a run has lost is
known from the table's primary-key index, which lies on other pages than the rows; when
that cannot be read either, the run may have lost rows that cannot be counted.

A run that lost rows is stored as failed, with a note (shown by `show`, in `export`)
saying what it lost; each of its tests that lost steps, step telemetry or its health log
is failed as well, saying the same, so that `ssdlab resume` measures it again. Telemetry
notes have no index to tell whose they were: a run that may have lost only notes keeps
its status and gets the note. The rows of a run whose own row is lost are left out, and
counted: a test or step cannot be stored without its run.

A sweep's rows are the sweep's, not its runs': a run loses nothing with its variant's row. A
variant whose run is lost is kept without a run, so that `ssdlab sweep --resume` makes it
anew; the variants of a sweep whose own row is lost are left out, and counted; a sweep that
lost variants is named, with how many (from the primary-key index, when rows cannot be read).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.errors import SsdlabError
from ssdlab.model import RunStatus
from ssdlab.store import Store, records
from ssdlab.store.failures import StoreProblem, database_error
from ssdlab.store.migrations import MIGRATIONS, Ownership, claim, migrate, refuse_newer
from ssdlab.store.opening import SQLITE_HEADER, connect, read_header, uri
from ssdlab.store.salvage import UNREADABLE, RowidRange, readable_rows
from ssdlab.store.sql import write_transaction

# The JSON records of each table, as the store reads them: a row whose record does not
# load (a damaged overflow page holds garbage, not a malformed page) is left out.
_RECORDS: dict[str, dict[str, records.RecordKind]] = {
    "runs": {"identity": records.IDENTITY, "host": records.HOST, "engine": records.ENGINE,
             "options": records.OPTIONS},
    "tests": {"definition": records.TEST, "score": records.SCORE},
    "steps": {"step": records.STEP, "result": records.RESULT, "commands": records.COMMANDS},
    "test_health": {"before": records.HEALTH, "after": records.HEALTH},
    "step_temperatures": {"series": records.TEMPERATURES},
    "step_health": {"log": records.HEALTH},
    "sweeps": {"spec": records.SWEEP_SPEC, "options": records.SWEEP_OPTIONS},
    "sweep_variants": {"overrides": records.OVERRIDES},
}
SWEEPS, VARIANTS = "sweeps", "sweep_variants"
_NOTES = "telemetry_notes"  # whose rows no index ties to their runs


@dataclass
class TableDamage:
    """What could not be copied of one table."""

    table: str
    unreadable: list[RowidRange] = field(default_factory=list)
    damaged_rows: int = 0  # read, but its records do not load or its values break the schema


@dataclass
class RunLoss:
    """What a recovered run lost, as rows per table."""

    run_id: int
    tests: dict[int, Counter[str]] = field(default_factory=dict)  # its copied tests, by seq
    lost_tests: dict[int, Counter[str]] = field(default_factory=dict)  # tests whose own row is lost
    run_rows: Counter[str] = field(default_factory=Counter)  # rows of no one test: notes
    uncertain: set[str] = field(default_factory=set)  # tables it may have lost rows of, uncounted

    @property
    def measurements(self) -> bool:
        """Whether it lost (or may have lost) more than telemetry notes."""
        return bool(self.tests or self.lost_tests or self._uncertain_measurements)

    @property
    def _uncertain_measurements(self) -> list[str]:
        return sorted(_words(table) for table in self.uncertain - {_NOTES})

    def test_loss(self, seq: int) -> str | None:
        """What its test `seq` (one whose own row was copied) lost, or may have; None: nothing."""
        lost = [f"without some of its rows ({row_counts(self.tests[seq])})"] if seq in self.tests else []
        if maybe := self._uncertain_measurements:
            lost.append(f"perhaps without rows of {', '.join(maybe)}")
        return " and ".join(lost) or None

    def describe(self, test_ids: dict[int, str]) -> str:
        """What it lost, in words; `test_ids` names its tests by seq."""
        parts = []
        for seq, rows in sorted(self.lost_tests.items()):
            its_rows = row_counts(rows - Counter(tests=1))
            parts.append(f"test #{seq + 1} is lost" + (f" with its rows ({its_rows})" if its_rows else ""))
        parts += [f"{test_ids[seq]} lost rows ({row_counts(rows)})" for seq, rows in sorted(self.tests.items())]
        if self.run_rows:
            parts.append(f"lost rows ({row_counts(self.run_rows)})")
        if self.uncertain:
            parts.append(f"may have lost rows of {', '.join(sorted(_words(t) for t in self.uncertain))} (they "
                         "cannot be read, nor can the index that tells whose they were)")
        return "; ".join(parts)


@dataclass
class SweepLoss:
    """What a sweep lost."""

    sweep_id: int
    own_row: bool = False  # its row is lost: its `variants` read are left out
    variants: int = 0  # its variants lost (or, with its own row, left out)
    runs: list[str] = field(default_factory=list)  # the variants kept whose runs are lost: resume makes them anew


@dataclass
class Recovery:
    copied: Counter[str]  # rows copied, per table
    damage: list[TableDamage]  # tables with rows that could not be copied
    incomplete: list[tuple[RunLoss, str]]  # the recovered runs that lost rows, described
    left_out: dict[int, Counter[str]]  # rows of runs whose own row is lost, per run id and table
    sweeps: list[SweepLoss] = field(default_factory=list)  # the sweeps that lost rows, by id

    @property
    def complete(self) -> bool:
        return not (self.damage or self.incomplete or self.left_out or self.sweeps)


def recover(damaged: Path, new: Path) -> Recovery:
    """Copy everything that can be read of the ssdlab database `damaged` into a new
    database `new`, marking what is incomplete; `damaged` is only read."""
    if new.exists():
        raise SsdlabError(f"{new} exists already: `ssdlab db recover` writes a new database; "
                          "give another -o, or move it away")
    header = read_header(damaged)
    if header is None:
        raise SsdlabError(f"there is no database at {damaged}: give the path of the damaged one")
    if header != SQLITE_HEADER:
        raise SsdlabError(f"{damaged} does not begin as an SQLite database does: it is not one, or its "
                          "first page is overwritten, and nothing in it can be recovered")
    _reserve(new)
    try:
        with _private_copy(damaged, new.parent) as copy, closing(_open_copy(copy, damaged)) as source:
            return _recover_into(source, _schema_version(source, damaged), damaged, new)
    except BaseException:
        for path in (new, *(Path(f"{new}{suffix}") for suffix in ("-journal", "-wal", "-shm"))):
            path.unlink(missing_ok=True)
        raise


@contextmanager
def _private_copy(damaged: Path, directory: Path) -> Iterator[Path]:
    """A copy of the damaged database, and of its WAL, in a directory of ours for as long as
    it is read: SQLite then needs no lock on the damaged one and leaves no file beside it,
    even in a read-only directory."""
    with tempfile.TemporaryDirectory(prefix=".ssdlab-recover-", dir=directory) as private:
        copy = Path(private) / "damaged.db"
        try:
            for suffix in ("", "-wal"):
                if suffix == "" or Path(f"{damaged}{suffix}").exists():
                    shutil.copyfile(f"{damaged}{suffix}", f"{copy}{suffix}")
        except OSError as exc:
            raise SsdlabError(f"cannot copy {damaged} to read it ({exc.strerror}): make room beside the new "
                              "database, or first copy what the disk can still read of it with ddrescue") from None
        yield copy


def _open_copy(copy: Path, damaged: Path) -> sqlite3.Connection:
    conn = connect(uri(copy, "mode=ro"))
    try:
        # A truncated file has fewer pages than its header says, which SQLite takes for a
        # malformed database unless its schema is writable (to be repaired): then it reads
        # the pages there are. The connection is read-only: nothing is written all the same.
        conn.execute("PRAGMA writable_schema = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise _schema_unreadable(exc, damaged) from exc
    return conn


def _schema_version(conn: sqlite3.Connection, damaged: Path) -> int:
    """The damaged database's schema version; an error if it is not ssdlab's."""
    try:
        found = claim(conn)
    except (sqlite3.Error, StoreProblem) as exc:
        raise _schema_unreadable(exc, damaged) from exc
    if found.ownership in (Ownership.FOREIGN, Ownership.NEW):
        reason = found.reason or "it has no tables"
        raise SsdlabError(f"{damaged} is not an ssdlab database ({reason}): there is nothing of ssdlab's "
                          "to recover in it")
    refuse_newer(found.version)
    return found.version


def _schema_unreadable(exc: Exception, path: Path) -> SsdlabError:
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if isinstance(exc, sqlite3.Error) and code not in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return database_error(exc, path)
    return SsdlabError(f"the list of tables of {path} (its schema, from its first page on) cannot be read "
                       f"({exc}): nothing in it can be recovered")


def _reserve(new: Path) -> None:
    """`new`, created empty here and now: never a file that appeared since it was checked."""
    try:
        os.close(os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except FileExistsError:
        raise SsdlabError(f"{new} exists already: give another -o, or move it away") from None
    except OSError as exc:
        raise SsdlabError(f"cannot create {new}: {exc.strerror}; give another -o") from None


def _recover_into(source: sqlite3.Connection, version: int, damaged: Path, new: Path) -> Recovery:
    target = connect(uri(new))
    try:
        target.execute("PRAGMA foreign_keys = ON")
        migrate(target, MIGRATIONS[:version])
        with write_transaction(target):
            copy = _Copy(source, target)
            copy.all_tables()
    except sqlite3.Error as exc:
        raise database_error(exc, new) from exc
    finally:
        target.close()
    losses, left_out = copy.losses()
    if not copy.copied and (any(copy.left.values()) or any(d.unreadable for d in copy.damage.values())):
        left = Counter({table: len(rows) for table, rows in copy.left.items() if rows})
        found = f": {row_counts(left)} were read, but cannot be stored without their runs" if left else ""
        raise SsdlabError(f"no run of {damaged} could be read{found}; nothing was written")
    with Store.open_existing(new, readonly=False) as store:
        incomplete = [(loss, _mark(store, loss)) for loss in losses]
    return Recovery(copy.copied, [d for d in copy.damage.values() if d.unreadable or d.damaged_rows],
                    incomplete, left_out, copy.sweep_losses())


def _mark(store: Store, loss: RunLoss) -> str:
    """Mark a recovered run that lost rows, so that it is not taken for a whole one; returns
    what it lost. Its tests that lost rows, or may have, fail: `resume` measures them again."""
    tests = store.tests(loss.run_id)
    for record in tests:
        if (lost := loss.test_loss(record.seq)) is not None:
            store.fail_test(loss.run_id, record.seq, f"recovered from a damaged database {lost}: "
                                                     f"`ssdlab resume {loss.run_id}` measures it again")
    if loss.measurements:  # also when no test of it is left to fail
        store.finish_run(loss.run_id, RunStatus.FAILED)
    described = loss.describe({record.seq: record.test.id for record in tests})
    store.add_telemetry_notes(loss.run_id, [f"recovered from a damaged database by `ssdlab db recover`: {described}"])
    return described


class _Copy:
    """Every readable row of the source, copied into the target table by table, parents first."""

    def __init__(self, source: sqlite3.Connection, target: sqlite3.Connection):
        self.source, self.target = source, target
        # the migrations create every table after those it refers to
        tables = [row[0] for row in target.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]
        self.columns = {table: self._columns(table) for table in tables}
        self.keys = {table: self._key(table) for table in tables}  # primary key columns
        # the tables that hold the rows of runs: those with a foreign key (to runs, tests, steps),
        # but a sweep's variants, which name their runs
        self.run_tables = [table for table in tables if table != VARIANTS and target.execute(
            "SELECT count(*) FROM pragma_foreign_key_list(?)", (table,)).fetchone()[0]]
        self.runs_lost: dict[int, list[str]] = {}  # sweep id -> its variants kept whose runs are lost
        self.copied: Counter[str] = Counter()
        self.copied_keys: dict[str, set[tuple]] = {table: set() for table in tables}
        self.left: dict[str, list[tuple[int | None, tuple]]] = {table: [] for table in tables}  # (run id, key)
        self.damage = {table: TableDamage(table) for table in tables}

    def all_tables(self) -> None:
        for table in self.columns:
            self._table(table)

    def _table(self, table: str) -> None:
        columns, key, damage = self.columns[table], self.keys[table], self.damage[table]
        insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        for _, *values in readable_rows(self.source, table, columns, damage.unreadable):
            row = dict(zip(columns, values))
            lost_run = (table == VARIANTS and row["run_id"] is not None
                        and (row["run_id"],) not in self.copied_keys["runs"])
            try:
                _load_records(table, row)
                # a variant whose run is lost is kept without it: `sweep --resume` makes its run anew
                self.target.execute(insert, [None if lost_run and c == "run_id" else row[c] for c in columns])
            except (StoreProblem, sqlite3.IntegrityError) as exc:
                # a row whose run, test or step is lost is not damaged itself
                orphan = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
                damage.damaged_rows += not orphan
                self.left[table].append((row["id"] if table == "runs" else row.get("run_id"),
                                         tuple(row[c] for c in key)))
                continue
            self.copied_keys[table].add(tuple(row[c] for c in key))
            self.copied[table] += 1
            if lost_run:
                self.runs_lost.setdefault(row["sweep_id"], []).append(row["name"])

    def _columns(self, table: str) -> list[str]:
        return [row[1] for row in self.target.execute("SELECT * FROM pragma_table_info(?)", (table,))]

    def _key(self, table: str) -> list[str]:
        return [name for _, name in sorted((row[5], row[1]) for row in self.target.execute(
            "SELECT * FROM pragma_table_info(?)", (table,)) if row[5])]

    def losses(self) -> tuple[list[RunLoss], dict[int, Counter[str]]]:
        """What each recovered run lost; and the rows read of runs whose own row is lost."""
        runs = {run_id for run_id, in self.copied_keys["runs"]}
        found = {run_id: RunLoss(run_id) for run_id in sorted(runs)}
        for table in self.run_tables:
            for run_id, loss in found.items():
                try:
                    lost = self._lost_keys(table, run_id)
                except UNREADABLE:
                    loss.uncertain.add(table)
                    continue
                for values in lost:
                    self._count(loss, table, dict(zip(self.keys[table], values)))
        left_out: dict[int, Counter[str]] = {}
        for table in ("runs", *self.run_tables):
            for run_id, _ in self.left[table]:
                if run_id not in runs:
                    left_out.setdefault(run_id, Counter())[table] += 1
        return [loss for loss in found.values() if loss.tests or loss.lost_tests or loss.run_rows
                or loss.uncertain], left_out

    def sweep_losses(self) -> list[SweepLoss]:
        """What each sweep lost: its own row (its variants left out), variants, its variants' runs."""
        if SWEEPS not in self.copied_keys:  # a database from before sweeps
            return []
        copied = {sweep_id for sweep_id, in self.copied_keys[SWEEPS]}
        lost_variants = Counter(sweep_id for sweep_id, _ in self._lost_variants())
        found = {sweep_id: SweepLoss(sweep_id, own_row=sweep_id not in copied, variants=n)
                 for sweep_id, n in lost_variants.items()}
        found |= {sweep_id: SweepLoss(sweep_id, own_row=True) for sweep_id, in (key for _, key in self.left[SWEEPS])
                  if sweep_id not in found}
        for sweep_id, names in self.runs_lost.items():
            found.setdefault(sweep_id, SweepLoss(sweep_id)).runs = names
        return [found[sweep_id] for sweep_id in sorted(found)]

    def _lost_variants(self) -> set[tuple]:
        """The keys (sweep id, index) of the variants not copied; from the index of the table's
        primary key when some of its rows could not be read (nothing, when it cannot be read either)."""
        left = {key for _, key in self.left[VARIANTS]}
        if not self.damage[VARIANTS].unreadable:
            return left
        try:
            stored = set(map(tuple, self.source.execute(f"SELECT sweep_id, idx FROM {VARIANTS}")))
        except UNREADABLE:
            return left
        return (stored | left) - self.copied_keys[VARIANTS]

    def _lost_keys(self, table: str, run_id: int) -> set[tuple]:
        """The keys of the rows of `run_id` in `table` that were not copied; from the index of
        the table's primary key when some of its rows could not be read."""
        if not self.damage[table].unreadable:
            return {key for of_run, key in self.left[table] if of_run == run_id}
        stored = self.source.execute(f"SELECT {', '.join(self.keys[table])} FROM {table} WHERE run_id = ?",
                                     (run_id,))
        return set(map(tuple, stored)) - self.copied_keys[table]

    def _count(self, loss: RunLoss, table: str, key: dict[str, Any]) -> None:
        seq = key.get("seq")
        if seq is None:
            loss.run_rows[table] += 1
        elif (loss.run_id, seq) in self.copied_keys["tests"]:
            loss.tests.setdefault(seq, Counter())[table] += 1
        else:
            loss.lost_tests.setdefault(seq, Counter())[table] += 1


def _load_records(table: str, row: dict[str, Any]) -> None:
    for column, kind in _RECORDS.get(table, {}).items():
        if row[column] is not None:
            records.load(kind, row[column])


def row_counts(counts: Counter[str]) -> str:
    """`steps: 3, step temperatures: 1`: rows per table."""
    return ", ".join(f"{_words(table)}: {n}" for table, n in sorted(counts.items()) if n)


def _words(table: str) -> str:
    return table.replace("_", " ")
