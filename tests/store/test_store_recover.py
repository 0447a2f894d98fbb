"""`ssdlab db recover DAMAGED -o NEW`: what can still be read of a damaged database, copied
into a new one. The source database is made once: simulated runs of the quick suite and a
run with every kind of telemetry (temperatures, energy, throttle events, health, notes).
Each case damages a copy of it (truncated, pages overwritten) and recovers it through the
CLI: never a traceback; DAMAGED left as it was, nothing written beside it; NEW a whole
ssdlab database in which every run is either identical to the source's (as `export`
prints it: run_document) or marked as incomplete, every run readable in DAMAGED among the
identical ones; a run missing from NEW is reported; exit status 0 only when nothing was lost.
`runs` and `show` read NEW through their own functions, in-process, to keep this quick."""

import hashlib
import json
import random
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from ssdlab.cli.runs import runs_command
from ssdlab.cli.show import show_command
from ssdlab.documents import run_document
from ssdlab.errors import SsdlabError
from ssdlab.model import RunStatus, TestStatus
from ssdlab.store import Store
from ssdlab.store.migrations import APPLICATION_ID, MIGRATIONS
from tests.conftest import run_cli
from tests.paths import DB_V010 as V010
from tests.store.test_store import new_run, record_steps
from tests.store.test_store_telemetry import store_one_test

RECOVERED = "recovered from a damaged database"
SIM_DRIVES = ("wd-sn850-1tb", "generic-qlc-1tb", "samsung-980-1tb")


@dataclass(frozen=True)
class Page:
    number: int  # from 1
    table: str   # or index, as SQLite's dbstat names it
    kind: str    # internal, leaf or overflow
    cells: int


@dataclass(frozen=True)
class Source:
    db: Path
    page_size: int
    pages: list[Page]
    documents: dict[int, dict]  # every run as `export` prints it

    def of(self, table: str, kind: str) -> list[Page]:
        return [p for p in self.pages if p.table == table and p.kind == kind]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Source:
    db = tmp_path_factory.mktemp("source") / "ssdlab.db"
    for drive in SIM_DRIVES:
        run_cli("run", f"sim:{drive}", "--suite", "quick", "--scale", "0.001", db=db)
    with Store(db) as store:
        run_id = new_run(store)
        store.add_telemetry_notes(run_id, ["no hwmon temperature sensor"])
        store_one_test(store, run_id)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = [Page(*row) for row in conn.execute(
            "SELECT pageno, name, pagetype, ncell FROM dbstat ORDER BY pageno")]
    return Source(db, page_size, pages, documents(db))


def documents(db: Path) -> dict[int, dict]:
    with Store.open_existing(db) as store:
        return {run.id: json.loads(json.dumps(run_document(store, run.id, full=True))) for run in store.runs()}


def document_or_none(db: Path, run_id: int) -> dict | None:
    """The run as `export` prints it; None when it cannot be read."""
    try:
        with Store.open_existing(db) as store:
            return json.loads(json.dumps(run_document(store, run_id, full=True)))
    except SsdlabError:
        return None


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def overwrite(db: Path, offset: int, length: int, seed: int) -> None:
    with db.open("r+b") as f:
        f.seek(offset)
        f.write(random.Random(seed).randbytes(length))


def truncate(db: Path, size: int) -> None:
    with db.open("r+b") as f:
        f.truncate(size)


def pages(db: Path, src: Source, chosen: list[Page]) -> None:
    for page in chosen:
        overwrite(db, (page.number - 1) * src.page_size, src.page_size, seed=page.number)


