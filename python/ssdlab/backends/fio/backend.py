"""FioBackend: steps on a real device or file, in wall time, through fio."""

from __future__ import annotations

import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ssdlab.backends import ProgressCallback, StepOutcome
from ssdlab.backends.fio import logs, parse, runner
from ssdlab.backends.fio.jobfile import Invocation, job_text
from ssdlab.external import Commands
from ssdlab.model import DirectionResult, Phase, SecondPoint, Step, StepResult

ENGINE = "fio"


class FioBackend:
    name = ENGINE

    def __init__(self, path: Path, kind: str, purge: Callable[[], tuple[str, ...]],
                 commands: Commands | None = None, ioengine: str | None = None,
                 sleep: Callable[[float], None] = time.sleep, workdir: Path | None = None):
        self.path = Path(path)
        self.kind = kind
        self._purge = purge
        self._commands = commands or Commands()
        self._ioengine = ioengine
        self._sleep = sleep
        self._workdir = workdir

    @property
    def ioengine(self) -> str:
        if self._ioengine is None:
            self._ioengine = runner.probe_ioengine(self.path, self._commands)
        return self._ioengine

    def describe(self) -> dict:
        return {"engine": ENGINE, "fio_version": runner.fio_version(self._commands),
                "ioengine": self.ioengine}

    def run_step(self, step: Step, progress: ProgressCallback | None = None) -> StepOutcome:
        started = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        if step.phase is Phase.PURGE:
            return self._run_purge(step, started)
        with tempfile.TemporaryDirectory(prefix="ssdlab-fio-", dir=self._workdir) as tmp:
            return self._run_bursts(step, started, Path(tmp), progress)

    def _run_purge(self, step: Step, started: str) -> StepOutcome:
        clock = time.monotonic()
        commands = self._purge()
        result = StepResult(started_at=started, busy_s=time.monotonic() - clock, idle_s=0.0,
                            engine=self.ioengine, notes=tuple(f"purged with `{c}`" for c in commands))
        return StepOutcome(result, commands)

    def _run_bursts(self, step: Step, started: str, tmp: Path,
                    progress: ProgressCallback | None) -> StepOutcome:
        jobs: list[str] = []
        parts: list[dict[str, DirectionResult]] = []
        seconds: list[SecondPoint] = []
        windows: list[logs.Window] = []
        notes: list[str] = []
        busy = idle = 0.0
        for index in range(step.bursts):
            invocation = Invocation.for_burst(step, index)
            prefix = tmp / f"burst{index}"
            text = job_text(step, self.path, self.ioengine, invocation, prefix)
            job_file = tmp / f"burst{index}.fio"
            job_file.write_text(text)
            jobs.append(text)
            tick = self._ticker(step, index, prefix, progress)
            doc, extra = parse.split_output(runner.run_job(job_file, self._commands, tick))
            job = parse.job_of(doc)
            found = parse.directions(job)
            burst_busy = max((d.busy_s for d in found.values()), default=0.0)
            burst_bytes = sum(d.bytes for name, d in found.items() if name != "trim")
            burst_windows = logs.calibrated(logs.read_windows(_bw_log(prefix)), burst_bytes, burst_busy)
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
        merged = {name: DirectionResult.merge(p[name] for p in parts if name in p)
                  for name in parse.DIRECTIONS if any(name in p for p in parts)}
        result = StepResult(started_at=started, busy_s=busy, idle_s=idle, bursts=step.bursts,
                            per_second=tuple(seconds),
                            per_gib=logs.per_gib(windows) if step.per_gib_series else (),
                            engine=self.ioengine, notes=tuple(notes), **merged)
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
