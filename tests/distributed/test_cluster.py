"""Sweeps on a Dask cluster (a LocalCluster of two worker processes on the loopback): the
same scores as this machine's runner, every run in the client's database, a plain-TCP address
beyond the loopback refused before any connection, and a worker lost mid-run retried."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import cloudpickle
import dask
import pytest
from distributed import Client, LocalCluster

from ssdlab import locks
from ssdlab.catalogue import Scale
from ssdlab.distributed import cluster as cluster_module
from ssdlab.distributed.cluster import TLS_NEEDED, ClusterRunner, run_on_worker, scheduler_address
from ssdlab.distributed.fleet import _runs_stopped
from ssdlab.distributed.overrides import apply_overrides
from ssdlab.distributed.results import sweep_table
from ssdlab.distributed.runner import RunJob
from ssdlab.distributed.sweeps import resume_sweep, run_sweep
from ssdlab.distributed.worker_settings import WORKER, environment
from ssdlab.errors import Interrupted, SsdlabError
from ssdlab.execution import SilentReporter
from ssdlab.presets import load_preset
from ssdlab.session import RunRequest
from ssdlab.store import Store
from ssdlab.store.transfer import read_run
from tests.conftest import run_cli
from tests.distributed import inprocess_tasks
from tests.distributed.test_sweeps import GRID, TESTS, made_trace, scores_alone, stopped_sweep
from tests.distributed.waiting import wait_for

OPTIONS = ["--suite", "quick", "--tests", "rand-read-burst", "--scale", "0.01"]
EIGHT = [*GRID, "--set", "nand.tlc.t_prog_us=500,800"]  # 2 x 2 x 2 variants

# the workers run this module's task below by value: they need not import the tests
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def local_cluster():
    """Two workers; a task whose worker dies is tried once more (the scheduler's allowed-failures)."""
    allowed = dask.config.set({"distributed.scheduler.allowed-failures": 1})
    with allowed, LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0") as local:
        yield local


@pytest.fixture
def cluster(local_cluster):
    """The scheduler's address once both workers are up: a test before may have killed one,
    whose nanny starts another (seconds on a loaded machine)."""
    local_cluster.wait_for_workers(2, timeout=120)
    return local_cluster.scheduler_address


@pytest.fixture(scope="module")
def swept(local_cluster, tmp_path_factory):
    """The same 8 variants swept on the cluster and on this machine: each database and table."""
    out = {}
    local_cluster.wait_for_workers(2, timeout=120)
    for where, extra in (("cluster", ["--cluster", local_cluster.scheduler_address]), ("local", [])):
        db = tmp_path_factory.mktemp(where) / "ssdlab.db"
        out[where] = db, json.loads(run_cli("sweep", "wd-sn850-1tb", *EIGHT, *OPTIONS, *extra, "--json", db=db).stdout)
    return out


def test_a_worker_given_ssdlabs_preload_has_the_simulator_before_its_first_task():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      preload=["ssdlab.distributed.preload"]) as local, Client(local) as client:
        loaded = client.run(lambda: [name in sys.modules for name in ("ssdlab._ssdsim", "ssdlab.distributed.cluster")])
    assert list(loaded.values()) == [[True, True]]


def test_a_plain_dask_worker_given_the_documented_environment_has_ssdlabs_settings():
    read = dask.config.collect_env(environment())
    assert {key: dask.config.get(key, config=read) for key in WORKER} == WORKER
    documented = " ".join((Path(__file__).parents[2] / "docs" / "sweeps.md").read_text().replace("\\\n", " ").split())
    assert " ".join(f"{name}={value}" for name, value in environment().items()) + " dask worker" in documented


def test_a_sweep_on_the_cluster_scores_as_on_this_machine(swept):
    (_, on_cluster), (_, here) = swept["cluster"], swept["local"]
    assert [v["name"] for v in on_cluster["variants"]] == [v["name"] for v in here["variants"]]
    assert [v["status"] for v in on_cluster["variants"]] == ["done"] * 8
    assert [v["scores"] for v in on_cluster["variants"]] == [v["scores"] for v in here["variants"]]
    assert all(v["scores"]["rand-read-burst"] for v in on_cluster["variants"])


