"""Opening a database: for writing (created when missing, or only when it exists) or
for reading only, refusing any file that is not an ssdlab database before anything is
written to it.

A writer checks that the database is whole (quick_check) and migrates it. A reader
never writes: it opens the file read-only (`mode=ro`), and reads a database of an
older schema through a private migrated copy, so that the release that wrote it can
still open it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from enum import Enum
from pathlib import Path
from urllib.parse import quote

from ssdlab.errors import SsdlabError
from ssdlab.store.failures import BUSY_TIMEOUT_S, Damaged, NoDatabase, NotOurs
from ssdlab.store.migrations import MIGRATIONS, Claim, Ownership, claim, migrate, refuse_newer
from ssdlab.store.sql import read_transaction

SQLITE_HEADER = b"SQLite format 3\x00"


class Access(Enum):
    CREATE = "create"  # read and write; a missing database is created
    WRITE = "write"    # read and write an existing database
    READ = "read"      # read an existing database, write nothing


def open_database(path: Path, access: Access) -> sqlite3.Connection:
    """A connection to the ssdlab database at `path`; NotOurs, NoDatabase or Damaged
    when it cannot be used as `access` asks."""
    header = read_header(path)
    if header is None and access is not Access.CREATE:
        raise NoDatabase()
    if header and header != SQLITE_HEADER:  # SQLite takes an empty file as a new database
        raise NotOurs("it is not an SQLite database file")
    if access is Access.READ:
        return _open_for_reading(path)
    if access is Access.CREATE:
        _make_directory(path.parent)
    conn = connect(uri(path))
    try:
        _prepare_for_writing(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def connect(database: str) -> sqlite3.Connection:
    """`database` is a `file:` URI, or "" for a private temporary database. Autocommit
    (the store opens its own transactions); the busy timeout is set first, before
    anything can meet a lock."""
    conn = sqlite3.connect(database, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    conn.text_factory = _text
    return conn


def uri(path: Path, query: str = "") -> str:
    """A URI, so that no file name is taken for options (`?`, `#`, `file:` in it)."""
    return f"file:{quote(str(path.absolute()))}" + (f"?{query}" if query else "")


def _text(value: bytes) -> str:
    # sqlite3 would report text that is not UTF-8 as an OperationalError like any other;
    # ssdlab writes only UTF-8, so such text is a damaged page.
    try:
        return value.decode()
    except UnicodeDecodeError as exc:
        raise Damaged(f"unreadable text at byte {exc.start}") from None


def read_header(path: Path) -> bytes | None:
    """The first bytes of the file, where SQLite writes its name; None if there is none."""
    try:
        with path.open("rb") as f:
            return f.read(len(SQLITE_HEADER))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SsdlabError(f"cannot read {path}: {exc.strerror}; give another --db") from None


def _make_directory(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SsdlabError(f"cannot create the directory {directory} for the database: "
                          f"{exc.strerror}; give another path with --db or SSDLAB_DB") from None


def _prepare_for_writing(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Each check before the next kind of work: whose it is before reading all of it,
    # whole before the first write, migrated (and so marked) before WAL, which
    # rewrites the header.
    _refuse_foreign(conn)
    _refuse_damaged(conn)
    migrate(conn)
    _use_wal(conn)


def _refuse_foreign(conn: sqlite3.Connection) -> Claim:
    with read_transaction(conn):  # another process may be creating it right now
        found = claim(conn)
    if found.ownership is Ownership.FOREIGN:
        raise NotOurs(found.reason)
    return found


def _refuse_damaged(conn: sqlite3.Connection) -> None:
    """quick_check reads every page of the file once (no index cross-checks): it finds
    a damaged database before a run stores anything in it."""
    verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    if verdict != "ok":
        raise Damaged(verdict.removeprefix("*** in database main ***").strip().replace("\n", "; "))


def _use_wal(conn: sqlite3.Connection) -> None:
    """WAL: readers never wait for a writer, and a commit is one append. Switching needs
    every other connection gone for a moment, and SQLite answers "database is locked"
    at once rather than waiting, so the switch is retried until the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _open_for_reading(path: Path) -> sqlite3.Connection:
    conn = _connect_read_only(path)
    try:
        found = _refuse_foreign(conn)
        if found.ownership is Ownership.NEW:
            raise NoDatabase()
        refuse_newer(found.version)
        if found.version == len(MIGRATIONS):
            return conn
        copy = _migrated_copy(conn)
    except BaseException:
        conn.close()
        raise
    conn.close()
    return copy


def _connect_read_only(path: Path) -> sqlite3.Connection:
    conn = connect(uri(path, "mode=ro"))
    try:
        conn.execute("SELECT count(*) FROM sqlite_master")  # opens the file, and its WAL
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        without_wal = exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_CANTOPEN,
                                                      sqlite3.SQLITE_READONLY)
        if not without_wal or _writable(path):
            raise
    # Reading a WAL database needs its -shm and -wal files, which SQLite cannot create in
    # a directory it cannot write (a read-only mount, another user's). When neither the
    # file nor its directory can be written, nothing is writing to the database, so it is
    # safe to read it as immutable: without locks, and without its WAL (refused when it
    # has one, whose changes would be missed).
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size:
        raise SsdlabError(
            f"the database {path} has changes not yet merged from {wal}, which cannot be read "
            "in a read-only directory: copy both files to a writable directory and use the "
            "copy with --db")
    return connect(uri(path, "immutable=1"))


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) or os.access(path.parent, os.W_OK)


def _migrated_copy(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A database of an older schema, for reading: a private temporary database (on
    disk, deleted when closed) holding a copy of it, migrated; the file stays as it is."""
    copy = connect("")
    try:
        conn.backup(copy)
        migrate(copy)
    except BaseException:
        copy.close()
        raise
    return copy
