"""The endurance suite (METHODOLOGY.md section 5): the drive written towards its rated endurance,
probed as it goes.

endurance purges the drive and probes it, then writes a stated volume with a stated workload in
equal intervals, probing after each. A probe: the whole drive trimmed and left idle (its SLC cache
at its largest), a sustained sequential write over it with the throughput of every GiB (the SLC
cache size, analysis/fill.py), 60 s of 128 KiB sequential writes on the drive just filled, 60 s of
4 KiB random reads at QD1, and the drive's health log read after them. The score gives each
probe's figures against the data the host wrote, the write amplification of each interval where
the drive reports what its NAND wrote, and the point where the drive went read-only, if it did.
Choices:

- The volume is `--endurance-volume`: TB written (`600TB`) or a share of the rated TBW (`100%`),
  which a simulated drive's preset rates and a real drive's datasheet does; 100 % of the rated TBW
  by default where it is known. A real drive has no default: writing its life takes days.
- The workloads (`--endurance-workload`), each at QD32 over the whole drive: `seq`, 128 KiB
  sequential passes; `random`, 4 KiB uniform random writes; `jesd219`, the enterprise workload of
  CALIBRATION.md (its block sizes by share of commands, half of them to the first 5 % of LBAs,
  30 % to the next 15 %), the workload TBW ratings are measured with, and the default.
- `--endurance-probes` intervals (10 by default: a probe every 10 % of the volume), each written
  in chunks of at most one drive capacity: what a real drive's resume may repeat.
- A real drive's run resumes at the chunk it stopped in, not from its purge: the drive kept its
  wear. A simulated drive's wear lives in its process: its test starts again.
- A simulated drive writes each interval's first drive capacity for real (the sample, in two
  halves); an age step then wears it by the rest of the interval at the rate of the sample's second
  half (P/E cycles per byte the host wrote, counted by the simulator, once its garbage collection
  has caught up), at the write amplification the sample measured. A real drive writes every byte.
- A write the drive refuses, its health log's read-only bit set (critical warning bit 3), ends the
  test as a finding: the data written until then. Any other failure fails the test.
- `--scale` multiplies the volume, shrinks the probe's fill as the whole-drive fill and its 60 s
  as runtimes; its idle after the trim scales too.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Protocol

from ssdlab.analysis import scores
from ssdlab.backends.sim import READ_ONLY_BIT
from ssdlab.catalogue.definitions import PRECONDITION_BS, PRECONDITION_QD, WholeDriveProcedure, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import BackendFailed, SsdlabError
from ssdlab.model import Age, Op, Phase, Step, StepResult, Test
from ssdlab.model.steps import AgeUnit, SplitSize, Zone, Zoned
from ssdlab.telemetry.records import HealthLog
from ssdlab.units import GiB, KiB, MiB, format_bytes

TB = 10**12
PROBE_RUNTIME_S = 60.0
PROBE_IDLE_S = 60.0  # after the probe's trim, before its fill
TRIM_BS = 64 * MiB  # the probe's TRIM ranges, as the lab suite's TRIM test issues them
DEFAULT_PROBES = 10
MAX_PROBES = 1000
MAX_VOLUME_TB = 1e6  # an exabyte: beyond any drive's life
MAX_VOLUME_PCT = 1000.0


class Workload(StrEnum):
    SEQUENTIAL = "seq"
    RANDOM = "random"
    JESD219 = "jesd219"


# CALIBRATION.md, JESD219 enterprise workload: share of commands (%) per size
JESD219_SIZES = ((512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1), (4 * KiB, 67),
                 (8 * KiB, 10), (16 * KiB, 7), (32 * KiB, 3), (64 * KiB, 3))
JESD219_ZONES = ((50, 5), (30, 15), (20, 80))  # (share of accesses %, share of the LBAs %), from the first LBA


def workload_step(workload: Workload, label: str, region: int, nbytes: int) -> Step:
    """`nbytes` of `workload` over the first `region` bytes of the drive, as one step."""
    if workload is Workload.SEQUENTIAL:
        shape: dict[str, Any] = {"rw": Op.WRITE, "bs": PRECONDITION_BS}
    elif workload is Workload.RANDOM:
        shape = {"rw": Op.RANDWRITE, "bs": 4 * KiB}
    else:
        shape = {"rw": Op.RANDWRITE, "bs": 4 * KiB,
                 "bssplit": tuple(SplitSize(bs=bs, pct=pct) for bs, pct in JESD219_SIZES),
                 "distribution": Zoned(zones=tuple(Zone(access_pct=a, extent=e) for a, e in JESD219_ZONES))}
    return Step(label=label, phase=Phase.PRECONDITION, iodepth=PRECONDITION_QD, size=region, io_size=nbytes,
                **shape)


@dataclass(frozen=True)
class Volume:
    """What `--endurance-volume` asks: TB written, or a share of the rated TBW."""

    value: float
    percent: bool

    @classmethod
    def parse(cls, text: str) -> Volume:
        match = re.fullmatch(r"\s*([0-9.eE+]+)\s*(tb|%)\s*", text.lower())
        try:
            value = float(match.group(1)) if match else math.nan
        except ValueError:
            value = math.nan
        percent = bool(match) and match.group(2) == "%"
        if not 0 < value <= (MAX_VOLUME_PCT if percent else MAX_VOLUME_TB):  # NaN fails too
            raise SsdlabError(f"--endurance-volume {text!r}: give TB written (600TB, more than 0 up to "
                              f"{MAX_VOLUME_TB:g}) or a share of the drive's rated TBW (100%, up to "
                              f"{MAX_VOLUME_PCT:g}%)")
        return cls(value, percent)

    def bytes(self, rated_tbw: float | None) -> int:
        if not self.percent:
            return int(self.value * TB)
        if rated_tbw is None:
            raise SsdlabError(f"--endurance-volume {self.value:g}% is a share of the rated TBW, which this drive "
                              "does not state: give TB written instead (its datasheet's TBW, e.g. 600TB)")
        return int(self.value / 100 * rated_tbw * TB)


def rated_tbw(preset_text: str | None) -> float | None:
    """The TBW a simulated drive's preset rates ([drive.wear] rated_tbw); None for a real drive."""
    if preset_text is None:
        return None
    wear = tomllib.loads(preset_text).get("drive", {}).get("wear") or {}
    return float(wear["rated_tbw"]) if "rated_tbw" in wear else None