def test_each_variant_on_the_cluster_gives_the_scores_it_gives_alone(swept, tmp_path):
    db, table = swept["cluster"]
    assert scores_alone(db, table, OPTIONS, tmp_path) == [v["scores"] for v in table["variants"]]


def test_the_clients_database_has_every_run_with_its_variants_preset(swept):
    (db, table), (local_db, here) = swept["cluster"], swept["local"]
    with Store.open_existing(db) as store, Store.open_existing(local_db) as local:
        assert sorted(r.id for r in store.runs()) == sorted(v["run_id"] for v in table["variants"])
        variants = store.sweep_variants(table["sweep"]["id"])
        assert [v.run_id for v in variants] == [v["run_id"] for v in table["variants"]]
        for mine, theirs in zip(table["variants"], here["variants"]):
            assert store.run(mine["run_id"]).target == f"sim:{mine['name']}"
            assert (store.run_extras(mine["run_id"])["options"]["preset_toml"]
                    == local.run_extras(theirs["run_id"])["options"]["preset_toml"])
            (test,) = store.tests(mine["run_id"])
            assert store.steps(mine["run_id"], test.seq)  # every step's rows came along


def test_a_sweep_of_a_trace_file_on_the_cluster_scores_as_on_this_machine(cluster, tmp_path):
    trace = made_trace(tmp_path / "mine.csv")
    args = ["sweep", "wd-sn850-1tb", "--set", "cache.max_cell_share=0.3,0.6", "--suite", "trace", "--trace",
            str(trace), "--scale", "0.01", "--json"]
    here = json.loads(run_cli(*args, db=tmp_path / "here.db").stdout)
    there = json.loads(run_cli(*args, "--cluster", cluster, db=tmp_path / "there.db").stdout)
    assert [v["status"] for v in there["variants"]] == ["done"] * 2
    assert [v["scores"] for v in there["variants"]] == [v["scores"] for v in here["variants"]]
    assert all(v["scores"]["trace"] for v in there["variants"])


def test_a_worker_without_the_trace_file_replays_the_copy_sent_with_its_task(tmp_path):
    """What a worker on another host gets: the client's path, which it does not have, and the
    file's contents, which it replays under the file's own name."""
    contents = {"/nowhere/mine.csv": made_trace(tmp_path / "mine.csv").read_bytes()}
    request = RunRequest(target="sim:wd-sn850-1tb", suite="trace", scale=Scale(0.01), traces=("/nowhere/mine.csv",))
    result = run_on_worker(request, traces=contents)
    assert result.error is None and result.rows["runs"][0]["status"] == "done"
    assert "mine.csv: empty" in json.dumps(result.rows["steps"])


def test_a_twin_fitted_on_the_cluster_is_the_twin_fitted_here(cluster, tmp_path):
    truth = tmp_path / "truth.toml"
    truth.write_text(apply_overrides(load_preset("crucial-p5plus-1tb"), {"drive.nand.slc.t_read_us": 36.0}))
    db = tmp_path / "ssdlab.db"
    run_cli("run", f"sim:{truth}", "--tests", "rand-read-burst", "--scale", "0.01", db=db)
    twins = {}
    for where, extra in (("cluster", ["--cluster", cluster]), ("local", [])):
        twins[where] = tmp_path / f"{where}.toml"
        report = json.loads(run_cli("fit", "1", "-o", twins[where], "--base", "crucial-p5plus-1tb", *extra,
                                    "--json", db=db).stdout)
        assert report["evaluations"] > 0
    assert twins["cluster"].read_text() == twins["local"].read_text()
    fitted = tomllib.loads(twins["cluster"].read_text())["drive"]["nand"]["slc"]["t_read_us"]
    assert fitted == pytest.approx(36.0, rel=0.1)


