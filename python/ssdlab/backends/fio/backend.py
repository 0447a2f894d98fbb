"""FioBackend: steps on a real device or file, in wall time, through fio.

Two cases where the target cannot do what a step asks, handled without failing
the test:

- TRIM on a regular file: fio's block-device discard does not apply to a file,
  so the step runs with fio's `falloc` engine, which punches holes in the file
  (what the filesystem does when file data is deleted; the filesystem decides
  whether the drive sees a discard). The step's notes say so: its latencies are
  the filesystem's, not the drive's.
- Direct I/O smaller than the target accepts (512 B on a device or filesystem
  with 4 KiB logical blocks): the kernel answers EINVAL. The step is recorded as
  not run, with a note saying why and what to use instead; the test goes on and
  its score marks the case as not measured.

A trace step (`step.trace`) is one fio run replaying its prepared trace as an iolog, its
result rebuilt from fio's latency log (trace_replay.py: fio's replay quirks and how each is
met).

The retention test's seeded pattern (`run_pattern`, verify.py) is written by a sequential
write step and read back by sequential read steps that check every block: what a check finds
(bad blocks with their offsets, unreadable ones) is stored with its result, a finding, never a
failure of the run.

Two seams for telemetry: `sleep` leaves the drive idle (the run's telemetry passes one
that reads no sensor meanwhile), and `io_window` is told the wall-clock span of each fio
run's I/O, from fio's report (it ends when the report is written and lasts the job's
runtime): fio takes about 0.3 s to start, which must not count as the drive's busy time.
"""

from __future__ import annotations

import errno
import functools
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ssdlab.backends import ProgressCallback, StepOutcome
from ssdlab.backends.fio import logs, parse, runner, verify
from ssdlab.backends.fio.jobfile import PER_IO_LOG_MAX, Invocation, job_text, logs_each_io
from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.model import DirectionResult, Op, Phase, SecondPoint, Step, StepResult
from ssdlab.model.steps import REAL_DRIVES_AGE
from ssdlab.targets.purge import Purge

ENGINE = "fio"
FILE_TRIM_ENGINE = "falloc"
FILE_TRIM_NOTE = ("TRIM on a file target: fio's falloc engine punched holes (fallocate "
                  "PUNCH_HOLE) in the file; latencies are the filesystem's, and the drive "
                  "sees a discard only if the filesystem sends one")
# idle-wake on a file: what its reads after an idle measure
FILE_WAKE_NOTE = ("reads after idle on a file target: their latency is the filesystem's and the device's "
                  "under it, whatever that device's power management does; no drive power state is known")
# A run shorter than this is said to measure little (fio's own clock: whole ms)
SHORT_RUN_S = 0.010
SHORT_RUN_NOTE = ("a run of this step lasted under 10 ms: its throughput is timed by its I/Os' "
                  "completions (fio's runtime counts whole milliseconds), but so short a run measures "
                  "little more than the drive's first moments; a larger --scale measures it better")
SMALL_BLOCK = 4096
# A check's bad blocks (EILSEQ) and unreadable ones (EIO): what it found, not a failure
VERIFY_ERRNOS = (errno.EILSEQ, errno.EIO)
UNLOGGED_CHECK_NOTE = (f"fio logs no bandwidth for the reads of a verify pass: a check of more than {PER_IO_LOG_MAX} "
                       "blocks has no per-second series (its MB/s and latencies are fio's totals)")


@dataclass(frozen=True)
class _Pattern:
    """The fio options of the pattern's write or of its check (verify.py)."""

    options: dict[str, str]
    check: bool


def not_run_note(step: Step) -> str:
    return (f"not run: the target refused {step.bs} B direct I/O (EINVAL), its logical block "
            f"size is larger than {step.bs} B; measure {step.bs} B blocks on a device with "
            f"{step.bs} B logical blocks (a loop device: `losetup --sector-size 512`)")


