"""`ssdlab db recover` carries sweeps: an intact database's sweeps and variants as they were; a
variant whose run is lost kept without it (`sweep --resume` makes it anew), a variant whose row
is lost and a sweep whose row is lost named, the runs of that sweep kept as they were. The
sweeps' runs are synthetic (tests/distributed/stored_sweeps.py): this takes a second or two."""

import sqlite3
from contextlib import closing

import pytest

from ssdlab.distributed.results import sweep_table
from ssdlab.distributed.specs import SweepSpec
from ssdlab.distributed.sweeps import resume_sweep
from ssdlab.store import Store
from tests.conftest import run_cli
from tests.distributed.stored_sweeps import stored_sweep
from tests.store.test_store_recover import assert_whole_ssdlab_database, documents

GRID = SweepSpec(sets=("cache.max_cell_share=0.3,0.7", "geometry.dies_per_channel=4,8"))


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Sweep 1: a 2 x 2 grid (runs 1 to 4); sweep 2: two variants (runs 5 and 6)."""
    db = tmp_path_factory.mktemp("sweeps") / "ssdlab.db"
    stored_sweep(db, GRID, lambda o: 100.0 * o["drive.geometry.dies_per_channel"])
    stored_sweep(db, SweepSpec(sets=("geometry.dies_per_channel=4,8",)), lambda o: 50.0)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file
    return db


def tables(db):
    with Store.open_existing(db) as store:
        return [sweep_table(store, sweep.id).document() for sweep in store.sweeps()]


def recovered(tmp_path, db):
    new = tmp_path / "new.db"
    proc = run_cli("db", "recover", db, "-o", new, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return new, proc.returncode, " ".join(proc.stdout.split())


def test_an_intact_databases_sweeps_are_recovered_as_they_were(tmp_path, swept):
    new, status, said = recovered(tmp_path, swept)
    assert status == 0, said
    assert "recovered 6 runs, 12 tests and " in said and ", and 2 sweeps of 6 variants, from " in said
    assert_whole_ssdlab_database(new)
    assert tables(new) == tables(swept)
    assert documents(new) == documents(swept)


def test_what_a_sweep_lost_is_named_and_its_lost_runs_resumed_anew(tmp_path, swept):
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(swept.read_bytes())
    with closing(sqlite3.connect(damaged)) as conn, conn:  # as unreadable rows and damaged values leave them
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("DELETE FROM runs WHERE id = 1")  # the run of sweep 1's first variant
        conn.execute("UPDATE sweep_variants SET overrides = '{\"overrides\": ' WHERE sweep_id = 1 AND idx = 3")
        conn.execute("DELETE FROM sweeps WHERE id = 2")
    new, status, said = recovered(tmp_path, damaged)
    assert status == 1, said
    names = [v["name"] for v in tables(swept)[0]["variants"]]
    assert "could not read: sweep_variants, rows with damaged values: 1" in said
    assert "sweep 1 lost 1 of its variants" in said
    assert (f"sweep 1: the runs of 1 of its variants are lost ({names[0]}): `ssdlab sweep --resume 1` runs them "
            "anew") in said
    assert "left out: sweep 2, whose own row could not be read, with the 2 variants read of it" in said
    [table] = tables(new)
    assert [(v["name"], v["run_id"], v["status"]) for v in table["variants"]] == [
        (names[0], None, "not run"), (names[1], 2, "done"), (names[2], 3, "done")]
    runs = documents(new)
    assert sorted(runs) == [2, 3, 4, 5, 6]
    assert runs[5] == documents(swept)[5] and runs[6] == documents(swept)[6]  # sweep 2's runs lost nothing
    plan = resume_sweep("1", new, None)
    assert [(job.request.target, job.resume) for job in plan.jobs] == [(f"sim:{names[0]}", None)]


def test_unreadable_variants_are_counted_from_the_index(tmp_path, swept):
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(swept.read_bytes())
    with closing(sqlite3.connect(damaged)) as conn:
        [(page,)] = conn.execute("SELECT pageno FROM dbstat WHERE name = 'sweep_variants'").fetchall()
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    with damaged.open("r+b") as f:  # the table's only page overwritten; its primary key's index is elsewhere
        f.seek((page - 1) * page_size)
        f.write(b"\xa5" * page_size)
    new, status, said = recovered(tmp_path, damaged)
    assert status == 1, said
    assert "could not read: sweep_variants, rowids 1 and after" in said
    assert "sweep 1 lost 4 of its variants" in said and "sweep 2 lost 2 of its variants" in said
    assert [t["variants"] for t in tables(new)] == [[], []]
    assert documents(new) == documents(swept)
