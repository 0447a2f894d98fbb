"""The lab suite (METHODOLOGY.md section 2) and the enterprise QD1 suite (section 3)
compile to exactly their steps, at scale 1 and at a small scale; Step's new fields."""

import json

import pytest
from pydantic import ValidationError

from ssdlab.catalogue import Scale, lookup
from ssdlab.catalogue.estimate import step_seconds
from ssdlab.catalogue.states import MIN_REGION, TRIM_RANGE
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, Step
from ssdlab.model.steps import UNLIMITED_BYTES
from ssdlab.suites import load_suite
from ssdlab.units import GiB, KiB, MiB
from tests.conftest import run_cli

TB = 10**12
REGION = TB // MiB * MiB                  # the whole drive, in whole MiB
TRIMMED = REGION // 2 // TRIM_RANGE * TRIM_RANGE
KEPT = REGION - TRIMMED
PURGE_SIZE = TB // (128 * KiB) * 128 * KiB


def compiled(test_id, scale=1.0, capacity=TB):
    return lookup(test_id).compile(Scale(scale), capacity)


def measured(test):
    return [s for s in test.steps if s.phase is Phase.MEASURE]


def filled(fraction, region=REGION):
    return region if fraction == 1 else int(region * fraction) // MiB * MiB


def shape(steps):
    """(phase, rw, bs, iodepth, offset, size) of every step."""
    return [(s.phase, s.rw, s.bs, s.iodepth, s.offset, s.size) for s in steps]


P, F, M = Phase.PURGE, Phase.PRECONDITION, Phase.MEASURE
W128 = (Op.WRITE, 128 * KiB, 32)


def state_steps(fraction, region=REGION, purge_size=PURGE_SIZE, trim=False):
    steps = [(P, Op.TRIM, 128 * KiB, 1, 0, purge_size), (F, *W128, 0, filled(fraction, region))]
    if trim:
        trimmed = region // 2 // TRIM_RANGE * TRIM_RANGE
        steps.append((F, Op.TRIM, TRIM_RANGE, 1, region - trimmed, trimmed))
    return steps


def test_the_suites_list_their_tests_in_methodology_order():
    assert load_suite("lab")[0].tests == ("seq-write-states", "rand-write-states", "trim",
                                          "max-write-latency")
    assert load_suite("enterprise")[0].tests == ("qos-rand-read-qd1", "qos-rand-write-qd1",
                                                 "qd1-seq-read", "qd1-seq-write", "bs-sweep")


@pytest.mark.parametrize("test_id, rw, bs", [("seq-write-states", Op.WRITE, 128 * KiB),
                                             ("rand-write-states", Op.RANDWRITE, 4 * KiB)])
def test_state_tests_at_scale_1_reach_each_state_from_a_purge(test_id, rw, bs):
    test = compiled(test_id)
    m = (M, rw, bs, 32)
    assert shape(test.steps) == [
        *state_steps(0.1), (*m, 0, filled(0.1)),
        *state_steps(0.9), (*m, 0, filled(0.9)),
        *state_steps(1.0, trim=True), (*m, 0, KEPT)]
    steps = measured(test)
    assert [s.fill_state for s in steps] == ["10% filled", "90% filled", "full, half trimmed"]
    for s in steps:
        assert (s.runtime, s.time_based, s.io_size, s.rate_iops, s.burst_bytes, s.idle_after) == (
            60.0, True, None, None, None, 0)
    assert filled(0.1) == 95367 * MiB and TRIMMED == 476800 * MiB


def test_trim_test_at_scale_1():
    test = compiled("trim")
    assert shape(test.steps) == [
        *state_steps(1.0),
        (M, *W128, 0, KEPT), (M, Op.TRIM, 64 * MiB, 1, KEPT, TRIMMED), (M, *W128, 0, KEPT)]
    before, trim, after = measured(test)
    assert [s.fill_state for s in (before, trim, after)] == ["full", "full", "full, half trimmed"]
    assert trim.runtime is None and trim.io_size is None and trim.bytes_limit == TRIMMED
    assert (before.runtime, before.time_based) == (after.runtime, after.time_based) == (60.0, True)
    assert trim.time_based is False


