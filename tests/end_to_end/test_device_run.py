"""`ssdlab run` on a real block device (a loop device): refused until it is safe and
the user consents, then purged, tested and identified like any drive. Root only."""

import json

import pytest

from ssdlab.units import GiB
from tests.conftest import run_cli
from tests.loop_devices import loop_device, mounted, require, run

pytestmark = pytest.mark.root


def test_a_blank_device_needs_consent_then_runs_and_is_purged_with_blkdiscard(scratch):
    require("wipefs", "blkdiscard")
    db = scratch / "dev.db"
    with loop_device(scratch / "disk.img", size=GiB) as device:
        args = ("run", device, "--tests", "seq-read-burst", "--scale", "0.001")
        refused = run_cli(*args, db=db, check=False)
        assert refused.returncode == 3
        assert f"--destroy-data {device.name}" in refused.stderr and "Traceback" not in refused.stderr
        assert not db.exists() or json.loads(run_cli("runs", "--json", db=db).stdout) == []

        wrong = run_cli(*args, "--destroy-data", "loop999", db=db, check=False)
        assert wrong.returncode == 3 and "does not match" in wrong.stderr

        run_cli(*args, "--destroy-data", device.name, db=db)
        doc = json.loads(run_cli("export", "latest", db=db).stdout)
        assert doc["run"]["target_kind"] == "device" and doc["run"]["status"] == "done"
        ident = doc["run"]["identity"]
        assert ident["name"] == device.name and ident["capacity_bytes"] == GiB
        assert ident["logical_block_size"] == 512
        purge = doc["tests"][0]["steps"][0]
        assert purge["phase"] == "purge" and purge["commands"][0].startswith("blkdiscard")
        assert doc["tests"][0]["primary_score"]["value"] > 0


def test_a_mounted_device_is_refused_by_the_cli_and_its_files_are_untouched(scratch):
    require("mkfs.ext4", "mount", "wipefs")
    with loop_device(scratch / "disk.img", size=GiB) as device:
        run("mkfs.ext4", "-q", str(device))
        with mounted(device, scratch / "mnt") as mnt:
            (mnt / "thesis.txt").write_text("chapter one" * 1000)
            proc = run_cli("run", device, "--tests", "seq-read-burst", "--scale", "0.001",
                           "--destroy-data", device.name, db=scratch / "d.db", check=False)
            assert proc.returncode == 3 and "is mounted at" in proc.stderr
            assert "Nothing was written" in proc.stderr
            assert (mnt / "thesis.txt").read_text() == "chapter one" * 1000