@pytest.mark.parametrize("address", ["tcp://10.0.0.1:8786", "10.0.0.1:8786", "tcp://example.org:8786"])
def test_plain_tcp_beyond_the_loopback_is_refused_before_any_connection(tmp_path, address):
    db = tmp_path / "ssdlab.db"
    proc = run_cli("sweep", "wd-sn850-1tb", *GRID, *OPTIONS, "--cluster", address, db=db, check=False)
    assert proc.returncode != 0
    assert TLS_NEEDED in " ".join(proc.stderr.split())
    assert not db.exists()  # refused before the sweep was made, let alone connected


def test_an_address_is_tcp_on_the_loopback_or_tls_with_certificates(tmp_path):
    assert scheduler_address("tcp://127.0.0.1:8786", None) == "tcp://127.0.0.1:8786"
    assert scheduler_address("tls://localhost:8786", None, tmp_path) == "tls://localhost:8786"
    assert scheduler_address("tls://10.1.2.3:8786", None, tmp_path) == "tls://10.1.2.3:8786"
    with pytest.raises(SsdlabError, match="give the client's certificates with --tls DIR"):
        scheduler_address("tls://localhost:8786", None)
    with pytest.raises(SsdlabError, match="--tls is for a tls:// address"):
        scheduler_address("tcp://127.0.0.1:8786", None, tmp_path)
    scheduler = tmp_path / "scheduler.json"
    scheduler.write_text(json.dumps({"address": "tcp://10.1.2.3:8786"}))
    with pytest.raises(SsdlabError, match="beyond the loopback"):
        scheduler_address(None, scheduler)
    for bad in ("http://127.0.0.1:8786", "tcp://127.0.0.1"):
        with pytest.raises(SsdlabError, match="is not tcp://HOST:PORT"):
            scheduler_address(bad, None)


def test_workers_of_this_ssdlab_give_no_version_note(cluster):
    runner = ClusterRunner.checked(cluster)
    runner.connect()
    try:
        assert runner.note is None
    finally:
        runner.close()


def test_workers_of_another_ssdlab_are_named_in_a_note_before_anything_runs(cluster, monkeypatch):
    import ssdlab
    theirs = ssdlab.__version__
    monkeypatch.setattr(ssdlab, "__version__", "0.0.0+other", raising=False)
    runner = ClusterRunner.checked(cluster)
    runner.connect()
    try:
        assert runner.note is not None and "(0.0.0+other)" in runner.note
        assert runner.note.count(f"has {theirs}") == 2  # both workers
    finally:
        runner.close()


def test_workers_that_cannot_run_ssdlabs_tasks_are_refused_in_a_line(cluster, monkeypatch):
    def without_ssdlab():
        raise ModuleNotFoundError("No module named 'ssdlab'")

    monkeypatch.setattr(cluster_module, "_ssdlab_version", without_ssdlab)
    runner = ClusterRunner.checked(cluster)
    with pytest.raises(SsdlabError, match="cannot run ssdlab's tasks .*install ssdlab, the same version as here"):
        runner.connect()
    assert runner._client is None  # closed


def trace_lengths(request, stored=None, topic=None, traces=None):
    """A task that tells what trace files it was sent."""
    return {path: len(data) for path, data in traces.items()}


def test_trace_files_of_the_same_name_sent_by_two_sweeps_reach_each_its_own(cluster, tmp_path):
    """Two sweeps at once on one cluster, each with its own `trace.csv`: Dask names what is
    sent by its contents, so neither replays the other's."""
    trace = tmp_path / "trace.csv"
    job = RunJob(RunRequest("sim:wd-sn850-1tb", suite="trace", traces=(str(trace),)))
    with Client(cluster, set_as_default=False) as first, Client(cluster, set_as_default=False) as second:
        trace.write_text("A" * 10)
        sent_first = ClusterRunner(cluster, task=trace_lengths).submit(first, job, None, "t1")
        trace.write_text("B" * 99)
        sent_second = ClusterRunner(cluster, task=trace_lengths).submit(second, job, None, "t2")
        assert (sent_first.result(), sent_second.result()) == ({str(trace): 10}, {str(trace): 99})


