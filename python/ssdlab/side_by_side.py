"""Several simulated drives run side by side: one run each, as many at once as there are
cores for them and memory to hold them.

A simulated drive is one thread of Rust that releases Python while it runs a step, and
drives share nothing (each has its own seed, tables and store connection), so running
them at once changes no result: it only puts the other cores to work on a design study
or a comparison. Real targets are never run side by side: a device or file is run on
its own, by one process that holds it.

An interrupt stops every run at its next step (a simulated step runs to its end) and
leaves each resumable; runs not yet started are not created.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ssdlab.errors import Interrupted, SsdlabError
from ssdlab.execution import Reporter
from ssdlab.model import Test
from ssdlab.presets import load_preset
from ssdlab.session import (
    RunRequest,
    endurance_fields,
    planned_capacity,
    power_meter,
    resume_run,
    retention_wait,
    selected_tests,
    sim_host,
    start_run,
)
from ssdlab.targets.resolve import SIM_PREFIX
from ssdlab.units import GiB

MAX_JOBS = 64
# What the simulator may take per TB of simulated capacity, at most: its mapping table and
# reverse map (issue 28's bound; BENCHMARKS.md records 1.91 GiB per TB measured).
SIM_BYTES_PER_TB = 2 * GiB
TB = 10**12
MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True)
class Outcome:
    """How one target's run ended: its id (None when it was never created) and, when it did
    not complete, why (the error's message and exit code)."""
    target: str
    run_id: int | None
    error: str | None = None
    exit_code: int = 0


@dataclass(frozen=True)
class Plan:
    """The runs, one per target with every other option shared, and how many run at once;
    `note` says why fewer run at once than asked."""
    requests: list[RunRequest]
    jobs: int
    note: str | None = None


def plan(targets: Sequence[str], request: RunRequest, asked_jobs: int | None, meminfo: Path = MEMINFO) -> Plan:
    """Refused before anything runs when a target is not simulated or an option does not fit.
    At once: as `plan_requests` says."""
    _check_jobs(asked_jobs)
    if not targets:
        raise SsdlabError("give a target: a block device, a file, or sim:PRESET (`ssdlab drives`)")
    requests = [replace(request, target=t) for t in targets]
    if len(requests) == 1:
        return Plan(requests, 1)
    if real := [t for t in targets if not t.startswith(SIM_PREFIX)]:
        raise SsdlabError(f"several targets run side by side only when all are simulated drives (sim:PRESET); "
                          f"{', '.join(real)} {'is' if len(real) == 1 else 'are'} not. Run a device or "
                          "file on its own")
    return plan_requests(requests, asked_jobs, meminfo)


def plan_requests(requests: Sequence[RunRequest], asked_jobs: int | None, meminfo: Path = MEMINFO) -> Plan:
    """Runs of simulated drives, each request checked before any runs (its drive built: a bad
    preset, or an age it cannot reach, is refused). At once: `asked_jobs` (--jobs), else one
    drive per usable core, never more than there are drives or than the available memory
    holds (counting the largest drives)."""
    _check_jobs(asked_jobs)
    needs = []
    for r in requests:
        test_ids = selected_tests(r)[2]
        power_meter(r)  # a simulated drive's power comes from its preset: refused here
        sim_host(r)
        retention_wait(r, test_ids)
        endurance_fields(r, test_ids, r.preset_text or load_preset(r.target[len(SIM_PREFIX):]).text)
        # Building each drive refuses a bad preset, or an age it cannot reach, before any run starts, and
        # gives its size.
        needs.append(memory_need(r, test_ids))
    needs.sort(reverse=True)
    jobs = min(len(requests), asked_jobs or usable_cores())
    available = available_bytes(meminfo)
    if available is None:
        return Plan(list(requests), jobs)
    fit = 1
    while fit < jobs and sum(needs[:fit + 1]) <= available:
        fit += 1
    if fit == jobs:
        return Plan(list(requests), jobs)
    return Plan(list(requests), fit, f"running {fit} at a time, not {jobs}: {available / GiB:.1f} GiB of memory "
                                     f"is available and the largest drives need up to {needs[0] / GiB:.1f} GiB each")


def usable_cores() -> int:
    """The cores this process may run on (its affinity: a container's or `taskset`'s share)."""
    return len(os.sched_getaffinity(0))


def _check_jobs(asked_jobs: int | None) -> None:
    if asked_jobs is not None and not 1 <= asked_jobs <= MAX_JOBS:
        raise SsdlabError(f"--jobs must be 1 to {MAX_JOBS}, not {asked_jobs}")


def memory_need(request: RunRequest, test_ids: list[str] | None = None) -> int:
    """The memory a simulated drive's run may take, at most (SIM_BYTES_PER_TB of its capacity);
    `test_ids`: the request's tests, when already selected."""
    if test_ids is None:
        test_ids = selected_tests(request)[2]
    return -(-planned_capacity(request, test_ids) * SIM_BYTES_PER_TB // TB)


def available_bytes(meminfo: Path = MEMINFO) -> int | None:
    """MemAvailable from the kernel, or None where it cannot be read."""
    try:
        for line in meminfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                return int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


# A reporter for a run: its request, id and tests.
ReporterFor = Callable[[RunRequest, int, list[Test]], Reporter]


def run_side_by_side(requests: Sequence[RunRequest], jobs: int, reporter_for: ReporterFor,
                     resume: Sequence[int | None] | None = None) -> list[Outcome]:
    """Run every request, `jobs` at once; the outcomes in the order of the requests, whose
    runs are numbered in that order too (each is created once the one before it is).
    `resume`: for each request, the stored run it continues (session.resume_run), or None
    for a new run; None: every one is new."""
    stop = threading.Event()
    turns = _Turns()
    continued = list(resume) if resume is not None else [None] * len(requests)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ssdlab-run") as pool:
        futures = [pool.submit(_run_one, r, run_id, turn, turns, stop, reporter_for)
                   for turn, (r, run_id) in enumerate(zip(requests, continued))]
        try:
            pending = set(futures)
            while pending:  # in slices, so that an interrupt reaches this thread
                _, pending = wait(pending, timeout=0.25)
        except KeyboardInterrupt:
            stop.set()
            turns.end()
            pool.shutdown(wait=True, cancel_futures=True)
    return [f.result() if not f.cancelled() else _not_started(r, run_id)
            for r, run_id, f in zip(requests, continued, futures)]


def _run_one(request: RunRequest, resumed: int | None, turn: int, turns: _Turns, stop: threading.Event,
             reporter_for: ReporterFor) -> Outcome:
    created: list[int] = []

    def reporter(run_id: int, tests: list[Test]) -> Reporter:
        created.append(run_id)
        turns.passed(turn)
        return StopBetweenSteps(reporter_for(request, run_id, tests), stop)

    try:
        turns.wait_for(turn)
        if stop.is_set():
            return _not_started(request, resumed)
        if resumed is None:
            return Outcome(request.target, start_run(request, show_progress=reporter))
        return Outcome(request.target, resume_run(str(resumed), request.db, None, show_progress=reporter))
    except SsdlabError as exc:
        return Outcome(request.target, created[0] if created else resumed, str(exc), exc.exit_code)
    finally:
        turns.passed(turn)  # also when no run was made: the next one need not wait


def _not_started(request: RunRequest, resumed: int | None = None) -> Outcome:
    return Outcome(request.target, resumed, "not started: interrupted", Interrupted.exit_code)


class _Turns:
    """Runs are created in the order of their turns: turn `i` waits until every earlier
    one has passed (made its run, or failed before), or until the turns end (an interrupt)."""

    def __init__(self) -> None:
        self._passed: set[int] = set()
        self._next = 0
        self._ended = False
        self._changed = threading.Condition()

    def wait_for(self, turn: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._next >= turn or self._ended)

    def passed(self, turn: int) -> None:
        with self._changed:
            self._passed.add(turn)
            while self._next in self._passed:
                self._next += 1
            self._changed.notify_all()

    def end(self) -> None:
        with self._changed:
            self._ended = True
            self._changed.notify_all()


class Stop(Protocol):
    """What says a run is to stop: a threading.Event, or a cluster task's (cluster.TaskStop)."""

    def is_set(self) -> bool: ...


class StopBetweenSteps:
    """A reporter that interrupts its run, in the thread that runs it, once `stop` is set: at
    the next step, or at the next progress of the step under way (a fio job's, every poll,
    which stops fio)."""

    def __init__(self, reporter: Reporter, stop: Stop) -> None:
        self._reporter, self._stop = reporter, stop

    def step_started(self, *args: Any, **kwargs: Any) -> None:
        self._stop_if_asked()
        self._reporter.step_started(*args, **kwargs)

    def step_progress(self, fraction: float, status: str) -> None:
        self._stop_if_asked()
        self._reporter.step_progress(fraction, status)

    def _stop_if_asked(self) -> None:
        if self._stop.is_set():
            raise KeyboardInterrupt

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reporter, name)
