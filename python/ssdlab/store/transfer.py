"""One run's stored rows, taken out of one database and put into another under the id the
other gives it: how a run made on a cluster's worker (in a private database there) reaches
the client's database, and how a run to be continued reaches the worker.

The rows are plain values (a table's name to its rows, each a column's name to its value),
so they travel as they are. The tables of a run are every table with a `run_id` column but
a sweep's variants (the sweep's, not the run's) and the settings changed on a real drive
(the machine's record, which must outlive any run); a row's own `id`, where it has one, is
the receiving database's to give.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ssdlab.store import Store
from ssdlab.store.failures import database_error
from ssdlab.store.sql import write_transaction

RunRows = dict[str, list[dict[str, Any]]]
_NOT_THE_RUNS = ("sweep_variants", "setting_changes")


def read_run(store: Store, run_id: int) -> RunRows:
    """Every stored row of run `run_id`, table by table, parents first."""
    conn = store._conn
    try:
        rows: RunRows = {}
        for table, columns in _run_tables(conn):
            key = "id" if table == "runs" else "run_id"
            cursor = conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {key} = ? ORDER BY rowid",
                                  (run_id,))
            rows[table] = [dict(zip(columns, row)) for row in cursor]
    except sqlite3.Error as exc:
        raise database_error(exc, store.path) from exc
    return rows


def write_run(store: Store, rows: RunRows, run_id: int | None = None) -> int:
    """Store `rows` (read_run's) as run `run_id`, replacing what that run had stored; None: as a
    new run, numbered by the store. In one transaction: all of it is stored, or none."""
    conn = store._conn
    (run,) = rows["runs"]
    try:
        with write_transaction(conn):
            run_id = _write(conn, rows, run, run_id)
    except sqlite3.Error as exc:
        raise database_error(exc, store.path) from exc
    return run_id


def _write(conn: sqlite3.Connection, rows: RunRows, run: dict[str, Any], run_id: int | None) -> int:
    tables = _run_tables(conn)
    fields = {column: value for column, value in run.items() if column != "id"}
    exists = run_id is not None and conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
    if exists:
        for table, _ in reversed(tables[1:]):  # children first
            conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        conn.execute(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in fields)} WHERE id = ?",
                     (*fields.values(), run_id))
    else:
        if run_id is not None:
            fields = {"id": run_id, **fields}
        cursor = conn.execute(f"INSERT INTO runs ({', '.join(fields)}) VALUES ({', '.join('?' * len(fields))})",
                              tuple(fields.values()))
        run_id = int(cursor.lastrowid or 0)
    for table, columns in tables[1:]:
        kept = [c for c in columns if c != "id"]
        insert = f"INSERT INTO {table} ({', '.join(kept)}) VALUES ({', '.join('?' * len(kept))})"
        conn.executemany(insert, (tuple(run_id if c == "run_id" else row[c] for c in kept)
                                  for row in rows.get(table, [])))
    return run_id


def _run_tables(conn: sqlite3.Connection) -> list[tuple[str, list[str]]]:
    """`runs` and the tables that hold a run's rows, with their columns, in the order they
    were created (each after those it refers to)."""
    tables = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").fetchall():
        columns = [row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))]
        if table == "runs" or ("run_id" in columns and table not in _NOT_THE_RUNS):
            tables.append((table, columns))
    return tables
