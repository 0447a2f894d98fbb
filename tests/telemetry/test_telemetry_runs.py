"""Telemetry beside a run, in process: a scripted backend, nvme-cli replayed on a fake sysfs
tree, a fake power meter. Health before and after every test with its alarms, throttle
events, energy per step, and notes, never failures, for what telemetry cannot read."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ssdlab.backends import StepOutcome
from ssdlab.catalogue import Scale, compile_tests
from ssdlab.execution import SilentReporter, execute
from ssdlab.external import Completed, ReplayCommands
from ssdlab.model import Phase, RunStatus, SecondPoint, Step, Test
from ssdlab.store import Store
from ssdlab.targets import Target, TargetKind
from ssdlab.telemetry.during_run import RunTelemetry, busy_spans, busy_time
from ssdlab.telemetry.meters import CommandMeter
from ssdlab.telemetry.probe import probe
from ssdlab.units import GiB
from tests.conftest import run_cli
from tests.factories import result
from tests.fake_sysfs import FakeSysfs
from tests.telemetry_data import CHIP, ID_CTRL, SMART_LOG, golden, ok, smart_log

FEATURE_0X10 = "nvme get-feature /dev/nvme0 -f 0x10 -H"
FAILED = Completed((), 1, "", "NVMe status: Internal Error")
# 4 s at 1000 MB/s, 4 s at half that, 2 s back at 1000 MB/s
DROP = (1000.0,) * 4 + (500.0,) * 4 + (1000.0,) * 2


class Scripted(ReplayCommands):
    """Each command answers from its list in turn; the last answer repeats."""

    def run(self, argv, timeout=None):
        self.calls.append(tuple(argv))
        answers = self.outputs.get(" ".join(argv), [Completed(tuple(argv), 127, "", "not recorded")])
        return answers[min(self.calls.count(tuple(argv)), len(answers)) - 1]


def brief(step: Step) -> None:
    time.sleep(0.05)  # long enough for the sampler's first reading


class ScriptedBackend:
    """Each step runs `during` (wall time) and reports a second of 100 MB/s; measured steps
    report `series` instead, one MB/s figure per second."""

    name = "scripted"

    def __init__(self, series=DROP, during: Callable[[Step], None] = brief):
        self.series, self.during = series, during

    def describe(self) -> dict:
        return {"engine": self.name}

    def run_step(self, step, progress=None) -> StepOutcome:
        self.during(step)
        series = self.series if step.phase is Phase.MEASURE else (100.0,)
        res = result(mbps=sum(series) / len(series), busy_s=len(series), bs=step.bs)
        points = tuple(SecondPoint(t_s=k + 1.0, mbps=m, iops=m * 1e6 / step.bs) for k, m in enumerate(series))
        return StepOutcome(res.model_copy(update={"per_second": points}), ("scripted",))


class Recorder(SilentReporter):
    def __init__(self):
        self.notes, self.alarmed = [], []

    def telemetry_notes(self, notes):
        self.notes += notes

    def alarms(self, test, alarms):
        self.alarmed += [(test.id, a) for a in alarms]


@pytest.fixture
def sysfs(tmp_path):
    fake = FakeSysfs(tmp_path / "sys")
    fake.disk("nvme0n1", "259:0", 2 * GiB // 512, controller="nvme0", bus="nvme")
    return fake


def nvme(sysfs: FakeSysfs, smart_logs: list[Completed], meter: CommandMeter | None = None) -> RunTelemetry:
    """An NVMe drive, telemetry through nvme-cli (whose health logs come in turn, the probe's
    the same as the first) and hwmon."""
    sysfs.nvme_controller("nvme0", hwmon=CHIP)
    commands = Scripted({ID_CTRL: [ok(golden("nvme-2.3-id-ctrl-sn850.json"))], SMART_LOG: [smart_logs[0], *smart_logs],
                         FEATURE_0X10: [ok(golden("nvme-2.3-get-feature-0x10-sn850.txt"))]})
    target = Target("/dev/nvme0n1", TargetKind.DEVICE, Path("/dev/nvme0n1"), GiB)
    return RunTelemetry(probe(target, commands, sysfs.root), meter)


def run(tmp_path: Path, backend, telemetry: RunTelemetry, test_ids=("seq-read-burst",)
        ) -> tuple[Store, int, Recorder, list[Test]]:
    tests = compile_tests(list(test_ids), Scale(0.001), GiB)
    store = Store(tmp_path / "ssdlab.db")
    run_id = store.create_run(name=None, target="/dev/nvme0n1", target_kind="device", suite="custom",
                              suite_toml="", scale=0.001, tests=tests, identity={}, host={},
                              engine=backend.describe(), options={})
    reporter = Recorder()
    execute(store, run_id, backend, reporter, telemetry)
    return store, run_id, reporter, tests


def test_health_before_and_after_a_new_media_error_and_a_throttle_from_the_counters(tmp_path, sysfs):
    # The drive's TMT1 counter rises during the test, and one media error appears: the
    # measured step's 4 s at half speed is a throttle event, though the temperature (38 °C)
    # stays far below TMT1 (80 °C).
    telemetry = nvme(sysfs, [ok(smart_log()), ok(smart_log(media_errors=1, thm_temp1_trans_count=5))])
    store, run_id, reporter, _ = run(tmp_path, ScriptedBackend(), telemetry)
    (record,) = store.tests(run_id)
    assert record.health.before.media_errors == 0 and record.health.after.media_errors == 1
    alarm = "1 new media and data integrity error during the test"
    assert record.health.alarms() == [alarm] and reporter.alarmed == [("seq-read-burst", alarm)]
    purge, precondition, measure = store.steps(run_id, record.seq)
    (event,) = measure.throttles
    assert (event.start_s, event.length_s, event.threshold) == (4, 4, "transition counter")
    assert (event.mbps_before, event.mbps_during) == (1000.0, 500.0)
    assert precondition.throttles == () and purge.throttles == ()
    # a brief step: the one reading, at its start, is hwmon's 37.85 °C
    assert measure.telemetry.temperature.source == "hwmon"
    assert measure.telemetry.temperature.celsius[0] == 37.85 and len(measure.telemetry.temperature.celsius) == 10
    assert store.telemetry_notes(run_id) == [] and reporter.notes == []
    assert store.run(run_id).status is RunStatus.DONE


def test_no_throttle_without_heat_or_a_counter_rise(tmp_path, sysfs):
    telemetry = nvme(sysfs, [ok(smart_log())])
    store, run_id, reporter, _ = run(tmp_path, ScriptedBackend(), telemetry)
    assert all(s.throttles == () for s in store.steps(run_id, 0))
    assert store.tests(run_id)[0].health.alarms() == [] and reporter.alarmed == []


def test_telemetry_failing_mid_run_becomes_notes_and_the_run_completes(tmp_path, sysfs):
    # The power meter cannot even start, the health log after the first test cannot be
    # read, and from the second test on the temperature file holds garbage: every step
    # still runs and is stored.
    telemetry = nvme(sysfs, [ok(smart_log()), FAILED, ok(smart_log())],
                     CommandMeter([str(tmp_path / "no-such-meter")]))
    temperature = sysfs.root / "devices/ctrl/nvme0/hwmon1/temp1_input"
    steps = []

    def garbage_from_the_second_test(step):
        steps.append(step)
        if len(steps) == len(tests[0].steps) + 1:
            temperature.write_text("junk\n")
        brief(step)

    tests = compile_tests(["seq-read-burst", "seq-write-burst"], Scale(0.001), GiB)
    store, run_id, reporter, _ = run(tmp_path, ScriptedBackend(during=garbage_from_the_second_test), telemetry,
                                     ("seq-read-burst", "seq-write-burst"))
    assert store.run(run_id).status is RunStatus.DONE
    assert [len(store.steps(run_id, seq)) for seq in (0, 1)] == [len(t.steps) for t in tests]
    first, second = store.tests(run_id)
    assert first.health.after is None and second.health.after is not None
    notes = store.telemetry_notes(run_id)
    assert notes[0].seq == 0 and notes[0].idx == 0 and notes[0].note.startswith("cannot start the power meter")
    assert notes[0].note.endswith(": no energy for the rest of the run")
    assert any(n.seq == 0 and n.idx is None and "`nvme smart-log /dev/nvme0 -o json` failed" in n.note
               for n in notes)
    assert all(s.telemetry.temperature is not None for s in store.steps(run_id, 0))
    assert any(n.seq == 1 and re.match(r"temperature sampling: (\d+) of \1 readings failed", n.note)
               and "not millidegrees" in n.note for n in notes)
    assert [n.note for n in notes] == reporter.notes
    assert all(s.telemetry.energy is None and s.result.energy_j is None for s in store.steps(run_id, 1))


def test_a_target_without_telemetry_has_one_note_and_runs_as_before(tmp_path):
    target = Target("/var/tmp/x.img", TargetKind.FILE, Path("/var/tmp/x.img"), GiB)
    telemetry = RunTelemetry(probe(target, ReplayCommands()))
    store, run_id, reporter, _ = run(tmp_path, ScriptedBackend(), telemetry, ("seq-read-burst", "seq-write-burst"))
    (note,) = store.telemetry_notes(run_id)
    assert (note.seq, note.idx, note.note) == (None, None, "no telemetry: a file target has no health log")
    assert all(r.health is None for r in store.tests(run_id))
    assert all(s.telemetry.temperature is None and s.throttles == () for s in store.steps(run_id, 0))
    store.add_telemetry_notes(run_id, [note.note])  # a resumed run probes again: not repeated
    assert len(store.telemetry_notes(run_id)) == 1


def test_through_smartctl_only_the_health_log_is_read(tmp_path, sysfs):
    # a SATA drive: smartctl's readings would disturb the steps, so there are none beside them
    sysfs.disk("sda", "8:0", 2 * GiB // 512, controller="0:0:0:0", bus="scsi")
    commands = Scripted({"smartctl -j -a /dev/sda": [ok(golden("smartctl-7.3-sata-mx500.json"))]})
    telemetry = RunTelemetry(probe(Target("/dev/sda", TargetKind.DEVICE, Path("/dev/sda"), GiB), commands, sysfs.root))
    store, run_id, _, _ = run(tmp_path, ScriptedBackend(), telemetry)
    (note,) = store.telemetry_notes(run_id)
    assert note.note.startswith("no temperature beside the steps: through smartctl")
    assert store.tests(run_id)[0].health.after.power_on_hours == 9123
    assert all(s.telemetry.temperature is None for s in store.steps(run_id, 0))
    assert commands.calls == [tuple("smartctl -j -a /dev/sda".split())] * 3  # the probe, before, after


# Prints `t,5` every 10 ms in real time, t counting from its start.
FIVE_WATTS = """
import time
t0 = time.monotonic()
while True:
    print(f"{time.monotonic() - t0:.4f},5", flush=True)
    time.sleep(0.01)
