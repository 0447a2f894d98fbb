"""Power meters: started when a step starts, stopped when it ends, one interface for any meter.

`--power-meter` chooses one:
- a command (`'CMD ARGS'`, split as a shell would, run without one) that prints lines
  `t_seconds,watts` or `t_seconds,watts,volts,amps` on its standard output, t counting
  from the command's start (volts and amps are allowed, energy needs only watts). It
  runs in its own process group, so stop()'s SIGTERM (SIGKILL after GRACE_S) reaches
  whatever it started; should ssdlab be killed, the meter dies of SIGPIPE at its next line.
- `hwmon:PATH`, a power chip's hwmon directory, such as the ina2xx driver's INA219 or
  INA226: `power1_input` (µW), or else `in1_input` (bus mV) x `curr1_input` (mA). The
  chip averages over its `update_interval` (ms), so it is read no more often than that,
  and at most MAX_HWMON_HZ times a second.

A trace's times are seconds since start(), i.e. since the step started; `energy_j`
integrates a trace over the step's span.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ssdlab.errors import SsdlabError
from ssdlab.external import c_locale
from ssdlab.telemetry.sampler import Sampler
from ssdlab.units import per_second

MAX_W = 1000.0  # a drive draws tens of watts at most: more is a unit mistake (mW, µW)
GRACE_S = 2.0  # how long a meter has to exit after SIGTERM
MAX_HWMON_HZ = 10.0
LINE = "t_seconds,watts[,volts,amps]"
HWMON = "hwmon:"
POWER_FILES = (("power1_input",), ("in1_input", "curr1_input"))  # µW; or mV and mA


def sample_problem(t_s: float, watts: float, previous_t_s: float | None) -> str | None:
    """Why (t_s, watts) cannot follow a sample at `previous_t_s`; None when it can."""
    if not (math.isfinite(t_s) and math.isfinite(watts)):
        return "not finite"
    if not 0 <= watts <= MAX_W:
        return f"watts outside 0..{MAX_W:g}"
    if previous_t_s is not None and t_s < previous_t_s:
        return "time going backwards"
    return None


class PowerTrace(BaseModel):
    """What a meter measured during one step: (t_s, watts) samples in time order, t_s in
    seconds since the step started."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="the --power-meter spec")
    samples: tuple[tuple[float, float], ...] = ()
    rejected: int = Field(default=0, ge=0, description="lines or readings that gave no sample")
    notes: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _valid_samples(self) -> PowerTrace:
        previous = None
        for t_s, watts in self.samples:
            if problem := sample_problem(t_s, watts, previous):
                raise ValueError(f"power sample ({t_s}, {watts}): {problem}")
            previous = t_s
        return self


