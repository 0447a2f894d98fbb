"""Throttle events: a drop of at least 20 % for at least 3 s, coinciding with a thermal
threshold or a rise of the thermal-transition counters (METHODOLOGY.md section 4)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.telemetry.throttle import DROP, MIN_LENGTH_S, detect_throttles, transition_seconds

FAST = 3000.0


def series(length: int, value: float = FAST, **spans: tuple[int, int, float]) -> list[float]:
    """`length` seconds at `value`, with [start, end) spans at other values."""
    out = [value] * length
    for start, end, other in spans.values():
        out[start:end] = [other] * (end - start)
    return out


def heating(length: int, start_c: float = 50.0, per_s: float = 1.5) -> list[float]:
    return [start_c + per_s * k for k in range(length)]


def test_heat_then_a_drop_is_one_event():
    # 80 °C (TMT1) is reached at 20 s, when throughput halves for 6 s; TMT2 (85 °C) is only
    # reached during the event, so the event is TMT1's.
    mbps = series(30, drop=(20, 26, 1500.0))
    (event,) = detect_throttles(mbps, heating(30), tmt1_c=80, tmt2_c=85, wctemp_c=90)
    assert (event.start_s, event.length_s) == (20, 6)
    assert (event.mbps_before, event.mbps_during) == (FAST, 1500.0)
    assert event.threshold == "TMT1"
    assert event.start_temperature_c == 80.0
    assert event.peak_temperature_c == 50 + 1.5 * 25


def test_the_highest_threshold_reached_is_named():
    mbps = series(30, drop=(20, 26, 1500.0))
    (event,) = detect_throttles(mbps, [70.0] * 20 + [91.0] * 10, tmt1_c=80, tmt2_c=85, wctemp_c=90)
    assert event.threshold == "WCTEMP"


def test_an_event_without_recovery_lasts_to_the_end():
    (event,) = detect_throttles(series(30, drop=(20, 30, 2000.0)), [85.0] * 30, tmt2_c=84)
    assert (event.start_s, event.length_s, event.threshold) == (20, 10, "TMT2")


def test_recovery_ends_the_event_at_80_percent():
    # 2401 MB/s is above 80 % of 3000 (2400): recovered, though still slower than before.
    mbps = series(30, drop=(20, 24, 1000.0), slower=(24, 30, 2401.0))
    (event,) = detect_throttles(mbps, [85.0] * 30, tmt1_c=80)
    assert event.length_s == 4


def test_a_2_s_dip_is_no_event():
    assert detect_throttles(series(30, dip=(20, 22, 1000.0)), [95.0] * 30, tmt1_c=80) == ()


def test_a_drop_of_less_than_20_percent_is_no_event():
    assert detect_throttles(series(30, drop=(20, 28, FAST * 0.81)), [95.0] * 30, tmt1_c=80) == ()
    assert len(detect_throttles(series(30, drop=(20, 28, FAST * 0.8)), [95.0] * 30, tmt1_c=80)) == 1


def test_a_drop_without_heat_is_no_event():
    mbps = series(30, drop=(20, 30, 1000.0))
    assert detect_throttles(mbps, [45.0] * 30, tmt1_c=80, tmt2_c=85, wctemp_c=90) == ()
    assert detect_throttles(mbps, [None] * 30, tmt1_c=80) == ()  # not read: not known to be hot
    assert detect_throttles(mbps, [95.0] * 30) == ()  # no threshold known


def test_heat_that_comes_after_the_drop_began_did_not_cause_it():
    temps = [70.0] * 24 + [85.0] * 6  # 80 °C only at the drop's fifth second
    assert detect_throttles(series(30, drop=(20, 30, 1000.0)), temps, tmt1_c=80) == ()
    temps = [70.0] * 19 + [85.0] * 11  # the second before the drop counts
    assert len(detect_throttles(series(30, drop=(20, 30, 1000.0)), temps, tmt1_c=80)) == 1


def test_after_a_cold_drop_a_thermal_drop_is_measured_from_the_new_level():
    # The SLC cache runs out at 20 s (3000 -> 1000 MB/s, cold); heat at 40 s halves 1000.
    mbps = series(60, native=(20, 60, 1000.0), throttled=(40, 45, 500.0))
    temps = [45.0] * 39 + [82.0] * 21
    (event,) = detect_throttles(mbps, temps, tmt1_c=80)
    assert (event.start_s, event.length_s, event.mbps_before, event.mbps_during) == (40, 5, 1000.0, 500.0)


def test_noise_is_no_event():
    rng = random.Random(7)
    mbps = [FAST * rng.uniform(0.88, 1.12) for _ in range(600)]
    for k in rng.sample(range(0, 600, 5), 40):  # lone slow seconds, and pairs, never three in a row
        mbps[k] = FAST * 0.4
        mbps[min(k + 1, 599)] *= rng.choice((1.0, 0.5))
    assert detect_throttles(mbps, [90.0] * 600, tmt1_c=80) == ()


def test_a_transition_counter_rise_without_threshold_temperature():
    counters = [3] * 21 + [4] * 9  # TMT1 transitions went from 3 to 4 in second 21
    rises = transition_seconds(counters)
    assert rises == (21,)
    (event,) = detect_throttles(series(30, drop=(20, 26, 1200.0)), [72.0] * 30, tmt1_c=80, transition_s=rises)
    assert (event.start_s, event.length_s, event.threshold) == (20, 6, "transition counter")
    # known transition times work the same way, and a rise long after the drop began does not
    assert len(detect_throttles(series(30, drop=(20, 26, 1200.0)), [None] * 30, transition_s=[19.6])) == 1
    assert detect_throttles(series(30, drop=(20, 26, 1200.0)), [None] * 30, transition_s=[24.0]) == ()


def test_transition_seconds_across_unread_seconds():
    assert transition_seconds([None, 0, None, None, 2, 2, None, 3]) == (4, 7)
    assert transition_seconds([]) == ()


def test_no_drop_is_looked_for_before_a_reference_exists():
    assert detect_throttles([FAST, 500.0, 500.0, 500.0, 500.0], [95.0] * 5, tmt1_c=80) == ()


def test_short_temperature_series_are_padded_and_long_ones_cut():
    mbps = series(30, drop=(20, 26, 1500.0))
    assert detect_throttles(mbps, [85.0] * 10, tmt1_c=80) == ()
    assert len(detect_throttles(mbps[:26], [85.0] * 40, tmt1_c=80)) == 1


throughputs = st.lists(st.floats(0, 8000, allow_nan=False), max_size=80)
temperatures = st.lists(st.one_of(st.none(), st.floats(20, 110, allow_nan=False)), max_size=90)
limits = st.one_of(st.none(), st.floats(60, 100, allow_nan=False))


@settings(max_examples=300, deadline=None)
@given(throughputs, temperatures, limits, limits, limits, st.lists(st.floats(0, 90), max_size=5))
def test_every_event_is_a_long_enough_and_deep_enough_drop(mbps, temps, tmt1, tmt2, wctemp, rises):
    events = detect_throttles(mbps, temps, tmt1_c=tmt1, tmt2_c=tmt2, wctemp_c=wctemp, transition_s=rises)
    previous_end = 0
    for event in events:
        seconds = mbps[event.start_s:event.start_s + event.length_s]
        assert event.length_s >= MIN_LENGTH_S and len(seconds) == event.length_s
        assert all(v <= DROP * event.mbps_before for v in seconds)
        assert event.mbps_during <= DROP * event.mbps_before * (1 + 1e-12)
        assert event.start_s >= previous_end
        previous_end = event.start_s + event.length_s