def endurance_plan(volume: str | None, workload: str | None, probes: int | None, preset_text: str | None,
                   simulated: bool) -> dict[str, Any]:
    """The endurance test's fields from the run's options, refused out of bounds; a real drive
    (no preset) must state its volume."""
    rated = rated_tbw(preset_text)
    if volume is None and rated is None:
        raise SsdlabError("the endurance test writes a volume you state: give --endurance-volume, the drive's "
                          "rated TBW from its datasheet (e.g. 600TB) or a share of it")
    total = Volume.parse(volume).bytes(rated) if volume is not None else int(rated * TB)  # type: ignore[operator]
    count = DEFAULT_PROBES if probes is None else probes
    if not 1 <= count <= MAX_PROBES:
        raise SsdlabError(f"--endurance-probes {count}: give 1 to {MAX_PROBES} (the intervals the volume is "
                          "written in, a probe after each)")
    try:
        kind = Workload(workload or Workload.JESD219)
    except ValueError:
        raise SsdlabError(f"--endurance-workload {workload!r}: give one of "
                          f"{', '.join(w.value for w in Workload)}") from None
    return {"volume_bytes": total, "workload": kind, "probes": count, "sampled": simulated}


class EnduranceRun(Protocol):
    """An endurance test being executed, as its `run` sees it (execution implements it)."""

    done: list[tuple[Step, StepResult]]  # the test's stored steps: on a resume, those before it
    healths: list[HealthLog | None]  # the health log read after each of them (None: not read)

    def run_step(self, step: Step, read_health: bool = False) -> None:
        """A step, stored with the health log read after it when asked."""

    def health(self) -> HealthLog | None:
        """The drive's health log now (None: it cannot be read)."""


