"""Commands that only read (runs, show, export, report, compare) open the database
read-only: a database they cannot write works, and a database that does not exist is
reported, not created."""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from tests.conftest import SCRATCH_ROOT, run_cli

NOBODY = 65534


def read_commands(tmp_path):
    return {"runs": ("runs",), "show": ("show", "latest"), "export": ("export", "latest"),
            "report": ("report", "latest", "-o", tmp_path / "report.html"),
            "compare": ("compare", "1", "latest")}


@pytest.fixture(scope="module")
def stored_db(tmp_path_factory):
    """A database with two small simulated runs, as `ssdlab run` leaves it (WAL mode)."""
    db = tmp_path_factory.mktemp("stored") / "ssdlab.db"
    for _ in range(2):
        run_cli("run", "sim:wd-sn850-1tb", "--tests", "rand-read-burst", "--scale", "0.01", db=db)
    return db


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", ["runs", "show", "export", "report", "compare"])
def test_a_missing_database_is_reported_and_nothing_is_created(tmp_path, command):
    for db in (tmp_path / "typo" / "dir" / "x.db", tmp_path / "x.db"):
        refused = run_cli(*read_commands(tmp_path)[command], db=db, check=False)
        assert refused.returncode == 2
        assert (f"there is no ssdlab database at {db}: start a run first, or give --db"
                in " ".join(refused.stderr.split()))
    assert list(tmp_path.iterdir()) == []


def test_reading_writes_nothing_to_the_database(tmp_path, stored_db):
    before = sha256(stored_db)
    for args in read_commands(tmp_path).values():
        run_cli(*args, db=stored_db)
    assert sha256(stored_db) == before


@contextmanager
def read_only_mount(source: Path):
    """`source` seen through a read-only bind mount (root only)."""
    target = Path(tempfile.mkdtemp(prefix="ssdlab-ro-"))
    subprocess.run(["mount", "--bind", str(source), str(target)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], check=True)
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)
        target.rmdir()


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mount, another user)")


@needs_root
def test_a_wal_database_on_a_read_only_mount_is_read(tmp_path, stored_db):
    directory = tmp_path / "db"
    directory.mkdir()
    shutil.copy(stored_db, directory / "ssdlab.db")  # WAL mode, no -shm or -wal beside it
    with read_only_mount(directory) as mounted:
        for args in read_commands(tmp_path).values():
            run_cli(*args, db=mounted / "ssdlab.db")
        runs = json.loads(run_cli("runs", "--json", db=mounted / "ssdlab.db").stdout)
    assert [run["id"] for run in runs] == [1, 2]


@needs_root
def test_unmerged_changes_that_cannot_be_read_are_said_not_missed(tmp_path, stored_db):
    """A WAL holding changes the database file does not have yet (as a crash leaves it),
    in a read-only directory: SQLite could read the file only without them, so the
    command says so instead of showing old data."""
    live, directory = tmp_path / "live", tmp_path / "db"
    live.mkdir()
    directory.mkdir()
    shutil.copy(stored_db, live / "ssdlab.db")
    with closing(sqlite3.connect(live / "ssdlab.db", isolation_level=None)) as writer:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("UPDATE runs SET name = 'renamed'")
        for name in ("ssdlab.db", "ssdlab.db-wal"):
            shutil.copy(live / name, directory / name)
    with read_only_mount(directory) as mounted:
        refused = run_cli("runs", db=mounted / "ssdlab.db", check=False)
    assert refused.returncode == 2 and "changes not yet merged" in refused.stderr


@needs_root
def test_a_database_another_user_cannot_write_is_read_by_that_user(stored_db):
    """chmod 444, in a directory that user cannot write: no -shm or -wal can be made."""
    directory = Path(tempfile.mkdtemp(prefix="ssdlab-444-", dir=SCRATCH_ROOT))  # a path that user can reach
    try:
        db = directory / "ssdlab.db"
        shutil.copy(stored_db, db)
        db.chmod(0o444)
        directory.chmod(0o555)
        for args in (("runs",), ("show", "latest"), ("export", "latest"), ("compare", "1", "2")):
            proc = subprocess.run(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 sys.executable, "-m", "ssdlab", *args, "--db", str(db)],
                capture_output=True, text=True, timeout=120, check=False)
            assert proc.returncode == 0, (args, proc.stderr)
        assert [p.name for p in directory.iterdir()] == ["ssdlab.db"]
    finally:
        directory.chmod(0o755)
        shutil.rmtree(directory)
