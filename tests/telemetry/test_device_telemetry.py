"""A run on a loop device that telemetry takes for an NVMe namespace, end to end: Debian's real
`nvme` binary answering for a pretend /dev/nvme0 through tests/nvme_shim (a WD SN850 whose health
log shows a media error after the first test), a fake sysfs tree whose hwmon chip the drive
'heats', a fake power meter. Root only (a loop device); nvme-cli and gcc (make test installs both).

The probe is pointed at the fake tree (start_run's `sys_root`); the loop device's own
major:minor leads there to a namespace nvme0n1 of controller nvme0. The throttle needs a
drop of throughput fio will not make on cue, so one measured step is scripted: the backend
runs every other step with fio, and in that one holds the 'drive' at 1000 MB/s for 4 s and
then at 400 MB/s while its temperature passes TMT1. The same run in the user's locale (en_US,
de_DE, in which Debian's nvme-cli 2.3 groups the digits of its counters) still reports the
media error."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager

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
from tests.nvme_shim import DRIVES, build_shim
from tests.shim_common import find_program
from tests.telemetry_data import CHIP

pytestmark = pytest.mark.root

MEDIA_ERROR = "1 new media and data integrity error during the test"
HEATED = (1000.0,) * 4 + (400.0,) * 4
SN850 = DRIVES["sn850"]
NVME = find_program("nvme")


def fake_programs(bin_dir, state):
    """`nvme` on PATH: Debian's nvme-cli answering for /dev/nvme0 as the SN850 of tests/nvme_shim,
    its health log with one media error from the third reading on (the probe's, the first test's
    before, after); it logs its calls. Only nvme-cli's own process gets the shim."""
    if NVME is None or shutil.which("gcc") is None:
        pytest.skip("needs nvme-cli and gcc (make test installs both)")
    pages = SN850.write(state / "pages")
    SN850.write_smart_log(state, dataclasses.replace(SN850.smart_log, media_errors=1))
    (state / "smart-log.bin").rename(state / "after.bin")
    so = build_shim(state)
    bin_dir.mkdir()
    (bin_dir / "nvme").write_text(f"""#!/bin/sh
echo "nvme $*" >> {state}/calls
if [ "$1" = smart-log ]; then
  n=$(($(cat {state}/smart-logs 2>/dev/null || echo 0) + 1)); echo $n > {state}/smart-logs
  if [ $n -ge 3 ]; then cp {state}/after.bin {pages}/smart-log.bin; fi
fi
LD_PRELOAD={so} NVME_SHIM_DEVICE=/dev/nvme0 NVME_SHIM_DIR={pages} exec {NVME} "$@"
""")
    (bin_dir / "nvme").chmod(0o755)


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


@pytest.fixture
def state(scratch, monkeypatch):
    """The pretend drive's nvme-cli first on PATH; its directory of state and call log."""
    require("wipefs", "blkdiscard")
    state = scratch / "state"
    state.mkdir()
    fake_programs(scratch / "bin", state)
    monkeypatch.setenv("PATH", f"{scratch / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return state


@contextmanager
def pretend_namespace(scratch, hwmon):
    """A loop device that the fake sysfs tree shows as namespace nvme0n1 of controller nvme0,
    whose hwmon chip holds `hwmon`; yields the device, the tree and the chip's directory."""
    with loop_device(scratch / "disk.img", size=GiB) as device:
        sysfs = FakeSysfs(scratch / "sys")
        rdev = device.stat().st_rdev
        sysfs.disk("nvme0n1", f"{os.major(rdev)}:{os.minor(rdev)}", GiB // 512, controller="nvme0", bus="nvme")
        yield device, sysfs, sysfs.nvme_controller("nvme0", hwmon=hwmon) / "hwmon1"


@pytest.mark.waits
def test_health_alarm_temperature_throttle_and_energy_on_a_pretend_nvme_drive(scratch, state, monkeypatch, capsys):
    meter = scratch / "meter.py"
    meter.write_text("import time\nt0 = time.monotonic()\nwhile True:\n"
                     "    print(f'{time.monotonic() - t0:.4f},5', flush=True)\n    time.sleep(0.05)\n")
    db = scratch / "tel.db"
    with pretend_namespace(scratch, {**CHIP, "temp1_input": "40000"}) as (device, sysfs, HeatingFio.chip):
        monkeypatch.setattr(session, "FioBackend", HeatingFio)
        request = RunRequest(target=str(device), tests=("seq-read-burst", "seq-write-burst"), scale=Scale(0.001),
                             destroy_data=device.name, db=db, power_meter=f"{sys.executable} {meter}")
        run_id = start_run(request, show_progress=True, sys_root=sysfs.root)

    # loudly, as it happened: after the first test's health log
    terminal = " ".join(capsys.readouterr().err.split())
    assert terminal.index(f"ALARM seq-read-burst: {MEDIA_ERROR}") < terminal.index("seq-write-burst")
    calls = (state / "calls").read_text().splitlines()
    # the probe reads a health log too, and asks once for the Endurance Group log this drive has not
    assert calls[:5] == ["nvme version", "nvme id-ctrl /dev/nvme0 -o json", "nvme smart-log /dev/nvme0 -o json",
                         "nvme endurance-log /dev/nvme0 --group-id=1 -o json", "nvme get-feature /dev/nvme0 -f 0x10 -H"]
    assert calls[5:] == ["nvme smart-log /dev/nvme0 -o json"] * 4  # before and after each test; hwmon between
    assert "LC_ALL" not in os.environ or os.environ["LC_ALL"] == "C"

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


@pytest.mark.parametrize("user_locale", ["en_US.UTF-8", "de_DE.UTF-8"])
def test_in_the_users_locale_the_media_error_is_still_reported(scratch, state, monkeypatch, user_locale):
    for variable in ("LC_ALL", "LC_NUMERIC", "LANGUAGE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", user_locale)
    # In this locale nvme-cli itself groups its counters' digits (the locale is installed)
    printed = subprocess.run(["nvme", "smart-log", "/dev/nvme0", "-o", "json"], capture_output=True, text=True,
                             check=True).stdout
    separator = {"en_US.UTF-8": ",", "de_DE.UTF-8": "."}[user_locale]
    assert json.loads(printed)["data_units_read"] == f"{SN850.smart_log.data_units_read:,}".replace(",", separator)
    (state / "smart-logs").unlink()  # that reading was the test's, not the run's
    db = scratch / "tel.db"
    with pretend_namespace(scratch, CHIP) as (device, sysfs, _):
        request = RunRequest(target=str(device), tests=("seq-read-burst",), scale=Scale(0.001),
                             destroy_data=device.name, db=db)
        run_id = start_run(request, show_progress=False, sys_root=sysfs.root)

    doc = json.loads(run_cli("export", str(run_id), db=db).stdout)
    assert doc["alarms"] == [{"test": "seq-read-burst", "alarm": MEDIA_ERROR}]
    (test,) = doc["tests"]
    assert test["health"]["before"]["host_read_bytes"] == SN850.smart_log.data_units_read * 512_000
    assert test["health"]["before"]["host_written_bytes"] == 2000 * 512_000  # "2.000" under de_DE: never 2
    assert doc["telemetry_notes"] == []
