"""SNIA PTS steady state over a per-round series (for example the IOPS of each round).

The SNIA Solid State Storage Performance Test Specification judges steady state
over a measurement window of 5 consecutive rounds. The window is steady when
both hold:

- data excursion: max - min of the window is within 20 % of the window mean;
- slope excursion: the least-squares line through the window moves by at most
  10 % of the window mean across it, |slope| x (rounds - 1).

Rounds are numbered from 1, as the specification numbers them; steady state is
reached at round r when the window of rounds r-4..r is the first that passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

WINDOW_ROUNDS = 5
MAX_DATA_EXCURSION = 0.20
MAX_SLOPE_EXCURSION = 0.10


@dataclass(frozen=True)
class MeasurementWindow:
    """The figures of one window of rounds `first_round`..`last_round` (inclusive)."""

    first_round: int
    last_round: int
    mean: float
    data_excursion: float  # max - min
    slope: float  # least-squares, per round
    slope_excursion: float  # |slope| x (rounds - 1)

    @property
    def steady(self) -> bool:
        return (self.data_excursion <= MAX_DATA_EXCURSION * self.mean
                and self.slope_excursion <= MAX_SLOPE_EXCURSION * self.mean)


@dataclass(frozen=True)
class SteadyState:
    """`round` is where steady state was first reached; `window` is that window,
    or the last one when it never was (None with fewer rounds than a window)."""

    reached: bool
    round: int | None
    window: MeasurementWindow | None


def measurement_window(values: Sequence[float], last_round: int) -> MeasurementWindow:
    """The window of WINDOW_ROUNDS rounds ending at `last_round` (1-based)."""
    first_round = last_round - WINDOW_ROUNDS + 1
    if first_round < 1 or last_round > len(values):
        raise ValueError(f"rounds {first_round}..{last_round} are not all in the "
                         f"{len(values)} rounds measured")
    window = values[first_round - 1:last_round]
    mean = fmean(window)
    x_mid = (WINDOW_ROUNDS - 1) / 2
    slope = (sum((x - x_mid) * (y - mean) for x, y in enumerate(window))
             / sum((x - x_mid) ** 2 for x in range(WINDOW_ROUNDS)))
    return MeasurementWindow(first_round=first_round, last_round=last_round, mean=mean,
                             data_excursion=max(window) - min(window), slope=slope,
                             slope_excursion=abs(slope) * (WINDOW_ROUNDS - 1))


def find_steady_state(values: Sequence[float]) -> SteadyState:
    """The first round at which the window ending there is steady, if any."""
    window = None
    for last_round in range(WINDOW_ROUNDS, len(values) + 1):
        window = measurement_window(values, last_round)
        if window.steady:
            return SteadyState(reached=True, round=last_round, window=window)
    return SteadyState(reached=False, round=None, window=window)