class FioBackend:
    name = ENGINE

    def __init__(self, path: Path, kind: str, purge: Callable[[], Purge],
                 commands: Commands | None = None, ioengine: str | None = None,
                 sleep: Callable[[float], None] = time.sleep, workdir: Path | None = None,
                 io_window: Callable[[float, float], None] | None = None):
        self.path = Path(path)
        self.kind = kind
        self._purge = purge
        self._commands = commands or Commands()
        self._ioengine = ioengine
        self._sleep = sleep
        self._workdir = workdir
        self._io_window = io_window

    @property
    def ioengine(self) -> str:
        if self._ioengine is None:
            self._ioengine = runner.probe_ioengine(self.path, self._commands)
        return self._ioengine

    def describe(self) -> dict:
        return {"engine": ENGINE, "fio_version": runner.fio_version(self._commands),
                "ioengine": self.ioengine}

    def run_step(self, step: Step, progress: ProgressCallback | None = None) -> StepOutcome:
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        if step.phase is Phase.PURGE:
            return self._run_purge(step, started)
        if step.phase is Phase.AGE:
            raise SsdlabError(f"step {step.label!r} ages the drive as a state, which only a simulated drive can: "
                              f"{REAL_DRIVES_AGE}")
        if step.phase is Phase.OFF:
            raise SsdlabError(f"step {step.label!r} powers a simulated drive off; a real drive's time off is the "
                              "retention run's wait (`ssdlab resume` after it)")
        with tempfile.TemporaryDirectory(prefix="ssdlab-fio-", dir=self._workdir) as tmp:
            if step.trace is not None:
                return self._run_trace(step, started, Path(tmp))
            try:
                return self._run_bursts(step, started, Path(tmp), progress)
            except parse.JobError as exc:
                if exc.code != errno.EINVAL or step.bs % SMALL_BLOCK == 0:
                    raise
                result = StepResult(started_at=started, busy_s=0.0, idle_s=0.0,
                                    engine=self._engine_for(step),
                                    notes=(not_run_note(step), str(exc)))
                return StepOutcome(result, ())

    def run_pattern(self, step: Step, seed: int, progress: ProgressCallback | None = None) -> StepOutcome:
        """The retention test's verify pattern of `seed`: a sequential write step writes it over its
        span, a sequential read step of the same span reads it back checking every block (the
        result's `verify`). Each is one fio run over the whole span, so that the check replays
        the sequence of the write (verify.py)."""
        if step.rw not in (Op.WRITE, Op.READ) or step.time_based or step.io_size or step.runtime:  # bursts too
            raise ValueError(f"step {step.label!r} is not one sequential pass over its span: no pattern")
        check = step.rw is Op.READ
        options = verify.check_options(seed, step.bs) if check else verify.pattern_options(seed, step.bs)
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        with tempfile.TemporaryDirectory(prefix="ssdlab-fio-", dir=self._workdir) as tmp:
            return self._run_bursts(step, started, Path(tmp), progress, _Pattern(options, check))

    def run_timed_reads(self, step: Step, thinktime_s: float, randseed: int) -> tuple[StepOutcome, tuple[int, ...]]:
        """One fio run of `step` idling `thinktime_s` after every I/O (0: none), and each read's
        latency (ns) in order from fio's latency log. No sensor is read meanwhile: the caller
        runs it outside the sampler's steps."""
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        with tempfile.TemporaryDirectory(prefix="ssdlab-fio-", dir=self._workdir) as tmp:
            prefix = Path(tmp) / "reads"
            invocation = Invocation(offset=step.offset, io_size=step.io_size, randseed=randseed)
            text = job_text(step, self.path, self.ioengine, invocation, prefix, thinktime_s)
            job_file = Path(tmp) / "reads.fio"
            job_file.write_text(text)
            doc, notes = parse.split_output(runner.run_job(job_file, self._commands))
            found = parse.directions(parse.job_of(doc))
            latencies = logs.read_latencies(_lat_log(prefix))
        # at QD1 the drive is busy for the sum of the latencies; fio's runtime includes the idles
        if self.kind == "file":
            notes = (FILE_WAKE_NOTE, *notes)
        result = StepResult(started_at=started, busy_s=sum(latencies) / 1e9, idle_s=thinktime_s * len(latencies),
                            engine=self.ioengine, notes=notes, **found)
        return StepOutcome(result, (text,)), latencies

    @functools.cached_property
    def fio_version(self) -> tuple[int, int] | None:
        """fio's (major, minor), asked once; None when `fio --version` names none."""
        return runner.parse_version(runner.fio_version(self._commands))

    def _run_trace(self, step: Step, started: str, tmp: Path) -> StepOutcome:
        """A trace step: its prepared trace replayed by fio (trace_replay.py)."""
        from ssdlab.backends.fio import trace_replay  # numpy's: only for a trace step, not at every start

        assert step.trace is not None
        trace, version = Path(step.trace.path), self.fio_version
        trace_replay.check_trims(trace, version, self.kind)
        iolog, prefix = tmp / "trace.iolog", tmp / "replay"
        trace_replay.write_iolog(trace, iolog)
        iodepth = trace_replay.depth(step, version)
        text = trace_replay.job_text(step, self.path, self.ioengine, iolog, prefix, iodepth)
        job_file = tmp / "replay.fio"
        job_file.write_text(text)
        doc, extra = parse.split_output(runner.run_job(job_file, self._commands))
        found = parse.directions(parse.job_of(doc))
        line = trace_replay.timeline(trace, _lat_log(prefix), step.trace.timed, iodepth)
        if self._io_window and (end := parse.report_time_s(doc)) is not None:
            self._io_window(end - line.span_ns / 1e9, end)
        busy = line.busy_ns / 1e9
        # fio's latencies (its bins) of the commands it timed, which its log lists
        directions = {name: d.model_copy(update={"ios": line.ios.get(ddir, 0), "bytes": line.nbytes.get(ddir, 0),
                                                  "busy_s": busy})
                      for ddir, name in enumerate(parse.DIRECTIONS) if (d := found.get(name)) is not None}
        notes = [*trace_replay.notes_before(step, version), *line.notes(), *extra]
        notes += [f"fio's latency log has {line.ios.get(ddir, 0)} {name}s where its statistics time "
                  f"{d.latency.count}: the {name} figures mix the two" for ddir, name in enumerate(parse.DIRECTIONS)
                  if (d := found.get(name)) is not None and d.latency.count != line.ios.get(ddir, 0)]
        idle = line.idle_ns / 1e9 + self._idle(step.idle_after)
        result = StepResult(started_at=started, busy_s=busy, idle_s=idle, per_second=line.per_second(),
                            engine=self.ioengine, notes=tuple(notes), **directions)
        return StepOutcome(result, (text,))

    def _engine_for(self, step: Step) -> str:
        if step.rw is Op.TRIM and self.kind == "file":
            return FILE_TRIM_ENGINE
        return self.ioengine

    def _run_purge(self, step: Step, started: str) -> StepOutcome:
        clock = time.monotonic()
        purge = self._purge()
        result = StepResult(started_at=started, busy_s=time.monotonic() - clock, idle_s=0.0,
                            engine=self.ioengine, notes=purge.said)
        return StepOutcome(result, purge.commands)

    def _run_bursts(self, step: Step, started: str, tmp: Path, progress: ProgressCallback | None,
                    pattern: _Pattern | None = None) -> StepOutcome:
        jobs: list[str] = []
        parts: list[dict[str, DirectionResult]] = []
        seconds: list[SecondPoint] = []
        windows: list[logs.Window] = []
        notes: list[str] = []
        busy = idle = 0.0
        checking = pattern is not None and pattern.check
        tolerate = VERIFY_ERRNOS if checking else ()
        report = None
        for index in range(step.bursts):
            invocation = Invocation.for_burst(step, index)
            prefix = tmp / f"burst{index}"
            text = job_text(step, self.path, self._engine_for(step), invocation, prefix,
                            options=pattern.options if pattern else None)
            job_file = tmp / f"burst{index}.fio"
            job_file.write_text(text)
            jobs.append(text)
            tick = self._ticker(step, index, prefix, progress)
            messages = tmp / f"burst{index}.messages" if checking else None
            doc, extra = parse.split_output(runner.run_job(job_file, self._commands, tick, messages, tolerate))
            job = parse.job_of(doc, tolerate)
            found = parse.directions(job)
            if messages is not None:
                # verify_only counts the writes it replays to know each block's pattern; it issues none
                found = {name: d for name, d in found.items() if name == "read"}
                with messages.open(errors="replace") as lines:
                    report = verify.parse_failures(lines, doc)
            burst_busy = max((d.busy_s for d in found.values()), default=0.0)
            if self._io_window and (end := parse.report_time_s(doc)) is not None:
                self._io_window(end - burst_busy, end)
            each_io = logs_each_io(step, invocation)
            if each_io:
                # timed by its I/Os' completions: fio's whole milliseconds are too coarse for it
                completions = [c for c in logs.read_completions(_lat_log(prefix)) if not checking or c.ddir == 0]
                burst_busy = logs.busy_from_completions(completions, burst_busy)
                found = {name: d.model_copy(update={"busy_s": burst_busy}) for name, d in found.items()}
                raw_windows = logs.completion_windows(completions)
                if burst_busy < SHORT_RUN_S and SHORT_RUN_NOTE not in notes:
                    notes.append(SHORT_RUN_NOTE)
            else:
                raw_windows = logs.read_windows(_bw_log(prefix))
            burst_bytes = sum(d.bytes for name, d in found.items() if name != "trim")
            burst_windows = logs.calibrated(raw_windows, burst_bytes, burst_busy)
            if checking and not each_io:
                notes.append(UNLOGGED_CHECK_NOTE)
            elif step.rw is not Op.TRIM:  # a TRIM moves no data: no MB/s series
                seconds += logs.per_second(burst_windows, step.bs, offset_s=busy)
            windows += [logs.Window(w.end_s + busy, w.nbytes) for w in burst_windows]
            parts.append(found)
            notes += [n for n in extra if n not in notes]
            busy += burst_busy
            if step.duty_cycle is not None:
                idle += self._idle(burst_busy * (1 - step.duty_cycle) / step.duty_cycle)
            if progress:
                progress((index + 1) / step.bursts, f"burst {index + 1}/{step.bursts}"
                         if step.bursts > 1 else "")
        idle += self._idle(step.idle_after)
        if step.rw is Op.TRIM and self.kind == "file":
            notes.insert(0, FILE_TRIM_NOTE)
        merged = {name: DirectionResult.merge(p[name] for p in parts if name in p)
                  for name in parse.DIRECTIONS if any(name in p for p in parts)}
        if report is not None:
            notes += [n for n in report.notes if n not in notes]
        result = StepResult(started_at=started, busy_s=busy, idle_s=idle, bursts=step.bursts,
                            per_second=tuple(seconds),
                            per_gib=logs.per_gib(windows) if step.per_gib_series else (),
                            engine=self._engine_for(step), notes=tuple(notes),
                            verify=report.verification() if report is not None else None, **merged)
        return StepOutcome(result, tuple(jobs))

    def _idle(self, seconds: float) -> float:
        """The drive really idles: nothing is sent to it for `seconds`."""
        if seconds > 0:
            self._sleep(seconds)
        return max(seconds, 0.0)

    def _ticker(self, step: Step, index: int, prefix: Path,
                progress: ProgressCallback | None) -> Callable[[], None] | None:
        """Progress inside one long fio run, from the bandwidth log it is writing."""
        if progress is None or step.bursts > 1:
            return None

        def tick() -> None:
            windows = logs.read_windows(_bw_log(prefix))
            if not windows:
                return
            done_bytes = sum(w.nbytes for w in windows) / step.bytes_limit
            done_time = windows[-1].end_s / step.runtime if step.runtime else 0.0
            progress(min(1.0, max(done_bytes, done_time)), "")
        return tick


def _bw_log(prefix: Path) -> Path:
    return prefix.parent / f"{prefix.name}_bw.1.log"


def _lat_log(prefix: Path) -> Path:
    return prefix.parent / f"{prefix.name}_clat.1.log"
