"""The store: migrations, round trips, and consistency rules."""

import importlib.metadata
import sqlite3

import pytest

from ssdlab import locks
from ssdlab.catalogue import Scale, compile_tests
from ssdlab.errors import SsdlabError
from ssdlab.model import RunStatus, TestStatus
from ssdlab.store import Store, default_path
from ssdlab.store.migrations import APPLICATION_ID, MIGRATIONS, migrate, schema_version
from tests.factories import result

GiB = 1 << 30


def new_run(store, tests=("rand-read-burst", "whole-drive-fill")):
    compiled = compile_tests(list(tests), Scale(0.01), 2 * GiB)
    return store.create_run(name="<b>label</b>", target="/tmp/x", target_kind="file", suite="quick",
                            suite_toml="name='quick'", scale=0.01, tests=compiled,
                            identity={"path": "/tmp/x"}, host={"kernel": "6"}, engine={"engine": "fio"},
                            options={"size": 2 * GiB})


def record_steps(store, run_id, steps_per_test):
    """Run every test of `run_id` as execution does: its first steps, then its score."""
    for record in store.tests(run_id):
        store.start_test(run_id, record.seq)
        for index, step in enumerate(record.test.steps[:steps_per_test]):
            store.save_step(run_id, record.seq, index, step, result(), (f"job {index}",))
        # a score as the catalogue writes it, so every command can show it
        store.finish_test(run_id, record.seq,
                          {"name": record.test.primary_score, "value": float(record.seq), "unit": "MB/s"})


def test_fresh_database_is_at_the_latest_version_in_wal_mode(tmp_path):
    with Store(tmp_path / "a.db") as store:
        assert schema_version(store._conn) == len(MIGRATIONS)
        assert store._conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.integrity_check() == "ok"


def test_migrations_apply_in_order_and_keep_data(tmp_path):
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    steps = ("CREATE TABLE t (a INTEGER);", "INSERT INTO t VALUES (1);",
             "ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x';")
    assert migrate(conn, steps[:2]) == 2
    assert migrate(conn, steps) == 3
    assert conn.execute("SELECT a, b FROM t").fetchall() == [(1, "x")]
    assert migrate(conn, steps) == 3  # idempotent


def test_a_failing_migration_leaves_the_previous_version(tmp_path):
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    migrate(conn, ("CREATE TABLE t (a);",))
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, ("CREATE TABLE t (a);", "CREATE TABLE u (a); CREATE TABLE t (b);"))
    conn.execute("ROLLBACK") if conn.in_transaction else None
    assert schema_version(conn) == 1
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'u'").fetchone() is None


def test_a_database_from_a_newer_ssdlab_is_refused(tmp_path):
    path = tmp_path / "future.db"
    with Store(path) as store:
        store._conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(SsdlabError, match="upgrade ssdlab"):
        Store(path)
    with pytest.raises(SsdlabError, match="upgrade ssdlab"):
        Store.open_existing(path)


def test_a_file_that_is_not_a_database_is_refused_clearly(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SsdlabError, match="not an ssdlab database .*--db"):
        Store(path)


def test_default_path_follows_ssdlab_db_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("SSDLAB_DB", str(tmp_path / "env.db"))
    assert default_path() == tmp_path / "env.db"
    monkeypatch.delenv("SSDLAB_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "ssdlab" / "ssdlab.db"


def test_run_tests_and_steps_round_trip(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run_id = new_run(store)
        run = store.run(run_id)
        assert (run.status, run.name, run.scale) == (RunStatus.INTERRUPTED, "<b>label</b>", 0.01)
        with locks.hold_run(store.path, run_id):  # stored as running: running while held
            assert store.run(run_id).status is RunStatus.RUNNING
        records = store.tests(run_id)
        assert [r.test.id for r in records] == ["rand-read-burst", "whole-drive-fill"]
        assert all(r.status is TestStatus.PENDING for r in records)
        test = records[0].test
        store.start_test(run_id, 0)
        res = result(per_gib=[(0.5, 900.0), (1.0, 300.0)])
        store.save_step(run_id, 0, 0, test.steps[0], res, ("fio job text",))
        store.finish_test(run_id, 0, {"value": 1.0})
        saved, = store.steps(run_id, 0)
        assert saved.step == test.steps[0] and saved.result == res
        assert saved.commands == ("fio job text",)
        assert store.tests(run_id)[0].status is TestStatus.DONE
        assert store.tests(run_id)[0].score == {"value": 1.0}


def test_every_run_records_the_ssdlab_that_made_it(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run = store.run(new_run(store))
    assert run.ssdlab_version == importlib.metadata.version("ssdlab")


def test_a_writer_can_require_an_existing_database(tmp_path):
    with pytest.raises(SsdlabError, match="there is no ssdlab database at"):
        Store.open_existing(tmp_path / "none.db", readonly=False)
    assert list(tmp_path.iterdir()) == []
    Store(tmp_path / "r.db").close()
    with Store.open_existing(tmp_path / "r.db", readonly=False) as store:
        new_run(store)


def test_restarting_a_test_drops_its_partial_steps_only(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run_id = new_run(store)
        t0, t1 = (r.test for r in store.tests(run_id))
        store.start_test(run_id, 0)
        store.save_step(run_id, 0, 0, t0.steps[0], result(), ())
        store.finish_test(run_id, 0, {"value": 1})
        store.start_test(run_id, 1)
        store.save_step(run_id, 1, 0, t1.steps[0], result(), ())
        store.start_test(run_id, 1)  # a resumed attempt
        assert store.steps(run_id, 1) == []
        assert len(store.steps(run_id, 0)) == 1


def test_failure_is_recorded_and_unknown_run_is_a_clear_error(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run_id = new_run(store)
        store.start_test(run_id, 0)
        store.fail_test(run_id, 0, "fio failed")
        assert store.run(run_id).status is RunStatus.FAILED
        assert store.tests(run_id)[0].error == "fio failed"
        with pytest.raises(SsdlabError, match="ssdlab runs"):
            store.run(999)
