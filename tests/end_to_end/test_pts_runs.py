"""The PTS suites through the session: a run stopped mid-loop resumes from the last round it
completed, on a simulated drive (its state rebuilt by running the kept rounds again, to the
same figures) and on a real file with fio (the kept steps not run again)."""

from __future__ import annotations

import json

import pytest

from ssdlab import session
from ssdlab.catalogue import Scale
from ssdlab.errors import Interrupted
from ssdlab.execution import SilentReporter
from ssdlab.model import Step, StepResult
from ssdlab.store import Store
from ssdlab.units import MiB
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET


class StopAt(SilentReporter):
    """Stops the run (as Ctrl-C would) once `count` steps are stored."""

    def __init__(self, count: int):
        self.count = count

    def step_finished(self, step: Step, result: StepResult) -> None:
        self.count -= 1
        if self.count == 0:
            raise KeyboardInterrupt


def stored(db, run_id=1):
    with Store(db) as store:
        (record,) = store.tests(run_id)
        return record, [(s.idx, s.step.label, s.result.started_at) for s in store.steps(run_id, 0)]


def run_stopped(request: session.RunRequest, stop_after: int) -> None:
    with pytest.raises(Interrupted, match="ssdlab resume"):
        session.start_run(request, show_progress=lambda run_id, tests: StopAt(stop_after))


def test_a_simulated_run_stopped_mid_round_resumes_from_its_last_round_to_the_same_figures(tmp_path):
    def request(name):
        return session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="pts", tests=("pts-latency",),
                                  scale=Scale(0.01), db=tmp_path / f"{name}.db")
    session.start_run(request("whole"), show_progress=False)
    whole, whole_steps = stored(tmp_path / "whole.db")
    assert whole.score["steady"] and whole.score["loops"][0]["steady"]["round"] >= 5

    run_stopped(request("stopped"), 2 + 2 * 9 + 4)  # purge, WIPC, 2 rounds of 9 cells, 4 of round 3
    _, before = stored(tmp_path / "stopped.db")
    assert len(before) == 24
    session.resume_run("1", tmp_path / "stopped.db", None, show_progress=False)
    resumed, after = stored(tmp_path / "stopped.db")
    assert after[:20] == before[:20]  # the completed rounds kept as they were stored
    assert [label for _, label, _ in after] == [label for _, label, _ in whole_steps]
    assert resumed.score == whole.score
    # the drive's health log read after every round (this preset has no thermal model to give temperatures)
    with Store(tmp_path / "stopped.db") as store:
        steps = store.steps(1, 0)
    read = [s.idx for s in steps if s.telemetry.health is not None]
    assert read == [2 + 9 * r - 1 for r in range(1, whole.score["loops"][0]["steady"]["rounds_run"] + 1)]


@pytest.mark.waits
def test_a_file_run_stopped_mid_loop_resumes_from_its_last_round_without_running_it_again(scratch):
    request = session.RunRequest(target=str(scratch / "drive.img"), size=128 * MiB, suite="pts",
                                 tests=("pts-throughput",), scale=Scale(0.01), db=scratch / "ssdlab.db")
    run_stopped(request, 2 + 2 + 1)  # purge, WIPC, round 1, the reads of round 2
    _, before = stored(scratch / "ssdlab.db")
    assert len(before) == 5 and before[0][1] == "purge"
    # resumed, and stopped again after round 2 (a file's MB/s may take up to 25 rounds to be
    # steady on a busy disk)
    with pytest.raises(Interrupted):
        session.resume_run("1", scratch / "ssdlab.db", None, show_progress=lambda run_id, tests: StopAt(2))
    record, after = stored(scratch / "ssdlab.db")
    assert after[:4] == before[:4]  # the purge, the WIPC and round 1 kept, not run again
    assert after[4][2] != before[4][2]  # round 2 measured again from its first cell
    assert [label for _, label, _ in after[4:]] == [
        f"throughput 1 MiB round 2/25: SEQ 1 MiB {mix}" for mix in ("100/0", "0/100")]
    assert record.status.value == "running"


def test_a_dry_run_lists_the_iops_matrix_in_order_and_its_worst_case_and_touches_nothing(tmp_path):
    target, db = tmp_path / "drive.img", tmp_path / "ssdlab.db"
    plan = json.loads(run_cli("run", target, "--size", "8GiB", "--suite", "pts", "--dry-run", "--json",
                              db=db).stdout)
    assert not target.exists() and not db.exists()
    iops = next(t for t in plan["tests"] if t["id"] == "pts-iops")
    assert iops["until_steady"] and len(iops["steps"]) == 2 + 25 * 56
    first = iops["steps"][2:2 + 56]
    assert [(s["rwmixread"] if s["rw"] == "randrw" else {"randread": 100, "randwrite": 0}[s["rw"]], s["bs"])
            for s in first] == [(mix, bs) for mix in (100, 95, 65, 50, 35, 5, 0)
                                for bs in (1 << 20, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 8 << 10, 4 << 10, 512)]
    assert {s["runtime"] for s in iops["steps"][2:]} == {60.0}
    assert plan["estimated_seconds"] > 25 * 56 * 60  # the IOPS test's 25 rounds of 56 minutes at most
    said = run_cli("run", target, "--size", "8GiB", "--suite", "pts", "--dry-run", db=db).stdout
    assert "pts-iops: 1402 steps at most (each loop stops at steady state)" in said


def test_the_enterprise_variant_turns_a_simulated_drives_write_cache_off_for_its_test_only(tmp_path):
    request = session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="pts-enterprise",
                                 tests=("pts-e-latency", "pts-e-wsat"), scale=Scale(0.01), db=tmp_path / "e.db")
    session.start_run(request, show_progress=False)
    client = session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="pts", tests=("pts-latency",),
                                scale=Scale(0.01), db=tmp_path / "c.db")
    session.start_run(client, show_progress=False)
    with Store(tmp_path / "e.db") as store:
        latency, wsat = (r.score for r in store.tests(1))
    with Store(tmp_path / "c.db") as store:
        (on,) = (r.score for r in store.tests(1))
    off = {"asked": "off", "set": True, "how": "the simulated drive's host turned it off"}
    assert latency["write_cache"] == wsat["write_cache"] == off
    assert on["write_cache"] == {"asked": "on", "set": True, "how": "the simulated drive's host turned it on"}
    # a write waits for its padded program: an SLC program (212 µs) where the cache gave 12 µs
    assert latency["value"] > 200 and on["value"] < 20
    # the variant's settings are in the run's document, beside the scores
    shown = json.loads(run_cli("show", "1", "--json", db=tmp_path / "e.db").stdout)["tests"]
    assert [t["settings"]["write_cache"] for t in shown] == ["off", "off"]
    assert shown[0]["settings"]["threads"] == 1 and shown[1]["settings"]["threads"] == 4
