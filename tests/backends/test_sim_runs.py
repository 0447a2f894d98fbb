"""Suites on the simulated drive through the CLI: the same results schema as fio,
virtual time, presets validated, and resume from the preset text the run stored."""

import json
import sqlite3

from tests.conftest import run_cli
from tests.paths import SMALL_PRESET as SMALL


def test_client_suite_on_a_simulated_drive_has_the_fio_schema(tmp_path):
    db = tmp_path / "sim.db"
    run_cli("run", f"sim:{SMALL}", "--scale", "0.01", db=db)
    doc = json.loads(run_cli("show", "latest", "--json", db=db).stdout)
    assert doc["run"]["target_kind"] == "sim" and doc["engine"]["engine"] == "sim"
    assert doc["run"]["identity"]["model"] == "Small TLC drive (tests)"
    assert [t["status"] for t in doc["tests"]] == ["done"] * 11
    for test in doc["tests"]:
        assert test["primary_score"]["value"] > 0, test["id"]
        for step in test["steps"]:
            if step["phase"] == "purge":
                continue
            r = step["result"]
            assert r["iops"] > 0 and r["mbps"] > 0 and step["per_second"], (test["id"], step["label"])
            assert r["watts"] > 0 and r["mbps_per_w"] > 0, (test["id"], step["label"])  # the power model
            for direction in ("read", "write"):
                if direction in r:
                    lat = r[direction]["lat_us"]
                    assert 0 < lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["p99.99"] <= lat["max"]
    fill = doc["tests"][-1]["steps"][-1]
    assert len(fill["per_gib"]) == 16
    burst = doc["tests"][0]["steps"][-1]["result"]
    assert burst["bursts"] == 32 and burst["idle_s"] > 0


def test_a_preset_with_an_unknown_key_is_refused_by_name(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.read_text().replace("[drive.geometry]", "[drive.geometry]\nwarp_factor = 9"))
    proc = run_cli("run", f"sim:{bad}", "--dry-run", check=False)
    assert proc.returncode == 2 and "warp_factor" in proc.stderr and "Traceback" not in proc.stderr


def test_resume_of_a_simulated_run_uses_the_stored_preset(tmp_path):
    preset = tmp_path / "drive.toml"
    preset.write_text(SMALL.read_text())
    db = tmp_path / "r.db"
    run_cli("run", f"sim:{preset}", "--tests", "seq-write-burst,rand-write-burst", "--scale", "0.01", db=db)
    conn = sqlite3.connect(db)
    done_before = conn.execute("SELECT finished_at, score FROM tests WHERE seq = 0").fetchone()
    with conn:  # as a crash in the second test would leave it
        conn.execute("UPDATE tests SET status = 'running', score = NULL WHERE seq = 1")
        conn.execute("DELETE FROM steps WHERE seq = 1 AND idx > 0")
        conn.execute("UPDATE runs SET status = 'running', finished_at = NULL")
    conn.close()
    preset.write_text("this file was edited since")
    run_cli("resume", "latest", db=db)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT finished_at, score FROM tests WHERE seq = 0").fetchone() == done_before
    assert [s for s, in conn.execute("SELECT status FROM tests ORDER BY seq")] == ["done", "done"]
    assert conn.execute("SELECT count(*) FROM steps WHERE seq = 1").fetchone()[0] == 3


def test_drives_lists_the_presets():
    drives = {d["name"]: d for d in json.loads(run_cli("drives", "--json").stdout)}
    assert {"wd-black-2018-1tb", "wd-sn850-1tb", "samsung-980pro-1tb", "crucial-p5plus-1tb"} <= set(drives)
    assert drives["wd-sn850-1tb"]["capacity_bytes"] == 10**12
