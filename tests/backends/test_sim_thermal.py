"""Heat on the simulated drive, through the native module and the backend: the drive's
surroundings are options of the drive, refused with a clear message when wrong; every step
has its temperature each second; an overheated drive fails its step as a real one does."""

from __future__ import annotations

import pytest

from ssdlab import _ssdsim
from ssdlab.backends.sim import SimBackend
from ssdlab.errors import BackendFailed
from ssdlab.model import Op, SecondPoint, Step
from ssdlab.presets import load_preset
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.probe import Telemetry
from ssdlab.telemetry.records import HealthLog
from ssdlab.telemetry.results import StepTelemetry, TemperatureSeries, TestHealth
from tests import factories

KiB, MiB = 1 << 10, 1 << 20
SN850 = load_preset("wd-sn850-1tb")


def seq_write(seconds: float) -> Step:
    return Step(label="seq write", rw=Op.WRITE, bs=128 * KiB, iodepth=32, size=64 * 1024 * MiB,
                runtime=seconds, time_based=True)


@pytest.mark.parametrize(("options", "message"), [
    ({"cooling": "water"}, "cooling must be bare, heatsink or fan"),
    ({"ambient_c": 200.0}, "ambient_c"),
    ({"ambient_c": float("nan")}, "ambient_c"),
])
def test_wrong_surroundings_are_refused_by_name(options, message):
    with pytest.raises(ValueError, match=message):
        _ssdsim.Drive(SN850.text, **options)


def test_every_second_of_a_step_has_its_temperature_rising_while_it_writes():
    drive = _ssdsim.Drive(SN850.text, cooling="bare", ambient_c=30.0)
    raw = drive.run_step(seq_write(20.0).model_dump_json())
    temperatures = raw["temperature_c"]
    assert len(temperatures) == len(raw["per_second"]) >= 20  # the last: a sliver past 20 s
    assert 30.0 < temperatures[0] < temperatures[-1] < 80.0
    assert temperatures == sorted(temperatures)


def test_an_overheated_drive_fails_its_step_through_the_backend():
    backend = SimBackend(SN850)
    backend.drive = _ssdsim.Drive(SN850.text, cooling="bare", ambient_c=80.0)  # too hot to hold
    with pytest.raises(BackendFailed, match="dropped off the bus"):
        backend.run_step(seq_write(600.0))


def test_a_drop_is_a_throttle_only_where_the_drives_transition_count_rose():
    """A simulated drive counts its thermal transitions each second: its cache running out
    (a drop at 10 s, the count still) is no throttle event; the drop at 30 s, where the
    count rose, is one. Read only before and after the test, both drops would coincide."""
    mbps = [5000.0] * 10 + [1500.0] * 20 + [1000.0] * 10
    count = [0] * 30 + [1] * 10
    seconds = tuple(SecondPoint(t_s=k + 1.0, mbps=m, iops=m / 0.128) for k, m in enumerate(mbps))
    stepped = factories.result(mbps=2000.0, busy_s=len(mbps)).model_copy(update={"per_second": seconds})
    series = TemperatureSeries(source="simulator", celsius=(60.0,) * len(mbps), transitions=tuple(count))
    rose = TestHealth(before=HealthLog(tmt1_transitions=0), after=HealthLog(tmt1_transitions=1))
    found = RunTelemetry(Telemetry()).throttles(rose, [(0, stepped, StepTelemetry(temperature=series))])
    assert [(e.start_s, e.threshold) for e in found[0]] == [(30, "transition counter")]
    read_around = series.model_copy(update={"transitions": None})
    found = RunTelemetry(Telemetry()).throttles(rose, [(0, stepped, StepTelemetry(temperature=read_around))])
    assert [e.start_s for e in found[0]] == [10]  # then "before" restarts from the throttled level
