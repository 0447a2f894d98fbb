"""Numbered schema migrations, and which databases are ssdlab's to migrate.

The database's `PRAGMA user_version` is the number of the last migration applied;
the pending migrations run in one transaction with their version bumps, so a
database is always at exactly one version. Never edit a released migration: add the next one.

`PRAGMA application_id` marks a database as ssdlab's, set in the same transaction
as its first migration. ssdlab writes only to databases that carry the mark, to new
empty ones, and to unmarked ones that 0.1.0 made (it did not mark them), which it
recognises by their schema and marks.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from enum import Enum

from ssdlab.errors import SsdlabError
from ssdlab.store.failures import NotOurs
from ssdlab.store.sql import statements, write_transaction

APPLICATION_ID = int.from_bytes(b"SSDL", "big")  # 0x5353444C

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, their tests (with the compiled steps, so a resume runs exactly what
    # was planned) and every step's parameters, result and exact commands.
    """
    CREATE TABLE runs (
        id          INTEGER PRIMARY KEY,
        name        TEXT,
        target      TEXT NOT NULL,
        target_kind TEXT NOT NULL CHECK (target_kind IN ('device', 'file', 'sim')),
        suite       TEXT NOT NULL,
        suite_toml  TEXT NOT NULL,
        scale       REAL NOT NULL CHECK (scale > 0 AND scale <= 1),
        status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        created_at  TEXT NOT NULL,
        finished_at TEXT,
        identity    TEXT NOT NULL,   -- JSON: the target's identity
        host        TEXT NOT NULL,   -- JSON: CPU, kernel, OS
        engine      TEXT NOT NULL,   -- JSON: fio version and ioengine, or the simulator's
        options     TEXT NOT NULL    -- JSON: what `resume` needs to reopen the target
    );
    CREATE TABLE tests (
        run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        test_id     TEXT NOT NULL,
        definition  TEXT NOT NULL,   -- JSON: the compiled Test
        status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
        started_at  TEXT,
        finished_at TEXT,
        score       TEXT,            -- JSON
        error       TEXT,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE steps (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        idx         INTEGER NOT NULL,
        step        TEXT NOT NULL,   -- JSON: the Step
        result      TEXT NOT NULL,   -- JSON: the StepResult
        commands    TEXT NOT NULL,   -- JSON: exact fio job texts / commands, in order
        PRIMARY KEY (run_id, seq, idx),
        FOREIGN KEY (run_id, seq) REFERENCES tests(run_id, seq) ON DELETE CASCADE
    );
    """,
    # 2: the ssdlab version that made each run. Runs stored before this migration were
    # made by 0.1.0, the only release without it.
    """
    ALTER TABLE runs ADD COLUMN ssdlab_version TEXT NOT NULL DEFAULT '0.1.0';
    """,
    # 3: telemetry: the drive's health log before and after each test; each step's
    # temperature series, energy from a power meter and throttle events; and notes on what
    # telemetry could not read, for the run, one of its tests or one of its steps.
    """
    CREATE TABLE test_health (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        before      TEXT,            -- JSON: the health log; NULL when it could not be read
        after       TEXT,            -- JSON: the health log after the test; NULL until then
        PRIMARY KEY (run_id, seq),
        FOREIGN KEY (run_id, seq) REFERENCES tests(run_id, seq) ON DELETE CASCADE
    );
    CREATE TABLE step_temperatures (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        idx         INTEGER NOT NULL,
        series      TEXT NOT NULL,   -- JSON: °C per second of the step's busy time, and the source
        PRIMARY KEY (run_id, seq, idx),
        FOREIGN KEY (run_id, seq, idx) REFERENCES steps(run_id, seq, idx) ON DELETE CASCADE
    );
    CREATE TABLE step_energy (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        idx         INTEGER NOT NULL,
        meter       TEXT NOT NULL,   -- the --power-meter spec
        energy_j    REAL NOT NULL CHECK (energy_j >= 0),
        span_s      REAL NOT NULL CHECK (span_s >= 0),     -- the busy time integrated over
        covered_s   REAL NOT NULL CHECK (covered_s >= 0),  -- the part of it the samples cover
        PRIMARY KEY (run_id, seq, idx),
        FOREIGN KEY (run_id, seq, idx) REFERENCES steps(run_id, seq, idx) ON DELETE CASCADE
    );
    CREATE TABLE throttle_events (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        idx         INTEGER NOT NULL,
        start_s     INTEGER NOT NULL,   -- seconds of the step's busy time
        length_s    INTEGER NOT NULL,
        mbps_before REAL NOT NULL,
        mbps_during REAL NOT NULL,
        start_temperature_c REAL,
        peak_temperature_c  REAL,
        threshold   TEXT NOT NULL,      -- TMT1, TMT2, WCTEMP or transition counter
        PRIMARY KEY (run_id, seq, idx, start_s),
        FOREIGN KEY (run_id, seq, idx) REFERENCES steps(run_id, seq, idx) ON DELETE CASCADE
    );
    CREATE TABLE telemetry_notes (
        id          INTEGER PRIMARY KEY,   -- in the order they were written
        run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq         INTEGER,               -- the test it concerns; NULL: the whole run
        idx         INTEGER,               -- the step; NULL: the whole test or run
        note        TEXT NOT NULL
    );
    """,
    # 4: every change ssdlab makes to a drive's APST setting (idle-wake turns it off), with
    # the switch's original value, written before the change so that a killed run's setting
    # is restored at the next start (no foreign key: the record must outlive anything); and
    # the reason a test was skipped.
    """
    CREATE TABLE apst_changes (
        id          INTEGER PRIMARY KEY,
        run_id      INTEGER NOT NULL,  -- the run that changed it: while it is held, it is not restored
        switch      TEXT NOT NULL,   -- the sysfs file written: .../power/pm_qos_latency_tolerance_us
        original    TEXT NOT NULL,   -- what it held before: `auto`, `any` or µs
        changed_at  TEXT NOT NULL,
        restored_at TEXT             -- NULL until the original is written back
    );
    -- why a test could not run on its target (a power test without the telemetry it needs);
    -- such a test is stored as done, without a score, and shown as skipped
    ALTER TABLE tests ADD COLUMN skipped TEXT;
    """,
    # 5: a retention test's wait on a real drive (catalogue/retention.py): the run stopped after
    # the test's write phase, to be read back after `until`, with the seed of the pattern it
    # wrote. The wait is over once the test's off step (`idx`) is stored.
    """
    CREATE TABLE retention_waits (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        idx         INTEGER NOT NULL,   -- the off step, stored when the drive is read back
        seed        INTEGER NOT NULL,   -- fio's randseed of the verify pattern
        since       TEXT NOT NULL,      -- when the run stopped
        until       TEXT NOT NULL,      -- when the user was to come back
        PRIMARY KEY (run_id, seq),
        FOREIGN KEY (run_id, seq) REFERENCES tests(run_id, seq) ON DELETE CASCADE
    );
    """,
    # 6: the drive's health log read right after a step, where its test asks for it (the
    # endurance test's probes: health against the data written).
    """
    CREATE TABLE step_health (
        run_id      INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        idx         INTEGER NOT NULL,
        log         TEXT NOT NULL,   -- JSON: the health log
        PRIMARY KEY (run_id, seq, idx),
        FOREIGN KEY (run_id, seq, idx) REFERENCES steps(run_id, seq, idx) ON DELETE CASCADE
    );
    """,
    # 7: migration 4's APST changes made general: every setting ssdlab changes on a drive for
    # a while (drive_settings.py: `apst`, the sysfs switch; `write-cache`, NVMe feature 06h,
    # which the PTS enterprise tests turn off), with its original, written before the change;
    # the APST changes recorded so far are kept.
    """
    CREATE TABLE setting_changes (
        id          INTEGER PRIMARY KEY,
        run_id      INTEGER NOT NULL,  -- the run that changed it: while it is held, it is not restored
        setting     TEXT NOT NULL,   -- which: `apst` or `write-cache`
        place       TEXT NOT NULL,   -- where: the sysfs switch, or the controller node (/dev/nvme0)
        original    TEXT NOT NULL,   -- what it held before, written back
        changed_at  TEXT NOT NULL,
        restored_at TEXT             -- NULL until the original is written back
    );
    INSERT INTO setting_changes (id, run_id, setting, place, original, changed_at, restored_at)
        SELECT id, run_id, 'apst', switch, original, changed_at, restored_at FROM apst_changes;
    DROP TABLE apst_changes;
    """,
    # 8: sweeps (distributed/): one suite over variants of a simulated drive, each variant its
    # base preset with some keys overridden and run as an ordinary run. The variants are stored
    # with the sweep, before any runs, so that a resumed sweep runs exactly those that are missing.
    """
    CREATE TABLE sweeps (
        id          INTEGER PRIMARY KEY,
        base        TEXT NOT NULL,   -- the base preset as given: a built-in name or a file's path
        base_toml   TEXT NOT NULL,   -- its text: the variants not yet run are made from it
        suite       TEXT NOT NULL,   -- as given: a built-in suite's name or a suite file
        spec        TEXT NOT NULL,   -- JSON: how the variants were given (--set, --variants, --sample)
        options     TEXT NOT NULL,   -- JSON: what every variant's run shares (tests, scale, the suite's TOML)
        created_at  TEXT NOT NULL
    );
    CREATE TABLE sweep_variants (
        sweep_id    INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
        idx         INTEGER NOT NULL,   -- in the order the spec gives them
        name        TEXT NOT NULL,      -- the base and the overrides: wd-sn850-1tb[cache.max_cell_share=0.3]
        overrides   TEXT NOT NULL,      -- JSON: dotted key -> value
        run_id      INTEGER REFERENCES runs(id) ON DELETE SET NULL,   -- NULL until its run is made
        PRIMARY KEY (sweep_id, idx),
        UNIQUE (sweep_id, name)
    );
    """,
    # 9: whose setting a change was, and in which boot: a change left by a killed run is written
    # back only to the same drive (a drive swapped in at the same node is not touched), and one
    # from before the machine restarted is gone already (ssdlab never saves its changes).
    """
    ALTER TABLE setting_changes ADD COLUMN drive TEXT;   -- the drive's serial number; NULL unknown
    ALTER TABLE setting_changes ADD COLUMN boot_id TEXT; -- the kernel's boot_id then; NULL unknown
    """,
)


class Ownership(Enum):
    NEW = "new"              # empty: no tables, no mark
    OURS = "ours"            # marked as ssdlab's
    UNMARKED = "unmarked"    # made by ssdlab 0.1.0: its schema, no mark
    FOREIGN = "foreign"      # anything else: another program's


@dataclass(frozen=True)
class Claim:
    ownership: Ownership
    version: int
    reason: str = ""  # why it is foreign


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def claim(conn: sqlite3.Connection, migrations: Sequence[str] = MIGRATIONS) -> Claim:
    """Whose database this is, from its mark, its version and its tables (reads only)."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = schema_version(conn)
    if application_id == APPLICATION_ID:
        return Claim(Ownership.OURS, version)
    if application_id:
        return Claim(Ownership.FOREIGN, version,
                     f"its application id is {application_id:#010x}, another program's")
    tables = _table_columns(conn)
    if not tables and version == 0:
        return Claim(Ownership.NEW, version)
    if 1 <= version <= len(migrations) and tables == _columns_made_by(tuple(migrations[:version])):
        return Claim(Ownership.UNMARKED, version)
    names = ", ".join(sorted(tables)) or "none"
    return Claim(Ownership.FOREIGN, version,
                 f"it is at user_version {version} with tables {names}, not ssdlab's schema")


