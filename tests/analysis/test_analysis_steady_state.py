"""SNIA PTS steady state: 5-round window, data excursion 20 %, slope excursion 10 %."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ssdlab.analysis.steady_state import find_steady_state, measurement_window


def test_reached_at_the_first_window_passing_both_tests():
    # Rounds 3..7 pass the data excursion (10 <= 20 % of 52) but not the slope:
    # slope -2 per round, excursion 8 > 10 % of 52. Rounds 4..8 are flat.
    iops = [100, 80, 60, 50, 50, 50, 50, 50, 50]
    late = measurement_window(iops, 7)
    assert (late.mean, late.data_excursion, late.slope, late.slope_excursion) == (52, 10, -2, 8)
    assert not late.steady
    state = find_steady_state(iops)
    assert state.reached and state.round == 8
    assert (state.window.first_round, state.window.last_round) == (4, 8)
    assert (state.window.mean, state.window.data_excursion, state.window.slope) == (50, 0, 0)


def test_flat_trend_with_a_wide_swing_is_not_steady():
    window = measurement_window([100, 70, 100, 70, 100], 5)
    assert window.slope == 0 and window.data_excursion == 30  # 30 > 20 % of 88
    state = find_steady_state([100, 70, 100, 70, 100])
    assert not state.reached and state.round is None and state.window == window


def test_limits_are_inclusive():
    ramp = measurement_window([95, 97.5, 100, 102.5, 105], 5)  # slope excursion 10 = 10 % of 100
    assert ramp.slope_excursion == 10 and ramp.steady
    assert not measurement_window([90, 95, 100, 105, 110], 5).steady  # slope excursion 20 %
    swing = measurement_window([90, 110, 100, 90, 110], 5)  # max - min = 20 % of 100, slope 2
    assert swing.data_excursion == 20 and swing.slope_excursion == 8 and swing.steady
    assert not measurement_window([89, 111, 100, 89, 111], 5).steady  # 22 %


def test_fewer_rounds_than_a_window():
    state = find_steady_state([1, 1, 1, 1])
    assert not state.reached and state.window is None
    with pytest.raises(ValueError, match="rounds 0..4"):
        measurement_window([1, 1, 1, 1], 4)


@settings(max_examples=100, derandomize=True, database=None, deadline=None)
@given(level=st.floats(100, 1e6), slope_share=st.floats(0, 0.05))
def test_a_ramp_is_steady_exactly_when_its_excursion_is_within_10_percent(level, slope_share):
    assume(abs(4 * slope_share - 0.10) > 1e-9)  # floating point decides the limit itself
    slope = slope_share * level  # per round; window excursion 4 x slope against a mean of level
    state = find_steady_state([level + slope * (r - 2) for r in range(5)])
    assert state.reached == (4 * slope_share <= 0.10)
    assert state.window.slope == pytest.approx(slope, rel=1e-9, abs=1e-6)
