"""The figures a twin is fitted to and judged by: what a stored run measured, step by step.

A figure is one number of one test, a rate or a temperature. Rates: the data rate (MB/s over
busy time) of each measured step, named by the step's label ("QD4", "read 70%"), and, for a
fill, its curve: the mean rate over each twentieth of the data written (bytes over time), so
that a curve weighs as much whatever the fill's length or its segments' size. Only positive
rates are figures (a fit compares them as ratios). Temperatures: the drive's, over each step
that has a series of them (preconditioning too: the drive warms there as well), the mean over
each quarter of the step's busy time, so that its rise and its level both count (a fit
compares them as differences, in kelvins).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ssdlab.model import Phase, TestStatus
from ssdlab.store import StepRecord, Store

FILL_BINS = 20
TEMPERATURE_PARTS = 4
RATE, TEMPERATURE = "MB/s", "°C"


@dataclass(frozen=True)
class Figure:
    test: str  # the test's id
    name: str  # within the test: the step's label, or the fill's share ("fill 35-40 %")
    value: float
    unit: str = RATE

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
    """The figures of one test's stored steps: each measured step's rate; a fill's curve; the
    temperatures of each step with a series of them."""
    figures: list[Figure] = []
    rated: dict[str, int] = {}
    warmed: dict[str, int] = {}
    for record in steps:
        step, result = record.step, record.result
        if (series := record.telemetry.temperature) and any(c is not None for c in series.celsius):
            figures += temperature_figures(test, _counted(warmed, step.label), series.celsius, result.busy_s)
        if step.phase is not Phase.MEASURE:
            continue
        if result.per_gib:
            figures += fill_figures(test, [(p.gib, p.mbps) for p in result.per_gib])
        elif result.mbps > 0:
            figures.append(Figure(test, _counted(rated, step.label), result.mbps))
    return figures


def _counted(seen: dict[str, int], label: str) -> str:
    """A step's name: its label, numbered when the label comes again (repeats)."""
    seen[label] = seen.get(label, 0) + 1
    return label if seen[label] == 1 else f"{label} #{seen[label]}"


def temperature_figures(test: str, step: str, celsius: Sequence[float | None], seconds: float) -> list[Figure]:
    """A step's temperatures: the mean over each quarter of its `seconds` of busy time, each
    reading standing for its second (the last one for what is left of the step), so that a
    twin a little faster or slower than the drive gives the same figures, a little moved, not
    a reading more or less in a quarter."""
    n = len(celsius)
    span = seconds if n - 1 < seconds <= n else float(n)  # else the series' own length
    readings = [(i, c) for i, c in enumerate(celsius) if c is not None]
    figures = []
    for k in range(TEMPERATURE_PARTS):
        start, end = span * k / TEMPERATURE_PARTS, span * (k + 1) / TEMPERATURE_PARTS
        weights = [(min(end, i + 1) - max(start, i), c) for i, c in readings]
        total = sum(w for w, _ in weights if w > 0)
        if total > 0:
            value = sum(w * c for w, c in weights if w > 0) / total
        else:  # no reading within the quarter: the nearest one
            value = min(readings, key=lambda r: abs(r[0] + 0.5 - (start + end) / 2))[1]
        figures.append(Figure(test, f"{step} °C {k + 1}/{TEMPERATURE_PARTS}", value, TEMPERATURE))
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