def _table_columns(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    names = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {name: tuple(col[1] for col in conn.execute(
        "SELECT * FROM pragma_table_info(?)", (name,))) for name in names}


@functools.cache
def _columns_made_by(migrations: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The tables and columns these migrations make: what an unmarked ssdlab database has."""
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as scratch:
        for migration in migrations:
            for statement in statements(migration):
                scratch.execute(statement)
        return _table_columns(scratch)


def refuse_newer(version: int, migrations: Sequence[str] = MIGRATIONS) -> None:
    if version > len(migrations):
        raise SsdlabError(
            f"this database has schema version {version} but this ssdlab knows only up to "
            f"{len(migrations)}: upgrade ssdlab, or use another database with --db")


def migrate(conn: sqlite3.Connection, migrations: Sequence[str] = MIGRATIONS) -> int:
    """Mark the database as ssdlab's and bring it up to the latest version; returns the
    version reached. NotOurs, before anything is written, if it is another program's.

    Race-free: whose it is and its version are read again under the write lock, so
    of several processes creating one database, one migrates and the others find it done."""
    with write_transaction(conn):
        found = claim(conn, migrations)
        if found.ownership is Ownership.FOREIGN:
            raise NotOurs(found.reason)
        refuse_newer(found.version, migrations)
        for number in range(found.version + 1, len(migrations) + 1):
            for statement in statements(migrations[number - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
        if found.ownership is not Ownership.OURS:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return schema_version(conn)
