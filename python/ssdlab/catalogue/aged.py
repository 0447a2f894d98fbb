"""The aged suite (METHODOLOGY.md section 5): the drive new and aged.

slc-retirement is the client suite's whole-drive fill on the purged young drive, then the
drive worn by the simulator's age step (a state set in no time, not petabytes of simulated
writes), purged, and the same fill again; its score is the SLC cache young and aged as
analysis/fill.py reads it from each curve, and the report draws both curves in one chart.
Only a simulated drive has an age step: a real target skips the test before its first step,
with the reason (a real drive ages by writing: the endurance suite). Choices:

- The age is 67 % of the drive's rated P/E cycles: METHODOLOGY.md's example, 2000 of about
  3000 rated for TLC, taken as a share so that it means the same on any NAND. On QLC rated
  for 1000 it is 670, where 2000 cycles would be twice the rating, beyond many of its blocks' life.
- The aged fill starts from a purge as the young one does, so the curves differ by wear alone.
- `--scale` shrinks both fills as it shrinks the whole-drive fill; the age never scales.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ssdlab.analysis import scores
from ssdlab.catalogue.client import CLIENT_TESTS
from ssdlab.catalogue.definitions import WholeDriveFill, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.model import Age, Step
from ssdlab.model.steps import AgeUnit
from ssdlab.telemetry.needs import Need

SLC_RETIREMENT_AGE = Age(value=67, unit=AgeUnit.PERCENT)
FILL = next(t for t in CLIENT_TESTS if isinstance(t, WholeDriveFill))  # its block size and queue depth


@dataclass(frozen=True)
class SlcRetirement(WholeDriveFill):
    """The whole-drive fill young, the drive aged to `age`, purged, and the fill again."""

    age: Age = SLC_RETIREMENT_AGE

    def needs(self) -> tuple[Need, ...]:
        return (Need.AGE,)

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        (fill,) = super().workload(scale, capacity)
        young, aged = (fill.model_copy(update={"label": f"{when} {fill.label}"}) for when in ("young", "aged"))
        return [young, Step.ageing(self.age, f"age to {self.age}"), purge(capacity), aged]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        young, aged = (scores.fill_score(step.label, [(step, result)]) for step, result in measured)
        # no sustained drop is no cache (analysis/fill.py): 0 GiB, so that runs compare; each
        # fill's finding says how much it wrote, as a small --scale may end inside the cache
        young_gib, aged_gib = (fill["slc_cache_gib"] or 0.0 for fill in (young, aged))
        return {"name": self.primary_score, "value": aged_gib, "unit": "GiB", "young_slc_cache_gib": young_gib,
                "retained_pct": round(aged_gib / young_gib * 100, 1) if young_gib else None,
                "age": str(self.age), "young": young, "aged": aged}


AGED_TESTS = (
    SlcRetirement(id="slc-retirement", title="SLC cache young and aged: the whole-drive fill, the drive aged to "
                                             f"{SLC_RETIREMENT_AGE} of its rated P/E cycles, the fill again",
                  primary_score="SLC cache aged", bs=FILL.bs, iodepth=FILL.iodepth),
)
