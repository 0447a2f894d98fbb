"""Sixteen simulated runs started at once on a new database: every one completes, each
with its own id and results, and the database stays whole."""

import json
import sqlite3
import subprocess
import sys

from tests.conftest import run_cli

RUNS = 16


def test_sixteen_runs_at_once_on_a_new_database_all_complete(tmp_path):
    db = tmp_path / "new" / "ssdlab.db"
    argv = [sys.executable, "-m", "ssdlab", "run", "sim:wd-sn850-1tb", "--suite", "quick",
            "--scale", "0.01", "--db", str(db), "--json"]
    procs = [subprocess.Popen([*argv, "--name", f"run {i}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(RUNS)]
    outputs = [p.communicate(timeout=600) for p in procs]
    for proc, (_, stderr) in zip(procs, outputs):
        assert proc.returncode == 0, stderr
    documents = [json.loads(stdout) for stdout, _ in outputs]
    assert sorted(d["run"]["id"] for d in documents) == list(range(1, RUNS + 1))

    runs = json.loads(run_cli("runs", "--json", db=db).stdout)
    assert sorted(r["name"] for r in runs) == sorted(f"run {i}" for i in range(RUNS))
    assert {r["status"] for r in runs} == {"done"}
    assert {(r["tests_done"], r["tests"]) for r in runs} == {(4, 4)}
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # each run stored its own steps: the same simulated drive gives the same counts
        counts = conn.execute(
            "SELECT run_id, group_concat(seq || '.' || idx || ':' || coalesce(json_extract("
            "result, '$.read.ios'), 0) || '/' || coalesce(json_extract(result, '$.write.ios'), 0),"
            " ' ') FROM (SELECT * FROM steps ORDER BY run_id, seq, idx) GROUP BY run_id").fetchall()
    finally:
        conn.close()
    assert len(counts) == RUNS and len({c for _, c in counts}) == 1
