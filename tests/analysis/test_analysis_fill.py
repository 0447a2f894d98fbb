"""Whole-drive-fill analysis against synthetic curves whose truth is known."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.fill_analysis_accuracy import GB_IN_GIB, FillShape, cache_tolerance_gib, random_shape, synthetic_fill
from ssdlab.analysis.fill import analyze_fill
from ssdlab.model import GibPoint

GiB = 1 << 30


def points(pairs):
    return [GibPoint(gib=g, mbps=m) for g, m in pairs]


def kinds(analysis):
    return [p.kind for p in analysis.phases]


def assert_cache_found(shape, analysis):
    assert analysis.slc_cache_gib is not None, analysis.finding
    assert abs(analysis.slc_cache_gib - shape.cache_gib) <= cache_tolerance_gib(shape.cache_gib)
    assert analysis.phases[0].kind == "cache"
    assert analysis.phases[0].end_gib == analysis.slc_cache_gib == analysis.phases[1].start_gib


def test_means_are_bytes_over_time_and_phases_split_at_the_drop():
    series = points([(g, 3000.0) for g in range(1, 21)] + [(g, 1000.0) for g in range(21, 37)])
    analysis = analyze_fill(series)
    overall = 36 * GiB / (20 * GiB / 3e9 + 16 * GiB / 1e9) / 1e6
    assert analysis.to_json() == {
        "slc_cache_gib": 20.0,
        "phases": [{"start_gib": 0.0, "end_gib": 20.0, "mean_mbps": 3000.0, "kind": "cache"},
                   {"start_gib": 20.0, "end_gib": 36.0, "mean_mbps": 1000.0, "kind": "native"}],
        "last16_mbps": 1000.0,
        "mean_mbps": round(overall, 2),
        "finding": analysis.finding,
    }
    assert analysis.mean_mbps == pytest.approx(overall, rel=1e-12)
    assert "20 GiB" in analysis.finding and "3.0x slower" in analysis.finding


def test_uneven_segments_weigh_by_their_size():
    # A partial last segment, as at the end of a whole-drive fill (465.66 GiB on 500 GB).
    series = points([(1.0, 2000.0), (2.0, 2000.0), (2.5, 500.0)])
    analysis = analyze_fill(series)
    assert analysis.mean_mbps == pytest.approx(2.5 / (2 / 2000 + 0.5 / 500), rel=1e-12)
    assert analysis.last16_mbps == pytest.approx(analysis.mean_mbps, rel=1e-12)


def test_small_scale_series_of_sixteen_segments():
    segment = 1 / 16
    shape = FillShape(capacity_gib=1.0, cache_gib=6 * segment, cache_mbps=2000, native_mbps=500,
                      segment_gib=segment, seed=3)
    series = synthetic_fill(shape)
    analysis = analyze_fill(series)
    assert len(series) == 16
    assert analysis.slc_cache_gib == pytest.approx(6 * segment)
    assert kinds(analysis) == ["cache", "native"]
    hand = 1.0 / sum(segment / p.mbps for p in series)
    assert analysis.mean_mbps == pytest.approx(hand, rel=1e-12)
    assert analysis.last16_mbps == pytest.approx(hand, rel=1e-12)  # the whole fill is < 16 GiB
    cache_hand = 6 * segment / sum(segment / p.mbps for p in series[:6])
    assert analysis.phases[0].mean_mbps == pytest.approx(cache_hand, rel=1e-12)


def test_small_scale_two_segment_dip_is_not_the_drop():
    segment = 1 / 16
    shape = FillShape(capacity_gib=1.0, cache_gib=10 * segment, cache_mbps=3000, native_mbps=1000,
                      segment_gib=segment, dips=((3 * segment, 2 * segment),), seed=4)
    assert analyze_fill(synthetic_fill(shape)).slc_cache_gib == pytest.approx(10 * segment)


@pytest.mark.parametrize("segment_gib", [1.0, 1 / 16])
def test_a_flat_noisy_drive_has_no_cache(segment_gib):
    capacity = 1000 * GB_IN_GIB if segment_gib == 1.0 else 1.0
    shape = FillShape(capacity_gib=capacity, cache_gib=0, cache_mbps=900, native_mbps=900,
                      segment_gib=segment_gib, seed=11)
    analysis = analyze_fill(synthetic_fill(shape))
    assert analysis.slc_cache_gib is None and kinds(analysis) == ["native"]
    assert "no SLC cache" in analysis.finding
    assert analysis.to_json()["slc_cache_gib"] is None
    assert analysis.mean_mbps == pytest.approx(900, rel=0.02)


@pytest.mark.parametrize("shape", [
    FillShape(500 * GB_IN_GIB, 6, 3000, 1000, seed=1),
    FillShape(500 * GB_IN_GIB, 300, 2400, 1600, seed=2),  # 1.5x, cache is most of the drive
    FillShape(2000 * GB_IN_GIB, 300, 6000, 1000, seed=3),  # 6x
    FillShape(1000 * GB_IN_GIB, 37.5, 3500, 700, seed=4),  # ends inside a segment
    FillShape(2000 * GB_IN_GIB, 6.4, 5000, 2000, seed=5),
], ids=["6GiB-3x", "300GiB-1.5x", "300GiB-6x", "37.5GiB-5x", "6.4GiB-2.5x"])
def test_cache_size_across_drives_and_ratios(shape):
    analysis = analyze_fill(synthetic_fill(shape))
    assert_cache_found(shape, analysis)
    assert abs(analysis.slc_cache_gib - shape.cache_gib) <= 1.0  # within the boundary segment
    assert kinds(analysis) == ["cache", "native"]
    assert analysis.phases[0].mean_mbps == pytest.approx(shape.cache_mbps, rel=0.02)
    assert analysis.phases[1].mean_mbps == pytest.approx(shape.native_mbps, rel=0.02)


@pytest.mark.parametrize("bursts", [
    ((50, 1), (90, 3), (140, 2)), ((42, 3),), ((41, 1), (44, 1)),
    tuple((start, 3) for start in range(45, 100, 9)),  # would lift the native mean over a tail
], ids=["spread", "2-GiB-after-cache", "two-close-to-cache", "many-early"])
def test_recovery_bursts_stay_in_phase_2(bursts):
    shape = FillShape(1000 * GB_IN_GIB, 40, 4000, 800, bursts=bursts, seed=7)
    analysis = analyze_fill(synthetic_fill(shape))
    assert_cache_found(shape, analysis)
    assert kinds(analysis) == ["cache", "native"]
    assert analysis.phases[1].end_gib == pytest.approx(shape.capacity_gib)


@pytest.mark.parametrize("dips", [((20, 1),), ((12, 3),), ((10, 2), (30, 1))],
                         ids=["single-noisy-dip", "3-GiB-dip", "two-dips"])
def test_dips_inside_the_cache_are_not_the_drop(dips):
    shape = FillShape(500 * GB_IN_GIB, 60, 3300, 1100, dips=dips, seed=8)
    assert_cache_found(shape, analyze_fill(synthetic_fill(shape)))


def test_phase_3_dip_and_creep_near_full():
    capacity = 2000 * GB_IN_GIB
    shape = FillShape(capacity, 200, 5000, 1500, fold_gib=1600, fold_mbps=600,
                      bursts=((260, 2), (400, 3)), seed=9)
    analysis = analyze_fill(synthetic_fill(shape))
    assert_cache_found(shape, analysis)
    assert kinds(analysis) == ["cache", "native", "folding"]
    native, folding = analysis.phases[1:]
    assert folding.start_gib == pytest.approx(1600, abs=2) and folding.end_gib == capacity
    assert native.end_gib == folding.start_gib
    assert folding.mean_mbps < 0.7 * native.mean_mbps
    assert "folds" in analysis.finding


def test_a_wandering_native_speed_is_neither_the_drop_nor_folding():
    shape = FillShape(500 * GB_IN_GIB, 24, 3000, 1500, native_swing=0.35, seed=10)
    analysis = analyze_fill(synthetic_fill(shape))
    assert_cache_found(shape, analysis)
    assert kinds(analysis) == ["cache", "native"]


def test_the_threshold_is_levelled_on_the_whole_cache_not_its_start():
    # The first 4 GiB a little fast (H/sqrt(1.5) from them is 2743 MB/s), then 4 GiB at
    # 2730 MB/s inside a 3000 MB/s cache: a drop for the start, noise for the whole cache.
    mbps = [3360.0] * 4 + [3000.0] * 10 + [2730.0] * 4 + [3000.0] * 22 + [1000.0] * 40
    analysis = analyze_fill(points(zip(range(1, 81), mbps)))
    assert analysis.slc_cache_gib == 40.0


def test_a_drop_that_does_not_last_is_no_cache():
    # 3 slow GiB at the very end: too short to call sustained.
    series = points([(g, 2000.0) for g in range(1, 41)] + [(g, 500.0) for g in range(41, 44)])
    assert analyze_fill(series).slc_cache_gib is None


@st.composite
def shapes(draw):
    return random_shape(lambda a, b: draw(st.floats(a, b)), lambda a, b: draw(st.integers(a, b)))


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(shapes())
def test_property_cache_estimate_within_tolerance_and_phases_in_order(shape):
    analysis = analyze_fill(synthetic_fill(shape))
    if not shape.cache_gib:
        assert analysis.slc_cache_gib is None and kinds(analysis) == ["native"]
        return
    assert_cache_found(shape, analysis)
    expected = ["cache", "native"] + (["folding"] if shape.fold_gib else [])
    assert kinds(analysis) == expected
    if shape.fold_gib:
        assert analysis.phases[2].start_gib == pytest.approx(shape.fold_gib, abs=2)
    ends = [p.end_gib for p in analysis.phases]
    assert ends == sorted(ends) and ends[-1] == pytest.approx(shape.capacity_gib)


def test_bad_series_are_refused():
    with pytest.raises(ValueError, match="at least one point"):
        analyze_fill([])
    with pytest.raises(ValueError, match="must increase"):
        analyze_fill(points([(2.0, 100.0), (1.0, 100.0)]))
    with pytest.raises(ValueError, match="greater than 0"):
        analyze_fill(points([(1.0, 100.0), (2.0, 0.0)]))
