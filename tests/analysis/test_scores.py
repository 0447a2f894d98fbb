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
    assert score["slc_cache_gib"] == pytest.approx(20.0)
    assert [p["kind"] for p in score["phases"]] == ["cache", "native"]
    assert "mbps_per_w" not in score  # no energy, no efficiency


def test_efficiency_is_megabytes_and_kilo_ios_per_joule_when_energy_is_known():
    steps = measured_steps("rand-read-sustained")
    # 100 MB/s for 1 s at 4 W: 25 MB/s per W, 24414 I/Os -> 6.1 kIOPS per W.
    results = [result(mbps=100.0).model_copy(update={"energy_j": 4.0}) for _ in steps]
    score = lookup("rand-read-sustained").score(list(zip(steps, results)))
    ios = results[0].ios
    assert score["mbps_per_w"] == pytest.approx(25.0)
    assert score["kiops_per_w"] == pytest.approx(ios / 1e3 / 4.0, rel=1e-3)
    assert score["by_qd"]["32"]["mbps_per_w"] == pytest.approx(25.0)
    assert results[0].watts == pytest.approx(4.0)
    assert results[0].summary()["mbps_per_w"] == pytest.approx(25.0)


def test_efficiency_is_left_out_when_any_result_lacks_energy():
    steps = measured_steps("rand-read-sustained")
    results = [result(mbps=100.0) for _ in steps]
    results[0] = results[0].model_copy(update={"energy_j": 4.0})
    score = lookup("rand-read-sustained").score(list(zip(steps, results)))
    assert "mbps_per_w" not in score and "kiops_per_w" not in score


def test_fill_score_without_a_series_is_still_recorded():
    step, = measured_steps("whole-drive-fill")
    score = lookup("whole-drive-fill").score([(step, result(direction="write"))])
    assert score["slc_cache_gib"] is None and score["phases"] == [] and score["last16_mbps"] == 0
