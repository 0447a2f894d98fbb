"""The NVMe shim round trip: pages in, Debian's real nvme-cli (and smartctl) out, the same numbers.

tests/nvme_shim/ makes a pretend /dev/nvme0 for unmodified binaries (LD_PRELOAD); here the JSON they
print under LC_ALL=C must give back what the pages hold.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.nvme_shim import DRIVES, SmartLog, build_shim, shim_env
from tests.shim_common import find_program

DEVICE = "/dev/nvme0"


NVME = find_program("nvme")
SMARTCTL = find_program("smartctl")

pytestmark = [
    pytest.mark.skipif(NVME is None, reason="nvme-cli is not installed (Debian package nvme-cli)"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the LD_PRELOAD shim"),
]


@pytest.fixture(scope="module")
def shim_so(tmp_path_factory) -> Path:
    return build_shim(tmp_path_factory.mktemp("nvme-shim"))


def run(argv: list[str], so: Path, pages: Path, ok: tuple[int, ...] = (0,)) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env.update(shim_env(DEVICE, pages, so), LC_ALL="C")
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode in ok, f"{argv} exited {p.returncode}: {p.stderr}"
    return p.stdout


def test_id_ctrl_round_trip(shim_so, tmp_path):
    drive = DRIVES["sn850"]
    pages = drive.write(tmp_path / "sn850")
    out = json.loads(run([NVME, "id-ctrl", DEVICE, "-o", "json"], shim_so, pages))
    ctrl = drive.id_ctrl
    assert out["mn"].strip() == ctrl.mn and out["sn"].strip() == ctrl.sn and out["fr"].strip() == ctrl.fr
    assert (out["vid"], out["wctemp"], out["cctemp"], out["npss"]) == (ctrl.vid, 357, 361, 4)
    assert (out["mntmt"], out["mxtmt"], out["hctma"], out["apsta"]) == (ctrl.mntmt, ctrl.mxtmt, 1, 1)
    assert int(out["tnvmcap"]) == ctrl.tnvmcap
    assert len(out["psds"]) == 5
    for ps, got in zip(ctrl.psds, out["psds"]):
        assert got["max_power"] == ps.mp
        assert (got["entry_lat"], got["exit_lat"]) == (ps.enlat, ps.exlat)
        assert (got["idle_power"], got["active_power"]) == (ps.idlp, ps.actp)
        # nvme-cli 2.0-2.5 print the flags byte; 2.6+ split it in two
        flags = got.get("flags", got.get("max_power_scale", 0) | got.get("non-operational_state", 0) << 1)
        assert flags == ps.flags
    assert [p["max_power"] for p in out["psds"]] == [900, 410, 350, 250, 50]


def test_smart_log_round_trip_and_reread(shim_so, tmp_path):
    drive = DRIVES["sn850"]
    pages = drive.write(tmp_path / "sn850")
    argv = [NVME, "smart-log", DEVICE, "-o", "json"]
    out = json.loads(run(argv, shim_so, pages))
    log = drive.smart_log
    assert out["temperature"] == 311  # kelvin in nvme-cli's JSON
    assert int(out["data_units_read"]) == 178037231
    assert int(out["data_units_written"]) == 2000
    assert int(out["power_on_hours"]) == log.power_on_hours
    assert out["temperature_sensor_1"] == 318
    assert out["thm_temp1_trans_count"] == log.thm_temp1_trans_count

    # the shim reads the file again for every command: swap in a worn log
    worn = dataclasses.replace(log, critical_warning=0x05, percent_used=103, media_errors=12,
                               host_read_commands=2**70 + 5)
    drive.write_smart_log(pages, worn)
    out = json.loads(run(argv, shim_so, pages))
    cw = out["critical_warning"]
    assert (cw["value"] if isinstance(cw, dict) else cw) == 5
    assert out["percent_used"] == 103 and int(out["media_errors"]) == 12
    assert int(out["host_read_commands"]) == 2**70 + 5  # all 128 bits (Debian's 2.3 prints a string)


def test_get_feature_and_version(shim_so, tmp_path):
    pages = DRIVES["sn850"].write(tmp_path / "sn850")
    text = run([NVME, "get-feature", DEVICE, "-f", "0x10", "-H"], shim_so, pages)
    assert "Current value:0x01610163" in text and "353" in text and "355" in text
    apst = run([NVME, "get-feature", DEVICE, "-f", "0x0c", "-H"], shim_so, pages)
    assert "Enabled" in apst and "2000 ms" in apst
    assert run([NVME, "version"], shim_so, pages).startswith("nvme version")


def test_missing_page_is_an_nvme_error(shim_so, tmp_path):
    pages = DRIVES["sn850"].write(tmp_path / "sn850")
    env = {**os.environ, **shim_env(DEVICE, pages, shim_so), "LC_ALL": "C"}
    p = subprocess.run([NVME, "get-feature", DEVICE, "-f", "0x03"], env=env, capture_output=True, text=True)
    assert p.returncode != 0
    assert "Invalid Field" in p.stdout + p.stderr


@pytest.mark.skipif(SMARTCTL is None, reason="smartctl is not installed (Debian package smartmontools)")
def test_smartctl_round_trip(shim_so, tmp_path):
    drive = DRIVES["sn850-worn"]
    pages = drive.write(tmp_path / "worn")
    # smartctl's exit status is a bit mask; 8 = "disk failing" for this worn drive
    out = json.loads(run([SMARTCTL, "-j", "-a", DEVICE], shim_so, pages, ok=tuple(range(256))))
    assert out["model_name"] == drive.id_ctrl.mn
    health = out["nvme_smart_health_information_log"]
    log: SmartLog = drive.smart_log
    assert health["critical_warning"] == 5 and out["smart_status"]["passed"] is False
    assert health["temperature"] == log.temperature - 273  # smartctl prints Celsius
    assert health["percentage_used"] == 103 and health["media_errors"] == 12
    assert health["host_reads"] == 2**70 + 5


def test_set_feature_is_kept_for_the_next_get_and_saved_only_when_asked(shim_so, tmp_path):
    pages = DRIVES["sn850"].write(tmp_path / "sn850")
    get = [NVME, "get-feature", DEVICE, "-f", "0x06", "-H"]
    assert "(WCE): Enabled" in run(get, shim_so, pages)
    run([NVME, "set-feature", DEVICE, "-f", "0x06", "--value=0"], shim_so, pages)
    assert "(WCE): Disabled" in run(get, shim_so, pages) and not (pages / "feature-0x06.saved").exists()
    run([NVME, "set-feature", DEVICE, "-f", "0x06", "--value=1", "--save"], shim_so, pages)
    assert "(WCE): Enabled" in run(get, shim_so, pages) and (pages / "feature-0x06.saved").exists()
    # a feature the drive has no page for is refused, as is any command a fail-0xOP file names
    run([NVME, "set-feature", DEVICE, "-f", "0x03", "--value=1"], shim_so, pages, ok=(1,))
    (pages / "fail-0x09").write_text("0x4002\n")
    run([NVME, "set-feature", DEVICE, "-f", "0x06", "--value=0"], shim_so, pages, ok=(1,))
    assert "(WCE): Enabled" in run(get, shim_so, pages)


def test_sanitize_runs_for_the_polls_asked_then_ends_as_asked(shim_so, tmp_path):
    sn850 = DRIVES["sn850"]
    drive = dataclasses.replace(sn850, id_ctrl=dataclasses.replace(sn850.id_ctrl, sanicap=0x2))  # block erase
    pages = drive.write(tmp_path / "sn850")
    log = [NVME, "sanitize-log", DEVICE, "-o", "json"]

    def status() -> str:
        return next(iter(json.loads(run(log, shim_so, pages)).values()))["sstat"]["status"]

    assert status().startswith("(0)")  # never sanitized
    run([NVME, "sanitize", DEVICE, "--sanact=4"], shim_so, pages, ok=(1,))  # crypto erase: not in SANICAP
    (pages / "sanitize-polls").write_text("2\n")
    run([NVME, "sanitize", DEVICE, "--sanact=2"], shim_so, pages)
    assert [status()[:3] for _ in range(4)] == ["(2)", "(2)", "(1)", "(1)"]
    (pages / "sanitize-polls").unlink()
    (pages / "sanitize-result").write_text("3\n")
    run([NVME, "sanitize", DEVICE, "--sanact=2"], shim_so, pages)
    assert status().startswith("(3)")
