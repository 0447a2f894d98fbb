"""The retention suite (METHODOLOGY.md section 5): does data written long ago come back, and how fast.

retention purges the drive, writes a seeded verify pattern over it (the scaled region at
--scale), reads it all back at once (the baseline), then waits. A simulated drive is powered
off for the stated time at the stated temperature (the simulator's off step). A real drive's run
stops there in a waiting state, with the pattern's seed: the user keeps the drive as stated
(powered off on a shelf, or baked) and `ssdlab resume N` reads it back, refusing another drive.
After the wait everything is read again before any idle time, every block verified, then again
after 1 h of powered idle and after 24 h more (what background refresh gives back). Choices:

- The wait is `--retention-days` and `--retention-c`; JESD218's client requirement by default
  (data kept 1 year powered off at 30 °C), bounded as the simulator's off step is (a century,
  -40 to 125 °C) on both backends.
- Every read is a 128 KiB QD32 sequential pass over the region that checks what it reads: on a
  real target fio's check of the pattern (backends/fio/verify.py), whose bad blocks are a
  finding with their offsets, never a failure; on a simulated drive, which keeps no data, its
  decoding (the page reads no tier corrected, with their offsets). Each is run once (no --repeat).
- The pattern's seed is drawn anew for each attempt, so that a drive that kept an earlier run's
  pattern instead of this one's fails the check (another seed) rather than passing it.
- The equivalent time at 30 °C is the stated time by the Arrhenius factor of the stated
  temperature, with JEDEC's 1.1 eV for a real drive and the preset's [drive.errors]
  activation_ev for a simulated one. A real drive read back early counts the time since its run
  stopped, the most it can have been kept.
- The idle times scale with --scale, without a floor (at 0.001: 3.6 s and 86.4 s).
- The share of reads above 300 µs, 1 ms and 2 ms comes from each read's latency histogram.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from annotated_types import Ge, Le

from ssdlab.catalogue.definitions import PRECONDITION_BS, PRECONDITION_QD, WholeDriveProcedure, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, PowerOff, Run, RunStatus, Step, StepResult, Test, Wait
from ssdlab.units import format_bytes, shown_date

DAY_S = 86_400.0
JEDEC_CLIENT = PowerOff(seconds=365 * DAY_S, temperature_c=30.0)  # JESD218, client drives: 1 year off at 30 °C
JEDEC_ACTIVATION_EV = 1.1  # CALIBRATION.md: JEDEC practice
EQUIVALENT_AT_C = 30.0
IDLE_S = (3600.0, 86_400.0)  # powered idle before the third read, then before the fourth
THRESHOLDS_US = (300, 1000, 2000)
READS = ("fresh", "after_wait", "after_1h_idle", "after_24h_more_idle")
TIERS = ("read_retries", "soft_decodes", "parity_rebuilds", "uncorrectable_reads")  # the simulator's counters
SHOWN_BAD = 10  # bad blocks a score names
WAITED = "wait"  # the engine of a real drive's off step: the time the user kept it, not an I/O engine
BOLTZMANN_EV = 8.617_333_262e-5  # eV/K, as crates/ssdsim wear::retention
KELVIN = 273.15


class RetentionRun(Protocol):
    """A retention test being executed, as its `run` sees it (execution implements it)."""

    preset_text: str | None  # a simulated drive's preset; None for a real drive
    done: list[tuple[Step, StepResult]]  # the test's stored steps: on a resume, those before it

    def run_step(self, step: Step) -> None:
        """A plain step (the purge)."""

    def run_pattern(self, step: Step) -> None:
        """The seeded pattern written (a write step), or read back checking every block (a read)."""

    def wait(self, step: Step) -> None:
        """The off step: a simulated drive's; for a real drive the run stops, waiting (stored), or,
        resumed, the wait is stored as over."""


@dataclass(frozen=True)
class Retention(WholeDriveProcedure):
    __test__ = False  # not a pytest test class
    id: str
    title: str
    primary_score: str
    bs: int = PRECONDITION_BS
    iodepth: int = PRECONDITION_QD
    wait: PowerOff = JEDEC_CLIENT

    def compile(self, scale: Scale, capacity: int) -> Test:
        region = scale.whole_drive(capacity)
        first, second = (scale.idle(s) for s in IDLE_S)

        def read(label: str, idle_after: float = 0.0) -> Step:
            return Step(label=label, rw=Op.READ, bs=self.bs, iodepth=self.iodepth, size=region,
                        idle_after=idle_after)

        steps = (purge(capacity),
                 Step(label=f"write the pattern over {format_bytes(region)}", phase=Phase.PRECONDITION,
                      rw=Op.WRITE, bs=self.bs, iodepth=self.iodepth, size=region),
                 read("read fresh"),
                 Step(label=f"off {duration_words(self.wait.seconds)} at {self.wait.temperature_c:g} °C",
                      phase=Phase.OFF, power_off=self.wait, rw=Op.TRIM, bs=4096, size=4096),
                 read("read after the wait", first),
                 read(f"read after {duration_words(first)} idle", second),
                 read(f"read after {duration_words(second)} more idle"))
        return Test(id=self.id, title=self.title, primary_score=self.primary_score, steps=steps)

    def run(self, run: RetentionRun, steps: Sequence[Step]) -> dict[str, Any]:
        """The steps not stored yet, in order: all of them, or on a resume those from the wait on."""
        for step in steps[len(run.done):]:
            if step.phase is Phase.OFF:
                run.wait(step)
            elif step.phase is Phase.PURGE:
                run.run_step(step)
            else:
                run.run_pattern(step)
        ev, source = activation_energy(run.preset_text)
        return {"activation_ev": ev, "activation_source": source}

    def result(self, found: dict[str, Any], done: Sequence[tuple[Step, StepResult]]) -> dict[str, Any]:
        reads = [(step, result) for step, result in done if step.phase is Phase.MEASURE]
        off, kept = next((step, result) for step, result in done if step.phase is Phase.OFF)
        # no idle before the fresh read nor before the read after the wait; then the idle after the read before
        idle_before = [0.0, 0.0, *(result.idle_s for _, result in reads[1:-1])]
        figures = {name: _read(step, result, idle)
                   for name, (step, result), idle in zip(READS, reads, idle_before, strict=True)}
        assert off.power_off is not None
        planned, ev = off.power_off.seconds, found["activation_ev"]
        # a simulated drive is off exactly as long as planned; a real one at most since its run stopped
        seconds = min(kept.idle_s, planned) if kept.engine == WAITED else planned
        equivalent = seconds * acceleration(off.power_off.temperature_c, ev)
        fresh, after = figures["fresh"], figures["after_wait"]
        return {"name": self.primary_score, "value": after["mbps"], "unit": "MB/s",
                "fresh_mbps": fresh["mbps"], "after_idle_mbps": figures[READS[-1]]["mbps"],
                "retained_pct": round(after["mbps"] / fresh["mbps"] * 100, 1) if fresh["mbps"] else None,
                "reads": figures,
                "wait": {"planned_s": planned, "temperature_c": off.power_off.temperature_c,
                         "counted_s": seconds, "early_s": planned - seconds},
                "activation_ev": ev, "activation_source": found["activation_source"],
                "equivalent_s_at_30c": round(equivalent, 1), "equivalent_days_at_30c": round(equivalent / DAY_S, 3),
                "failed_after_wait": after["verify"]["failed"] if after["verify"] else None,
                "finding": _finding(figures)}


def _read(step: Step, result: StepResult, idle_before_s: float) -> dict[str, Any]:
    """One read's figures: MB/s, the share of reads above each threshold (%), latencies, the
    simulator's decoding tiers, and what its check found."""
    latency = result.read.latency if result.read else None
    counters = result.device or {}
    check = result.verify
    return {"label": step.label, "mbps": round(result.mbps, 1), "idle_before_s": idle_before_s,
            "above_us": {str(us): round(latency.share_above(us * 1000) * 100, 3) if latency else None
                         for us in THRESHOLDS_US},
            **{f"{name}_us": round(getattr(latency, f"{name}_ns") / 1e3, 1) if latency else None
               for name in ("p50", "p99", "max")},
            "tiers": {tier: int(counters[tier]) for tier in TIERS} if TIERS[0] in counters else None,
            "verify": {"failed": check.failed, "kinds": check.kinds, "ok": check.ok, "summary": check.summary,
                       "bad": [{"offset": b.offset, "what": b.what} for b in check.bad[:SHOWN_BAD]]}
            if check else None}