@dataclass(frozen=True)
class Endurance(WholeDriveProcedure):
    __test__ = False  # not a pytest test class
    id: str
    title: str
    primary_score: str
    # a run's options set its own (endurance_plan); what `ssdlab tests` shows: a 1 TB TLC drive's
    # rating (CALIBRATION.md, the WD SN850's 600 TBW)
    volume_bytes: int = 600 * TB
    workload: Workload = Workload.JESD219
    probes: int = DEFAULT_PROBES
    sampled: bool = False  # a simulated drive: each interval a sample, then the rest as wear

    def compile(self, scale: Scale, capacity: int) -> Test:
        region = scale.whole_drive(capacity)
        interval = max(PRECONDITION_BS, int(self.volume_bytes * scale.factor / self.probes)
                       // PRECONDITION_BS * PRECONDITION_BS)
        steps = [purge(capacity), *self._probe(0, scale, region)]
        for k in range(1, self.probes + 1):
            steps += self._interval(k, interval, region)
            steps += self._probe(k, scale, region)
        return Test(id=self.id, title=self.title, primary_score=self.primary_score, steps=tuple(steps),
                    settings={"volume_bytes": self.volume_bytes, "workload": self.workload.value,
                              "probes": self.probes, "sampled": self.sampled})

    def configured(self, test: Test) -> Endurance:
        """This test as `test` was compiled: with the plan of its run's options."""
        settings = test.settings
        return replace(self, volume_bytes=int(settings["volume_bytes"]), workload=Workload(settings["workload"]),
                       probes=int(settings["probes"]), sampled=bool(settings["sampled"]))

    def _interval(self, k: int, nbytes: int, region: int) -> list[Step]:
        name = f"interval {k}/{self.probes}: {self.workload.value}"
        if self.sampled and nbytes > region:
            half = region // 2 // PRECONDITION_BS * PRECONDITION_BS
            rest = nbytes - 2 * half
            return [workload_step(self.workload, f"{name} sample 1/2", region, half),
                    workload_step(self.workload, f"{name} sample 2/2", region, half),
                    # its age is set when it runs, from the sample; until then it holds the bytes it stands for
                    Step.ageing(Age(value=rest / TB, unit=AgeUnit.TBW),
                                f"{name}: the other {format_bytes(rest)} as wear at the sample's rate")]
        chunks = math.ceil(nbytes / region)
        sizes = [region] * (chunks - 1) + [nbytes - region * (chunks - 1)]
        return [workload_step(self.workload, f"{name} {i}/{chunks}", region, size)
                for i, size in enumerate(sizes, start=1)]

    @staticmethod
    def _probe(k: int, scale: Scale, region: int) -> list[Step]:
        trim_bs = min(TRIM_BS, region)
        runtime = scale.runtime(PROBE_RUNTIME_S)
        return [
            Step(label=f"probe {k}: trim", phase=Phase.PRECONDITION, rw=Op.TRIM, bs=trim_bs,
                 size=region // trim_bs * trim_bs, idle_after=scale.idle(PROBE_IDLE_S)),
            Step(label=f"probe {k}: sustained write", rw=Op.WRITE, bs=PRECONDITION_BS, iodepth=PRECONDITION_QD,
                 size=region, per_gib_series=True),
            Step(label=f"probe {k}: sequential write", rw=Op.WRITE, bs=PRECONDITION_BS, iodepth=PRECONDITION_QD,
                 size=region, runtime=runtime, time_based=True),
            Step(label=f"probe {k}: QD1 random read", rw=Op.RANDREAD, bs=4 * KiB, size=region, runtime=runtime,
                 time_based=True),
        ]

    def run(self, run: EnduranceRun, steps: Sequence[Step]) -> dict[str, Any]:
        """The steps not stored yet, in order, the health log read at the end of each probe; a
        write the drive refuses, read-only, ends the test (the finding), any other failure fails it."""
        for step in steps[len(run.done):]:
            if step.phase is Phase.AGE:
                step = step.model_copy(update={"age": sampled_age(step, run.done)})
            try:
                run.run_step(step, read_health=ends_probe(step))
            except BackendFailed as exc:
                health = run.health()
                if not (step.rw.writes and health is not None and read_only(health)):
                    raise
                return {"read_only": {"step": step.label, "error": str(exc), "health": health.model_dump(mode="json")}}
        return {"read_only": None}

    def result(self, found: dict[str, Any], done: Sequence[tuple[Step, StepResult]],
               healths: Sequence[HealthLog | None]) -> dict[str, Any]:
        """Each probe's figures against the host bytes written before its end."""
        probes: list[dict[str, Any]] = []
        written, figures, last_health = 0, {}, None
        for (step, result), health in zip(done, healths, strict=True):
            written += host_bytes(result)
            if step.phase is Phase.MEASURE:
                figures |= _probe_figures(step, result)
            if ends_probe(step):
                probes.append({**figures, "written_bytes": written, "written_tb": round(written / TB, 4),
                               **_health_figures(health, last_health)})
                figures, last_health = {}, health or last_health
        stopped = found["read_only"]
        if stopped is not None:
            probed = probes[-1]["written_bytes"] if probes else 0
            after = _delta(HealthLog.model_validate(stopped["health"]).host_written_bytes,
                           last_health.host_written_bytes if last_health else None)
            at = written if after is None else probed + after
            stopped = {**stopped, "after_bytes": at, "after_tb": round(at / TB, 3),
                       "counted_from": "the steps stored: at least" if after is None else "the health log"}
        first, last = (probes[0], probes[-1]) if probes else ({}, {})
        value, new = last.get("seq_write_mbps"), first.get("seq_write_mbps")
        return {"name": self.primary_score, "value": value, "unit": "MB/s", "first_mbps": new,
                "retained_pct": round(value / new * 100, 1) if value is not None and new else None,
                "workload": self.workload.value, "volume_bytes": self.volume_bytes, "written_bytes": written,
                "written_tb": round(written / TB, 3), "probes": probes, "read_only": stopped,
                "finding": _finding(probes, stopped)}


def ends_probe(step: Step) -> bool:
    """A probe's last step, its QD1 reads: the only random read of the test."""
    return step.phase is Phase.MEASURE and step.rw is Op.RANDREAD


def read_only(health: HealthLog) -> bool:
    return bool((health.critical_warning or 0) >> READ_ONLY_BIT & 1)


def host_bytes(result: StepResult) -> int:
    """What the host wrote in a step: its writes, or what an age step stands for (the simulator's
    count)."""
    return result.write.bytes if result.write else int((result.device or {}).get("host_write_bytes", 0))


def sampled_age(step: Step, done: Sequence[tuple[Step, StepResult]]) -> Age:
    """The wear of the rest of an interval (`step.age`'s TB) at the rate of the sample before it:
    its second half's P/E cycles per host byte (both halves' where the second wore nothing), at
    the write amplification it measured. The simulator counts each step's bytes and the drive's
    mean wear after it."""
    assert step.age is not None
    before, first, second = (result for _, result in done[-3:])
    start, middle, end = ((r.device or {}) for r in (before, first, second))
    for since, sample in ((middle, (second,)), (start, (first, second))):
        host = sum(int((r.device or {}).get("host_write_bytes", 0)) for r in sample)
        nand = sum(int((r.device or {}).get("nand_write_bytes", 0)) for r in sample)
        cycles = end.get("mean_pe_cycles", 0.0) - since.get("mean_pe_cycles", 0.0)
        if host > 0 and cycles > 0:
            return Age(value=end["mean_pe_cycles"] + cycles / host * step.age.value * TB, unit=AgeUnit.PE,
                       write_amplification=min(max(nand / host, 1.0), 100.0))
    raise SsdlabError(f"{step.label}: the sample before it wore no block (no P/E cycle counted), so the rest "
                      "of the interval cannot be set as wear: the preset's drive does not wear ([drive.wear])")


def _probe_figures(step: Step, result: StepResult) -> dict[str, Any]:
    """What one of a probe's measured steps gives: the fill's sustained speed and SLC cache, the
    sequential write speed, the QD1 read latency."""
    if step.per_gib_series:
        fill = scores.fill_score("fill", [(step, result)])
        return {"sustained_mbps": fill["value"], "slc_cache_gib": fill["slc_cache_gib"] or 0.0,
                "fill_gib": round(result.write.bytes / GiB, 1) if result.write else 0.0}
    if step.rw is Op.WRITE:
        return {"seq_write_mbps": round(result.mbps, 1)}
    latency = result.read.latency if result.read else None
    if latency is None:
        return {}
    return {"qd1_read_iops": round(result.read.iops) if result.read else None,
            "qd1_read_mean_us": round(latency.mean_ns / 1e3, 1), "qd1_read_p99_us": round(latency.p99_ns / 1e3, 1),
            "qd1_read_p99_99_us": round(latency.p99_99_ns / 1e3, 1)}


def _delta(after: int | None, before: int | None) -> int | None:
    return after - before if after is not None and before is not None else None


def _health_figures(health: HealthLog | None, before: HealthLog | None) -> dict[str, Any]:
    """A probe's health log, and the write amplification since the probe before (NAND bytes over
    host bytes, where the drive reports both)."""
    if health is None:
        return {"health": None}
    host = _delta(health.host_written_bytes, before.host_written_bytes if before else None)
    nand = _delta(health.nand_written_bytes, before.nand_written_bytes if before else None)
    return {"health": {key: getattr(health, key) for key in (
                "percentage_used", "available_spare_pct", "spare_threshold_pct", "media_errors", "critical_warning",
                "host_written_bytes", "nand_written_bytes", "power_on_hours")},
            "write_amplification": round(nand / host, 3) if host and nand is not None else None}


def _finding(probes: list[dict[str, Any]], stopped: dict[str, Any] | None) -> str:
    if not probes:
        return "no probe ran"
    first, last = probes[0], probes[-1]
    said = [f"after {last['written_tb']:g} TB written"]
    if first.get("seq_write_mbps") and last.get("seq_write_mbps") is not None:
        said.append(f"sequential writes at {last['seq_write_mbps']:,.0f} MB/s ({first['seq_write_mbps']:,.0f} new)")
    if "slc_cache_gib" in first and "slc_cache_gib" in last:
        said.append(f"SLC cache {last['slc_cache_gib']:g} GiB ({first['slc_cache_gib']:g} new)")
    if last.get("qd1_read_mean_us") is not None:
        said.append(f"QD1 reads {last['qd1_read_mean_us']:g} µs ({first.get('qd1_read_mean_us'):g} new)")
    if (health := last.get("health")) and health["percentage_used"] is not None:
        said.append(f"{health['percentage_used']} % used, {health['available_spare_pct']} % spare")
    text = ", ".join(said)
    if stopped is not None:
        text += (f"; the drive went read-only after {stopped['after_tb']:g} TB written ({stopped['counted_from']}): "
                 "writes fail, reads go on")
    return text


ENDURANCE_TESTS = (
    Endurance(id="endurance", title="Endurance: a stated volume written towards the rated TBW, with speed, SLC "
                                    "cache, QD1 read latency and the health log probed as it goes",
              primary_score="sequential write MB/s at the last probe"),
)
