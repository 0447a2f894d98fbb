"""SimBackend: the same steps on a simulated drive (crates/ssdsim), in virtual time.

Idle time is the drive's own: during a step's idle the simulated drive folds its
SLC cache and collects garbage, and falls to lower power states, and no wall-clock time
passes. Its power model gives every step its energy over the busy time (`energy_j`, so the
efficiency figures are live) and, among its counters, the energy of the idle time and the
seconds spent in each power state.

The drive's host is part of the run's options (backends/sim_host.py), and so is its age
(`run --age`: its life before the run, set as a state by the simulator's age step before the
first test). idle-wake's "APST off" switches the limit on the drive itself (`apst_off`) and
puts it back; nothing of it outlives the process, so unlike a real drive's switch nothing is
recorded for a later restore: a resumed run builds a new drive from the run's options.

A simulated drive keeps no data: the retention test's pattern (`run_pattern`) is a plain write,
and its check a plain read, verified by the drive's decoding alone: the page reads no decoding
tier corrected are its failures, at the host offsets the simulator names in a note.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime

from ssdlab import _ssdsim
from ssdlab.backends import JobFigures, ProgressCallback, StepOutcome
from ssdlab.backends.sim_host import DEFAULT_HOST, SimHost
from ssdlab.errors import BackendFailed, SsdlabError
from ssdlab.model import (
    Age,
    BadBlock,
    DirectionResult,
    GibPoint,
    Latency,
    Phase,
    SecondPoint,
    Step,
    StepResult,
    Verification,
)
from ssdlab.presets import Preset

ENGINE = "sim"
PROGRESS_S = 0.5  # how often a long trace step's progress is told
READ_ONLY_BIT = 3  # the health log's critical warning: the media has been made read-only


def open_drive(preset: Preset, seed: int = 1, host: SimHost = DEFAULT_HOST) -> _ssdsim.Drive:
    try:
        return _ssdsim.Drive(preset.text, seed, **host.drive_kwargs())
    except _ssdsim.PresetError as exc:
        raise SsdlabError(f"the preset {preset.name} is not valid: {exc}") from None
    except _ssdsim.InternalError as exc:
        raise BackendFailed(f"the simulator failed on the preset {preset.name}: {exc}") from None


class SimBackend:
    name = ENGINE

    def __init__(self, preset: Preset, seed: int = 1, host: SimHost = DEFAULT_HOST, age: Age | None = None):
        self.preset = preset
        self.seed = seed
        self.host = host
        self.age = age
        self.drive = open_drive(preset, seed, host)
        if age is not None:  # an age the preset cannot take is refused here, before any run exists
            self._run(Step.ageing(age), f"--age {age}")
            if json.loads(self.drive.smart_log_json())["critical_warning"] >> READ_ONLY_BIT & 1:
                mean = self.drive.counters()["mean_pe_cycles"]
                raise SsdlabError(f"--age {age} leaves the drive read-only: its spare runs out at about {mean:.0f} "
                                  "P/E cycles, and it takes no writes beyond. Give a lower age (the endurance "
                                  "suite shows where a drive goes read-only)")

    @property
    def capacity(self) -> int:
        return self.drive.user_bytes

    def describe(self) -> dict:
        # the host is the drive's own (its defaults filled in): show, export and the report give it
        return {"engine": ENGINE, "simulator_version": _ssdsim.version(), "preset": self.preset.name,
                "preset_sha256": self.preset.sha256, "seed": self.seed, **self.drive.platform(),
                **({"age": str(self.age)} if self.age is not None else {})}

    def run_step(self, step: Step, progress: ProgressCallback | None = None) -> StepOutcome:
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._trace_progress(step, progress):
            raw = self._run(step)
        if progress:
            progress(1.0, "")
        command = f"sim {self.preset.name}: {step.describe()}" + (" (purge)" if step.phase is Phase.PURGE else "")
        # the drive's temperature, per second of the step's drive time (its per-second series' seconds)
        return StepOutcome(_result(raw, started), (command,), temperature_c=tuple(raw["temperature_c"]),
                           thermal_transitions=tuple(raw["thermal_transitions"]),
                           jobs=tuple(_job(job, started) for job in raw["jobs"]))

    def run_pattern(self, step: Step, seed: int, progress: ProgressCallback | None = None) -> StepOutcome:
        """The retention test's pattern (the fio backend's `run_pattern`): the step as it is, the
        seed meaning nothing to a drive that keeps no data; a read's `verify` is its decoding."""
        outcome = self.run_step(step, progress)
        if not step.rw.reads:
            return outcome
        return replace(outcome, result=outcome.result.model_copy(update={"verify": _verification(outcome.result)}))

    def run_timed_reads(self, step: Step, thinktime_s: float, randseed: int) -> tuple[StepOutcome, tuple[int, ...]]:
        """What fio's `thinktime` does (backends/fio): each read of `step` alone, the drive
        idling `thinktime_s` after it, and each read's latency (ns), in drive time. The
        reads are random offsets from the drive's own generator (`randseed` is fio's)."""
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        one = step.model_copy(update={"io_size": step.bs, "idle_after": thinktime_s})
        raws = [self._run(one) for _ in range(step.bytes_limit // step.bs)]
        reads = [_direction(raw["read"]) for raw in raws]
        result = StepResult(started_at=started, busy_s=sum(r["busy_s"] for r in raws),
                            idle_s=sum(r["idle_s"] for r in raws), engine=ENGINE,
                            device=raws[-1]["counters"] | _summed(_power(raw["energy"]) for raw in raws),
                            read=DirectionResult.merge(reads))
        command = f"sim {self.preset.name}: {step.describe()}, one read at a time, idle {thinktime_s:g} s after each"
        return StepOutcome(result, (command,)), tuple(r.latency.max_ns for r in reads)

    @contextmanager
    def _trace_progress(self, step: Step, progress: ProgressCallback | None) -> Iterator[None]:
        """While a trace step runs (the GIL released), its records issued so far told to
        `progress` every PROGRESS_S from another thread: a replay of 10^8 records is minutes."""
        if progress is None or step.trace is None:
            yield
            return
        counter, total, over = self.drive.progress(), step.trace.records, threading.Event()

        def tell() -> None:
            while not over.wait(PROGRESS_S):
                done = counter.records
                progress(done / total, f"{done:,} of {total:,} records")

        teller = threading.Thread(target=tell, name="trace progress", daemon=True)
        teller.start()
        try:
            yield
        finally:
            over.set()
            teller.join()

    @contextmanager
    def write_cache(self, on: bool) -> Iterator[None]:
        """The drive's volatile write cache on or off (NVMe feature 06h) inside the block, as it
        was after."""
        original = self.drive.volatile_write_cache
        self.drive.set_volatile_write_cache(on)
        try:
            yield
        finally:
            self.drive.set_volatile_write_cache(original)

    @contextmanager
    def apst_off(self) -> Iterator[None]:
        """APST off on the simulated drive inside the block, and its limit back after."""
        original = self.drive.apst_max_latency_us
        self.drive.set_apst_max_latency_us(0)
        try:
            yield
        finally:
            self.drive.set_apst_max_latency_us(original)

    def _run(self, step: Step, what: str | None = None) -> dict:
        """`what` names the step in an error (by default: step 'its label')."""
        what = what or f"step {step.label!r}"
        try:
            # every field as it is: the simulator's Step has the same ones, and no other
            return self.drive.run_step(step.model_dump_json())
        except _ssdsim.StepError as exc:
            # the simulator's message starts with the step's label, which `what` has said
            raise SsdlabError(f"the simulator refused {what}: {str(exc).removeprefix(f'step {step.label}: ')}") \
                from None
        except _ssdsim.DriveFailed as exc:
            raise BackendFailed(f"{what}: {exc}") from None
        except _ssdsim.InternalError as exc:
            raise BackendFailed(f"the simulator failed on {what}: {exc}") from None


def _result(raw: dict, started: str) -> StepResult:
    energy = raw["energy"]
    return StepResult(
        started_at=started, busy_s=raw["busy_s"], idle_s=raw["idle_s"], bursts=raw["bursts"],
        per_gib=tuple(GibPoint(gib=g, mbps=m) for g, m in raw["per_gib"]),
        engine=ENGINE, notes=tuple(raw["notes"]), device=raw["counters"] | _power(energy),
        # a step with no busy time (a purge of an empty drive) has no energy to show
        energy_j=energy["busy_j"] if energy and energy["busy_j"] > 0 else None, **_figures(raw))


# The note of a step whose reads no decoding tier corrected (crates/ssdsim run/mod.rs `powered`): the
# first host offsets
_LOST_OFFSETS = re.compile(r"host reads at offsets ([0-9, ]+)")


def _verification(result: StepResult) -> Verification:
    """A read's check on a drive that keeps no data: the page reads no tier corrected, which a
    real drive returns as media errors, with the host offsets the simulator names."""
    lost = int((result.device or {}).get("uncorrectable_reads", 0))
    reads = result.read.ios if result.read else 0
    named = next((m[1] for note in result.notes if (m := _LOST_OFFSETS.search(note))), "")
    offsets = [int(o) for o in named.replace(" ", "").split(",") if o]
    bad = tuple(BadBlock(offset=o, kind="uncorrectable", what="no decoding tier corrected it") for o in offsets)
    found = (f"{lost} page reads no decoding tier corrected (media errors), at host offsets "
             f"{', '.join(map(str, offsets)) or 'not named'}" if lost else f"all {reads} reads decoded")
    return Verification(blocks_checked=reads, blocks_expected=reads, failed=lost,
                        kinds={"uncorrectable": lost} if lost else {}, bad=bad, ok=not lost,
                        summary=f"{found} (a simulated drive keeps no data: its decoding is the check)")


def _job(raw: dict, started: str) -> JobFigures:
    import numpy as np  # here, not above: numpy costs every start of the CLI a tenth of a second

    result = StepResult(started_at=started, busy_s=raw["busy_s"], idle_s=0.0, engine=ENGINE, **_figures(raw))
    log = np.frombuffer(raw["io_log"], dtype="<u8").reshape(-1, 5)
    return JobFigures(raw["label"], result, log, raw["log_truncated"], raw["steady"])


def _figures(raw: dict) -> dict:
    """The directions and the per-second series of a step, or of one of its jobs."""
    return {"per_second": tuple(SecondPoint(t_s=t, mbps=m, iops=i) for t, m, i in raw["per_second"]),
            **{name: _direction(raw[name]) for name in ("read", "write", "trim") if raw[name]}}


def _power(energy: dict | None) -> dict[str, float]:
    """The drive's own power figures beside its counters: the energy of the step's idle time
    and the seconds spent in each power state (`ps0_s` is the time awake)."""
    if energy is None:
        return {}
    return {"idle_energy_j": energy["idle_j"],
            **{f"ps{n}_s": seconds for n, seconds in enumerate(energy["state_s"])}}


def _summed(figures: Iterable[dict[str, float]]) -> dict[str, float]:
    """Figures of several steps added key by key (the seconds in each power state, the idle
    energy): those of the steps taken together."""
    total: dict[str, float] = {}
    for one in figures:
        for key, value in one.items():
            total[key] = total.get(key, 0.0) + value
    return total


def _direction(raw: dict) -> DirectionResult:
    lat = raw["latency"]
    return DirectionResult(ios=raw["ios"], bytes=raw["bytes"], busy_s=raw["busy_s"],
                           latency=Latency.from_histogram(lat["histogram"], lat["mean_ns"],
                                                          lat["min_ns"], lat["max_ns"]))
