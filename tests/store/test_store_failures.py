"""Failures of the disk under the database: a full disk while a run is being saved,
and a database damaged in the middle. Each is a message that says what was kept and
what to do, never a traceback; a damaged database is never written to."""

import hashlib
import os
import random
import sqlite3
import subprocess
import tempfile
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from ssdlab.catalogue import Scale, compile_tests
from ssdlab.errors import SsdlabError
from ssdlab.model import TestStatus
from ssdlab.store import Store
from tests.conftest import run_cli
from tests.factories import result
from tests.store.test_store import new_run, record_steps

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mount)")


@contextmanager
def small_tmpfs(size: str):
    directory = Path(tempfile.mkdtemp(prefix="ssdlab-full-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                   check=True)
    try:
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], check=True)
        directory.rmdir()


def big_result(index: int):
    """About 60 KiB of JSON: a long series of a fill."""
    return result(mbps=100.0 + index, per_gib=[(g / 10, 500.0 + index) for g in range(1, 2500)])


@needs_root
def test_a_full_disk_while_saving_a_step_keeps_every_finished_step_and_says_how_to_resume():
    with small_tmpfs("640k") as disk:
        db = disk / "ssdlab.db"
        saved = []
        with Store(db) as store:
            run_id = new_run(store)
            record_steps(store, run_id, 1)  # two finished tests
            fill = store.create_run(
                name="fill", target="/tmp/y", target_kind="file", suite="quick", suite_toml="",
                scale=0.01, tests=compile_tests(["mixed-random"], Scale(0.01), 1 << 30),
                identity={}, host={}, engine={}, options={})
            test = store.tests(fill)[0].test
            store.start_test(fill, 0)
            with pytest.raises(SsdlabError) as full:
                for index, step in enumerate(test.steps):
                    store.save_step(fill, 0, index, step, big_result(index), ("job",))
                    saved.append((step, big_result(index)))
        message = str(full.value)
        assert f"the disk holding {db} is full" in message
        assert f"every finished test and step of run {fill} is stored" in message
        assert f"`ssdlab resume {fill}`" in message
        assert 3 <= len(saved) < len(test.steps)  # it filled up part-way through the test

        subprocess.run(["mount", "-o", "remount,size=16M", str(disk)], check=True)  # space freed
        with Store(db) as store:
            assert store.integrity_check() == "ok"
            assert [r.status for r in store.tests(run_id)] == [TestStatus.DONE] * 2
            assert [len(store.steps(run_id, seq)) for seq in (0, 1)] == [1, 1]
            kept = store.steps(fill, 0)
            assert [(k.step, k.result) for k in kept] == saved
            store.save_step(fill, 0, len(saved), test.steps[len(saved)], result(), ())  # writes again


def stored_runs(db: Path, runs: int = 6) -> None:
    """Runs whose steps fill many pages, checkpointed into the database file."""
    with Store(db) as store:
        for _ in range(runs):
            run_id = new_run(store)
            record_steps(store, run_id, 4)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def damage_the_middle(db: Path) -> None:
    """Garbage over eight pages from the middle of the file (not its first page): most of
    the steps table of stored_runs, wherever its rows landed."""
    size = db.stat().st_size
    with db.open("r+b") as f:
        f.seek(size // 2 // 4096 * 4096)
        f.write(random.Random(9).randbytes(8 * 4096))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_damaged_database_is_reported_to_readers_and_never_written(tmp_path):
    db = tmp_path / "ssdlab.db"
    stored_runs(db)
    damage_the_middle(db)
    before = sha256(db)
    damaged = f"the database {db} is damaged ("
    recover = f"`ssdlab db recover {db} -o RECOVERED.db`"

    reading = [("runs",), ("show", "1"), ("export", "1"), ("export", "6"),
               ("report", "1", "6", "-o", tmp_path / "r.html"), ("compare", "1", "6")]
    outcomes = [run_cli(*args, db=db, check=False) for args in reading]
    for args, proc in zip(reading, outcomes, strict=True):
        assert "Traceback" not in proc.stderr, args
        message = " ".join(proc.stderr.split())
        assert proc.returncode == 0 or (damaged in message and recover in message
                                        and "or use another --db" in message), (args, message)
    assert sum(proc.returncode == 2 for proc in outcomes) >= 2  # the damage is read by some

    writing = run_cli("run", "sim:wd-sn850-1tb", "--tests", "rand-read-burst", "--scale", "0.01",
                      db=db, check=False)
    assert writing.returncode == 2 and damaged in " ".join(writing.stderr.split())
    assert "ssdlab will not write to it" in " ".join(writing.stderr.split())
    with pytest.raises(SsdlabError, match="is damaged"):
        Store(db)
    assert sha256(db) == before


def test_an_unreadable_record_is_damage_named_as_such(tmp_path):
    db = tmp_path / "ssdlab.db"
    stored_runs(db, runs=1)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE steps SET result = '{\"busy_s\": ' WHERE seq = 0")
        conn.execute("UPDATE steps SET step = CAST(x'c328ff' AS TEXT) WHERE seq = 1")
    with Store.open_existing(db) as store:
        with pytest.raises(SsdlabError, match=r"is damaged \(a stored step result is not JSON"):
            store.steps(1, 0)
        with pytest.raises(SsdlabError, match=r"is damaged \(unreadable text"):
            store.steps(1, 1)


def test_every_sqlite_error_leaves_the_store_as_a_message(tmp_path):
    db = tmp_path / "ssdlab.db"
    stored_runs(db, runs=1)
    with Store.open_existing(db) as store, pytest.raises(
            SsdlabError, match=f"cannot write to the database {db}"):
        new_run(store)  # opened read-only
    store = Store(db)
    store.close()
    with pytest.raises(SsdlabError, match=f"the database {db} failed: .*closed"):
        store.runs()
