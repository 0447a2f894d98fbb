"""Only ssdlab's databases are written: another program's SQLite file, or a file that is
not SQLite at all, is refused before anything is written to it; a database made by
ssdlab 0.1.0 (which did not mark its databases) is recognised and marked."""

import hashlib
import shutil
import sqlite3
from contextlib import closing

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.store.migrations import APPLICATION_ID, MIGRATIONS
from tests.conftest import run_cli
from tests.paths import DB_V010 as V010

READ = ("runs",)
WRITE = ("run", "sim:wd-sn850-1tb", "--suite", "quick", "--scale", "0.01")


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_sqlite(path, *sql):
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        for statement in sql:
            db.execute(statement)
    return path


def foreign_databases(tmp_path):
    return {
        "another program's tables": make_sqlite(
            tmp_path / "notes.db", "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)",
            "INSERT INTO notes (text) VALUES ('keep me')"),
        "another program's application id": make_sqlite(
            tmp_path / "marked.db", "PRAGMA application_id = 1234",
            "CREATE TABLE runs (id INTEGER PRIMARY KEY)"),
        "tables named like ssdlab's, not its schema": make_sqlite(
            tmp_path / "lookalike.db", "CREATE TABLE runs (id INTEGER PRIMARY KEY)",
            "CREATE TABLE tests (id INTEGER)", "CREATE TABLE steps (id INTEGER)",
            "PRAGMA user_version = 1"),
        "a WAL database of another program": make_sqlite(
            tmp_path / "wal.db", "PRAGMA journal_mode = WAL", "CREATE TABLE t (a)"),
    }


def not_sqlite_files(tmp_path):
    random_bytes = tmp_path / "random.db"
    random_bytes.write_bytes(bytes(range(256)) * 64)
    text = tmp_path / "blank.txt"
    text.write_text("\n")
    return {"random bytes": random_bytes, "a text file of one blank line": text}


@pytest.mark.parametrize("command", [READ, WRITE], ids=["runs", "run"])
def test_another_programs_file_is_refused_through_the_cli_and_left_as_it_was(tmp_path, command):
    files = {**foreign_databases(tmp_path), **not_sqlite_files(tmp_path)}
    before = {path: sha256(path) for path in files.values()}
    listing = sorted(tmp_path.iterdir())
    for what, path in files.items():
        refused = run_cli(*command, db=path, check=False)
        assert refused.returncode == 2, (what, refused.stdout, refused.stderr)
        message = " ".join(refused.stderr.split())
        assert f"{path} is not an ssdlab database" in message, what
        assert "Choose another --db" in message and "Traceback" not in refused.stderr, what
    assert {path: sha256(path) for path in files.values()} == before
    # No journal or lock left beside; reading a WAL database (to see its tables) needs
    # SQLite's -shm and -wal files, which a read-only connection leaves behind, empty.
    left = {path.name for path in tmp_path.iterdir()} - {path.name for path in listing}
    assert left <= ({"wal.db-shm", "wal.db-wal"} if command == READ else set())


def test_the_reason_for_a_refusal_is_named(tmp_path):
    files = foreign_databases(tmp_path)
    for what, reason in (("another program's application id", "application id is 0x000004d2"),
                         ("another program's tables", "tables notes"),
                         ("tables named like ssdlab's, not its schema", "not ssdlab's schema")):
        with pytest.raises(SsdlabError, match=reason):
            Store(files[what])
    with pytest.raises(SsdlabError, match="not an SQLite database file"):
        Store(not_sqlite_files(tmp_path)["random bytes"])


def test_a_new_database_is_marked_as_ssdlabs(tmp_path):
    with Store(tmp_path / "new.db") as store:
        store.close()
    with closing(sqlite3.connect(tmp_path / "new.db")) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID == 0x5353444C
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_an_empty_file_is_a_new_database(tmp_path):
    (tmp_path / "empty.db").touch()
    with Store(tmp_path / "empty.db") as store:
        assert store.runs() == []


def test_a_database_of_ssdlab_010_is_adopted_marked_and_migrated_by_a_writer(tmp_path):
    copy = tmp_path / "old.db"
    shutil.copy(V010, copy)
    with Store(copy) as store:
        assert [run.id for run in store.runs()] == [1, 2, 3, 4]
    with closing(sqlite3.connect(copy)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
