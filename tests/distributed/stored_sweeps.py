"""Sweeps stored as `ssdlab sweep` stores them, with synthetic runs (tests/report_runs.py: every
step at a MB/s the test chooses from the variant's values) instead of simulated ones: their pages
and their recovery read them within a second. Some variants may be left failed or not run."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from ssdlab.catalogue import Scale
from ssdlab.distributed.specs import SweepSpec
from ssdlab.distributed.sweeps import new_sweep
from ssdlab.model import RunStatus
from ssdlab.session import RunRequest
from ssdlab.store import Store
from tests.report_runs import synthetic_run

BASE = "wd-sn850-1tb"
TESTS = ("rand-read-burst", "seq-write-sustained")
FAILED = "the drive stopped answering"  # a failed variant's second test's error


class _NotRun:
    """A runner (distributed.runner.Runner) for a sweep whose runs the test stores itself."""

    note = None

    def run(self, jobs, reporter_for):
        raise AssertionError("a stored sweep is not run")


def stored_sweep(db: Path, spec: SweepSpec, mbps: Callable[[dict], float], failed: Collection[int] = (),
                 not_run: Collection[int] = ()) -> int:
    """Sweep `spec` of the SN850 over TESTS at scale 0.01, each variant's run synthetic at
    `mbps(overrides)`: finished, except the variants (by index) `failed` (its second test failed,
    without a score) and `not_run` (no run). Returns the sweep's id."""
    shared = RunRequest(target="", suite="quick", tests=TESTS, scale=Scale(0.01), db=db)
    plan = new_sweep(BASE, spec, shared, None, runner_for=lambda jobs, asked: _NotRun())
    with Store(db) as store:
        variants = store.sweep_variants(plan.sweep_id)
    for variant in variants:
        if variant.idx in not_run:
            continue
        run_id = synthetic_run(db, list(TESTS), mbps=mbps(variant.overrides), name=variant.name)
        with Store(db) as store:
            if variant.idx in failed:
                store.start_test(run_id, 1)  # its score and steps gone, as a test that failed half-way
                store.fail_test(run_id, 1, FAILED)
            else:
                store.finish_run(run_id, RunStatus.DONE)
            store.set_variant_run(plan.sweep_id, variant.idx, run_id)
    return plan.sweep_id
