"""The runner of this machine: simulated drives side by side on its cores (side_by_side.py),
as many at once as the cores and the available memory allow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ssdlab.distributed.runner import Outcome, ReporterFor, RunJob
from ssdlab.side_by_side import MEMINFO, plan_requests, run_side_by_side


@dataclass(frozen=True)
class LocalRunner:
    jobs: int  # how many run at once
    note: str | None = None  # why fewer run at once than asked

    @classmethod
    def planned(cls, jobs: Sequence[RunJob], asked: int | None, meminfo: Path = MEMINFO) -> LocalRunner:
        """Every job's request checked (its drive built: refused before anything runs) and how
        many fit at once: `asked` (--jobs), else one per usable core, as memory allows."""
        planned = plan_requests([job.request for job in jobs], asked, meminfo)
        return cls(planned.jobs, planned.note)

    def run(self, jobs: Sequence[RunJob], reporter_for: ReporterFor) -> list[Outcome]:
        return run_side_by_side([job.request for job in jobs], self.jobs, reporter_for,
                                resume=[job.resume for job in jobs])
