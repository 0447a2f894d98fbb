"""The step boundary between Python and the simulator (issue 10): a step crosses as
`Step.model_dump_json()`, unchanged, and the Rust `Step` has the same fields and no
other, so a field added on one side only is refused instead of silently dropped."""

from __future__ import annotations

import json

import pytest

from ssdlab import _ssdsim
from ssdlab.backends.sim import SimBackend
from ssdlab.model import Age, Op, Phase, PowerOff, Step, TraceReplay
from ssdlab.model.steps import Flow, SplitSize, SteadyState, Zone, Zoned
from ssdlab.presets import load_preset
from ssdlab.traces import prepared
from tests.paths import SMALL_PRESET as SMALL

KiB, MiB = 1 << 10, 1 << 20

BASE = dict(label="s", rw=Op.RANDWRITE, bs=4 * KiB, size=MiB)
# For every field of Step, what to add to BASE so that the field takes a value other
# than its default (a required field is in BASE already). A field without an entry
# fails the test below: give it one, and its counterpart in crates/ssdsim/src/step.rs.
CHANGES = {
    "label": dict(label="every field"),
    "phase": dict(phase=Phase.PRECONDITION),
    "rw": dict(rw=Op.RW, rwmixread=70),
    "bs": dict(bs=8 * KiB),
    "iodepth": dict(iodepth=8),
    "rwmixread": dict(rw=Op.RANDRW, rwmixread=30),
    "offset": dict(offset=MiB),
    "size": dict(size=2 * MiB),
    "runtime": dict(runtime=0.001),
    "io_size": dict(io_size=256 * KiB),
    "time_based": dict(runtime=0.001, time_based=True),
    "burst_bytes": dict(io_size=256 * KiB, burst_bytes=64 * KiB, duty_cycle=0.5),
    "duty_cycle": dict(duty_cycle=0.5),
    "idle_after": dict(idle_after=0.01),
    "per_gib_series": dict(per_gib_series=True),
    "rate_iops": dict(rate_iops=100_000, io_size=64 * KiB),
    "fill_state": dict(fill_state="half full"),
    "bssplit": dict(bssplit=[SplitSize(bs=4 * KiB, pct=50), SplitSize(bs=64 * KiB, pct=50)]),
    "blockalign": dict(blockalign=8 * KiB),
    "offset_delta": dict(rw=Op.READ, offset_delta=-8 * KiB),
    "distribution": dict(distribution=Zoned(zones=[Zone(access_pct=90, extent=10),
                                                   Zone(access_pct=10, extent=90)])),
    "randommap": dict(randommap=True),
    "thinktime": dict(thinktime=0.0001, thinktime_blocks=8),
    "thinktime_blocks": dict(thinktime=0.0001, thinktime_blocks=16),
    "rate_bytes": dict(rate_bytes=100 * MiB, io_size=64 * KiB),
    "ramp": dict(runtime=0.002, time_based=True, ramp=0.001),
    "flow": dict(flow=Flow(id=1, weight=2)),
    "steadystate": dict(steadystate=SteadyState(iops=True, slope=True, limit=0.1, pct=True, dur_s=2)),
    "verify": dict(verify=True),
    "log_ios": dict(log_ios=True),
    "concurrent": dict(concurrent=[Step(label="other", rw=Op.RANDREAD, bs=4 * KiB, size=MiB)]),
    "age": dict(phase=Phase.AGE, age=Age.parse("10%")),
    "power_off": dict(phase=Phase.OFF, power_off=PowerOff(seconds=3600, temperature_c=40)),
    "trace": "a read and a write of a prepared trace the test writes",
}


def _changes(field, tmp_path):
    if field != "trace":
        return CHANGES[field]
    records = prepared.empty(2)
    records["time_us"] = [0, 100]
    records["offset"] = [0, 8 * KiB]
    records["length"] = 4 * KiB
    records["op"] = [0, 1]
    with prepared.PreparedWriter(tmp_path / "t.trace") as writer:
        writer.write(records)
    return dict(rw=Op.RANDRW, rwmixread=50, trace=TraceReplay(path=str(writer.path), records=2))


@pytest.fixture
def drive():
    return _ssdsim.Drive(SMALL.read_text())


