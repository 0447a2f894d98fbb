"""Periodic sampling in a background thread: temperature beside every step, and power
from an hwmon chip.

The thread sleeps on an Event between reads (no busy loop) and reads on a fixed
schedule; when a read overruns, the missed slots are skipped rather than read back to
back. `quiet()` suspends reads: idle-wake's idle windows must see no sensor read,
because reading an NVMe temperature sends a command that can wake the drive. The thread
runs at the lowest priority: on a busy CPU it waits for fio's threads, not they for it.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from ssdlab.errors import SsdlabError

Sample = tuple[float, float]  # (seconds since start(), value)
DEFAULT_TEMPERATURE_PERIOD_S = 0.5
MAX_TEMPERATURE_PERIOD_S = 1.0  # METHODOLOGY.md: temperature at 1 Hz or faster
NICE = 19  # the sampling thread's: the lowest priority


@dataclass(frozen=True)
class Readings:
    samples: tuple[Sample, ...]
    notes: tuple[str, ...] = ()


class Sampler:
    """Calls `source` every `period_s` seconds from start() to stop(), the first time at
    once (outside quiet()); a None reading is skipped. A reading that raises SsdlabError is
    skipped too, and sampling goes on (a drive busy for a moment, a sensor read that times
    out, must not end a step's series): one note says how many failed, and the first
    error. Any other exception is a bug: sampling ends and stop() raises it."""

    def __init__(self, source: Callable[[], float | None], period_s: float, what: str = "sampling"):
        if not period_s > 0:
            raise ValueError(f"a sampling period must be positive, not {period_s}")
        self.period_s = period_s
        self._source = source
        self._what = what
        self._lock = threading.Lock()  # held during each read: quiet() waits for one in progress
        self._quiet = 0  # nesting depth of quiet()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the sampler is already running")
        self._samples: list[Sample] = []
        self._reads = self._failed = 0
        self._first_failure: tuple[float, SsdlabError] | None = None
        self._error: Exception | None = None
        self._stop.clear()
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=self._what, daemon=True)
        self._thread.start()

    def stop(self) -> Readings:
        if self._thread is None:
            raise RuntimeError("the sampler was not started")
        self._stop.set()
        self._thread.join()
        self._thread = None
        if self._error is not None:
            raise self._error
        notes = ()
        if self._first_failure is not None:
            first_s, first = self._first_failure
            notes = (f"{self._what}: {self._failed} of {self._reads} readings failed, the first {first_s:.1f} s "
                     f"into the step: {first}",)
        return Readings(tuple(self._samples), notes)

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """No read starts inside the block, and one in progress has ended when it is entered."""
        with self._lock:
            self._quiet += 1
        try:
            yield
        finally:
            with self._lock:
                self._quiet -= 1

    def _now(self) -> float:
        return time.monotonic() - self._t0

    def _run(self) -> None:
        _yield_to_the_workload()
        due = 0.0
        while True:  # the first reading at once, even when stop() comes first: a short step has one too
            with self._lock:
                if not self._quiet and not self._read():
                    return
            due += self.period_s
            behind = self._now() - due
            if behind > 0:
                due += math.ceil(behind / self.period_s) * self.period_s
            if self._stop.wait(max(0.0, due - self._now())):
                return

    def _read(self) -> bool:
        """One reading; False when sampling must end."""
        before = self._now()
        self._reads += 1
        try:
            value = self._source()
        except SsdlabError as exc:
            self._failed += 1
            self._first_failure = self._first_failure or (before, exc)
            return True
        except Exception as exc:  # a bug: stop() raises it in the step's thread
            self._error = exc
            return False
        if value is not None:
            self._samples.append(((before + self._now()) / 2, float(value)))
        return True


def _yield_to_the_workload() -> None:
    """This thread only (Linux nices threads one by one) gives way to fio's when a CPU is
    contended: a reading may come a little late, the I/O is not held up."""
    with suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)


class TemperatureSampler(Sampler):
    """Temperature (°C) beside a step, at 1 Hz or faster."""

    def __init__(self, source: Callable[[], float | None], period_s: float = DEFAULT_TEMPERATURE_PERIOD_S):
        if not 0 < period_s <= MAX_TEMPERATURE_PERIOD_S:
            raise ValueError(f"temperature is sampled at least once a second: period {period_s} s")
        super().__init__(source, period_s, "temperature sampling")


def per_second(samples: Sequence[Sample], duration_s: float) -> tuple[float | None, ...]:
    """The mean of each second's samples, None for a second without one. The seconds are
    those of a step's per-second series: second k is [k, k+1), and a final part-second
    shorter than half a second joins the second before it. Samples outside
    [0, duration_s] are left out."""
    count = max(1, int(duration_s + 0.5)) if duration_s > 0 else 0
    sums = [0.0] * count
    counts = [0] * count
    for t, value in samples:
        if 0 <= t <= duration_s:
            k = min(int(t), count - 1)
            sums[k] += value
            counts[k] += 1
    return tuple(s / n if n else None for s, n in zip(sums, counts))