Damage = Callable[[Path, Source], None]
DAMAGES: dict[str, Damage] = {
    "truncated by three pages": lambda db, src: truncate(db, (len(src.pages) - 3) * src.page_size),
    "truncated to half": lambda db, src: truncate(db, len(src.pages) // 2 * src.page_size),
    "truncated to its first page": lambda db, src: truncate(db, src.page_size),
    "truncated to its header": lambda db, src: truncate(db, 100),
    "its header overwritten": lambda db, src: overwrite(db, 0, 100, seed=1),
    "its first page overwritten after the header": lambda db, src: overwrite(db, 100, src.page_size - 100, seed=2),
    "its second page overwritten": lambda db, src: pages(db, src, src.pages[1:2]),
    "the root of the steps overwritten": lambda db, src: pages(db, src, src.of("steps", "internal")[:1]),
    "its last page overwritten": lambda db, src: pages(db, src, src.pages[-1:]),
    "every 9th page overwritten": lambda db, src: pages(db, src, src.pages[8::9]),
}


@dataclass(frozen=True)
class Recovered:
    damaged: Path
    new: Path
    returncode: int
    stdout: str
    stderr: str


def recover_damaged(tmp_path: Path, src: Source, damage: Damage) -> Recovered:
    damaged = tmp_path / "damaged" / "ssdlab.db"
    damaged.parent.mkdir()
    shutil.copy(src.db, damaged)
    damage(damaged, src)
    before = sha256(damaged)
    new = tmp_path / "new.db"
    proc = run_cli("db", "recover", damaged, "-o", new, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert sha256(damaged) == before
    assert [p.name for p in damaged.parent.iterdir()] == ["ssdlab.db"]  # no -wal, -shm or copy left beside
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # the private copy is gone
    return Recovered(damaged, new, proc.returncode, " ".join(proc.stdout.split()), proc.stderr)


def assert_whole_ssdlab_database(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def marked(doc: dict) -> bool:
    return any(note["note"].startswith(RECOVERED) for note in doc["telemetry_notes"])


def assert_recovered_as_promised(done: Recovered, src: Source) -> dict[int, dict]:
    """Every run of NEW identical to the source's, or marked; every run readable in DAMAGED
    among the identical ones; the missing ones reported; exit status 0 only when nothing was
    lost. Returns NEW's runs as `export` prints them ({} when nothing was written)."""
    assert done.returncode in (0, 1, 2)
    if done.returncode == 2:
        assert not done.new.exists()
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: ")
        return {}
    assert_whole_ssdlab_database(done.new)
    runs_command(db=done.new)
    recovered = documents(done.new)
    for run_id, doc in recovered.items():
        show_command(str(run_id), db=done.new)
        readable = document_or_none(done.damaged, run_id)
        assert readable is None or readable == src.documents[run_id], run_id
        if readable is not None or not marked(doc):
            assert doc == src.documents[run_id], run_id
            continue
        # measurements lost: a test of it failed for them, or a test's own row is lost (the
        # run fails then too, with no test of it left to fail)
        lost_measurements = (any(t["status"] == TestStatus.FAILED for t in doc["tests"])
                             or len(doc["tests"]) < len(src.documents[run_id]["tests"]))
        assert doc["run"]["status"] == (RunStatus.FAILED if lost_measurements
                                        else src.documents[run_id]["run"]["status"])
        assert f"run {run_id} " in done.stdout
    for run_id in src.documents.keys() - recovered.keys():  # left out: its own row is lost
        assert f"left out: run {run_id}," in done.stdout or "could not read: runs, rowids" in done.stdout
    everything = recovered == src.documents
    assert done.returncode == (0 if everything else 1), done.stdout
    assert ("everything could be read" in done.stdout) == everything
    return recovered


@pytest.mark.parametrize("case", DAMAGES)
def test_what_can_be_read_is_recovered_and_what_cannot_is_reported(tmp_path, source, case):
    assert_recovered_as_promised(recover_damaged(tmp_path, source, DAMAGES[case]), source)


def test_an_intact_database_is_recovered_whole(tmp_path, source):
    done = recover_damaged(tmp_path, source, lambda db, src: None)
    assert assert_recovered_as_promised(done, source) == source.documents
    assert done.returncode == 0
    assert (f"recovered 4 runs, {count(source.db, 'tests')} tests and {count(source.db, 'steps')} steps"
            in done.stdout)


def count(db: Path, table: str) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def middle_steps_leaf(db: Path, src: Source) -> None:
    leaves = src.of("steps", "leaf")
    pages(db, src, [leaves[len(leaves) // 2]])


def test_a_damaged_page_costs_only_the_rows_on_it(tmp_path, source):
    leaves = source.of("steps", "leaf")
    done = recover_damaged(tmp_path, source, middle_steps_leaf)
    recovered = assert_recovered_as_promised(done, source)
    assert done.returncode == 1
    assert count(done.new, "steps") == count(source.db, "steps") - leaves[len(leaves) // 2].cells
    incomplete = [run_id for run_id, doc in recovered.items() if doc != source.documents[run_id]]
    assert 1 <= len(incomplete) < len(source.documents)
    for run_id in incomplete:
        doc = recovered[run_id]
        assert doc["run"]["status"] == "failed" and marked(doc)
        failed = [t for t in doc["tests"] if t["status"] == "failed"]
        assert failed and all(t["error"].startswith(f"{RECOVERED} without some of its rows (")
                              and "steps: " in t["error"]
                              and t["error"].endswith(f"`ssdlab resume {run_id}` measures it again")
                              for t in failed)
        assert f"run {run_id} is incomplete, now failed" in done.stdout
    assert "could not read: steps, rowids " in done.stdout


def test_notes_whose_runs_are_unknown_leave_the_runs_status_and_a_note(tmp_path, source):
    done = recover_damaged(tmp_path, source, lambda db, src: pages(db, src, src.of("telemetry_notes", "leaf")))
    assert done.returncode == 1
    for run_id, doc in assert_recovered_as_promised(done, source).items():
        assert doc["run"]["status"] == source.documents[run_id]["run"]["status"]
        assert [n["note"] for n in doc["telemetry_notes"]] == [
            f"{RECOVERED} by `ssdlab db recover`: may have lost rows of telemetry notes (they cannot be read, "
            "nor can the index that tells whose they were)"]
        assert f"run {run_id} keeps its status, with a note" in done.stdout


def test_a_record_the_store_cannot_read_is_left_out_and_its_test_measured_again_by_resume(tmp_path, source):
    damaged = tmp_path / "damaged.db"
    shutil.copy(source.db, damaged)
    with closing(sqlite3.connect(damaged)) as conn, conn:  # as a damaged overflow page leaves them
        conn.execute("UPDATE steps SET result = '{\"busy_s\": ' WHERE run_id = 1 AND seq = 0 AND idx = 1")
        conn.execute("UPDATE steps SET step = CAST(x'c328ff' AS TEXT) WHERE run_id = 2 AND seq = 1 AND idx = 0")
    new = tmp_path / "new.db"
    proc = run_cli("db", "recover", damaged, "-o", new, check=False)
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 1, proc.stderr
    assert "could not read: steps, rows with damaged values: 1" in out  # the JSON that does not load
    assert "could not read: steps, rowids " in out  # the text that is not UTF-8: SQLite's own read fails
    recovered = documents(new)
    first = recovered[1]["tests"][0]
    assert first["status"] == "failed" and [s["index"] for s in first["steps"]] == [0, 2]
    assert recovered[1]["run"]["status"] == recovered[2]["run"]["status"] == "failed"
    assert recovered[3] == source.documents[3]

    run_cli("resume", "1", db=new)
    again = documents(new)[1]
    assert again["run"]["status"] == "done"
    assert [t["status"] for t in again["tests"]] == ["done"] * 4
    assert len(again["tests"][0]["steps"]) == len(source.documents[1]["tests"][0]["steps"])


def test_a_database_of_ssdlab_010_is_recovered_at_its_version_and_migrated(tmp_path):
    old = tmp_path / "old.db"
    shutil.copy(V010, old)
    before = documents(old)
    proc = run_cli("db", "recover", old, "-o", tmp_path / "new.db", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_whole_ssdlab_database(tmp_path / "new.db")
    assert documents(tmp_path / "new.db") == before
    with closing(sqlite3.connect(tmp_path / "new.db")) as conn:  # its records as 0.1.0 wrote them
        assert conn.execute("SELECT commands FROM steps LIMIT 1").fetchone()[0].startswith("[")


def test_what_is_not_recovered_is_refused_with_one_line_and_nothing_written(tmp_path, source):
    existing = tmp_path / "existing.db"
    existing.write_text("keep me\n")
    foreign = tmp_path / "notes.db"
    with closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    for damaged, new, message in (
            (source.db, existing, f"{existing} exists already"),
            (foreign, tmp_path / "a.db", f"{foreign} is not an ssdlab database (it is at user_version 0 with "
                                         "tables notes, not ssdlab's schema): there is nothing of ssdlab's"),
            (tmp_path / "missing.db", tmp_path / "b.db", f"there is no database at {tmp_path / 'missing.db'}")):
        proc = run_cli("db", "recover", damaged, "-o", new, check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert message in " ".join(proc.stderr.split())
        assert len(proc.stderr.strip().splitlines()) == 1
    assert existing.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.db", "notes.db"]


def test_the_damaged_database_message_names_the_recovery(tmp_path, source):
    damaged = tmp_path / "ssdlab.db"
    shutil.copy(source.db, damaged)
    middle_steps_leaf(damaged, source)
    with pytest.raises(SsdlabError, match=rf"`ssdlab db recover {damaged} -o RECOVERED.db`"):
        Store(damaged)


def test_the_last_writes_still_in_the_wal_are_recovered_and_the_wal_left_as_it_was(tmp_path):
    db = tmp_path / "live.db"
    with Store(db) as store:
        record_steps(store, new_run(store), 2)
    with closing(sqlite3.connect(db)) as reader, Store(db) as store:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM runs").fetchone()  # holds the WAL back from the file
        record_steps(store, new_run(store), 1)
        damaged = tmp_path / "damaged" / "ssdlab.db"  # as a crash leaves it: its last run in the WAL
        damaged.parent.mkdir()
        shutil.copy(db, damaged)
        shutil.copy(f"{db}-wal", f"{damaged}-wal")
    before = {path.name: sha256(path) for path in damaged.parent.iterdir()}
    proc = run_cli("db", "recover", damaged, "-o", tmp_path / "new.db")
    assert "recovered 2 runs, 4 tests and 6 steps" in proc.stdout
    assert {path.name: sha256(path) for path in damaged.parent.iterdir()} == before
    assert documents(tmp_path / "new.db") == documents(db)
