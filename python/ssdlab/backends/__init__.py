"""Backends execute steps on a target: `fio` (real device or file, wall time) and
`sim` (the Rust simulator, virtual time). Same input, same output.

Contract of `Backend.run_step`:
- executes one Step completely, bursts and idle included (a real backend sleeps
  for the idle time; the simulator lets its drive work in virtual time);
- a PURGE step returns the target to fresh-out-of-box (secure erase / full TRIM /
  recreate) and says how in `commands`;
- returns a StepOutcome whose `commands` are the exact job texts or command lines
  that ran, in order, for the record;
- raises `BackendFailed` with a message the user can act on when the engine fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ssdlab.model import Step, StepResult

if TYPE_CHECKING:
    import numpy as np

# Called with (fraction of the step done in [0, 1], a short status such as "burst 3/32").
ProgressCallback = Callable[[float, str], None]


@dataclass(frozen=True)
class StepOutcome:
    result: StepResult
    commands: tuple[str, ...]
    # The drive's own temperature, °C, per second of the step (the seconds of its per-second
    # series), when the backend knows it: the simulator, in drive time. None: telemetry
    # samples it beside the step.
    temperature_c: tuple[float, ...] | None = None
    # With it, the drive's thermal-transition count (TMT1 + TMT2 entries) at each second.
    thermal_transitions: tuple[int, ...] | None = None
    # Each fio job's own figures, when the step reports them (several jobs at once, a ramp,
    # a log of every command): the simulator's, for sim fio.
    jobs: tuple[JobFigures, ...] = ()


@dataclass(frozen=True)
class JobFigures:
    """One fio job of a step, as fio reports a job: over its own time (after its ramp)."""

    label: str
    result: StepResult          # its directions, per-second series and busy time
    # every command: rows of (done ns since the job's figures started, latency ns, fio's
    # direction number, bytes, offset); empty unless the job logs them
    io_log: np.ndarray
    log_truncated: bool         # it made more commands than the log keeps
    # its steady-state judgement (fio's steadystate): attained, criterion, max_deviation,
    # slope, and the window's iops and bw samples, oldest first; None without one
    steady: dict | None = None


class Backend(Protocol):
    name: str

    def describe(self) -> dict:
        """Engine facts recorded with the run (e.g. fio version and ioengine)."""

    def run_step(self, step: Step, progress: ProgressCallback | None = None) -> StepOutcome:
        """Execute one step; see the module docstring for the contract."""

    def run_pattern(self, step: Step, seed: int, progress: ProgressCallback | None = None) -> StepOutcome:
        """The retention test's verify pattern of `seed`: written by a sequential write step, read
        back by a sequential read step of the same span, which checks every block (the result's
        `verify`; a finding, never a failure)."""
