"""Primary scores as METHODOLOGY.md defines them."""

import pytest

from ssdlab.catalogue import Scale, lookup
from ssdlab.model import Phase
from tests.factories import result

GiB = 1 << 30


def measured_steps(test_id):
    return [s for s in lookup(test_id).compile(Scale(1), 10**12).steps if s.phase is Phase.MEASURE]


def test_sustained_score_is_the_mean_of_qd1_qd2_qd4():
    steps = measured_steps("rand-read-sustained")
    rates = [100, 200, 600, 1000, 1000, 1000]
    score = lookup("rand-read-sustained").score([(s, result(mbps=r)) for s, r in zip(steps, rates)])
    assert score["value"] == pytest.approx(300, rel=1e-3)
    assert score["unit"] == "MB/s" and set(score["by_qd"]) == {"1", "2", "4", "8", "16", "32"}


def test_mixed_score_is_the_mean_over_the_eleven_mixes():
    steps = measured_steps("mixed-random")
    score = lookup("mixed-random").score([(s, result(mbps=10.0 * i)) for i, s in enumerate(steps)])
    assert score["value"] == pytest.approx(50.0, rel=1e-3)
    assert score["curve"]["100"] == pytest.approx(0.0, abs=0.01) and len(score["curve"]) == 11


def test_fill_score_overall_and_last_16_gib_are_bytes_over_time():
    step, = measured_steps("whole-drive-fill")
    series = [(g, 3000.0) for g in range(1, 21)] + [(g, 1000.0) for g in range(21, 37)]
    nbytes = 36 * GiB
    busy = 20 * GiB / 3e9 + 16 * GiB / 1e9
    res = result(mbps=nbytes / busy / 1e6, busy_s=busy, direction="write", per_gib=series)
    score = lookup("whole-drive-fill").score([(step, res)])
    assert score["last16_mbps"] == pytest.approx(1000.0)
    assert score["value"] == pytest.approx(nbytes / busy / 1e6, rel=1e-3)