def test_max_write_latency_at_scale_1_has_the_five_cases():
    test = compiled("max-write-latency")
    assert shape(test.steps) == [
        *state_steps(0.1),
        (M, Op.RANDWRITE, 4 * KiB, 1, 0, filled(0.1)),
        (M, Op.RANDWRITE, 4 * KiB, 1, 0, filled(0.1)),
        (M, Op.RANDWRITE, 512, 1, 0, filled(0.1)),
        *state_steps(0.5), (M, Op.RANDWRITE, 512, 1, 0, filled(0.5)),
        *state_steps(0.9), (M, Op.RANDRW, 4 * KiB, 1, 0, filled(0.9))]
    light, qd1, b512_10, b512_50, mix = measured(test)
    assert (light.rate_iops, light.runtime, light.io_size, light.time_based) == (10, 60.0, None, True)
    for s in (qd1, b512_10, b512_50, mix):
        assert s.rate_iops is None and (s.runtime, s.io_size, s.time_based) == (60.0, None, True)
    assert mix.rwmixread == 70
    assert [s.fill_state for s in measured(test)] == ["10% filled"] * 3 + ["50% filled", "90% filled"]


@pytest.mark.parametrize("test_id, rw, bs, runtime, io_size", [
    ("qos-rand-read-qd1", Op.RANDREAD, 4 * KiB, 120.0, 10**6 * 4 * KiB),
    ("qos-rand-write-qd1", Op.RANDWRITE, 4 * KiB, 120.0, 10**6 * 4 * KiB),
    ("qd1-seq-read", Op.READ, 128 * KiB, 60.0, 32 * GiB),
    ("qd1-seq-write", Op.WRITE, 128 * KiB, 60.0, 32 * GiB),
])
def test_enterprise_single_tests_at_scale_1(test_id, rw, bs, runtime, io_size):
    test = compiled(test_id)
    assert shape(test.steps) == [*state_steps(1.0), (M, rw, bs, 1, 0, REGION)]
    step = test.steps[-1]
    assert (step.runtime, step.io_size, step.fill_state) == (runtime, io_size, "full")
    assert io_size // bs >= 10**6 or "qos" not in test_id


def test_bs_sweep_at_scale_1_has_48_points():
    test = compiled("bs-sweep")
    sizes = [512 << k for k in range(12)]
    assert sizes[0] == 512 and sizes[-1] == MiB and len(sizes) == 12
    assert shape(test.steps[:2]) == state_steps(1.0)
    steps = measured(test)
    assert [(s.rw, s.bs) for s in steps] == [(rw, bs) for rw in (Op.RANDREAD, Op.READ, Op.RANDWRITE, Op.WRITE)
                                             for bs in sizes]
    for s in steps:
        assert (s.iodepth, s.offset, s.size, s.runtime, s.io_size, s.fill_state) == (
            1, 0, REGION, 20.0, 8 * GiB, "full")
    assert len({s.label for s in steps}) == 48


SMALL = 16 * 10**9   # the small-tlc preset


