"""The stored runs a twin is made from: one drive's, each with the conditions it was measured
in (its suite, tests and scale; a simulated drive's host), and the figures it measured.

Every run must be of the same drive: the same serial (and model) for a real drive, the same
preset (its SHA-256) for a simulated one. A file target is no drive. Only finished tests
count, and a run must have at least one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ssdlab.backends.sim_host import Cooling
from ssdlab.errors import SsdlabError
from ssdlab.model import Run, TestStatus
from ssdlab.session import SIM_HOST
from ssdlab.store import Store, TestRecord
from ssdlab.twin.figures import TEMPERATURE, Figure, run_figures


@dataclass(frozen=True)
class Source:
    """One stored run of the drive: how it was measured, and what (its figures, held out or not)."""

    run: Run
    tests: tuple[str, ...]  # its finished tests, in its order
    host: dict[str, Any]  # a simulated drive's host (SimHost's fields); {} for a real drive
    figures: tuple[Figure, ...]
    durations: dict[str, float]  # test id: how long it took in the run (s)
    scores: dict[str, dict[str, Any]]  # test id: its primary score, as stored

    @property
    def warmed(self) -> bool:
        """Does the run hold the drive's temperatures?"""
        return any(f.unit == TEMPERATURE for f in self.figures)

    def seconds(self, tests: Iterable[str]) -> float:
        """How long `tests` took in the run: how long the twin's take, relatively."""
        return sum(self.durations.get(t, 0.0) for t in tests)

    def conditions(self) -> dict[str, Any]:
        """The RunRequest fields that measure a simulated twin as this run was measured."""
        host = self.host
        cooling = host.get("cooling")
        return {"scale": self.run.scale, "apst_latency_us": host.get("apst_latency_us"),
                "no_low_power_states": host.get("low_power_states") is False,
                "cooling": None if cooling is None else Cooling(cooling), "ambient_c": host.get("ambient_c")}


def load_sources(store: Store, run_ids: Sequence[int]) -> list[Source]:
    """The runs `run_ids` of `store`, refused unless they are of one drive and each has a finished test."""
    if len(set(run_ids)) < len(run_ids):
        raise SsdlabError("a run is named twice: give each run once")
    runs = [store.run(run_id) for run_id in run_ids]
    drives = {run.id: drive_of(run) for run in runs}
    if len(set(drives.values())) > 1:
        listed = "; ".join(f"run {run_id}: {_shown(drive)}" for run_id, drive in drives.items())
        raise SsdlabError(f"the runs are of different drives ({listed}): a twin is fitted to one drive's runs")
    sources = []
    for run in runs:
        extras = store.run_extras(run.id)
        done = [r for r in store.tests(run.id) if r.status is TestStatus.DONE and r.score is not None]
        tests = tuple(r.test.id for r in done)
        if not tests:
            raise SsdlabError(f"run {run.id} has no finished test: give runs with results (`ssdlab show {run.id}`)")
        sources.append(Source(run, tests, dict(extras["options"].get(SIM_HOST) or {}),
                              tuple(run_figures(store, run.id, tests)), {r.test.id: _seconds(r) for r in done},
                              {r.test.id: r.score for r in done if r.score is not None}))
    return sources


def drive_of(run: Run) -> tuple[str, ...]:
    """What names a run's drive: ("sim", preset SHA-256) or ("device", model, serial)."""
    identity = run.identity
    if run.target_kind == "sim":
        return "sim", str(identity.get("preset_sha256"))
    if run.target_kind == "file":
        raise SsdlabError(f"run {run.id} is of a file ({run.target}): a twin is fitted to a drive's runs, on its "
                          "device or simulated")
    serial = identity.get("serial")
    if not serial:
        raise SsdlabError(f"run {run.id} does not record its drive's serial, which tells its runs from another "
                          "drive's: fit runs that do (ssdlab records it when the device reports one)")
    return "device", str(identity.get("model") or ""), str(serial)


def _seconds(record: TestRecord) -> float:
    try:
        return (datetime.fromisoformat(record.finished_at or "") - datetime.fromisoformat(record.started_at or "")
                ).total_seconds()
    except ValueError:
        return 0.0


def _shown(drive: tuple[str, ...]) -> str:
    if drive[0] == "sim":
        return f"the simulated preset {drive[1][:12]}"
    return f"{drive[1]} serial {drive[2]}"
