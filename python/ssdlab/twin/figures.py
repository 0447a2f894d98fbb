"""The figures a twin is fitted to and judged by: what a stored run measured, step by step.

A figure is one number of one test: the data rate (MB/s over busy time) of each measured
step, named by the step's label ("QD4", "read 70%"), and, for a fill, its curve: the mean
rate over each twentieth of the data written (bytes over time), so that a curve weighs as
much whatever the fill's length or its segments' size. Only positive rates are figures (a
fit compares them as ratios).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ssdlab.model import Phase, TestStatus
from ssdlab.store import StepRecord, Store

FILL_BINS = 20


@dataclass(frozen=True)
class Figure:
    test: str  # the test's id
    name: str  # within the test: the step's label, or the fill's share ("fill 35-40 %")
    mbps: float

    @property
    def key(self) -> tuple[str, str]:
        return self.test, self.name


def run_figures(store: Store, run_id: int, tests: Iterable[str] | None = None) -> list[Figure]:
    """The figures of the finished tests of run `run_id` (of `tests` only, when given)."""
    wanted = None if tests is None else set(tests)
    figures: list[Figure] = []
    for record in store.tests(run_id):
        if record.status is not TestStatus.DONE or record.score is None:
            continue
        if wanted is not None and record.test.id not in wanted:
            continue
        figures += step_figures(record.test.id, store.steps(run_id, record.seq))
    return figures


def step_figures(test: str, steps: Sequence[StepRecord]) -> list[Figure]:
    """The figures of one test's stored steps: each measured step's rate; a fill's curve."""
    figures: list[Figure] = []
    seen: dict[str, int] = {}
    for record in steps:
        step, result = record.step, record.result
        if step.phase is not Phase.MEASURE:
            continue
        if result.per_gib:
            figures += fill_figures(test, [(p.gib, p.mbps) for p in result.per_gib])
            continue
        if result.mbps <= 0:
            continue
        seen[step.label] = seen.get(step.label, 0) + 1  # a label measured again (repeats) is its own figure
        name = step.label if seen[step.label] == 1 else f"{step.label} #{seen[step.label]}"
        figures.append(Figure(test, name, result.mbps))
    return figures


def fill_figures(test: str, points: Sequence[tuple[float, float]]) -> list[Figure]:
    """A fill's curve, (GiB written at a segment's end, its MB/s), as the mean rate over each
    twentieth of the data written."""
    total = points[-1][0]
    edges = [total * i / FILL_BINS for i in range(FILL_BINS + 1)]
    seconds = [0.0] * FILL_BINS
    gib = [0.0] * FILL_BINS
    start = 0.0
    for end, mbps in points:
        for b in range(FILL_BINS):  # the part of this segment inside each bin
            part = min(end, edges[b + 1]) - max(start, edges[b])
            if part > 0 and mbps > 0:
                gib[b] += part
                seconds[b] += part * (1 << 30) / (mbps * 1e6)
        start = end
    step = 100 // FILL_BINS
    return [Figure(test, f"fill {b * step}-{(b + 1) * step} %", gib[b] * (1 << 30) / seconds[b] / 1e6)
            for b in range(FILL_BINS) if seconds[b] > 0]
