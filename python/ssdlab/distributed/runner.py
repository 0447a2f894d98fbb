"""Where a sweep's runs go: the interface every runner has, this machine's (local.py) and a
Dask cluster's (cluster.py).

A runner takes jobs, each a new run of a request or a stored run continued, and gives back
each job's Outcome (side_by_side.Outcome: the run's id, and why it did not complete), in the
order of the jobs. New runs are numbered in that order (on a cluster: in the order they are
first sent, when the client stores them). As each run is made, or continued, the runner asks
`reporter_for(request, run_id, tests)` for the reporter that follows it (the progress of the
whole sweep, and the sweep's record of which run is whose). An interrupt (Ctrl-C, SIGTERM)
stops every running job at its next step, leaving it resumable, starts no more, and the
outcomes say so (on a cluster: the jobs still running are cancelled; what their workers sent
is stored, interrupted, and a resume continues them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ssdlab.session import RunRequest
from ssdlab.side_by_side import Outcome, ReporterFor


@dataclass(frozen=True)
class RunJob:
    """A new run of `request`, or, with `resume`, the stored run of that id continued (its
    request then says where it is stored and, for planning, which drive it is)."""

    request: RunRequest
    resume: int | None = None


class Runner(Protocol):
    @property
    def note(self) -> str | None:
        """What the user should know of where the jobs run (fewer at once than asked, and why)."""

    def run(self, jobs: Sequence[RunJob], reporter_for: ReporterFor) -> list[Outcome]: ...


# How a runner is chosen for its jobs and --jobs (a sweep's, a twin's fit); it checks every
# job's request (building its drive) before anything is stored or run.
RunnerFor = Callable[[Sequence[RunJob], int | None], Runner]

__all__ = ["Outcome", "ReporterFor", "RunJob", "Runner", "RunnerFor"]
