"""Power meters: a command printing `t_seconds,watts` lines, an ina2xx hwmon chip, and the
energy of a step from a trace."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from ssdlab.errors import SsdlabError
from ssdlab.telemetry import meters
from ssdlab.telemetry.meters import CommandMeter, HwmonMeter, PowerTrace, energy_j, energy_over, parse_power_meter
from tests.fake_sysfs import FakeSysfs

WAIT_S = 30  # only a bound on waiting for a slow machine, never a measure of speed

# Prints `t,watts` every 10 ms in real time, t counting from its start, and touches READY
# once it has run for 0.3 s.
PACED = """
import pathlib, sys, time
ready, t0, said = pathlib.Path(sys.argv[1]), time.monotonic(), False
while True:
    t = round(time.monotonic() - t0, 4)
    print(f"{t},{WATTS}", flush=True)
    if t >= 0.3 and not said:
        ready.touch()
        said = True
    time.sleep(0.01)
"""


def script(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "meter.py"
    path.write_text(text)
    return [sys.executable, str(path), str(tmp_path / "ready")]


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def run_until_ready(tmp_path: Path, text: str) -> PowerTrace:
    meter = CommandMeter(script(tmp_path, text))
    meter.start()
    wait_for(tmp_path / "ready")
    return meter.stop()


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie that nobody has reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


# --- a command ---

def test_constant_5_w_gives_10_j_over_2_s(tmp_path):
    # The script ran for about 0.3 s; over the rest of the 2 s span its last value is held.
    # 5 W held or sampled is 5 W everywhere, so the energy is exact whatever the coverage.
    trace = run_until_ready(tmp_path, PACED.replace("{WATTS}", "5"))
    assert len(trace.samples) >= 2 and trace.rejected == 0 and trace.notes == ()
    energy = energy_j(trace, 0.0, 2.0)
    assert energy.energy_j == pytest.approx(10.0, rel=1e-12)
    assert energy.mean_w == pytest.approx(5.0, rel=1e-12)
    assert 0 < energy.covered_s < 2.0


def test_ramp_is_integrated_exactly_where_sampled(tmp_path):
    # watts = 2 + 3 t: a straight line, which the trapezoid rule integrates exactly (the
    # tolerance only absorbs float rounding), between any two times the samples cover.
    trace = run_until_ready(tmp_path, PACED.replace("{WATTS}", "{2 + 3 * t}"))
    first, last = trace.samples[0][0], trace.samples[-1][0]
    a, b = first + 0.0123, last - 0.0071
    energy = energy_j(trace, a, b)
    assert energy.energy_j == pytest.approx(2 * (b - a) + 1.5 * (b * b - a * a), rel=1e-9)
    assert energy.covered_s == pytest.approx(b - a)


def test_malformed_lines_are_counted_not_fatal(tmp_path):
    lines = ["0.0,5", "hello", "0.1,5,12", "0.2,nan", "0.3,2000", "", "0.4,5,12,0.4", "0.35,5", "0.5,-1",
             "0.5,5"]
    text = (f"import pathlib, sys, time\nprint({chr(10).join(lines)!r}, flush=True)\n"
            "pathlib.Path(sys.argv[1]).touch()\ntime.sleep(60)\n")
    trace = run_until_ready(tmp_path, text)
    assert trace.samples == ((0.0, 5.0), (0.4, 5.0), (0.5, 5.0))
    assert trace.rejected == 6  # the blank line is no reading at all
    assert trace.notes == (
        "2 reading(s) of the power meter set aside (not t_seconds,watts[,volts,amps]), e.g. 'hello'",
        "1 reading(s) of the power meter set aside (not finite), e.g. '0.2,nan'",
        "2 reading(s) of the power meter set aside (watts outside 0..1000), e.g. '0.3,2000'",
        "1 reading(s) of the power meter set aside (time going backwards), e.g. '0.35,5'",
    )


def test_early_exit_is_a_note_and_no_samples_no_energy(tmp_path):
    meter = CommandMeter(["sh", "-c", "echo 'sensor unplugged' >&2; exit 3"])
    meter.start()
    meter._proc.wait(WAIT_S)
    trace = meter.stop()
    assert trace.samples == ()
    assert "exited (status 3) before the step ended (it said: 'sensor unplugged')" in trace.notes[0]
    assert "printed no `t_seconds,watts[,volts,amps]` line" in trace.notes[1]
    with pytest.raises(SsdlabError, match="no power figure from the power meter .*exited"):
        energy_j(trace, 0, 1)


def test_silent_meter_is_noted(tmp_path):
    meter = CommandMeter(["sleep", "60"])
    meter.start()
    trace = meter.stop()
    assert trace.notes == ("the power meter `sleep 60` printed no `t_seconds,watts[,volts,amps]` line",)


def test_times_that_do_not_count_from_the_start_are_noted(tmp_path):
    text = "import pathlib, sys, time\nprint('1700000000,5', flush=True)\npathlib.Path(sys.argv[1]).touch()\n" \
           "time.sleep(60)\n"
    trace = run_until_ready(tmp_path, text)
    assert "times start at 1.7e+09 s" in trace.notes[0] and "since the command started" in trace.notes[0]


def test_sigterm_stops_the_meter_and_what_it_started(tmp_path):
    # A shell meter with a child in the background: the whole process group gets SIGTERM.
    # Its first line is printed before the pids are written, so the trace cannot be empty.
    pids = tmp_path / "pids"
    script = f"echo 0,1; sleep 60 & echo $$ $! > {pids}; while :; do echo 0,1; sleep 0.01; done"
    meter = CommandMeter(["sh", "-c", script])
    meter.start()
    wait_for(pids)
    while len(pids.read_text().split()) < 2:
        time.sleep(0.01)
    trace = meter.stop()
    assert trace.samples and all(w == 1.0 for _, w in trace.samples)
    deadline = time.monotonic() + WAIT_S
    for pid in map(int, pids.read_text().split()):
        while not gone(pid):
            assert time.monotonic() < deadline, f"process {pid} outlived the meter"
            time.sleep(0.01)


def test_a_meter_ignoring_sigterm_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(meters, "GRACE_S", 0.2)
    text = ("import pathlib, signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('0,3', flush=True)\npathlib.Path(sys.argv[1]).touch()\ntime.sleep(60)\n")
    meter = CommandMeter(script(tmp_path, text))
    meter.start()
    wait_for(tmp_path / "ready")
    proc = meter._proc
    assert meter.stop().samples == ((0.0, 3.0),)
    assert proc.returncode == -9


def test_a_meter_can_run_for_several_steps(tmp_path):
    meter = CommandMeter(["sh", "-c", "echo 0,2; exec sleep 60"])
    for _ in range(2):
        meter.start()
        while not meter._recorder.samples:
            time.sleep(0.01)
        assert meter.stop().samples == ((0.0, 2.0),)


def test_a_command_that_cannot_start(tmp_path):
    not_executable = tmp_path / "meter"
    not_executable.write_text("echo 0,1\n")
    with pytest.raises(SsdlabError, match="cannot start the power meter .*Permission denied"):
        CommandMeter([str(not_executable)]).start()


@pytest.mark.parametrize(("spec", "message"), [
    ("", "needs a command that prints `t_seconds,watts"),
    ("   ", "needs a command"),
    ("meter 'unclosed", "cannot be read as a command"),
    ("no-such-meter-9f3 --rate 10", "'no-such-meter-9f3' is neither a program on PATH"),
    ("hwmon:", "no hwmon chip directory there"),
    ("hwmon:/nonexistent/hwmon9", "no hwmon chip directory there"),
])
def test_bad_specs_are_refused_clearly(spec, message):
    with pytest.raises(SsdlabError, match=message.replace("(", r"\(")):
        parse_power_meter(spec)


def test_a_command_spec_is_split_without_a_shell():
    meter = parse_power_meter("sh -c 'echo 0,1; sleep 1' ignored-arg")
    assert isinstance(meter, CommandMeter)
    assert meter.argv == ("sh", "-c", "echo 0,1; sleep 1", "ignored-arg")


# --- an hwmon chip ---

def test_hwmon_power1_input(tmp_path):
    chip = FakeSysfs(tmp_path).hwmon("ina226", {"power1_input": "5000000", "in1_input": "12000",
                                                "curr1_input": "100", "update_interval": "1"})
    meter = parse_power_meter(f"hwmon:{chip}")
    assert isinstance(meter, HwmonMeter)
    assert meter.read_watts() == 5.0  # power1_input wins over in1 x curr1
    assert meter.period_s == pytest.approx(0.1)  # a 1 ms chip is still read at 10 Hz at most
    meter.start()
    time.sleep(0.25)
    trace = meter.stop()
    assert trace.source == f"hwmon:{chip}" and trace.samples
    assert all(w == 5.0 for _, w in trace.samples)
    assert energy_j(trace, 0, 2).energy_j == pytest.approx(10.0)


def test_hwmon_volts_times_amps(tmp_path):
    chip = FakeSysfs(tmp_path).hwmon("ina219", {"in0_input": "2", "in1_input": "12000", "curr1_input": "500",
                                                "update_interval": "500"})
    meter = parse_power_meter(f"hwmon:{chip}")
    assert meter.read_watts() == pytest.approx(6.0)  # 12 V x 0.5 A
    assert meter.period_s == 0.5  # the chip's averaging time
    (chip / "curr1_input").write_text("250\n")
    assert meter.read_watts() == pytest.approx(3.0)


def test_hwmon_read_failures_are_noted_and_sampling_goes_on(tmp_path):
    chip = FakeSysfs(tmp_path).hwmon("ina226", {"power1_input": "7000000"})
    meter = parse_power_meter(f"hwmon:{chip}")
    (chip / "power1_input").write_text("busy\n")
    meter.start()
    deadline = time.monotonic() + WAIT_S
    while meter._sampler._failed == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    reading = chip / "power1_input.new"  # replaced whole: the sampler never reads it half-written
    reading.write_text("7000000\n")
    reading.replace(chip / "power1_input")
    while len(meter._sampler._samples) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    trace = meter.stop()
    assert len(trace.samples) >= 2 and {w for _, w in trace.samples} == {7.0}
    assert len(trace.notes) == 1
    assert trace.notes[0].startswith(f"power sampling (hwmon:{chip}): ")
    assert trace.notes[0].endswith(f"the first 0.0 s into the step: the power chip {chip} gave something other "
                                   "than a whole number in power1_input")


@pytest.mark.parametrize(("attrs", "message"), [
    ({"temp1_input": "41000"}, r"chip \(name 'nvme'\) is not an ina2xx-style power monitor"),
    ({"in1_input": "12000"}, "neither power1_input nor in1_input and curr1_input"),
    ({"power1_input": "n/a"}, "gave something other than a whole number in power1_input"),
])
def test_hwmon_chips_that_are_not_power_meters(tmp_path, attrs, message):
    chip = FakeSysfs(tmp_path).hwmon("nvme", attrs)
    with pytest.raises(SsdlabError, match=message):
        parse_power_meter(f"hwmon:{chip}")


# --- energy over a step's span ---

def trace_of(*samples: tuple[float, float]) -> PowerTrace:
    return PowerTrace(source="test", samples=samples)


def test_energy_is_the_trapezoid_integral():
    energy = energy_j(trace_of((0, 0), (1, 10), (2, 10)), 0, 2)
    assert energy.energy_j == 15.0  # 5 J rising, 10 J flat
    assert energy.mean_w == 7.5 and energy.span_s == 2 and energy.covered_s == 2


def test_energy_interpolates_at_the_edges():
    # [0.5, 1]: the line from 5 W to 10 W, 3.75 J; [1, 1.5]: 10 W, 5 J.
    energy = energy_j(trace_of((0, 0), (1, 10), (2, 10)), 0.5, 1.5)
    assert energy.energy_j == 8.75 and energy.covered_s == 1.0


def test_energy_over_a_steps_busy_windows_sums_them():
    # [0, 1]: 5 J; [1.5, 2]: 5 J (10 W); the idle between is left out
    energy = energy_over(trace_of((0, 0), (1, 10), (2, 10)), [(0, 1), (1.5, 2)])
    assert (energy.energy_j, energy.span_s, energy.covered_s, energy.meter) == (10.0, 1.5, 1.5, "test")


def test_samples_that_miss_every_busy_window_give_no_energy():
    # a meter slower to start than a short step: its samples come after the step's I/O
    with pytest.raises(SsdlabError, match=r"samples, from 0.5 to 0.9 s, miss the step's busy time, 0.000 to 0.200 s"):
        energy_over(trace_of((0.5, 4), (0.9, 4)), [(0, 0.1), (0.15, 0.2)])


def test_energy_holds_the_nearest_value_beyond_the_samples():
    # 4 W held over [0, 1], 5 J from 4 to 6 W over [1, 2], 6 W held over [2, 3].
    energy = energy_j(trace_of((1, 4), (2, 6)), 0, 3)
    assert energy.energy_j == 15.0 and energy.covered_s == 1.0
    before = energy_j(trace_of((5, 2), (6, 3)), 0, 1)
    assert before.energy_j == 2.0 and before.covered_s == 0.0


def test_energy_of_a_step_in_power():
    # Two samples at the same time: power stepped from 1 W to 3 W at t = 1.
    assert energy_j(trace_of((0, 1), (1, 1), (1, 3), (2, 3)), 0, 2).energy_j == 4.0


def test_energy_of_an_empty_span_and_a_backwards_one():
    energy = energy_j(trace_of((0, 5)), 1, 1)
    assert energy.energy_j == 0 and energy.mean_w == 0
    with pytest.raises(ValueError, match="ends after it starts"):
        energy_j(trace_of((0, 5)), 2, 1)


@pytest.mark.parametrize(("samples", "problem"), [
    (((0, -1.0),), "watts outside 0..1000"),
    (((0, 1001.0),), "watts outside 0..1000"),
    (((0, math.nan),), "not finite"),
    (((math.inf, 1.0),), "not finite"),
    (((1, 1.0), (0.5, 1.0)), "time going backwards"),
])
def test_traces_are_validated(samples, problem):
    with pytest.raises(ValidationError, match=problem):
        PowerTrace(source="test", samples=samples)