class StepEnergy(BaseModel):
    """Energy over a step's span. Where the samples do not reach an edge of the span,
    the nearest sample's power is held: `covered_s` says how much of the span they cover."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    meter: str = Field(description="the --power-meter spec")
    energy_j: float = Field(ge=0)
    span_s: float = Field(ge=0)
    covered_s: float = Field(ge=0)

    @property
    def mean_w(self) -> float:
        return per_second(self.energy_j, self.span_s)


def energy_j(trace: PowerTrace, start_s: float, end_s: float) -> StepEnergy:
    """The trapezoid integral of power over [start_s, end_s], the power at each edge
    interpolated between the samples around it."""
    import numpy as np  # here, not above: numpy costs every start of the CLI a tenth of a second

    if end_s < start_s:
        raise ValueError(f"a span ends after it starts: {start_s} .. {end_s}")
    if not trace.samples:
        why = "; ".join(trace.notes) or "it gave no sample"
        raise SsdlabError(f"no power figure from the power meter `{trace.source}`: {why}")
    t, watts = np.array(trace.samples).T
    inside = (t > start_s) & (t < end_s)
    edges = np.interp([start_s, end_s], t, watts)  # np.interp holds the end values outside
    points = np.concatenate(([start_s], t[inside], [end_s]))
    power = np.concatenate((edges[:1], watts[inside], edges[1:]))
    energy = float(np.sum((power[1:] + power[:-1]) / 2 * np.diff(points)))
    covered = max(0.0, min(end_s, t[-1]) - max(start_s, t[0]))
    return StepEnergy(meter=trace.source, energy_j=energy, span_s=end_s - start_s, covered_s=covered)


def energy_over(trace: PowerTrace, spans: Sequence[tuple[float, float]]) -> StepEnergy:
    """`energy_j` summed over several spans (a step's busy time, between its idle windows);
    an SsdlabError when the samples cover none of them, all before or all after: that
    would be some other time's power."""
    parts = [energy_j(trace, start_s, end_s) for start_s, end_s in spans]
    covered = sum(p.covered_s for p in parts)
    if parts and not covered:
        first, last = trace.samples[0][0], trace.samples[-1][0]
        raise SsdlabError(f"no power figure from the power meter `{trace.source}`: its samples, from {first:g} "
                          f"to {last:g} s, miss the step's busy time, {spans[0][0]:.3f} to {spans[-1][1]:.3f} s")
    return StepEnergy(meter=trace.source, energy_j=sum(p.energy_j for p in parts),
                      span_s=sum(p.span_s for p in parts), covered_s=covered)


class _Recorder:
    """The samples of one meter run; what could not become a sample is counted by
    reason, with its first example."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self.problems: dict[str, tuple[int, str]] = {}

    def add(self, t_s: float, watts: float, raw: str) -> None:
        problem = sample_problem(t_s, watts, self.samples[-1][0] if self.samples else None)
        if problem is None:
            self.samples.append((t_s, watts))
        else:
            self.reject(problem, raw)

    def reject(self, reason: str, raw: str) -> None:
        count, example = self.problems.get(reason, (0, raw[:80]))
        self.problems[reason] = (count + 1, example)

    def trace(self, source: str, notes: Sequence[str]) -> PowerTrace:
        rejected = [f"{count} reading(s) of the power meter set aside ({reason}), e.g. {example!r}"
                    for reason, (count, example) in self.problems.items()]
        return PowerTrace(source=source, samples=tuple(self.samples), notes=(*notes, *rejected),
                          rejected=sum(count for count, _ in self.problems.values()))


class PowerMeter(ABC):
    spec: str

    @abstractmethod
    def start(self) -> None:
        """Begin measuring: the step starts now."""

    @abstractmethod
    def stop(self) -> PowerTrace:
        """Stop measuring and give what was measured since start()."""


class CommandMeter(PowerMeter):
    def __init__(self, argv: Sequence[str]):
        self.argv = tuple(argv)
        self.spec = shlex.join(self.argv)
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        if self._proc is not None:
            raise RuntimeError("the power meter is already running")
        self._recorder = _Recorder()
        self._stderr = tempfile.TemporaryFile()  # a file, not a pipe: a chatty meter cannot block on it
        self._t0 = time.monotonic()
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=self._stderr, text=True, errors="replace",
                                          start_new_session=True, env=c_locale())
        except OSError as exc:
            self._stderr.close()
            raise SsdlabError(f"cannot start the power meter `{self.spec}`: {exc.strerror or exc}") from None
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,), name="power meter",
                                        daemon=True)
        self._reader.start()

    def _read(self, stdout: IO[str]) -> None:
        for line in stdout:
            if not (line := line.strip()):
                continue
            fields = line.split(",")
            try:
                numbers = [float(f) for f in fields] if len(fields) in (2, 4) else None
            except ValueError:
                numbers = None
            if numbers is None:
                self._recorder.reject(f"not {LINE}", line)
            else:
                self._recorder.add(numbers[0], numbers[1], line)

    def stop(self) -> PowerTrace:
        proc = self._proc
        if proc is None:
            raise RuntimeError("the power meter was not started")
        elapsed = time.monotonic() - self._t0
        status = proc.poll()  # not None: the meter ended before the step did
        self._end(proc)
        self._proc = None
        said = self._stderr_tail()
        notes = []
        if status is not None:
            notes.append(f"the power meter `{self.spec}` exited (status {status}) before the step ended{said}")
        samples = self._recorder.samples
        if not samples and not self._recorder.problems:
            notes.append(f"the power meter `{self.spec}` printed no `{LINE}` line"
                         + ("" if status is not None else said))
        if samples and samples[0][0] > elapsed:
            notes.append(f"the power meter's times start at {samples[0][0]:g} s, after the step's "
                         f"{elapsed:.1f} s: they must count seconds since the command started")
        return self._recorder.trace(self.spec, notes)

    def _end(self, proc: subprocess.Popen) -> None:
        """SIGTERM to the meter's process group, SIGKILL after GRACE_S; then its output is
        read to the end (a process it started may still hold it: that one is killed too)."""
        _signal_group(proc, signal.SIGTERM)  # even when it has exited: what it started may not have
        try:
            proc.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        self._reader.join(GRACE_S)
        if self._reader.is_alive():
            _signal_group(proc, signal.SIGKILL)
            self._reader.join(GRACE_S)
        if not self._reader.is_alive():
            proc.stdout.close()

    def _stderr_tail(self) -> str:
        with self._stderr as err:
            err.seek(max(0, err.seek(0, os.SEEK_END) - 4096))
            lines = err.read().decode(errors="replace").strip().splitlines()[-3:]
        return f" (it said: {' | '.join(lines)!r})" if lines else ""


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)  # its own session: the group id is its pid
    except ProcessLookupError:  # the whole group has already exited
        pass


class HwmonMeter(PowerMeter):
    def __init__(self, chip: Path):
        self.chip = chip
        self.spec = f"{HWMON}{chip}"
        self._files = _power_files(chip)
        self.read_watts()  # an unreadable chip is refused now, not after the step
        self.period_s = max(_update_interval_s(chip), 1 / MAX_HWMON_HZ)
        self._sampler = Sampler(self.read_watts, self.period_s, f"power sampling ({self.spec})")

    def read_watts(self) -> float:
        try:
            values = [int((self.chip / name).read_text()) for name in self._files]
        except OSError as exc:
            raise SsdlabError(f"cannot read the power chip {self.chip}: {exc.strerror or exc}") from None
        except ValueError:
            raise SsdlabError(f"the power chip {self.chip} gave something other than a whole number in "
                              f"{' or '.join(self._files)}") from None
        return values[0] / 1e6 if len(values) == 1 else values[0] * values[1] / 1e6

    def start(self) -> None:
        self._sampler.start()

    def stop(self) -> PowerTrace:
        readings = self._sampler.stop()
        recorder = _Recorder()
        for t_s, watts in readings.samples:
            recorder.add(t_s, watts, f"{watts:g} W")
        return recorder.trace(self.spec, readings.notes)


def _power_files(chip: Path) -> tuple[str, ...]:
    for files in POWER_FILES:
        if all((chip / name).is_file() for name in files):
            return files
    try:
        name = (chip / "name").read_text().strip()
    except OSError:
        name = "unknown"
    raise SsdlabError(f"--power-meter {HWMON}{chip}: that hwmon chip (name {name!r}) is not an ina2xx-style "
                      "power monitor: it has neither power1_input nor in1_input and curr1_input. "
                      "`grep . /sys/class/hwmon/*/name` lists the chips; INA219/INA226 show as ina2xx names")


def _update_interval_s(chip: Path) -> float:
    """The chip's averaging time; 0 when it does not say."""
    try:
        return max(0, int((chip / "update_interval").read_text())) / 1000
    except (OSError, ValueError):
        return 0.0


def parse_power_meter(spec: str) -> PowerMeter:
    """The meter that `--power-meter SPEC` names: `hwmon:PATH` or a command."""
    if spec.startswith(HWMON):
        chip = Path(spec[len(HWMON):])
        if not spec[len(HWMON):] or not chip.is_dir():
            raise SsdlabError(f"--power-meter {spec!r}: no hwmon chip directory there: give the directory of "
                              "a power chip, e.g. hwmon:/sys/class/hwmon/hwmon2 (`grep . /sys/class/hwmon/*/name` "
                              "lists them)")
        return HwmonMeter(chip)
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise SsdlabError(f"--power-meter {spec!r} cannot be read as a command: {exc}") from None
    if not argv:
        raise SsdlabError(f"--power-meter needs a command that prints `{LINE}` lines, or {HWMON}PATH")
    if shutil.which(argv[0]) is None:
        raise SsdlabError(f"--power-meter: {argv[0]!r} is neither a program on PATH nor an executable file")
    return CommandMeter(argv)