def test_a_run_whose_task_the_client_cancels_stops_on_its_worker():
    """Ctrl-C on the client cancels its tasks, which Dask cannot interrupt: the worker's run
    stops at its next step and sends itself as it was left, once, instead of running on to its
    end (a quick suite at scale 1: about 18 s, sent every 2 s)."""
    request = RunRequest("sim:wd-sn850-1tb", suite="quick", scale=Scale(1))
    sent: queue.Queue[dict] = queue.Queue()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as local, \
            Client(local, set_as_default=False) as client:
        client.subscribe_topic("run", lambda event: sent.put(event[1]["rows"]))
        future = client.submit(run_on_worker, request, None, "run", pure=False)
        sent.get(timeout=120)  # sent as it goes, 2 s after its start
        client.cancel([future])
        left = sent.get(timeout=120)  # as the stop left it
        assert client.submit(str, "the worker's thread is free", pure=False).result(timeout=120)
        later = [sent.get_nowait() for _ in range(sent.qsize())]
    assert len(later) <= 1  # at most a sending under way when it stopped
    tests = (later or [left])[-1]["tests"]
    assert any(t["status"] != "done" for t in tests)  # stopped part way


def test_a_worker_asked_to_stop_starts_no_more_tasks():
    """`ssdlab worker` stopping (fleet._runs_stopped): the task under way ends, the one queued
    behind it does not start there (the scheduler gives it to another worker)."""
    inprocess_tasks.started.clear()
    inprocess_tasks.release.clear()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as local, \
            Client(local, set_as_default=False) as client:
        worker = next(iter(local.workers.values()))
        futures = [client.submit(inprocess_tasks.held_until_released, name, pure=False) for name in ("first", "second")]
        wait_for(lambda: inprocess_tasks.started == ["first"], lambda: str(inprocess_tasks.started))
        stopped = asyncio.run_coroutine_threadsafe(_runs_stopped(worker), local.loop.asyncio_loop)
        time.sleep(0.2)  # the stop reaches the worker before the first task ends
        inprocess_tasks.release.set()
        stopped.result(timeout=60)  # the first ended, then the worker left
        assert futures[1].status == "pending"
    assert inprocess_tasks.started == ["first"]


def exit_on_first_attempt(marker: str, request, stored=None, topic=None):
    """run_on_worker, but the worker process dies mid-task the first time."""
    if not os.path.exists(marker):
        Path(marker).write_text("died once")
        os._exit(1)
    return run_on_worker(request, stored, topic)


def test_a_worker_lost_mid_run_has_its_run_retried_elsewhere_and_stored(cluster, tmp_path):
    db = tmp_path / "ssdlab.db"
    marker = str(tmp_path / "died")
    request = RunRequest("sim:wd-sn850-1tb", suite="quick", tests=("rand-read-burst",), scale=Scale(0.01), db=db)
    runner = ClusterRunner(cluster, task=lambda *args: exit_on_first_attempt(marker, *args))
    (outcome,) = runner.run([RunJob(request)], lambda request, run_id, tests: SilentReporter())
    assert Path(marker).exists()  # a worker died
    assert outcome.error is None and outcome.run_id is not None
    with Store.open_existing(db) as store:
        assert store.run(outcome.run_id).status.value == "done"


def always_exit(request, stored=None, topic=None):
    os._exit(1)


def test_a_run_whose_retry_fails_too_is_left_to_resume(cluster, tmp_path):
    db = tmp_path / "ssdlab.db"
    request = RunRequest("sim:wd-sn850-1tb", suite="quick", tests=("rand-read-burst",), scale=Scale(0.01), db=db)
    (outcome,) = ClusterRunner(cluster, task=always_exit).run(
        [RunJob(request)], lambda request, run_id, tests: SilentReporter())
    assert outcome.run_id is None and "KilledWorker" in outcome.error
    assert "nothing of it was stored: it runs again" in outcome.error
    assert outcome.exit_code == Interrupted.exit_code
    assert not db.exists()  # nothing stored of it


