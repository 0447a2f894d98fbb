"""Sweeps end to end: every variant checked before anything runs, each run as an ordinary run
with its whole preset, the same results as each variant run alone, grouped and tabled in the
store, and an interrupted sweep resumed running only what is missing."""

from __future__ import annotations

import csv
import io
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import tomllib
from contextlib import closing
from pathlib import Path

import pytest

from ssdlab.backends.sim_host import Cooling
from ssdlab.catalogue import Scale
from ssdlab.distributed.local import LocalRunner
from ssdlab.distributed.results import sweep_table
from ssdlab.distributed.runner import Outcome
from ssdlab.distributed.specs import SweepSpec
from ssdlab.distributed.sweeps import SweepPlan, new_sweep, resume_sweep, run_sweep
from ssdlab.errors import Interrupted
from ssdlab.execution import SilentReporter
from ssdlab.model import Age
from ssdlab.session import SIM_AGE, SIM_HOST, RunRequest
from ssdlab.store import Store
from tests.cli.test_cli_input import refused
from tests.conftest import run_cli
from tests.end_to_end.test_locks import said
from tests.end_to_end.test_side_by_side import started_tests
from tests.paths import DB_V010

TESTS = "rand-read-burst,seq-write-sustained"
OPTIONS = ["--suite", "quick", "--tests", TESTS, "--scale", "0.01"]
GRID = ["--set", "cache.max_cell_share=0.3,0.7", "--set", "geometry.dies_per_channel=4,8"]
NAMES = [f"wd-sn850-1tb[cache.max_cell_share={s},geometry.dies_per_channel={d}]" for s in (0.3, 0.7) for d in (4, 8)]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A 2 x 2 grid on the SN850, two short tests at scale 0.01: the database and the table printed."""
    db = tmp_path_factory.mktemp("sweep") / "ssdlab.db"
    return db, json.loads(run_cli("sweep", "wd-sn850-1tb", *GRID, *OPTIONS, "--json", db=db).stdout)


def value_at(text: str, key: str):
    table = tomllib.loads(text)
    for part in key.split("."):
        table = table[part]
    return table


def test_a_grid_sweep_is_a_run_per_variant_tabled_with_its_scores(swept):
    db, table = swept
    assert [v["name"] for v in table["variants"]] == NAMES
    assert [v["run_id"] for v in table["variants"]] == [1, 2, 3, 4]
    assert [v["overrides"] for v in table["variants"]] == [
        {"drive.cache.max_cell_share": s, "drive.geometry.dies_per_channel": d} for s in (0.3, 0.7) for d in (4, 8)]
    assert [c["test"] for c in table["scores"]] == TESTS.split(",")
    for variant in table["variants"]:
        assert variant["status"] == "done"
        assert all(variant["scores"][t] > 0 for t in TESTS.split(","))
    # more dies write faster: the sweep measures what it varies
    scores = [v["scores"]["seq-write-sustained"] for v in table["variants"]]
    assert scores[1] > scores[0] and scores[3] > scores[2]
    rows = list(csv.DictReader(io.StringIO(run_cli("sweeps", "show", "1", "--csv", "-", db=db).stdout)))
    assert [r["variant"] for r in rows] == NAMES
    assert [float(r["seq-write-sustained (MB/s)"]) for r in rows] == scores
    assert [r["geometry.dies_per_channel"] for r in rows] == ["4", "8", "4", "8"]


def test_each_run_carries_its_variants_whole_preset(swept):
    db, table = swept
    with Store.open_existing(db) as store:
        for variant in table["variants"]:
            run = store.run(variant["run_id"])
            extras = store.run_extras(run.id)
            assert run.target == f"sim:{variant['name']}"
            assert extras["engine"]["preset"] == variant["name"]
            text = extras["options"]["preset_toml"]
            for key, value in variant["overrides"].items():
                assert value_at(text, key) == value
            assert value_at(text, "drive.nand.tlc.t_prog_us") == 600.0  # the rest is the base's


def test_each_variant_gives_the_scores_it_gives_alone(swept, tmp_path):
    db, table = swept
    assert scores_alone(db, table, OPTIONS, tmp_path) == [v["scores"] for v in table["variants"]]


def scores_alone(db: Path, table: dict, options: list[str], tmp_path: Path) -> list[dict]:
    """The scores of each variant of a sweep's `table` run alone (`ssdlab run` of its whole
    preset, as stored in `db`)."""
    with Store.open_existing(db) as store:
        texts = [store.run_extras(v["run_id"])["options"]["preset_toml"] for v in table["variants"]]
    scores = []
    for k, text in enumerate(texts):
        preset = tmp_path / f"variant-{k}.toml"
        preset.write_text(text)
        alone = json.loads(run_cli("run", f"sim:{preset}", *options, "--json", db=tmp_path / "alone.db").stdout)
        scores.append({t["id"]: t["primary_score"]["value"] for t in alone["tests"]})
    return scores


def test_sweeps_lists_each_sweep_and_a_finished_sweep_does_not_resume(swept):
    db, _ = swept
    listed = json.loads(run_cli("sweeps", "--json", db=db).stdout)
    assert [(s["id"], s["base"], s["variants_done"], s["variants"]) for s in listed] == [(1, "wd-sn850-1tb", 4, 4)]
    refused(run_cli("sweep", "--resume", "1", db=db, check=False), "sweep 1 is complete: `ssdlab sweeps show 1`")
    refused(run_cli("sweeps", "show", "9", db=db, check=False), "there is no sweep 9")


def test_a_variant_the_simulator_refuses_stops_the_sweep_before_anything_runs(swept, tmp_path):
    db = tmp_path / "copy.db"
    shutil.copy(swept[0], db)
    # 2 dies per channel cannot hold the SN850's 1 TB
    proc = run_cli("sweep", "wd-sn850-1tb", "--set", "geometry.dies_per_channel=4,2", *OPTIONS, db=db, check=False)
    refused(proc, "the preset wd-sn850-1tb[geometry.dies_per_channel=2] is not valid: drive.user_capacity_gb leaves "
                  "too little over-provisioning")
    with closing(sqlite3.connect(db)) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
        assert con.execute("SELECT count(*) FROM sweeps").fetchone()[0] == 1
    fresh = tmp_path / "fresh.db"
    run_cli("sweep", "wd-sn850-1tb", "--set", "geometry.dies_per_channel=4,2", *OPTIONS, db=fresh, check=False)
    assert not fresh.exists()


@pytest.mark.parametrize("args, says", [
    (["--set", "cache.max_cel_share=0.3"], "cache.max_cel_share is not a key of the preset wd-sn850-1tb: the nearest "
                                           "are drive.cache.max_cell_share"),
    (["--set", "geometry.dies_per_channel=2.5"], "drive.geometry.dies_per_channel is an integer"),
    (["--set", "cache.max_cell_share=0.3", "--variants", "v.csv"], "--set and --variants each give a whole sweep"),
    (["--sample", "cache.max_cell_share=0.1..0.9"], "--sample needs --samples N"),
    ([], "give the variants"),
    (["--set", "cache.max_cell_share=0.3", "--jobs", "0"], "--jobs must be 1 to 64, not 0"),
    (["--set", "cache.max_cell_share=0.3", "--resume", "1"], "--resume runs a stored sweep with its own drive, "
                                                              "variants, suite, scale, host and test settings: "
                                                              "leave out BASE, "
                                                              "--set, --suite, --tests, --scale"),
])
def test_bad_input_is_one_line_saying_what_to_do(tmp_path, args, says):
    db = tmp_path / "none.db"
    refused(run_cli("sweep", "wd-sn850-1tb", *args, *OPTIONS, db=db, check=False), says)
    assert not db.exists()


def test_a_sweep_needs_a_base_or_a_sweep_to_resume(tmp_path):
    refused(run_cli("sweep", "--set", "cache.max_cell_share=0.3", db=tmp_path / "x.db", check=False),
            "give the drive to vary")
    refused(run_cli("sweep", "no-such-drive", "--set", "cache.max_cell_share=0.3", db=tmp_path / "x.db",
                    check=False), "unknown simulated drive 'no-such-drive'")


# -- an interrupted sweep, resumed ----------------------------------------------------------

class _InterruptedAtSecondTest(SilentReporter):
    def test_started(self, position, total, test):
        if position == 2:
            raise KeyboardInterrupt  # as Ctrl-C between two tests


def stopped_sweep(shared: RunRequest) -> tuple[SweepPlan, list[Outcome]]:
    """The 2 x 2 grid as an interrupt leaves it (_StoppedInTheSecondVariant): its plan and outcomes."""

    def stopped(jobs, asked):
        LocalRunner.planned(jobs, asked)  # every variant checked, as the local runner does
        return _StoppedInTheSecondVariant()

    plan = new_sweep("wd-sn850-1tb", SweepSpec(sets=tuple(GRID[1::2])), shared, None, runner_for=stopped)
    return plan, run_sweep(plan, lambda request, run_id, tests: SilentReporter())


class _StoppedInTheSecondVariant:
    """A runner (distributed.runner.Runner) as an interrupt leaves it: the first variant run to
    its end, the second stopped before its second test, the others not started."""

    note = None

    def run(self, jobs, reporter_for):
        local = LocalRunner(1)
        outcomes = local.run(jobs[:1], reporter_for)
        def interrupted(request, run_id, tests):
            reporter_for(request, run_id, tests)  # the sweep records the run as its variant's
            return _InterruptedAtSecondTest()

        outcomes += local.run(jobs[1:2], interrupted)
        return outcomes + [Outcome(job.request.target, None, "not started: interrupted", Interrupted.exit_code)
                           for job in jobs[2:]]


def test_an_interrupted_sweep_resumed_runs_only_what_is_missing(tmp_path):
    db = tmp_path / "ssdlab.db"
    shared = RunRequest(target="", suite="quick", tests=tuple(TESTS.split(",")), scale=Scale(0.01), db=db)
    plan, outcomes = stopped_sweep(shared)
    assert [(o.run_id, o.error is None) for o in outcomes] == [(1, True), (2, False), (None, False), (None, False)]
    with Store.open_existing(db) as store:
        before = {run_id: [r.finished_at for r in store.tests(run_id)] for run_id in (1, 2)}
        table = sweep_table(store, plan.sweep_id)
    assert [(r.run_id, r.status) for r in table.rows] == [(1, "done"), (2, "interrupted"), (None, "not run"),
                                                           (None, "not run")]
    assert before[2][0] is not None and before[2][1] is None

    resumed = resume_sweep(str(plan.sweep_id), db, None)
    assert [(job.request.target, job.resume) for job in resumed.jobs] == [
        (f"sim:{NAMES[1]}", 2), (f"sim:{NAMES[2]}", None), (f"sim:{NAMES[3]}", None)]
    assert resumed.indexes == [1, 2, 3] and resumed.variants == 4
    outcomes = run_sweep(resumed, lambda request, run_id, tests: SilentReporter())
    assert [(o.run_id, o.error) for o in outcomes] == [(2, None), (3, None), (4, None)]
    with Store.open_existing(db) as store:
        table = sweep_table(store, plan.sweep_id)
        after = {run_id: [r.finished_at for r in store.tests(run_id)] for run_id in (1, 2)}
        assert len(store.runs()) == 4  # no run made twice
    assert [(r.run_id, r.status) for r in table.rows] == [(1, "done"), (2, "done"), (3, "done"), (4, "done")]
    assert after[1] == before[1]  # the finished variant was not run again
    assert after[2][0] == before[2][0]  # nor the interrupted run's finished test
    # Every run made whole measured what a sweep run at once measures. (The interrupted run's
    # second test ran on a drive built anew by `resume`, without the first test's heat and wear.)
    grid = json.loads(run_cli("sweep", "wd-sn850-1tb", *GRID, *OPTIONS, "--json", db=tmp_path / "once.db").stdout)
    once = [v["scores"] for v in grid["variants"]]
    assert [table.rows[k].scores for k in (0, 2, 3)] == [once[k] for k in (0, 2, 3)]
    assert table.rows[1].scores["rand-read-burst"] == once[1]["rand-read-burst"]


def test_the_drives_host_and_age_reach_every_variant_also_those_made_on_resume(tmp_path):
    """A cooler-less drive in a 45 °C case, aged 100 P/E cycles, APST off: each run records
    them, and the variants a resume makes get them from the sweep, not from the command."""
    db = tmp_path / "ssdlab.db"
    shared = RunRequest(target="", suite="quick", tests=tuple(TESTS.split(",")), scale=Scale(0.01), db=db,
                        cooling=Cooling.BARE, ambient_c=45.0, age=Age.parse("100pe"), apst_latency_us=0,
                        no_low_power_states=True)
    plan, _ = stopped_sweep(shared)
    with Store.open_existing(db) as store:
        options = store.run_extras(1)["options"]
    assert options[SIM_HOST]["cooling"] == "bare" and options[SIM_HOST]["ambient_c"] == 45.0
    assert options[SIM_HOST]["apst_latency_us"] == 0 and options[SIM_HOST]["low_power_states"] is False
    assert Age.model_validate(options[SIM_AGE]) == Age.parse("100pe")
    resumed = resume_sweep(str(plan.sweep_id), db, None)
    for job in resumed.jobs:
        host = (job.request.cooling, job.request.ambient_c, job.request.age, job.request.apst_latency_us,
                job.request.no_low_power_states)
        assert host == (Cooling.BARE, 45.0, Age.parse("100pe"), 0, True), job.request.target
    refused = run_cli("sweep", "--resume", "1", "--cooling", "fan", "--age", "5pe", db=db, check=False)
    assert refused.returncode == 2 and "leave out --cooling, --age" in refused.stderr


def made_trace(path: Path) -> Path:
    """A small trace file, written by `ssdlab trace make` (a built-in trace at a tiny scale)."""
    run_cli("trace", "make", "light-like", "--scale", "0.0001", "--output", str(path))
    return path


def test_the_tests_settings_and_trace_files_reach_every_variant_also_those_made_on_resume(tmp_path, monkeypatch):
    """The trace options are stored with the sweep, the trace by its absolute path: the variants
    a resume makes, from another directory, replay the same file the same way."""
    db = tmp_path / "ssdlab.db"
    made_trace(tmp_path / "mine.csv")
    monkeypatch.chdir(tmp_path)
    shared = RunRequest(target="", suite="trace", scale=Scale(0.01), db=db, traces=("mine.csv",), trace_qd=8,
                        no_timing=True, idle_cap_ms=10.0, trace_fit="scale")
    plan = new_sweep("wd-sn850-1tb", SweepSpec(sets=tuple(GRID[1::2])), shared, None)  # checked, stored, not run
    monkeypatch.chdir("/")
    resumed = resume_sweep(str(plan.sweep_id), db, None)
    assert len(resumed.jobs) == 4
    for job in resumed.jobs:
        r = job.request
        assert r.traces == (str(tmp_path / "mine.csv"),), r.target
        assert (r.trace_qd, r.no_timing, r.idle_cap_ms, r.trace_fit) == (8, True, 10.0, "scale")
    refused = run_cli("sweep", "--resume", "1", "--trace-qd", "4", db=db, check=False)
    assert refused.returncode == 2 and "leave out the retention, endurance and trace options" in refused.stderr
    wrong = run_cli("sweep", "wd-sn850-1tb", *GRID, "--suite", "quick", "--trace", "mine.csv", db=db, check=False)
    assert wrong.returncode == 2 and "add `--suite trace`" in wrong.stderr


def test_ctrl_c_stops_a_sweep_resumably_and_says_how_to_go_on(tmp_path):
    db = tmp_path / "ssdlab.db"
    proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "sweep", "wd-sn850-1tb", "--set",
                             "cache.max_cell_share=0.3,0.5,0.7", "--jobs", "1", "--suite", "quick", "--scale", "0.1",
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not (db.exists() and started_tests(db)):  # the first variant's first test under way
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate()
    assert proc.returncode == Interrupted.exit_code, stderr
    assert "Traceback" not in stderr
    message = said(stderr)
    assert f"sim:{NAMES[0].split('[')[0]}[cache.max_cell_share=0.3]: run 1: run 1 interrupted" in message
    assert "[cache.max_cell_share=0.7]: not started: interrupted" in message
    assert "`ssdlab sweep --resume 1` runs what is missing" in message
    listed = json.loads(run_cli("sweeps", "--json", db=db).stdout)
    assert [(s["variants_done"], s["variants"]) for s in listed] == [(0, 3)]
    table = json.loads(run_cli("sweeps", "show", "1", "--json", db=db).stdout)
    assert [(v["run_id"], v["status"]) for v in table["variants"]] == [(1, "interrupted"), (None, "not run"),
                                                                       (None, "not run")]


def test_a_database_from_before_sweeps_lists_none_and_stays_as_it_was(tmp_path):
    old = tmp_path / "old.db"
    shutil.copy(DB_V010, old)
    assert json.loads(run_cli("sweeps", "--json", db=old).stdout) == []  # read through a migrated copy
    assert old.read_bytes() == DB_V010.read_bytes()