"""


def test_energy_over_busy_time_leaves_the_idle_windows_out(tmp_path):
    # Each step: 0.2 s busy, 0.6 s idle (through the telemetry, as the fio backend idles),
    # 0.2 s busy. A constant 5 W over the busy spans: the step's mean power is 5 W, and the
    # energy integrated spans about 0.4 s, not 1 s.
    script = tmp_path / "meter.py"
    script.write_text(FIVE_WATTS)
    target = Target("/var/tmp/x.img", TargetKind.FILE, Path("/var/tmp/x.img"), GiB)
    telemetry = RunTelemetry(probe(target, ReplayCommands()), CommandMeter([sys.executable, str(script)]))

    def busy_idle_busy(step):
        time.sleep(0.2)
        telemetry.idle(0.6)
        time.sleep(0.2)

    store, run_id, _, _ = run(tmp_path, ScriptedBackend(series=(100.0,), during=busy_idle_busy), telemetry)
    for s in store.steps(run_id, 0):
        energy = s.telemetry.energy
        assert energy.meter == f"{sys.executable} {script}"
        assert 0.4 <= energy.span_s < 0.6 and energy.mean_w == pytest.approx(5.0)
        assert s.result.watts == pytest.approx(5.0)
    assert store.tests(run_id)[0].score["mbps_per_w"] == pytest.approx(100 / 5, rel=1e-6)


def test_busy_spans_leave_idle_windows_out_and_busy_time_lays_them_end_to_end():
    busy = busy_spans([(1.0, 3.0), (4.0, 4.5)], 6.0)
    assert busy == [(0.0, 1.0), (3.0, 4.0), (4.5, 6.0)]
    assert busy_spans([(0.0, 2.0)], 2.0) == []
    # between two windows: at the next one's start; after the last: at its end
    assert [busy_time(t, busy) for t in (0.5, 2.0, 3.5, 4.2, 5.0, 7.0)] == [0.5, 1.0, 1.5, 2.0, 2.5, 3.5]


def test_show_export_and_report_put_the_alarm_first_and_show_health_and_throttles(tmp_path, sysfs):
    telemetry = nvme(sysfs, [ok(smart_log()), ok(smart_log(media_errors=1, thm_temp1_trans_count=5))])
    store, run_id, _, _ = run(tmp_path, ScriptedBackend(), telemetry)
    store.close()
    alarm = "seq-read-burst: 1 new media and data integrity error during the test"
    db = tmp_path / "ssdlab.db"

    shown = " ".join(run_cli("show", str(run_id), db=db).stdout.split())
    assert shown.index(f"ALARM {alarm}") < shown.index("target:")
    assert "TMT1 (light throttling) transitions │ 4 │ 5 │ +1 │" in shown
    # a brief step: no reading after its first second, so no temperature for the event
    assert "│ 8 bursts of 1 MiB │ 4 │ 4 │ 1000.0 │ 500.0 │ │ │ transition counter │" in shown

    rows = list(csv.DictReader(io.StringIO(run_cli("export", str(run_id), "--format", "csv", db=db).stdout)))
    assert [row["throttle_events"] for row in rows] == ["0", "0", "1"]
    assert {row["test_alarms"] for row in rows} == {alarm.split(": ", 1)[1]}
    assert rows[2]["peak_temperature_c"] == "37.85"

    page = tmp_path / "report.html"
    run_cli("report", str(run_id), "-o", page, db=db)
    html = page.read_text()
    assert html.index('id="alarms"') < html.index('id="summary"')
    specs = json.loads(re.search(r'<script type="application/json" id="chart-specs">(.*?)</script>', html, re.S)[1])
    chart = specs["chart-seq-read-burst-temperature"]
    # on the test's busy time: after the purge's and the precondition's second each
    assert chart["datasets"]["events"] == [{"run": "#1 /dev/nvme0n1", "step": "8 bursts of 1 MiB", "start_s": 6.0,
                                            "end_s": 10.0, "threshold": "transition counter"}]
    assert "Drive health before and after the test: #1 /dev/nvme0n1" in html
