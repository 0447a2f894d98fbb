"""Throttle events, as METHODOLOGY.md section 4 defines them: a drop of throughput of at
least 20 % lasting at least 3 s that coincides with a temperature at or above a thermal
threshold (TMT1, TMT2 or WCTEMP) or with a rise of the drive's thermal-transition counters.

The series are per second (second k is [k, k+1) of the step). How they are read:
- "Before" is the median of the last REFERENCE_S seconds that were not in a drop: a
  median, so that single slow or fast seconds do not move it; a window, so that it follows
  the drive's speed as it changes. No drop is looked for until MIN_REFERENCE_S seconds
  have been seen.
- A drop starts at a second at or below 80 % of "before" and ends at the first second
  above it (recovery); "before" is held for the whole drop.
- It coincides with heat when a threshold is reached, or a counter rises, between the
  second before the drop and its third second: throttling follows the crossing at once
  (the second before allows for a temperature read a little earlier than the I/O it
  slowed), and heat that only comes later did not cause the drop.
- A drop of 3 s or more without heat is a new level, such as an SLC cache running out:
  "before" restarts from it, so that a later thermal drop is measured against the speed
  the drive had by then. Shorter dips are left out of "before" and are never events.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DROP = 0.8  # at or below 80 % of "before" is a drop (of 20 % or more); above it, recovered
MIN_LENGTH_S = 3
REFERENCE_S = 10
MIN_REFERENCE_S = 3

Threshold = Literal["TMT1", "TMT2", "WCTEMP", "transition counter"]


class ThrottleEvent(BaseModel):
    """One throttle event of a step; seconds count from the step's start."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start_s: int = Field(ge=0)
    length_s: int = Field(ge=MIN_LENGTH_S)
    mbps_before: float = Field(gt=0)
    mbps_during: float = Field(ge=0, description="mean over the event")
    start_temperature_c: float | None = Field(description="in the event's first second, when read")
    peak_temperature_c: float | None = Field(description="from the second before the event to its end")
    threshold: Threshold = Field(description="the highest threshold reached, else the transition counter")


def detect_throttles(mbps: Sequence[float], temperature_c: Sequence[float | None], *,
                     tmt1_c: float | None = None, tmt2_c: float | None = None, wctemp_c: float | None = None,
                     transition_s: Iterable[float] = ()) -> tuple[ThrottleEvent, ...]:
    """The throttle events in a step's per-second throughput (MB/s) and temperature (°C,
    None where unknown); `transition_s` are the times the thermal-transition counters rose
    (see `transition_seconds`)."""
    limits = sorted(((c, name) for name, c in (("TMT1", tmt1_c), ("TMT2", tmt2_c), ("WCTEMP", wctemp_c))
                     if c is not None), reverse=True)
    rises = {int(t) for t in transition_s}
    temps = [*temperature_c[:len(mbps)], *[None] * (len(mbps) - len(temperature_c))]
    events: list[ThrottleEvent] = []
    history: deque[float] = deque(maxlen=REFERENCE_S)
    k = 0
    while k < len(mbps):
        before = statistics.median(history) if len(history) >= MIN_REFERENCE_S else 0.0
        if before <= 0 or mbps[k] > DROP * before:
            history.append(mbps[k])
            k += 1
            continue
        end = k + 1
        while end < len(mbps) and mbps[end] <= DROP * before:
            end += 1
        if end - k < MIN_LENGTH_S:  # a dip
            k = end
            continue
        onset = range(max(0, k - 1), k + MIN_LENGTH_S)
        threshold = _cause([temps[s] for s in onset], limits, any(s in rises for s in onset))
        if threshold is None:  # a new level: "before" restarts from it
            history.clear()
            history.extend(mbps[k:k + MIN_LENGTH_S])
            k += MIN_LENGTH_S
            continue
        known = [c for c in temps[max(0, k - 1):end] if c is not None]
        events.append(ThrottleEvent(start_s=k, length_s=end - k, mbps_before=before,
                                    mbps_during=statistics.fmean(mbps[k:end]), start_temperature_c=temps[k],
                                    peak_temperature_c=max(known, default=None), threshold=threshold))
        k = end
    return tuple(events)


def _cause(temps: list[float | None], limits: list[tuple[float, str]], counter_rose: bool) -> Threshold | None:
    hottest = max((c for c in temps if c is not None), default=None)
    if hottest is not None:
        for limit, name in limits:  # highest first
            if hottest >= limit:
                return name
    return "transition counter" if counter_rose else None


def transition_seconds(counters: Sequence[int | None]) -> tuple[int, ...]:
    """The seconds in which a per-second series of thermal-transition counts (TMT1 plus
    TMT2 transitions; None where not read) rose; a rise across unread seconds is placed at
    the first second read after it."""
    rises: list[int] = []
    last = None
    for k, count in enumerate(counters):
        if count is None:
            continue
        if last is not None and count > last:
            rises.append(k)
        last = count
    return tuple(rises)
