"""Many processes creating and writing one new database at the same moment: each
one's run is stored whole, and the database stays consistent."""

import multiprocessing
import sqlite3
from contextlib import closing

import pytest

from ssdlab.store import Store
from tests.store.test_store import new_run, record_steps

STEPS_PER_TEST = 2


def create_and_fill_a_run(db, barrier) -> int:
    barrier.wait()  # every process opens the new database at once
    with Store(db) as store:
        run_id = new_run(store)
        record_steps(store, run_id, STEPS_PER_TEST)
    return run_id


@pytest.mark.parametrize("processes", [8, 16])
def test_processes_creating_one_new_database_at_once_all_succeed(tmp_path, processes):
    db = tmp_path / "new" / "ssdlab.db"
    context = multiprocessing.get_context("fork")
    barrier = context.Manager().Barrier(processes)
    with context.Pool(processes) as pool:
        run_ids = pool.starmap(create_and_fill_a_run, [(db, barrier)] * processes)
    assert sorted(run_ids) == list(range(1, processes + 1))
    with Store(db) as store:
        assert store.integrity_check() == "ok"
        for run_id in run_ids:
            records = store.tests(run_id)
            assert [len(store.steps(run_id, r.seq)) for r in records] == [STEPS_PER_TEST] * 2
            assert all(r.score["value"] == float(r.seq) for r in records)
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