@pytest.mark.parametrize("scale", [0.01, 0.001])
def test_a_small_scale_shrinks_the_region_spans_and_limits_but_not_blocks_or_rates(scale):
    region = GiB          # max(capacity x F, 1 GiB) in whole MiB
    purge_size = SMALL // (128 * KiB) * 128 * KiB
    runtime = max(60 * scale, 1.0)
    states = compiled("seq-write-states", scale, SMALL)
    kept = region - region // 2 // TRIM_RANGE * TRIM_RANGE
    assert shape(states.steps) == [
        *state_steps(0.1, region, purge_size), (M, *W128, 0, 102 * MiB),
        *state_steps(0.9, region, purge_size), (M, *W128, 0, 921 * MiB),
        *state_steps(1.0, region, purge_size, trim=True), (M, *W128, 0, kept)]
    assert kept == 512 * MiB
    for s in measured(states):
        assert s.runtime == pytest.approx(runtime) and s.time_based and s.io_size is None
    trim = [s for s in measured(compiled("trim", scale, SMALL)) if s.rw is Op.TRIM][0]
    assert (trim.bs, trim.offset, trim.size) == (64 * MiB, 512 * MiB, 512 * MiB)
    light, *_ = measured(compiled("max-write-latency", scale, SMALL))
    assert (light.rate_iops, light.runtime, light.io_size) == (10, pytest.approx(runtime), None)
    sweep = measured(compiled("bs-sweep", scale, SMALL))
    assert sorted({s.bs for s in sweep}) == [512 << k for k in range(12)]
    assert {s.iodepth for s in sweep} == {1} and {s.size for s in sweep} == {region}
    assert {s.runtime for s in sweep} == {max(20 * scale, 1.0)}
    qos = measured(compiled("qos-rand-read-qd1", scale, SMALL))[0]
    assert qos.io_size == max(int(4_096_000_000 * scale) // 4096 * 4096, 64 * MiB)


def test_a_scaled_region_is_a_share_of_a_large_drive():
    steps = measured(compiled("rand-write-states", 0.1, TB))
    region = int(TB * 0.1) // MiB * MiB
    assert steps[0].size == int(region * 0.1) // MiB * MiB and steps[1].size == int(region * 0.9) // MiB * MiB


def test_too_small_a_target_is_refused_clearly():
    for test_id in ("seq-write-states", "trim", "max-write-latency", "bs-sweep", "qos-rand-read-qd1"):
        with pytest.raises(SsdlabError, match=r"at least 256 MiB .* holds 128 MiB"):
            compiled(test_id, 0.01, 128 * MiB)
    assert measured(compiled("trim", 0.01, MIN_REGION))[1].size == 2 * TRIM_RANGE


def test_step_new_fields_are_validated_and_old_records_still_load():
    with pytest.raises(ValidationError):
        Step(label="x", rw=Op.RANDWRITE, bs=4096, size=MiB, rate_iops=0)
    with pytest.raises(ValidationError, match="rate_iops and bursts"):
        Step(label="x", rw=Op.RANDWRITE, bs=4096, size=MiB, io_size=MiB, burst_bytes=MiB // 4,
             duty_cycle=0.5, rate_iops=10)
    with pytest.raises(ValidationError):
        Step(label="x", rw=Op.WRITE, bs=4096, size=MiB, fill_state="")
    with pytest.raises(ValidationError, match="purge"):
        Step(label="p", phase=Phase.PURGE, rw=Op.TRIM, bs=4096, size=MiB, fill_state="full")
    old = '{"label":"QD1","phase":"measure","rw":"randread","bs":4096,"iodepth":1,"rwmixread":null,' \
          '"offset":0,"size":1048576,"runtime":1.0,"io_size":null,"burst_bytes":null,' \
          '"duty_cycle":null,"idle_after":0.0,"per_gib_series":false}'
    step = Step.model_validate_json(old)
    assert step.rate_iops is None and step.fill_state is None
    light = Step(label="l", rw=Op.RANDWRITE, bs=4096, size=GiB, runtime=60.0, rate_iops=10,
                 fill_state="10% filled")
    assert "at 10 IOPS" in light.describe() and "[10% filled]" in light.describe()


def test_a_time_based_step_runs_for_its_runtime_whatever_the_bytes():
    with pytest.raises(ValidationError, match="time-based step needs a runtime and no io_size"):
        Step(label="x", rw=Op.WRITE, bs=4096, size=MiB, time_based=True)
    with pytest.raises(ValidationError, match="time-based step needs a runtime and no io_size"):
        Step(label="x", rw=Op.WRITE, bs=4096, size=MiB, runtime=60.0, io_size=MiB, time_based=True)
    minute = Step(label="m", rw=Op.WRITE, bs=128 * KiB, size=GiB, runtime=60.0, time_based=True)
    assert minute.bytes_limit == UNLIMITED_BYTES and step_seconds(minute) == 60.0
    assert "(60 s, time-based)" in minute.describe()


def test_estimates_of_rate_limited_and_trim_steps():
    light = Step(label="l", rw=Op.RANDWRITE, bs=4096, size=GiB, runtime=60.0, rate_iops=10)
    assert step_seconds(light) == 60.0                       # io / rate = 26214 s > runtime
    short = Step(label="s", rw=Op.RANDWRITE, bs=4096, size=GiB, io_size=4096 * 100, rate_iops=10)
    assert step_seconds(short) == pytest.approx(10.0)        # 100 I/Os at 10 IOPS
    trim = Step(label="t", rw=Op.TRIM, bs=64 * MiB, size=500 * 10**9)
    assert 1 < step_seconds(trim) < 100


def test_dry_run_json_shows_the_new_fields_and_an_estimate():
    proc = run_cli("run", "sim:wd-sn850-1tb", "--suite", "lab", "--dry-run", "--json")
    doc = json.loads(proc.stdout)
    assert doc["capacity"] == 10**12 and [t["id"] for t in doc["tests"]] == list(load_suite("lab")[0].tests)
    light = doc["tests"][3]["steps"][2]
    assert light["rate_iops"] == 10 and light["fill_state"] == "10% filled" and light["rw"] == "randwrite"
    trim = doc["tests"][2]["steps"][3]
    assert trim["rw"] == "trim" and trim["bs"] == 64 * MiB and trim["phase"] == "measure"
    assert 30 * 60 < doc["estimated_seconds"] < 90 * 60
    ent = json.loads(run_cli("run", "sim:wd-sn850-1tb", "--suite", "enterprise", "--dry-run", "--json").stdout)
    assert len(ent["tests"][-1]["steps"]) == 2 + 48 and 20 * 60 < ent["estimated_seconds"] < 90 * 60