@pytest.mark.parametrize("field", list(Step.model_fields))
def test_the_simulator_takes_every_field_of_a_step(drive, field, tmp_path):
    assert field in CHANGES, f"Step.{field} has no example here (nor, perhaps, in the simulator)"
    step = Step(**{**BASE, **_changes(field, tmp_path)})
    assert getattr(step, field) != getattr(Step(**BASE), field), f"the example leaves {field} as it was"
    raw = drive.run_step(step.model_dump_json())
    if step.phase is Phase.AGE:  # no I/O: the drive's wear moves instead
        assert raw["counters"]["mean_pe_cycles"] == pytest.approx(300, abs=1)  # 10 % of 3000
        return
    if step.phase is Phase.OFF:  # no I/O: the drive's data ages instead
        assert raw["notes"] == ["powered off 1.0 h at 40.0 °C, and on again"]
        return
    moved = sum(raw[d]["bytes"] for d in ("read", "write") if raw[d])
    # each job's limit, its verify's reads too; a split's last I/O may end past the limit
    most = sum(j.bytes_limit * (2 if j.verify else 1) + max((s.bs for s in j.bssplit), default=0)
               for j in step.jobs)
    assert 0 < moved <= most


def test_a_span_of_part_blocks_moves_the_same_whole_blocks_on_both_sides(drive):
    # fio, the simulator and Step.bytes_limit round a span down to whole blocks.
    step = Step(label="s", rw=Op.WRITE, bs=MiB, size=5 * MiB // 2)
    assert step.bytes_limit == 2 * MiB
    raw = drive.run_step(step.model_dump_json())
    assert (raw["write"]["ios"], raw["write"]["bytes"]) == (2, step.bytes_limit)


def test_a_time_based_step_runs_for_its_runtime_past_its_span(drive):
    step = Step(label="s", rw=Op.RANDWRITE, bs=4 * KiB, iodepth=8, size=MiB, runtime=0.05, time_based=True)
    raw = drive.run_step(step.model_dump_json())
    assert raw["busy_s"] == pytest.approx(step.runtime, rel=0.05)
    assert raw["write"]["bytes"] > step.size


def test_a_purge_phase_purges_the_simulated_drive(drive):
    drive.run_step(Step(label="w", rw=Op.WRITE, bs=128 * KiB, size=8 * MiB).model_dump_json())
    assert drive.counters()["mapped_bytes"] > 0
    purge = Step(label="purge", phase=Phase.PURGE, rw=Op.TRIM, bs=128 * KiB, size=8 * MiB)
    raw = drive.run_step(purge.model_dump_json())
    assert raw["write"] is raw["trim"] is None and drive.counters()["mapped_bytes"] == 0


def test_the_sim_backend_sends_fill_state_and_time_based_as_they_are():
    backend = SimBackend(load_preset(str(SMALL)))
    step = Step(label="s", rw=Op.RANDREAD, bs=4 * KiB, size=MiB, runtime=0.01, time_based=True,
                fill_state="empty")
    assert backend.run_step(step).result.busy_s == pytest.approx(0.01, rel=0.05)


@pytest.mark.parametrize(("change", "message"), [
    ({"numjobs": 4}, "unknown step field `numjobs`"),
    ({"x" * 1000: 1}, "unknown step field `xxxxxxxx"),
    ({"iodepth": "8"}, 'step field `iodepth`: invalid type: string "8", expected u32'),
    ({"phase": "warmup"}, "step field `phase`: unknown variant `warmup`"),
], ids=["unknown", "long-unknown", "type", "phase"])
def test_a_step_the_simulator_does_not_know_is_a_step_error_in_one_short_line(drive, change, message):
    sent = json.dumps({**Step(**BASE).model_dump(mode="json"), **change})
    with pytest.raises(_ssdsim.StepError) as refused:
        drive.run_step(sent)
    text = str(refused.value)
    assert text.startswith(message) and "\n" not in text and len(text) < 200, text


def test_a_drive_made_on_one_thread_is_freed_on_another():
    """A Dask worker runs each task on a thread of its pool; a drive the cyclic collector frees
    later may be freed on another thread. That must free it, not leak it with an error."""
    import sys
    import threading

    made: list[_ssdsim.Drive] = []
    maker = threading.Thread(target=lambda: made.append(_ssdsim.Drive(SMALL.read_text())))
    maker.start()
    maker.join()
    raised = []
    hook, sys.unraisablehook = sys.unraisablehook, raised.append
    try:
        made.clear()  # the last reference, on this thread
    finally:
        sys.unraisablehook = hook
    assert raised == []
