"""Scores of the lab and enterprise tests on synthetic results: every reported figure
per state, case and block size."""

import pytest

from ssdlab.catalogue import Scale, lookup
from ssdlab.model import DirectionResult, Op, Phase, SecondPoint, StepResult
from tests.factories import latency, result


def measured_steps(test_id):
    return [s for s in lookup(test_id).compile(Scale(1), 10**12).steps if s.phase is Phase.MEASURE]


def curve(values, bs=128 * 1024):
    return tuple(SecondPoint(t_s=i + 1.0, mbps=v, iops=v * 1e6 / bs) for i, v in enumerate(values))


def with_curve(r, values, bs):
    return r.model_copy(update={"per_second": curve(values, bs)})


def not_run():
    return StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=0, idle_s=0, engine="io_uring",
                      notes=("not run: the target refused 512 B direct I/O (EINVAL)",))


def test_seq_write_states_mbps_per_state_with_curve_stability():
    steps = measured_steps("seq-write-states")
    results = [with_curve(result(mbps=m, bs=131072, direction="write"), c, 131072)
               for m, c in ((3000, [3000, 3000]), (1000, [500, 1500]), (2500, [2500, 2500]))]
    score = lookup("seq-write-states").score(list(zip(steps, results)))
    assert score["unit"] == "MB/s" and score["value"] == pytest.approx(6500 / 3, abs=0.01)
    assert list(score["by_state"]) == ["10% filled", "90% filled", "full, half trimmed"]
    nearly_full = score["by_state"]["90% filled"]
    assert nearly_full["mbps"] == pytest.approx(1000, rel=1e-3)
    assert nearly_full["stability"]["min"] == 500 and nearly_full["stability"]["max"] == 1500
    assert nearly_full["stability"]["cov"] == pytest.approx(0.5)
    assert nearly_full["stability"]["curve"] == [[1.0, 500.0], [2.0, 1500.0]]
    assert score["by_state"]["10% filled"]["stability"]["cov"] == 0


def test_rand_write_states_in_k_iops():
    steps = measured_steps("rand-write-states")
    results = [result(mbps=m, bs=4096, direction="write") for m in (400.0, 40.0, 400.0)]
    score = lookup("rand-write-states").score(list(zip(steps, results)))
    assert score["unit"] == "K IOPS"
    kiops = [s["kiops"] for s in score["by_state"].values()]
    assert kiops == pytest.approx([97.656, 9.766, 97.656], abs=1e-3)
    assert score["value"] == pytest.approx(sum(kiops) / 3, abs=1e-3)
    assert score["by_state"]["90% filled"]["stability"]["mean"] == pytest.approx(9.766, abs=1e-3)


def test_trim_score_has_ops_latencies_and_the_writes_around_it():
    before_step, trim_step, after_step = measured_steps("trim")
    trim = StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=2.0, idle_s=0, engine="sim",
                      trim=DirectionResult(ios=100, bytes=100 * 64 << 20, busy_s=2.0,
                                           latency=latency([10_000_000] * 99 + [80_000_000])))
    score = lookup("trim").score([(before_step, result(mbps=800, bs=131072, direction="write")),
                                  (trim_step, trim),
                                  (after_step, result(mbps=2400, bs=131072, direction="write"))])
    assert (score["value"], score["unit"]) == (50.0, "ops/s")
    assert score["trim_ops"] == 100 and score["trim_range_bytes"] == 64 << 20
    assert score["trim_mean_ms"] == pytest.approx(10.7) and score["trim_max_ms"] == 80.0
    assert score["write_before_mbps"] == pytest.approx(800, rel=1e-3)
    assert score["write_after_mbps"] == pytest.approx(2400, rel=1e-3)
    assert score["after_over_before"] == pytest.approx(3.0, rel=1e-3)


def test_max_write_latency_per_case_with_a_case_that_could_not_run():
    steps = measured_steps("max-write-latency")
    results = [result(direction="write"), result(direction="write"), not_run(),
               result(direction="write"), result(direction="write")]
    mix = results[4]
    results[4] = mix.model_copy(update={"read": DirectionResult(
        ios=10, bytes=40960, busy_s=1.0, latency=latency([5_000_000]))})
    results[1] = results[1].model_copy(update={"write": results[1].write.model_copy(
        update={"latency": latency([10_000, 2_500_000])})})
    score = lookup("max-write-latency").score(list(zip(steps, results)))
    assert score["unit"] == "ms" and score["value"] == 2.5   # the 5 ms read of the mix does not count
    cases = score["by_case"]
    assert list(cases) == ["light load 10 IOPS 4 KiB", "4 KiB QD1", "512 B QD1 at 10% filled",
                           "512 B QD1 at 50% filled", "4 KiB 70/30 mix at 90% filled"]
    assert cases["light load 10 IOPS 4 KiB"]["rate_iops"] == 10
    assert cases["light load 10 IOPS 4 KiB"]["max_ms"] == 0.09
    assert cases["512 B QD1 at 10% filled"]["measured"] is False
    assert "EINVAL" in cases["512 B QD1 at 10% filled"]["notes"][0]
    assert cases["4 KiB 70/30 mix at 90% filled"]["fill_state"] == "90% filled"


@pytest.mark.parametrize("test_id, direction", [("qos-rand-read-qd1", "read"),
                                                ("qos-rand-write-qd1", "write")])
def test_qos_iops_mean_p99_and_p99_99(test_id, direction):
    step, = measured_steps(test_id)
    values = [80_000] * 9_900 + [200_000] * 90 + [1_000_000] * 9 + [5_000_000]
    r = StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=1.0, idle_s=0, engine="sim",
                   **{direction: DirectionResult(ios=10_000, bytes=10_000 * 4096, busy_s=1.0,
                                                 latency=latency(values))})
    score = lookup(test_id).score([(step, r)])
    assert (score["value"], score["unit"]) == (10_000.0, "IOPS")
    assert score["p99_us"] == 80.0 and score["p99_99_us"] == 1000.0 and score["max_us"] == 5000.0
    assert score["mean_us"] == pytest.approx(sum(values) / len(values) / 1e3, abs=0.01)
    assert score["ios"] == 10_000 and score["beyond_p99_99"] == 1


def test_qd1_sequential_mbps():
    step, = measured_steps("qd1-seq-read")
    score = lookup("qd1-seq-read").score([(step, result(mbps=1500, bs=131072))])
    assert (score["value"], score["unit"]) == (1500.0, "MB/s") and score["mean_lat_us"] > 0


def test_bs_sweep_per_pattern_per_block_size():
    steps = measured_steps("bs-sweep")
    results = [not_run() if s.bs == 512 else
               result(mbps=s.bs / 1024, bs=s.bs, direction="read" if s.rw in (Op.READ, Op.RANDREAD) else "write")
               for s in steps]
    score = lookup("bs-sweep").score(list(zip(steps, results)))
    assert set(score["by_pattern"]) == {"randread", "read", "randwrite", "write"}
    assert score["block_sizes"] == [512 << k for k in range(12)]
    for points in score["by_pattern"].values():
        assert list(points) == [str(512 << k) for k in range(12)]
        assert points["512"]["measured"] is False
        assert points["4096"]["mbps"] == pytest.approx(4.0, rel=1e-3)
        assert points["4096"]["iops"] == pytest.approx(4e6 / 4096, rel=1e-3)
    ran = [s.bs / 1024 for s in steps if s.bs != 512]
    assert score["value"] == pytest.approx(sum(ran) / len(ran), rel=1e-3) and score["unit"] == "MB/s"
