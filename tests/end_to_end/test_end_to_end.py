"""Whole runs through the CLI on a file target with the real fio: the client suite
at small scale, and resumption after the process is killed."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow


@pytest.mark.waits
def test_client_suite_at_small_scale_on_a_file(scratch):
    db = scratch / "e2e.db"
    run_cli("run", scratch / "drive.img", "--scale", "0.001", "--name", "<i>e2e</i>", db=db)
    doc = json.loads(run_cli("show", "latest", "--json", db=db).stdout)
    assert doc["run"]["status"] == "done" and doc["run"]["name"] == "<i>e2e</i>"
    assert len(doc["tests"]) == 11
    for test in doc["tests"]:
        assert test["status"] == "done", test
        assert test["primary_score"]["value"] > 0, test["id"]
        for step in test["steps"]:
            if step["phase"] == "purge":
                continue
            r = step["result"]
            assert r["iops"] > 0 and r["mbps"] > 0, (test["id"], step["label"])
            for direction in ("read", "write"):
                if direction in r:
                    assert r[direction]["lat_us"]["p99"] > 0
            assert step["per_second"], (test["id"], step["label"])
    fill = doc["tests"][-1]["steps"][-1]
    assert len(fill["per_gib"]) == 16 and all(p["mbps"] > 0 for p in fill["per_gib"])
    burst = doc["tests"][0]["steps"][-1]["result"]
    assert burst["bursts"] == 32 and burst["idle_s"] > 0
    sustained = doc["tests"][1]["primary_score"]
    assert set(sustained["by_qd"]) == {"1", "2", "4", "8", "16", "32"}
    assert doc["engine"]["fio_version"].startswith("fio-")
    assert doc["run"]["identity"]["path"].endswith("drive.img")
    assert doc["run"]["host"]["kernel"]

    exported = json.loads(run_cli("export", "latest", "--format", "json", db=db).stdout)
    job = exported["tests"][1]["steps"][2]["commands"][0]
    assert "rw=randread" in job and "iodepth=1" in job and "direct=1" in job
    csv_text = run_cli("export", "latest", "--format", "csv", db=db).stdout
    header, *rows = csv_text.strip().splitlines()
    assert "read_lat_p99_us" in header and len(rows) == sum(len(t["steps"]) for t in doc["tests"])


def _tests_state(db):
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT seq, status, finished_at FROM tests ORDER BY seq").fetchall(), \
            conn.execute("SELECT seq, count(*) FROM steps GROUP BY seq").fetchall()
    except sqlite3.OperationalError:
        return [], []
    finally:
        conn.close()


def _kill_when(db, proc, ready):
    while proc.poll() is None:
        if db.exists() and ready(*_tests_state(db)):
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return
        time.sleep(0.05)
    raise AssertionError(f"the run ended before the kill point: {proc.stderr.read()}")


@pytest.mark.parametrize("kill_point", ["first-test", "mid-second-test"])
def test_a_run_killed_with_sigkill_resumes_without_losing_or_rerunning_tests(scratch, kill_point):
    db = scratch / "resume.db"
    tests = "seq-read-burst,seq-read-sustained,seq-write-burst"
    proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", scratch / "drive.img", "--scale", "0.001",
                             "--tests", tests, "--db", db, "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if kill_point == "first-test":
        _kill_when(db, proc, lambda tests, steps: dict(steps).get(0, 0) >= 1)
    else:
        _kill_when(db, proc, lambda tests, steps: dict(steps).get(1, 0) >= 4)

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    before = conn.execute("SELECT seq, status, finished_at, score FROM tests ORDER BY seq").fetchall()
    done_steps = conn.execute("SELECT seq, idx, result FROM steps WHERE seq IN "
                              "(SELECT seq FROM tests WHERE status = 'done') ORDER BY seq, idx").fetchall()
    conn.close()
    assert [s for _, s, _, _ in before] == (
        ["running", "pending", "pending"] if kill_point == "first-test" else ["done", "running", "pending"])

    run_cli("resume", "latest", db=db)

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    after = conn.execute("SELECT seq, status, finished_at, score FROM tests ORDER BY seq").fetchall()
    assert [s for _, s, _, _ in after] == ["done", "done", "done"]
    for old, new in zip(before, after):
        if old[1] == "done":
            assert old == new  # never run again
    finished = ",".join(str(s) for s, st, _, _ in before if st == "done") or "-1"
    assert conn.execute(f"SELECT seq, idx, result FROM steps WHERE seq IN ({finished})"
                        " ORDER BY seq, idx").fetchall() == done_steps
    counts = dict(conn.execute("SELECT seq, count(*) FROM steps GROUP BY seq").fetchall())
    assert counts == {0: 3, 1: 8, 2: 3}  # no step of an interrupted attempt is left behind
    assert conn.execute("SELECT status FROM runs").fetchone()[0] == "done"
    conn.close()
    proc = run_cli("resume", "latest", db=db, check=False)
    assert proc.returncode == 2 and "already complete" in proc.stderr
