"""The retention suite through the CLI. On a real file with fio: the run stops after its fresh
read, waiting (runs, show), and `resume` reads it back, warning when early, reporting a block
damaged meanwhile with its offset, refusing another file. On the simulated drive: the whole test
in one go, old data on a worn drive read slower with retries, and lost where it is too old.
File runs are at a scale whose idle times are 36 ms and 0.86 s, on a 64 MiB file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ssdlab.targets import files
from ssdlab.units import MiB
from tests.cli.test_cli_input import refused
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET

SIM = f"sim:{SMALL_PRESET}"
ON_A_FILE = ("--suite", "retention", "--size", "64MiB", "--scale", "0.00001")
READS = ("fresh", "after_wait", "after_1h_idle", "after_24h_more_idle")


def shown(db: Path) -> dict:
    return json.loads(run_cli("show", "latest", "--json", db=db).stdout)


def damage(target: Path, offset: int, data: bytes) -> None:
    with open(target, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_a_file_run_waits_after_its_fresh_read_and_resumes_to_read_every_block_back(scratch):
    db, target = scratch / "ssdlab.db", scratch / "drive.img"
    said = run_cli("run", target, *ON_A_FILE, "--retention-days", "0", db=db).stdout
    assert said.startswith("run 1 waits: the retention pattern is written and read back fresh. Keep the drive "
                           "powered off at 30 °C, as stated, and come back after 20") and "`ssdlab resume 1`" in said
    doc = shown(db)
    (test,) = doc["tests"]
    assert (doc["run"]["status"], test["status"]) == ("waiting", "waiting") and doc["run"]["waiting_until"]
    assert [s["label"] for s in test["steps"]] == ["purge", "write the pattern over 64 MiB", "read fresh"]
    assert test["steps"][2]["result"]["verify"] == {"failed": 0, "ok": True, "summary": "all 512 blocks verified"}
    assert "waiting until 20" in run_cli("runs", db=db).stdout
    # another run on the file would write over the data run 1 waits to read: refused, nothing stored
    refused(run_cli("run", target, "--suite", "quick", "--scale", "0.00001", db=db, check=False),
            "run 1 waits to read back its retention pattern from this file (after 20",
            "`ssdlab resume 1`", "give --force to write over its data")
    assert [r["id"] for r in json.loads(run_cli("runs", "--json", db=db).stdout)] == [1]
    assert "for the retention read-back: keep the drive as stated, then `ssdlab resume 1`" in \
        run_cli("show", "1", db=db).stdout
    # the pattern's seed is the run's own, in every fio job that wrote or checked it
    jobs = [s["commands"][0] for s in json.loads(run_cli("export", "1", db=db).stdout)["tests"][0]["steps"][1:]]
    assert len({line for job in jobs for line in job.splitlines() if line.startswith("randseed=")}) == 1
    assert "verify_only=1" in jobs[1] and "verify_only" not in jobs[0]

    resumed = run_cli("resume", "1", db=db)  # a wait of 0 days is over: no warning
    assert "warning" not in resumed.stderr and "run 1 done" in resumed.stdout
    doc = shown(db)
    (test,) = doc["tests"]
    score = test["primary_score"]
    assert doc["run"]["status"] == test["status"] == "done" and doc["run"]["waiting_until"] is None
    assert [s["phase"] for s in test["steps"]] == ["purge", "precondition", "measure", "off", "measure", "measure",
                                                   "measure"]
    assert list(score["reads"]) == list(READS)
    for name in READS:
        read = score["reads"][name]
        assert read["mbps"] > 0 and read["verify"]["failed"] == 0 and read["verify"]["ok"]
        assert set(read["above_us"]) == {"300", "1000", "2000"} and read["tiers"] is None  # a file has no tiers
    assert score["value"] == score["reads"]["after_wait"]["mbps"] and score["finding"] == \
        "every block of every read came back intact"
    assert [score["reads"][name]["idle_before_s"] for name in READS] == [0, 0, pytest.approx(0.036),
                                                                      pytest.approx(0.864)]
    assert score["wait"] == {"planned_s": 0, "temperature_c": 30, "counted_s": 0, "early_s": 0}
    assert (score["activation_ev"], score["equivalent_days_at_30c"]) == (1.1, 0)


def test_a_block_damaged_during_the_wait_is_reported_at_its_offset_after_an_early_resume(scratch):
    db, target = scratch / "ssdlab.db", scratch / "drive.img"
    run_cli("run", target, *ON_A_FILE, "--retention-days", "2", "--retention-c", "52", db=db)
    damage(target, 5 * MiB + 100, b"\xff\xff\xff\xff")  # in the data of the block at 5 MiB
    resumed = run_cli("resume", "latest", db=db)
    assert "warning: run 1 is read back 48 h earlier than planned (its wait ends 20" in resumed.stderr
    assert "run 1 done" in resumed.stdout and "Traceback" not in resumed.stderr
    score = shown(db)["tests"][0]["primary_score"]
    assert score["reads"]["fresh"]["verify"]["failed"] == 0
    for name in READS[1:]:  # the read after the wait, and those after idle, find it
        check = score["reads"][name]["verify"]
        assert (check["failed"], check["kinds"]) == (1, {"checksum": 1})
        assert check["bad"] == [{"offset": 5 * MiB, "what": "crc32c mismatch"}]
    assert score["failed_after_wait"] == 1
    assert score["finding"] == ("read after the wait: 1 of 512 blocks differ: offset 5242880 (crc32c mismatch); "
                                "read after 0.036 s idle: the same blocks; read after 0.864 s more idle: the same "
                                "blocks")
    # read back within seconds of a 2-day plan: the time counted is that, at 52 °C
    assert 0 < score["wait"]["counted_s"] < 60 and score["wait"]["early_s"] > 2 * 86400 - 60
    assert score["equivalent_days_at_30c"] < 60 * 18 / 86400  # about 17x faster leakage at 52 °C
    assert "offset 5242880 (crc32c mismatch)" in run_cli("show", "latest", db=db).stdout


def test_a_resume_on_another_file_in_the_waiting_files_place_is_refused_and_the_run_keeps_waiting(scratch):
    db, target = scratch / "ssdlab.db", scratch / "drive.img"
    run_cli("run", target, *ON_A_FILE, "--retention-days", "1", db=db)
    other = scratch / "other.img"
    files.create(other, 64 * MiB)  # made by ssdlab, marker and all: only its identity tells it apart
    os.replace(other, target)
    os.replace(files.sidecar(other), files.sidecar(target))
    refused(run_cli("resume", "1", db=db, check=False), "run 1 wrote its retention pattern to the file with path",
            "its data would say nothing of the drive that waited")
    assert shown(db)["run"]["status"] == "waiting"


def sim_retention(db: Path, *options: str) -> dict:
    """The retention test on the small simulated drive at scale 0.1 (1.6 GB), in one go."""
    said = run_cli("run", SIM, "--suite", "retention", "--scale", "0.1", *options, db=db).stdout
    assert "waits" not in said
    (test,) = shown(db)["tests"]
    assert test["status"] == "done" and test["steps"][3]["phase"] == "off"
    return test["primary_score"]


def test_a_simulated_drive_is_off_for_the_wait_and_its_old_data_reads_slower_once_worn(tmp_path):
    young = sim_retention(tmp_path / "young.db")
    worn = sim_retention(tmp_path / "worn.db", "--age", "3000pe")
    for score in (young, worn):  # JEDEC's year at 30 °C, the preset's activation energy
        assert score["wait"] == {"planned_s": 365 * 86400, "temperature_c": 30, "counted_s": 365 * 86400,
                                 "early_s": 0}
        assert (score["equivalent_days_at_30c"], score["activation_ev"]) == (365, 1.1)
        assert score["reads"]["fresh"]["tiers"] == {"read_retries": 0, "soft_decodes": 0, "parity_rebuilds": 0,
                                                    "uncorrectable_reads": 0}
        assert score["finding"] == "every block of every read came back intact"
    # young data a year old decodes at once; a worn drive's needs read retries, and reads far slower
    assert young["reads"]["after_wait"]["tiers"]["read_retries"] == 0
    assert young["retained_pct"] > 90
    after = worn["reads"]["after_wait"]
    assert after["tiers"]["read_retries"] > after["tiers"]["soft_decodes"] > 0
    assert after["mbps"] < worn["fresh_mbps"] / 2 and worn["retained_pct"] < 50
    assert after["above_us"]["2000"] > 50 > worn["reads"]["fresh"]["above_us"]["2000"]
    assert worn["reads"]["after_1h_idle"]["idle_before_s"] == 360  # an hour, scaled, in drive time
    # powered idle: the drive refreshes data older than its preset's refresh age, and reads it faster
    # (not all of it: the superblock still open for writes keeps its data, here a large share)
    refreshed = worn["reads"]["after_1h_idle"]
    assert refreshed["mbps"] > 2 * after["mbps"]
    assert refreshed["tiers"]["read_retries"] < after["tiers"]["read_retries"] / 2


def test_data_too_old_for_every_tier_is_lost_and_said_with_its_offsets(tmp_path):
    db = tmp_path / "lost.db"
    score = sim_retention(db, "--age", "3000pe", "--retention-days", "3650", "--retention-c", "40")
    after = score["reads"]["after_wait"]
    assert after["tiers"]["parity_rebuilds"] > 0 and after["tiers"]["uncorrectable_reads"] == after["verify"]["failed"]
    assert after["verify"]["failed"] > 0 and after["verify"]["kinds"] == {"uncorrectable": after["verify"]["failed"]}
    offsets = [b["offset"] for b in after["verify"]["bad"]]
    assert len(offsets) == 10 and all(o % 4096 == 0 for o in offsets)
    assert score["failed_after_wait"] == after["verify"]["failed"]
    assert score["finding"].startswith(f"read after the wait: {after['verify']['failed']} page reads no decoding tier "
                                       f"corrected (media errors), at host offsets {offsets[0]}, ")
    assert score["equivalent_days_at_30c"] > 3650 * 3  # 40 °C leaks about 4x faster at 1.1 eV
    # the drive's own health log counts each of them as a media error, as a real drive's would: an alarm
    lost = sum(score["reads"][name]["tiers"]["uncorrectable_reads"] for name in READS)
    doc = shown(db)
    assert doc["tests"][0]["health"]["delta"]["media_errors"] == lost
    assert doc["alarms"] == [{"test": "retention", "alarm": f"{lost} new media and data integrity errors during "
                                                            "the test"}]


@pytest.mark.parametrize(("sim", "options", "says"), [
    (False, ("--retention-days", "-1"), "--retention-days must be 0 to 37037 (a century)"),
    (True, ("--retention-days", "nan"), "not nan"),
    (True, ("--retention-days", "1e9"), "not 1e+09"),
    (False, ("--retention-c", "300", "--dry-run"), "--retention-c must be -40 to 125 °C"),
    (True, ("--retention-c", "-inf", "--dry-run"), "not -inf"),
    (False, ("--tests", "seq-read-burst", "--retention-days", "30"),
     "the retention test's wait, which the selected tests do not include: add `--suite retention`"),
])
def test_a_wait_the_test_cannot_take_is_refused_before_anything_is_made(scratch, sim, options, says):
    db, target = scratch / "ssdlab.db", scratch / "drive.img"
    refused(run_cli("run", SIM if sim else target, "--suite", "retention", "--scale", "0.01", *options, db=db,
                    check=False), says)
    assert not target.exists() and not db.exists()


def test_the_plan_says_a_real_drive_waits_and_a_simulated_one_is_powered_off(scratch):
    plan = run_cli("run", scratch / "drive.img", "--suite", "retention", "--scale", "0.01", "--size", "1GiB",
                   "--retention-days", "30", "--retention-c", "40", "--dry-run").stdout
    assert ("retention: the run stops after writing and waits 30 days at 40 °C (the drive kept off as you state), "
            "then `ssdlab resume` reads it back; the wait is not in the estimate") in plan
    doc = json.loads(run_cli("run", SIM, "--suite", "retention", "--dry-run", "--json").stdout)
    (off,) = [s for s in doc["tests"][0]["steps"] if s["phase"] == "off"]
    assert off["power_off"] == {"seconds": 365 * 86400, "temperature_c": 30}
    assert "retention: the drive is powered off 365 days at 30 °C" in \
        run_cli("run", SIM, "--suite", "retention", "--dry-run").stdout
