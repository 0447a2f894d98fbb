"""The lab and enterprise suites end to end: on the simulated small drive (seconds),
on a loop device through fio (root, tens of seconds), and TRIM on a file target."""

import json

import pytest

from tests.conftest import run_cli
from tests.loop_devices import loop_device, require
from tests.paths import SMALL_PRESET as SMALL

LAB = ["seq-write-states", "rand-write-states", "trim", "max-write-latency"]
ENTERPRISE = ["qos-rand-read-qd1", "qos-rand-write-qd1", "qd1-seq-read", "qd1-seq-write", "bs-sweep"]


def run_suite(target, suite, scale, db, *extra):
    run_cli("run", target, "--suite", suite, "--scale", scale, *extra, db=db)
    return json.loads(run_cli("show", "latest", "--json", db=db).stdout)


def scores(doc):
    return {t["id"]: t["primary_score"] for t in doc["tests"]}


def check_lab(doc):
    """Every test done, every reported figure there and non-zero, the fill states recorded."""
    assert [(t["id"], t["status"]) for t in doc["tests"]] == [(t, "done") for t in LAB]
    s = scores(doc)
    for test_id in ("seq-write-states", "rand-write-states"):
        states = s[test_id]["by_state"]
        assert list(states) == ["10% filled", "90% filled", "full, half trimmed"]
        for figures in states.values():
            assert figures["measured"] and figures["mbps"] > 0 and figures["kiops"] > 0
            assert figures["stability"]["points"] >= 1 and figures["max_lat_ms"] > 0
        assert s[test_id]["value"] > 0
    trim = s["trim"]
    assert trim["value"] > 0 and trim["trim_ops"] >= 2 and trim["trimmed_bytes"] > 0
    assert trim["trim_mean_ms"] > 0 and trim["trim_max_ms"] >= trim["trim_mean_ms"]
    assert trim["write_before_mbps"] > 0 and trim["write_after_mbps"] > 0
    cases = s["max-write-latency"]["by_case"]
    assert len(cases) == 5 and all(c["measured"] and c["max_ms"] > 0 for c in cases.values())
    for test in doc["tests"]:
        for step in test["steps"]:
            if step["phase"] == "measure":
                assert step["params"]["fill_state"], (test["id"], step["label"])
                r = step["result"]
                assert r["iops"] > 0, (test["id"], step["label"])
                if step["params"]["rw"] == "trim":
                    assert r["trim"]["ios"] > 0 and r["trim"]["lat_us"]["max"] > 0
                else:
                    assert r["mbps"] > 0 and step["per_second"], (test["id"], step["label"])
    return s


def check_enterprise(doc, tests=ENTERPRISE):
    assert [(t["id"], t["status"]) for t in doc["tests"]] == [(t, "done") for t in tests]
    s = scores(doc)
    for test_id in ("qos-rand-read-qd1", "qos-rand-write-qd1"):
        if test_id in s:
            q = s[test_id]
            assert q["value"] > 0 and 0 < q["mean_us"] and 0 < q["p99_us"] <= q["p99_99_us"] <= q["max_us"]
    for test_id in ("qd1-seq-read", "qd1-seq-write"):
        if test_id in s:
            assert s[test_id]["value"] > 0
    sweep = s["bs-sweep"]["by_pattern"]
    assert list(sweep) == ["randread", "read", "randwrite", "write"]
    for points in sweep.values():
        assert len(points) == 12 and all(p["measured"] and p["iops"] > 0 and p["mbps"] > 0
                                         for p in points.values())
    for test in doc["tests"]:
        assert all(st["params"]["fill_state"] == "full" for st in test["steps"] if st["phase"] == "measure")
    return s


def test_lab_suite_on_the_simulated_drive(tmp_path):
    check_lab(run_suite(f"sim:{SMALL}", "lab", "0.01", tmp_path / "sim.db"))


def test_enterprise_suite_on_the_simulated_drive(tmp_path):
    check_enterprise(run_suite(f"sim:{SMALL}", "enterprise", "0.01", tmp_path / "sim.db"))


@pytest.mark.slow
def test_the_simulated_drive_shows_fill_states_and_trim_at_scale_1(tmp_path):
    """At scale 1 on the 16 GB preset the states are real: a nearly full drive writes
    slower, and a TRIM of half of it gives speed back."""
    s = check_lab(run_suite(f"sim:{SMALL}", "lab", "1", tmp_path / "sim.db"))
    seq = {k: v["mbps"] for k, v in s["seq-write-states"]["by_state"].items()}
    assert seq["90% filled"] < 0.8 * seq["10% filled"]
    assert seq["full, half trimmed"] > 1.1 * seq["90% filled"]
    rnd = {k: v["kiops"] for k, v in s["rand-write-states"]["by_state"].items()}
    assert rnd["90% filled"] < rnd["10% filled"] and rnd["full, half trimmed"] > rnd["90% filled"]
    assert s["seq-write-states"]["by_state"]["90% filled"]["stability"]["points"] >= 10
    assert s["trim"]["write_after_mbps"] > s["trim"]["write_before_mbps"]
    assert s["trim"]["trim_ops"] == 119     # 7.4 GiB in 64 MiB ranges
    cases = s["max-write-latency"]["by_case"]
    light = cases["light load 10 IOPS 4 KiB"]
    assert light["write_ios"] == 600 and 9.5 <= light["write_iops"] <= 10.5   # 10 IOPS, 1 minute
    # a 512 B write over data merges with the 4 KiB unit's old data: a NAND read first
    assert cases["512 B QD1 at 10% filled"]["mean_us"] > 2 * cases["4 KiB QD1"]["mean_us"]


def test_trim_on_a_file_target_punches_holes_and_says_so(scratch):
    db = scratch / "f.db"
    doc = run_suite(scratch / "drive.img", "lab", "0.001", db, "--tests", "trim", "--size", "256MiB")
    assert doc["tests"][0]["status"] == "done" and scores(doc)["trim"]["trim_ops"] == 2
    trim = [st for st in doc["tests"][0]["steps"] if st["params"]["rw"] == "trim"
            and st["phase"] == "measure"][0]
    assert "punched holes" in scores(doc)["trim"]["trim_notes"][0]
    export = json.loads(run_cli("export", "latest", db=db).stdout)
    step = [st for st in export["tests"][0]["steps"] if st["label"] == trim["label"] and st["phase"] == "measure"][0]
    assert "ioengine=falloc" in step["commands"][0] and step["result_full"]["engine"] == "falloc"


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.waits
def test_both_suites_on_a_loop_device_with_fio(scratch):
    require("blkdiscard", "wipefs")
    db = scratch / "dev.db"
    with loop_device(scratch / "disk.img", size=512 << 20) as device:
        consent = ("--destroy-data", device.name)
        lab = check_lab(run_suite(device, "lab", "0.001", db, *consent))
        # a device's TRIMs are discards, not a file's punched holes (a run this small may be
        # said to be short: the fio backend's note on runs under 10 ms)
        assert lab["trim"]["trim_ops"] == 4
        assert not any("punched holes" in n for n in lab["trim"].get("trim_notes", []))
        light = lab["max-write-latency"]["by_case"]["light load 10 IOPS 4 KiB"]
        assert light["write_ios"] <= 11 and light["write_iops"] <= 11   # fio's rate_iops holds
        check_enterprise(run_suite(device, "enterprise", "0.001", db, *consent))
    csv = run_cli("export", "latest", "--format", "csv", db=db).stdout
    assert "rate_iops,fill_state" in csv.splitlines()[0] and ",full," in csv