def _finding(figures: dict[str, dict[str, Any]]) -> str:
    """What the checks found, in words: each read that found bad blocks, a read after idle that
    found the same ones as the read before it said so in short."""
    checked = [f for f in figures.values() if f["verify"]]
    if not checked:
        return "no read checked the data"
    if not any(f["verify"]["failed"] for f in checked):
        return "every block of every read came back intact"
    said, last = [], None
    for f in checked:
        check = f["verify"]
        if check["failed"]:
            same = last is not None and (check["failed"], check["bad"]) == (last["failed"], last["bad"])
            said.append(f"{f['label']}: {'the same blocks' if same else check['summary']}")
        last = check
    return "; ".join(said)


def acceleration(celsius: float, activation_ev: float, reference_c: float = EQUIVALENT_AT_C) -> float:
    """How many times faster charge leaks at `celsius` than at `reference_c` (Arrhenius)."""
    return math.exp(activation_ev / BOLTZMANN_EV * (1 / (reference_c + KELVIN) - 1 / (celsius + KELVIN)))


def activation_energy(preset_text: str | None) -> tuple[float, str]:
    """The activation energy (eV) the equivalent time uses, and where it comes from."""
    if preset_text is None:
        return JEDEC_ACTIVATION_EV, "JEDEC practice; a real drive's own is not published"
    errors = tomllib.loads(preset_text).get("drive", {}).get("errors")
    if not errors:
        return JEDEC_ACTIVATION_EV, "JEDEC practice; the preset has no [drive.errors]: its data does not age"
    return float(errors["activation_ev"]), "the preset's [drive.errors] activation_ev"


