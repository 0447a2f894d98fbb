"""A run on a loop device that telemetry takes for an NVMe namespace, end to end: fake `nvme`
and `smartctl` on PATH printing golden outputs (a media error appears in the health log after
the first test), a fake sysfs tree whose hwmon chip the drive 'heats', a fake power meter.
Root only (a loop device).

The probe is pointed at the fake tree (start_run's `sys_root`); the loop device's own
major:minor leads there to a namespace nvme0n1 of controller nvme0. The throttle needs a
drop of throughput fio will not make on cue, so one measured step is scripted: the backend
runs every other step with fio, and in that one holds the 'drive' at 1000 MB/s for 4 s and
then at 400 MB/s while its temperature passes TMT1."""

import json
import os
import sys
import time

import pytest

from ssdlab import session
from ssdlab.backends import StepOutcome
from ssdlab.backends.fio import FioBackend
from ssdlab.catalogue import Scale
from ssdlab.model import Phase, SecondPoint
from ssdlab.session import RunRequest, start_run
from ssdlab.units import GiB
from tests.conftest import run_cli
from tests.factories import result
from tests.fake_sysfs import FakeSysfs
from tests.loop_devices import loop_device, require
from tests.telemetry_data import CHIP, GOLDEN, smart_log

pytestmark = pytest.mark.root

MEDIA_ERROR = "1 new media and data integrity error during the test"
HEATED = (1000.0,) * 4 + (400.0,) * 4


def fake_programs(bin_dir, state):
    """`nvme` answering for /dev/nvme0 as an SN850 with nvme-cli 2.3 would (its health log
    with one media error from its second reading on), and `smartctl`; both log their calls."""
    (state / "before.json").write_text(smart_log())
    (state / "after.json").write_text(smart_log(media_errors=1))
    bin_dir.mkdir()
    (bin_dir / "nvme").write_text(f"""#!/bin/sh
echo "nvme $*" >> {state}/calls
[ "$2" = /dev/nvme0 ] || {{ echo "no such controller: $2" >&2; exit 1; }}
case "$1 $3 $4 $5" in
  "id-ctrl -o json ") cat {GOLDEN}/nvme-2.3-id-ctrl-sn850.json ;;
  "get-feature -f 0x10 -H") cat {GOLDEN}/nvme-2.3-get-feature-0x10-sn850.txt ;;
  "smart-log -o json ")
    n=$(($(cat {state}/smart-logs 2>/dev/null || echo 0) + 1)); echo $n > {state}/smart-logs
    if [ $n -ge 2 ]; then cat {state}/after.json; else cat {state}/before.json; fi ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
""")
    (bin_dir / "smartctl").write_text(f"""#!/bin/sh
echo "smartctl $*" >> {state}/calls
cat {GOLDEN}/smartctl-7.3-nvme-sn850.json
""")
    for program in ("nvme", "smartctl"):
        (bin_dir / program).chmod(0o755)


class HeatingFio(FioBackend):
    """fio, except the measured step of seq-write-burst: 8 s during which the drive heats
    from 40 °C to 81 °C (TMT1 is 80 °C) at the fifth second, when its throughput drops."""

    chip = None  # the fake hwmon chip, set by the test

    def run_step(self, step, progress=None):
        if step.phase is not Phase.MEASURE or step.rw.value != "write":
            return super().run_step(step, progress)
        for mbps in HEATED:
            reading = self.chip / "temp1_input.new"  # replaced whole: the sampler never reads it half-written
            reading.write_text("81000\n" if mbps < 1000 else "40000\n")
            reading.replace(self.chip / "temp1_input")
            time.sleep(1.0)
        points = tuple(SecondPoint(t_s=k + 1.0, mbps=m, iops=m * 1e6 / step.bs) for k, m in enumerate(HEATED))
        res = result(mbps=sum(HEATED) / len(HEATED), busy_s=len(HEATED), bs=step.bs, direction="write")
        return StepOutcome(res.model_copy(update={"per_second": points}), ("heated",))


