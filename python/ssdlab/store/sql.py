"""Two SQLite idioms the store relies on, written once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress


def write_transaction(conn: sqlite3.Connection) -> AbstractContextManager[sqlite3.Connection]:
    """A transaction holding the write lock from its start (BEGIN IMMEDIATE).

    Taking the lock first makes concurrent writers wait their turn (busy_timeout)
    instead of failing: a transaction that reads and only then writes cannot wait
    for the lock, SQLite refuses it at once. What it reads cannot change under it."""
    return _transaction(conn, "BEGIN IMMEDIATE")


def read_transaction(conn: sqlite3.Connection) -> AbstractContextManager[sqlite3.Connection]:
    """Several reads that see one state of the database, even while others write."""
    return _transaction(conn, "BEGIN")


@contextmanager
def _transaction(conn: sqlite3.Connection, begin: str) -> Iterator[sqlite3.Connection]:
    conn.execute(begin)
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite rolls back by itself after some errors (disk full, I/O error), and a
    # rollback that fails too must not hide the error that caused it.
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def statements(script: str) -> Iterator[str]:
    """The statements of an SQL script, one by one, so that a script runs inside a
    transaction of ours: executescript() would commit that transaction first."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        # a ';' inside a string, a comment or a trigger body does not end a statement
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\n;"):
                yield pending
            pending = ""
