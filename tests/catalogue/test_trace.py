"""The trace test (catalogue/trace.py): each trace replayed on an empty and on a full drive,
its options, its figures, and the prepared traces kept between runs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ssdlab import session
from ssdlab.backends import sim
from ssdlab.catalogue import Scale, compile_tests
from ssdlab.catalogue.trace import DEFAULT_TIMED_QD, DEFAULT_UNTIMED_QD, trace_plan
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, Step, TraceReplay
from ssdlab.presets import load_preset
from ssdlab.store import Store
from ssdlab.traces import fitting, prepared
from ssdlab.traces.fit import Prepared
from ssdlab.units import GiB
from tests.paths import SMALL_PRESET

T0 = 1_577_808_000_000_000


def alibaba(path, records=2000, seed=1, span=4 * GiB):
    """A bursty Alibaba trace: mostly small random reads and writes, some long gaps."""
    rng = random.Random(seed)
    t = T0
    with path.open("w") as out:
        for _ in range(records):
            t += rng.choice((5, 20, 100, 2000, 80_000))
            out.write(f"0,{rng.choice('RW')},{rng.randrange(span // 4096) * 4096},{4096 * rng.randrange(1, 9)},{t}\n")
    return path


def plan(*files, **options):
    given = dict(format_name=None, device=None, fit_offsets=None, block=None, idle_cap_ms=None, speed=None,
                 no_timing=False, iodepth=None) | options
    return trace_plan(tuple(str(f) for f in files), **given)


def test_each_trace_is_replayed_on_the_purged_drive_then_after_a_fill(tmp_path):
    a, b = alibaba(tmp_path / "a.csv"), alibaba(tmp_path / "b.csv", seed=2)
    (test,) = compile_tests(["trace"], Scale(0.5), 16 * GiB, trace=plan(a, b))
    shape = [(s.phase, s.fill_state, s.trace is not None) for s in test.steps]
    one = [(Phase.PURGE, None, False), (Phase.MEASURE, "empty", True), (Phase.PRECONDITION, None, False),
           (Phase.MEASURE, "full", True)]
    assert shape == one + one
    empty, fill, full = test.steps[1:4]
    assert fill.rw is Op.WRITE and fill.size == empty.size == 8 * GiB  # the whole drive, scaled
    assert empty.trace == full.trace and empty.trace.timed and empty.iodepth == DEFAULT_TIMED_QD
    assert empty.rw is Op.RANDRW and 40 <= empty.rwmixread <= 60
    assert [t["title"] for t in test.settings["traces"]] == ["a.csv", "b.csv"]
    assert test.settings["fit"] == "offsets wrapped into the target, gaps capped at 25 ms, aligned to 4 KiB"


def test_a_trace_is_prepared_once_per_file_fit_and_target(tmp_path, monkeypatch):
    trace = alibaba(tmp_path / "a.csv")
    compile_tests(["trace"], Scale(1.0), 16 * GiB, trace=plan(trace))
    monkeypatch.setattr(fitting, "_read", lambda *a: pytest.fail("prepared again"))
    (again,) = compile_tests(["trace"], Scale(1.0), 16 * GiB, trace=plan(trace))
    assert Prepared.of(Path(again.steps[1].trace.path)).duration_us > 0
    monkeypatch.undo()
    (other,) = compile_tests(["trace"], Scale(1.0), 16 * GiB, trace=plan(trace, fit_offsets="scale"))
    assert other.steps[1].trace.path != again.steps[1].trace.path


def test_untimed_replays_run_at_a_stated_depth(tmp_path):
    fields = plan(alibaba(tmp_path / "a.csv"), no_timing=True)
    assert (fields["timed"], fields["iodepth"]) == (False, DEFAULT_UNTIMED_QD)
    assert plan(alibaba(tmp_path / "a.csv"), no_timing=True, iodepth=4)["iodepth"] == 4


@pytest.mark.parametrize("options, says", [
    (dict(idle_cap_ms=-1), "--idle-cap-ms -1: give 0 (no cap)"),
    (dict(block=3000), "--trace-block 3000: give the target's logical block size, a power of two"),
    (dict(fit_offsets="fold"), "--trace-fit, --trace-block, --trace-speed or --trace-device: offsets"),
    (dict(speed=0), "speed"),
    (dict(iodepth=5000), "--trace-qd 5000: give 1 to 4096"),
])
def test_options_out_of_bounds_are_refused(tmp_path, options, says):
    with pytest.raises(SsdlabError) as refused:
        plan(tmp_path / "a.csv", **options)
    assert says in str(refused.value)


def test_without_a_trace_the_built_in_traces_are_replayed_at_the_runs_scale(tmp_path):
    (test,) = compile_tests(["trace"], Scale(0.0005), 16 * GiB, trace=plan())
    described = test.settings["traces"]
    assert [t["title"] for t in described] == ["destroyer-like", "heavy-like", "light-like"]
    destroyer = described[0]
    # METHODOLOGY.md section 6: 1583 GB read and 876 GB written at scale 1
    assert destroyer["bytes"]["read"] == pytest.approx(1583e9 * 0.0005, rel=0.03)
    assert destroyer["bytes"]["write"] == pytest.approx(876e9 * 0.0005, rel=0.03)
    assert destroyer["source"] == "destroyer-like, synthetic, scale 0.0005, seed 0"
    assert any("wrapped into it" in note for note in destroyer["notes"])  # a 1 TB trace on a 16 GiB drive
    assert len(test.steps) == 12


def test_a_trace_that_is_no_file_and_no_built_in_is_refused_and_the_options_need_the_test(tmp_path):
    with pytest.raises(SsdlabError, match="no such file, and no built-in trace of that name: give a trace file, "
                                          "or one of destroyer-like, heavy-like, light-like"):
        compile_tests(["trace"], Scale(1.0), 16 * GiB, trace=plan(tmp_path / "none.csv"))
    request = session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="quick", traces=(str(tmp_path / "a.csv"),))
    with pytest.raises(SsdlabError, match="--trace set the trace test, which the selected tests do not include"):
        session.start_run(request, show_progress=False)


def run_traces(tmp_path, name, **options) -> dict:
    trace = alibaba(tmp_path / "a.csv", records=3000, span=2 * GiB)
    request = session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="trace", scale=Scale(0.25),
                                 traces=(str(trace),), db=tmp_path / f"{name}.db", **options)
    run_id = session.start_run(request, show_progress=False)
    with Store(tmp_path / f"{name}.db") as store:
        (record,) = store.tests(run_id)
        return record.score


def test_a_simulated_drive_replays_a_trace_empty_and_full_the_same_each_time(tmp_path):
    score = run_traces(tmp_path, "one")
    (replays,) = score["traces"]
    empty, full = replays["empty"], replays["full"]
    for figures in (empty, full):
        assert figures["ios"] == 3000
        assert figures["data_rate_mbps"] > 0 and figures["busy_s"] > 0
        assert figures["idle_s"] > figures["busy_s"]  # a bursty trace: mostly idle
        latency = figures["latency_us"]
        assert set(latency) == {"all", "read", "write"}
        assert latency["all"]["mean"] <= latency["all"]["p99"] <= latency["all"]["p99.99"] <= latency["all"]["max"]
        # the small drive's preset has a power model: the replay's energy, idle gaps and all
        assert figures["energy_j"] > 0 and 0 < figures["mean_power_w"] < 10
    assert score["value"] == pytest.approx((empty["data_rate_mbps"] * full["data_rate_mbps"]) ** 0.5, rel=1e-3)
    assert run_traces(tmp_path, "two") == score


def test_untimed_replay_moves_the_same_commands_faster(tmp_path):
    timed = run_traces(tmp_path, "timed")["traces"][0]["empty"]
    untimed = run_traces(tmp_path, "untimed", no_timing=True)["traces"][0]["empty"]
    assert untimed["ios"] == timed["ios"] and untimed["read_bytes"] == timed["read_bytes"]
    assert untimed["idle_s"] < timed["idle_s"] / 100  # no gaps left but the drive's own
    assert untimed["busy_s"] + untimed["idle_s"] < (timed["busy_s"] + timed["idle_s"]) / 10


def test_the_dry_run_estimates_a_timed_trace_by_its_duration(tmp_path):
    trace = alibaba(tmp_path / "a.csv", records=1000)
    request = session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="trace", traces=(str(trace),),
                                 idle_cap_ms=0)
    doc = session.dry_run_document(request)
    times = [int(line.rsplit(",", 1)[1]) for line in trace.read_text().splitlines()]
    duration = (times[-1] - times[0]) / 1e6  # uncapped: every gap kept
    assert doc["estimated_seconds"] >= 2 * duration  # replayed twice, empty and full
    assert [s["label"] for s in doc["tests"][0]["steps"]][1] == "a.csv: empty drive"


def test_a_long_replay_tells_its_progress_while_the_drive_runs_it(tmp_path, monkeypatch):
    records = prepared.empty(400_000)
    records["time_us"] = range(len(records))
    records["offset"] = (records["time_us"] % 100_000) * 4096
    records["length"] = 4096
    with prepared.PreparedWriter(tmp_path / "t.trace") as writer:
        writer.write(records)
    backend = sim.SimBackend(load_preset(str(SMALL_PRESET)))
    step = Step(label="t", rw=Op.RANDREAD, bs=4096, iodepth=32, size=GiB,
                trace=TraceReplay(path=str(writer.path), records=len(records), timed=False))
    told = []
    monkeypatch.setattr(sim, "PROGRESS_S", 0.0005)
    backend.run_step(step, lambda fraction, status: told.append((fraction, status)))
    fractions = [f for f, _ in told]
    # at least once while it ran (a loaded machine may run the polling thread only once), and at the end
    assert len(told) >= 2 and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any(status.endswith(" of 400,000 records") for _, status in told[:-1])