def test_health_alarm_temperature_throttle_and_energy_on_a_pretend_nvme_drive(scratch, monkeypatch, capsys):
    require("wipefs", "blkdiscard")
    state = scratch / "state"
    state.mkdir()
    fake_programs(scratch / "bin", state)
    monkeypatch.setenv("PATH", f"{scratch / 'bin'}{os.pathsep}{os.environ['PATH']}")
    meter = scratch / "meter.py"
    meter.write_text("import time\nt0 = time.monotonic()\nwhile True:\n"
                     "    print(f'{time.monotonic() - t0:.4f},5', flush=True)\n    time.sleep(0.05)\n")
    db = scratch / "tel.db"
    with loop_device(scratch / "disk.img", size=GiB) as device:
        sysfs = FakeSysfs(scratch / "sys")
        rdev = device.stat().st_rdev
        sysfs.disk("nvme0n1", f"{os.major(rdev)}:{os.minor(rdev)}", GiB // 512, controller="nvme0", bus="nvme")
        HeatingFio.chip = sysfs.nvme_controller("nvme0", hwmon={**CHIP, "temp1_input": "40000"}) / "hwmon1"
        monkeypatch.setattr(session, "FioBackend", HeatingFio)
        request = RunRequest(target=str(device), tests=("seq-read-burst", "seq-write-burst"), scale=Scale(0.001),
                             destroy_data=device.name, db=db, power_meter=f"{sys.executable} {meter}")
        run_id = start_run(request, show_progress=True, sys_root=sysfs.root)

    # loudly, as it happened: after the first test's health log
    terminal = " ".join(capsys.readouterr().err.split())
    assert terminal.index(f"ALARM seq-read-burst: {MEDIA_ERROR}") < terminal.index("seq-write-burst")
    calls = (state / "calls").read_text().splitlines()
    assert calls[:2] == ["nvme id-ctrl /dev/nvme0 -o json", "nvme get-feature /dev/nvme0 -f 0x10 -H"]
    assert calls[2:] == ["nvme smart-log /dev/nvme0 -o json"] * 4  # before and after each test; hwmon between

    doc = json.loads(run_cli("export", str(run_id), db=db).stdout)
    assert doc["alarms"] == [{"test": "seq-read-burst", "alarm": MEDIA_ERROR}]
    first, second = doc["tests"]
    assert first["health"]["delta"]["media_errors"] == 1 and second["health"]["alarms"] == []
    assert second["health"]["before"]["media_errors"] == second["health"]["after"]["media_errors"] == 1
    for test in doc["tests"]:
        for step in test["steps"]:
            telemetry = step["telemetry"]
            assert telemetry["temperature_source"] == "hwmon" and telemetry["temperature_c"]
            if step["phase"] == "purge" and telemetry["energy"] is None:
                continue  # blkdiscard of a loop device can end before the meter's first line
            assert telemetry["energy"]["meter"] == f"{sys.executable} {meter}"
            assert telemetry["energy"]["mean_w"] == pytest.approx(5.0) and step["result"]["watts"] == pytest.approx(5.0)
    # that is the only thing telemetry may have to say
    assert all(n["step"] == 0 and n["note"].startswith("no power figure") for n in doc["telemetry_notes"])
    heated = second["steps"][-1]["telemetry"]
    assert heated["temperature_c"][:3] == [40.0] * 3 and heated["temperature_c"][5:] == [81.0] * 3
    (event,) = heated["throttles"]
    assert (event["start_s"], event["length_s"], event["threshold"]) == (4, 4, "TMT1")
    assert (event["mbps_before"], event["mbps_during"], event["peak_temperature_c"]) == (1000.0, 400.0, 81.0)
    assert all(not s["telemetry"]["throttles"] for t in doc["tests"] for s in t["steps"][:-1])
    assert second["primary_score"]["mbps_per_w"] == pytest.approx(700 / 5, rel=1e-3)

    shown = " ".join(run_cli("show", str(run_id), db=db).stdout.split())
    assert shown.index(f"ALARM seq-read-burst: {MEDIA_ERROR}") < shown.index("target:")
    assert "seq-read-burst: drive health before and after" in shown and "seq-write-burst: throttle events" in shown
    assert "media and data integrity errors │ 0 │ 1 │ +1 │" in shown
    assert "│ 8 bursts of 1 MiB │ 4 │ 4 │ 1000.0 │ 400.0 │" in shown  # the throttle event

    page = scratch / "report.html"
    run_cli("report", str(run_id), "-o", page, db=db)
    html = page.read_text()
    assert html.index('id="alarms"') < html.index('id="summary"') and MEDIA_ERROR in html
    assert '"chart-seq-write-burst-temperature"' in html and "Throttle events" in html
    assert "Drive health before and after the test" in html