def _bounds(field: str) -> tuple[float, float]:
    """The off step's bounds of `field` (model.PowerOff: the simulator's)."""
    metadata = PowerOff.model_fields[field].metadata
    low = next(m.ge for m in metadata if isinstance(m, Ge))
    high = next(m.le for m in metadata if isinstance(m, Le))
    return float(low), float(high)


def retention_wait(days: float | None, celsius: float | None) -> PowerOff | None:
    """The wait of `--retention-days` and `--retention-c` (one left out is JEDEC's); None when
    neither is given. Refused, NaN included, beyond the off step's bounds."""
    if days is None and celsius is None:
        return None
    days = JEDEC_CLIENT.seconds / DAY_S if days is None else days
    celsius = JEDEC_CLIENT.temperature_c if celsius is None else celsius
    low_s, high_s = _bounds("seconds")
    if not low_s / DAY_S <= days <= high_s / DAY_S:
        raise SsdlabError(f"--retention-days must be {low_s / DAY_S:g} to {high_s / DAY_S:.0f} (a century): how long "
                          f"the drive is left powered off, not {days:g}")
    low_c, high_c = _bounds("temperature_c")
    if not low_c <= celsius <= high_c:
        raise SsdlabError(f"--retention-c must be {low_c:g} to {high_c:g} °C: where the drive is kept while off "
                          f"(a shelf, an oven), not {celsius:g}")
    return PowerOff(seconds=days * DAY_S, temperature_c=celsius)


