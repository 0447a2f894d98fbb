"""A worker's memory for its simulated drives (memory_budget.py): a drive that does not fit
beside those running waits for one to end, one alone always runs, and a stop asked while it
waits lets it go holding nothing. Real threads; nothing is timed but how long a test waits."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ssdlab.catalogue import Scale
from ssdlab.distributed import cluster
from ssdlab.distributed.memory_budget import MemoryBudget
from ssdlab.session import RunRequest
from ssdlab.side_by_side import SIM_BYTES_PER_TB
from ssdlab.units import GiB
from tests.distributed.waiting import wait_for

WAIT_S = 30  # how long a test waits for what must happen (a failure, not a timing)


def _hold(budget: MemoryBudget, need: int, events: list[str], name: str, until: threading.Event,
          stop: threading.Event | None = None) -> bool:
    with budget.held(need, stop or threading.Event()) as held:
        events.append(f"{name} {'holds' if held else 'gave up'}")
        if held:
            until.wait(WAIT_S)
            events.append(f"{name} ends")
        return held


def test_a_drive_that_does_not_fit_beside_another_waits_for_it_to_end():
    budget, events = MemoryBudget(lambda: 3 * GiB), []
    first_ends, second_may_end = threading.Event(), threading.Event()
    second_may_end.set()
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(_hold, budget, 2 * GiB, events, "first", first_ends)
        wait_for(lambda: events == ["first holds"], lambda: str(events), WAIT_S)
        second = pool.submit(_hold, budget, 2 * GiB, events, "second", second_may_end)
        time.sleep(0.2)  # long enough for the second to hold, were it let through
        first_ends.set()
        assert first.result() and second.result()
    assert events == ["first holds", "first ends", "second holds", "second ends"]


def test_drives_that_fit_together_run_together():
    budget, events = MemoryBudget(lambda: 3 * GiB), []
    both_hold = threading.Barrier(2, timeout=WAIT_S)  # broken, raising, unless both hold at once

    def hold() -> None:
        with budget.held(GiB, threading.Event()) as held:
            assert held
            both_hold.wait()
            events.append("held")

    with ThreadPoolExecutor(2) as pool:
        for f in [pool.submit(hold), pool.submit(hold)]:
            f.result()
    assert events == ["held", "held"]


def test_a_drive_larger_than_the_memory_runs_alone_and_an_unknown_memory_holds_any():
    for total in (lambda: GiB, lambda: None):
        with MemoryBudget(total).held(8 * GiB, threading.Event()) as held:
            assert held


def test_a_stop_asked_while_a_drive_waits_lets_it_go_holding_nothing():
    budget, events = MemoryBudget(lambda: 3 * GiB), []
    first_ends, stop = threading.Event(), threading.Event()
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(_hold, budget, 2 * GiB, events, "first", first_ends)
        wait_for(lambda: events == ["first holds"], lambda: str(events), WAIT_S)
        waiting = pool.submit(_hold, budget, 2 * GiB, events, "waiting", threading.Event(), stop)
        stop.set()
        assert waiting.result(timeout=WAIT_S) is False
        first_ends.set()
        assert first.result()
    assert events == ["first holds", "waiting gave up", "first ends"]
    with budget.held(3 * GiB, threading.Event()) as held:  # the whole budget is free again
        assert held and budget.total == 3 * GiB


def test_a_workers_tasks_run_their_drives_one_at_a_time_when_two_do_not_fit(monkeypatch, tmp_path):
    """Two 1 TB drives (2 GiB each at most) on a worker with 3 GiB: the second run is made
    once the first has ended."""
    monkeypatch.setattr(cluster, "simulated_drives", MemoryBudget(lambda: SIM_BYTES_PER_TB * 3 // 2))
    request = RunRequest(target="sim:wd-sn850-1tb", suite="quick", tests=("rand-read-burst",), scale=Scale(0.01))
    with ThreadPoolExecutor(2) as pool:
        results = [f.result() for f in [pool.submit(cluster.run_on_worker, request) for _ in range(2)]]
    runs = sorted((r.rows["runs"][0] for r in results), key=lambda run: run["created_at"])
    assert [r.error for r in results] == [None, None] and [run["status"] for run in runs] == ["done", "done"]
    assert runs[1]["created_at"] >= runs[0]["finished_at"]
