"""Bandwidth logs -> per-second and per-GiB series, on synthetic logs of known truth
and on a recorded one."""


import pytest

from ssdlab.backends.fio import logs
from ssdlab.units import GiB, MiB
from tests.paths import GOLDEN_FIO as GOLDEN


def write_log(tmp_path, rows):
    path = tmp_path / "x_bw.1.log"
    path.write_text("".join(f"{t}, {v}, {d}, 0, 0\n" for t, v, d in rows))
    return path


def test_windows_sum_directions_and_integrate_kib_per_second(tmp_path):
    path = write_log(tmp_path, [(100, 1000, 0), (100, 500, 1), (200, 2000, 0), (200, 0, 1)])
    w = logs.read_windows(path)
    assert [x.end_s for x in w] == [0.1, 0.2]
    assert [x.nbytes for x in w] == [pytest.approx(1500 * 1024 * 0.1), pytest.approx(2000 * 1024 * 0.1)]


def test_calibration_matches_fio_totals_and_adds_the_unlogged_tail():
    windows = [logs.Window(0.5, 100.0), logs.Window(1.0, 100.0)]
    out = logs.calibrated(windows, total_bytes=500, busy_s=1.5)
    assert sum(w.nbytes for w in out) == pytest.approx(500)
    assert out[-1].end_s == 1.5


def test_per_second_points_cover_whole_and_partial_seconds():
    windows = [logs.Window(t / 10, 1e6) for t in range(1, 26)]  # 10 MB/s for 2.5 s
    points = logs.per_second(windows, bs=4096)
    assert [p.t_s for p in points] == [1.0, 2.0, 2.5]  # the last half second stands alone
    assert all(p.mbps == pytest.approx(10.0) for p in points)
    assert points[0].iops == pytest.approx(10e6 / 4096)


def test_per_gib_of_a_long_fill_is_one_point_per_gib_with_the_true_speeds():
    # 20 GiB at 2000 MB/s, then 12 GiB at 500 MB/s, logged every 0.1 s
    windows, t, written = [], 0.0, 0
    for rate, gib in ((2000e6, 20), (500e6, 12)):
        end = written + gib * GiB
        while written < end:
            chunk = min(rate * 0.1, end - written)
            t += chunk / rate
            written += chunk
            windows.append(logs.Window(t, chunk))
    points = logs.per_gib(windows)
    assert [p.gib for p in points] == [float(g) for g in range(1, 33)]
    assert all(p.mbps == pytest.approx(2000, rel=1e-6) for p in points[:20])
    assert all(p.mbps == pytest.approx(500, rel=1e-6) for p in points[20:])


def test_a_short_fill_gets_sixteen_segments_of_whole_mib():
    assert logs.segment_bytes(1 * GiB) == 64 * MiB
    assert logs.segment_bytes(16 * GiB) == GiB
    assert logs.segment_bytes(100 * MiB) == 6 * MiB
    windows = [logs.Window((i + 1) / 100, GiB / 100) for i in range(100)]
    points = logs.per_gib(windows)
    assert len(points) == 16 and points[-1].gib == pytest.approx(1.0)


def test_recorded_fill_log_adds_up_to_what_fio_wrote():
    windows = logs.read_windows(GOLDEN / "seqwrite-qd32_bw.1.log")
    cal = logs.calibrated(windows, total_bytes=GiB, busy_s=0.329)
    points = logs.per_gib(cal)
    assert len(points) == 16 and points[-1].gib == pytest.approx(1.0)
    seconds = sum(64 * MiB / (p.mbps * 1e6) for p in points)
    assert seconds == pytest.approx(0.329, rel=1e-6)


def test_a_window_across_a_second_boundary_is_shared_and_a_short_tail_joins_the_last_second():
    windows = [logs.Window(0.95, 0.95e6), logs.Window(1.05, 0.1e6)]  # 1 MB/s throughout
    points = logs.per_second(windows, bs=4096)
    assert [p.t_s for p in points] == [1.05]
    assert points[0].mbps == pytest.approx(1.0)
    windows = [logs.Window(t / 10, 0.1e6) for t in range(1, 18)]
    points = logs.per_second(windows, bs=4096)
    assert [p.t_s for p in points] == [1.0, 1.7] and all(p.mbps == pytest.approx(1.0) for p in points)


def test_a_short_run_is_timed_by_its_completion_rate_inside_fios_millisecond():
    # 100 I/Os completing evenly over 2.5 ms: 40 in each whole ms, 20 in the last half;
    # fio's runtime says 3 ms (rounded up)
    done = [logs.Completion(i * 25 // 1000, 4096) for i in range(100)]
    assert [c.t_ms for c in done].count(0) == 40 and max(c.t_ms for c in done) == 2
    assert logs.busy_from_completions(done, 0.003) == pytest.approx(0.0025)
    # the job's start in its first millisecond changes nothing: the rate is the later ms's
    assert logs.busy_from_completions(done[10:], 0.003) == pytest.approx(0.0025)
    # kept inside fio's millisecond; all in one millisecond: fio's own figure
    assert logs.busy_from_completions(done, 0.0024) == pytest.approx(0.0024)
    assert logs.busy_from_completions(done[:10], 0.001) == 0.001
    assert logs.busy_from_completions([], 0.004) == 0.004
    windows = logs.completion_windows(done)
    assert [w.end_s for w in windows] == [0.001, 0.002, 0.003]
    assert [w.nbytes for w in windows] == [40 * 4096, 40 * 4096, 20 * 4096]