def duration_words(seconds: float) -> str:
    """A time off or idle in words: '365 days', '2.5 h', '36 s'."""
    for unit, length in (("days", DAY_S), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * length or (unit != "days" and seconds >= length):
            return f"{seconds / length:.4g} {unit}"
    return f"{seconds:.3g} s"


# What identifies the drive whose data waited: a device's serial, model and size; a file, its
# inode on its filesystem (another file moved or copied into its place is not the data written)
SAME_DRIVE = {"device": ("serial", "model", "capacity_bytes"), "file": ("path", "st_dev", "inode")}


def same_drive(kind: str, recorded: dict[str, Any], found: dict[str, Any]) -> bool:
    """Are the identities one drive's (or file's)?"""
    return all(recorded.get(key) == found.get(key) for key in SAME_DRIVE.get(kind, ()))


def check_same_drive(run_id: int, kind: str, recorded: dict[str, Any], found: dict[str, Any]) -> None:
    """Refuse to read back a waiting run's data on another drive (or file) than the one written."""
    if not same_drive(kind, recorded, found):
        def named(ident: dict[str, Any]) -> str:
            return ", ".join(f"{key} {ident.get(key)}" for key in SAME_DRIVE[kind])
        raise SsdlabError(
            f"run {run_id} wrote its retention pattern to the {kind} with {named(recorded)}; the target is now "
            f"the one with {named(found)}: its data would say nothing of the drive that waited. Put that {kind} "
            "back and resume, or start a new run")


def check_not_waited_on(runs: Sequence[Run], kind: str, found: dict[str, Any], force: bool) -> None:
    """Refuse a new run on a drive (or file) whose data a retention run waits to read back,
    unless `force`: its writes would leave that run nothing to read."""
    waiting = [r for r in runs if r.status is RunStatus.WAITING and r.target_kind == kind
               and same_drive(kind, r.identity, found)]
    if waiting and not force:
        run = waiting[0]
        raise SsdlabError(
            f"run {run.id} waits to read back its retention pattern from this {kind} (after "
            f"{shown_date(run.waiting_until or '')}): a new run's writes would leave it nothing to read. Resume it "
            f"when its wait is over (`ssdlab resume {run.id}`), or give --force to write over its data")


def early_warning(run_id: int, wait: Wait, now: datetime) -> str | None:
    """What a resume before the date says; None on or after it."""
    ahead = (datetime.fromisoformat(wait.until) - now).total_seconds()
    if ahead <= 0:
        return None
    since = (now - datetime.fromisoformat(wait.since)).total_seconds()
    return (f"run {run_id} is read back {duration_words(ahead)} earlier than planned (its wait ends "
            f"{shown_date(wait.until)}): the drive can have been kept as stated {duration_words(since)} at most, and "
            "the equivalent time counts that")


def begun_wait(seq: int, idx: int, seed: int, step: Step, now: datetime) -> Wait:
    """The wait a real drive's run stops for at its off step `step` (the test's step `idx`)."""
    assert step.power_off is not None
    until = now + timedelta(seconds=step.power_off.seconds)
    return Wait(seq=seq, idx=idx, seed=seed, since=now.isoformat(timespec="seconds"),
                until=until.isoformat(timespec="seconds"))


def waited_result(step: Step, wait: Wait, now: datetime) -> StepResult:
    """A real drive's off step once it is read back: the time since its run stopped, and how the
    user stated the drive was kept."""
    assert step.power_off is not None
    since = (now - datetime.fromisoformat(wait.since)).total_seconds()
    notes = [f"kept as the user stated: powered off at {step.power_off.temperature_c:g} °C for "
             f"{duration_words(step.power_off.seconds)}; read back {duration_words(since)} after the run stopped, "
             f"the pattern's seed {wait.seed}"]
    if ahead := max(0.0, step.power_off.seconds - since):
        notes.append(f"read back {duration_words(ahead)} earlier than planned")
    return StepResult(started_at=wait.since, busy_s=0.0, idle_s=max(since, 0.0), engine=WAITED, notes=tuple(notes))


RETENTION_TESTS = (
    Retention(id="retention", title="Data retention: a seeded pattern read back fresh, after a time off at a "
                                    "temperature, and after 1 h and 24 h more of powered idle",
              primary_score="read MB/s after the wait"),
)
