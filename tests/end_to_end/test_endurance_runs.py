"""The endurance suite through the CLI. On the simulated drive: probes after each interval, its
wear, speed and health against the data written, and a drive written past its spare that goes
read-only, stopping the test with that finding. On a real file with fio: the JESD219 mix written
by fio itself, and a run stopped by Ctrl-C mid-interval that resumes at the chunk it was in,
keeping every step before it. Bad options are refused before anything is stored."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_cli_input import refused
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET

SIM = f"sim:{SMALL_PRESET}"  # 16 GB, rated 600 TBW


def shown(db: Path) -> dict:
    return json.loads(run_cli("show", "latest", "--json", db=db).stdout)


def test_a_simulated_drive_wears_interval_by_interval_and_its_probes_say_how(tmp_path):
    db, page = tmp_path / "ssdlab.db", tmp_path / "report.html"
    run_cli("run", SIM, "--suite", "endurance", "--endurance-volume", "2TB", "--endurance-probes", "4",
            "--endurance-workload", "seq", db=db)
    (test,) = shown(db)["tests"]
    score = test["primary_score"]
    assert test["status"] == "done" and score["workload"] == "seq" and score["read_only"] is None
    probes = score["probes"]
    assert len(probes) == 5
    # each interval is 0.5 TB: 16 GB sampled for real, the rest as wear at the sample's rate,
    # counted in whole erases of this drive's 24 superblocks (a few percent each); then the probe
    written = [p["written_bytes"] for p in probes]
    for k in range(1, 5):
        probed = sum(s["result"].get("write", {}).get("bytes", 0) for s in test["steps"]
                     if s["label"].startswith(f"probe {k}:"))
        assert written[k] - written[k - 1] == pytest.approx(0.5e12 + probed, rel=0.2)
    # the axis and the drive's own count of host writes agree, to a data unit per command
    assert written[-1] == pytest.approx(probes[-1]["health"]["host_written_bytes"], rel=1e-5)
    used = [p["health"]["percentage_used"] for p in probes]
    assert used[0] == 0 < used[2] < used[4]
    # sequential writes: each byte written once natively, at most once more through the cache
    assert all(1.0 <= p["write_amplification"] < 2.0 for p in probes[1:])
    assert all(p["slc_cache_gib"] > 0 and p["qd1_read_mean_us"] > 0 and p["seq_write_mbps"] > 0 for p in probes)
    ages = [s for s in test["steps"] if s["phase"] == "age"]
    assert len(ages) == 4 and all(s["params"]["age"]["unit"] == "pe" for s in ages)
    assert all(1.0 <= s["params"]["age"]["write_amplification"] < 2.0 for s in ages)
    assert f"after {probes[-1]['written_tb']:g} TB written" in score["finding"]

    run_cli("report", "latest", "-o", page, db=db)
    html = page.read_text()
    for kind in ("speed", "cache", "reads", "health", "amplified"):
        assert f'id="chart-endurance-against-written-{kind}"' in html
    assert "probes against the data written" in html
    # five fills: one chart of them all, not one each
    assert 'id="chart-endurance-fill-curve-compared"' in html and "chart-endurance-fill-curve-run-" not in html


def test_a_drive_written_past_its_spare_goes_read_only_and_the_test_ends_with_that_finding(tmp_path):
    db = tmp_path / "ssdlab.db"
    said = run_cli("run", SIM, "--suite", "endurance", "--endurance-volume", "400%", "--endurance-probes", "4",
                   "--endurance-workload", "seq", db=db).stdout
    assert "run 1 done" in said
    (test,) = shown(db)["tests"]
    score = test["primary_score"]
    stopped = score["read_only"]
    assert test["status"] == "done" and stopped["counted_from"] == "the health log"
    assert "the drive is read-only" in stopped["error"] and stopped["health"]["critical_warning"] & 8
    assert stopped["after_tb"] > score["probes"][-1]["written_tb"]
    assert f"the drive went read-only after {stopped['after_tb']:g} TB written" in score["finding"]
    # the health log after the test says so too
    assert test["health"]["after"]["critical_warning"] & 8 and test["health"]["after"]["available_spare_pct"] == 0


def steps_stored(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM steps").fetchone()[0]
    except sqlite3.OperationalError:  # not made yet
        return 0


def test_a_file_run_interrupted_mid_interval_resumes_at_the_chunk_it_was_in(scratch):
    db, target = scratch / "ssdlab.db", scratch / "drive.img"
    # 0.02 TB at scale 0.01: one interval of 200 MB, one chunk of the 256 MiB file
    args = [sys.executable, "-m", "ssdlab", "run", str(target), "--suite", "endurance", "--size", "256MiB",
            "--scale", "0.01", "--endurance-volume", "0.02TB", "--endurance-probes", "1", "--db", str(db)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while steps_stored(db) < 6 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "`ssdlab resume 1`" in err, err
    kept = {s["index"]: s["result"]["started_at"] for s in shown(db)["tests"][0]["steps"]}
    assert len(kept) >= 6

    run_cli("resume", "1", db=db)
    (test,) = shown(db)["tests"]
    # the steps stored before the stop are the same steps, not run again from the purge
    assert {s["index"]: s["result"]["started_at"] for s in test["steps"][:len(kept)]} == kept
    labels = [s["label"] for s in test["steps"]]
    assert labels[:5] == ["purge", "probe 0: trim", "probe 0: sustained write", "probe 0: sequential write",
                          "probe 0: QD1 random read"]
    assert labels[-1] == "probe 1: QD1 random read" and len(labels) == len(set(labels)) == 10
    score = test["primary_score"]
    assert len(score["probes"]) == 2 and score["workload"] == "jesd219"
    # fio wrote the JESD219 mix itself: its sizes and zones are in the job it ran
    job = json.loads(run_cli("export", "1", db=db).stdout)["tests"][0]["steps"][5]["commands"][0]
    assert "bssplit=512/4:1024/1:" in job and "random_distribution=zoned:50/5:30/15:20/80" in job
    assert score["written_bytes"] >= 2 * 10**8 and all(p["health"] is None for p in score["probes"])


@pytest.mark.parametrize(("args", "says"), [
    (("--endurance-volume", "600"), "--endurance-volume '600': give TB written (600TB"),
    (("--endurance-volume", "-5TB"), "give TB written"),
    (("--endurance-probes", "0"), "--endurance-probes 0: give 1 to 1000"),
    (("--endurance-workload", "zipf"), "--endurance-workload 'zipf': give one of seq, random, jesd219"),
])
def test_bad_endurance_options_are_refused_and_nothing_is_stored(tmp_path, args, says):
    db = tmp_path / "ssdlab.db"
    refused(run_cli("run", SIM, "--suite", "endurance", *args, db=db, check=False), says)
    assert not db.exists()


def test_a_real_target_states_its_volume_in_tb_and_the_options_need_the_test(scratch):
    db, target = scratch / "ssdlab.db", scratch / "drive.img"
    refused(run_cli("run", target, "--suite", "endurance", "--size", "64MiB", db=db, check=False),
            "give --endurance-volume, the drive's rated TBW from its datasheet (e.g. 600TB)")
    refused(run_cli("run", target, "--suite", "endurance", "--size", "64MiB", "--endurance-volume", "50%", db=db,
                    check=False), "50% is a share of the rated TBW, which this drive does not state")
    refused(run_cli("run", SIM, "--suite", "quick", "--endurance-probes", "3", db=db, check=False),
            "--endurance-probes set the endurance test, which the selected tests do not include")
    assert not db.exists() and not target.exists()
