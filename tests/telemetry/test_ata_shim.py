"""The ATA shim round trip: pages in, Debian's real smartctl out, the same numbers.

tests/ata_shim/ makes a pretend SATA SSD behind a SCSI-to-ATA translation layer at /dev/sdz for the
unmodified smartctl (LD_PRELOAD); the JSON that `smartctl -j -a /dev/sdz` (what ssdlab runs) prints
under LC_ALL=C must give back what the pages hold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.ata_shim import DRIVES, build_shim, shim_env
from tests.shim_common import find_program

DEVICE = "/dev/sdz"


SMARTCTL = find_program("smartctl")

pytestmark = [
    pytest.mark.skipif(SMARTCTL is None, reason="smartctl is not installed (Debian package smartmontools)"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the LD_PRELOAD shim"),
    pytest.mark.skipif(
        Path("/sys/block", Path(DEVICE).name).exists(), reason=f"{DEVICE} is a real disk on this machine"
    ),
]


@pytest.fixture(scope="module")
def shim_so(tmp_path_factory) -> Path:
    return build_shim(tmp_path_factory.mktemp("ata-shim"))


def smartctl_json(so: Path, pages: Path) -> tuple[int, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "ATA_SHIM_"))}
    env.update(shim_env(DEVICE, pages, so), LC_ALL="C", TZ="UTC")
    p = subprocess.run([SMARTCTL, "-j", "-a", DEVICE], env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, json.loads(p.stdout)


def test_wd_red_sa500_round_trip(shim_so, tmp_path):
    drive = DRIVES["wd-red-sa500-4t"]
    rc, out = smartctl_json(shim_so, drive.write(tmp_path / drive.name))

    assert rc == 0 and out["smartctl"]["exit_status"] == 0
    assert out["device"]["type"] == "sat" and out["device"]["protocol"] == "ATA"  # autodetected SAT
    assert out["model_name"] == drive.model
    assert out["serial_number"] == drive.serial
    assert out["firmware_version"] == drive.firmware
    assert out["user_capacity"]["bytes"] == drive.sectors * 512
    assert out["in_smartctl_database"] is False  # the 2022 database knows the 1 and 2 TB SA500 only
    assert out["power_on_time"]["hours"] == 8244
    assert out["power_cycle_count"] == 12
    assert out["temperature"]["current"] == 36
    assert out["smart_status"]["passed"] is True

    table = {a["id"]: a for a in out["ata_smart_attributes"]["table"]}
    assert table[241]["raw"]["value"] == drive.attribute(241).raw == 173800
    assert table[241]["name"] == "Total_LBAs_Written"  # the default name, though the drive counts GiB
    assert table[242]["raw"]["value"] == 58000
    assert table[9]["raw"]["value"] == 8244


def test_failing_status_and_missing_log(shim_so, tmp_path):
    """A drive whose RETURN STATUS fails and which lacks the self-test log: smartctl's own verdicts."""
    pages = DRIVES["acme-1t"].write(tmp_path / "acme")
    (pages / "smart-status-failing").touch()
    (pages / "smart-log-0x06.bin").unlink()
    rc, out = smartctl_json(shim_so, pages)

    assert out["smart_status"]["passed"] is False
    assert rc & 0x08  # bit 3: SMART status says "DISK FAILING"
    assert out["smartctl"]["exit_status"] == rc
    assert "ata_smart_self_test_log" not in out