def test_an_interrupted_sweep_resumes_on_the_cluster(cluster, tmp_path):
    """Stopped on this machine in its second variant; resumed on the cluster: the stopped run
    continued there under its own id, its finished test kept, the variants not run made there."""
    db = tmp_path / "ssdlab.db"
    shared = RunRequest(target="", suite="quick", tests=tuple(TESTS.split(",")), scale=Scale(0.01), db=db)
    plan, _ = stopped_sweep(shared)
    with Store.open_existing(db) as store:
        before = [r.finished_at for r in store.tests(2)]
    assert before[0] is not None and before[1] is None

    resumed = resume_sweep(str(plan.sweep_id), db, None, runner_for=lambda jobs, asked: ClusterRunner(cluster))
    outcomes = run_sweep(resumed, lambda request, run_id, tests: SilentReporter())
    assert [o.error for o in outcomes] == [None] * 3
    assert outcomes[0].run_id == 2 and {o.run_id for o in outcomes[1:]} == {3, 4}
    with Store.open_existing(db) as store:
        table = sweep_table(store, plan.sweep_id)
        after = store.tests(2)
        assert len(store.runs()) == 4
        assert store.steps(2, after[1].seq)
    assert [r.status for r in table.rows] == ["done"] * 4
    assert after[0].finished_at == before[0]  # the finished test was not run again


def test_a_run_held_elsewhere_is_refused_before_anything_is_sent_and_left_as_it_was(cluster, tmp_path):
    """`sweep --resume` on the cluster while another process (here: another hold) continues
    the sweep's stopped run: refused naming the run, before any task is sent, its rows as they
    were."""
    db = tmp_path / "ssdlab.db"
    shared = RunRequest(target="", suite="quick", tests=tuple(TESTS.split(",")), scale=Scale(0.01), db=db)
    plan, _ = stopped_sweep(shared)
    with Store.open_existing(db) as store:
        before = read_run(store, 2)
    resumed = resume_sweep(str(plan.sweep_id), db, None, runner_for=lambda jobs, asked: ClusterRunner(cluster))
    with locks.hold_run(db, 2), pytest.raises(SsdlabError, match="run 2 is running in"):
        run_sweep(resumed, lambda request, run_id, tests: SilentReporter())
    with Store.open_existing(db) as store:
        assert read_run(store, 2) == before and len(store.runs()) == 2  # nothing sent, nothing made


def test_ctrl_c_stops_a_sweep_on_the_cluster_leaving_what_was_sent_to_resume(cluster, tmp_path):
    """SIGINT once the first run has been sent: the command ends at once with Interrupted's
    status; the runs sent are stored, none left held; `sweep --resume` finishes them all."""
    db = tmp_path / "ssdlab.db"
    argv = [sys.executable, "-m", "ssdlab", "sweep", "wd-sn850-1tb", *GRID, "--tests", TESTS, "--scale", "0.05",
            "--cluster", cluster, "--db", str(db)]
    client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def sent() -> bool:
        try:  # the file exists a moment before its tables do
            with Store.open_existing(db, readonly=True) as store:
                return bool(store.runs())
        except SsdlabError:
            return False
    deadline = time.monotonic() + 60
    while not sent():
        assert time.monotonic() < deadline and client.poll() is None, client.stderr.read() if client.stderr else ""
        time.sleep(0.1)
    client.send_signal(signal.SIGINT)
    _, err = client.communicate(timeout=60)
    assert client.returncode == Interrupted.exit_code, err
    assert "sweep --resume 1" in " ".join(err.split())
    with Store.open_existing(db, readonly=True) as store:
        stopped = store.runs()
    assert stopped and all(r.status.value in ("interrupted", "done") for r in stopped)  # none held: all resumable
    assert len(stopped) < 4 or any(r.status.value == "interrupted" for r in stopped)  # stopped part way
    run_cli("sweep", "--resume", "1", "--cluster", cluster, db=db, timeout=300)
    with Store.open_existing(db, readonly=True) as store:
        assert [r.status for r in sweep_table(store, 1).rows] == ["done"] * 4
