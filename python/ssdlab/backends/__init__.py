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
from typing import Protocol

from ssdlab.model import Step, StepResult

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


class Backend(Protocol):
    name: str

    def describe(self) -> dict:
        """Engine facts recorded with the run (e.g. fio version and ioengine)."""

    def run_step(self, step: Step, progress: ProgressCallback | None = None) -> StepOutcome:
        """Execute one step; see the module docstring for the contract."""
