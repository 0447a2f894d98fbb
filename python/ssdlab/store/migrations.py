"""Numbered schema migrations. The database's `PRAGMA user_version` is the number
of the last migration applied; each migration runs in its own transaction, so
a database is always at exactly one version. Never edit a released migration:
add the next one."""

from __future__ import annotations

import sqlite3
from typing import Sequence

from ssdlab.errors import SsdlabError

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
)


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection, migrations: Sequence[str] = MIGRATIONS) -> int:
    """Bring the database up to the latest version; returns the version reached."""
    current = schema_version(conn)
    if current > len(migrations):
        raise SsdlabError(
            f"this database has schema version {current} but this ssdlab knows only up to "
            f"{len(migrations)}: upgrade ssdlab, or use another database with --db")
    for number in range(current + 1, len(migrations) + 1):
        # executescript commits first; wrap the migration and the version bump in one
        # explicit transaction so a crash leaves the previous version intact.
        conn.executescript(f"BEGIN;\n{migrations[number - 1]}\nPRAGMA user_version = {number};\nCOMMIT;")
    return schema_version(conn)
