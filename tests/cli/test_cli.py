"""The command line as a user meets it: plans, listings, and clear refusals."""

import json

import pytest

from ssdlab.store import Store
from tests.conftest import run_cli

STEP_KEYS = {"rw", "bs", "iodepth", "offset", "size", "runtime", "io_size", "rwmixread", "idle_after"}


def test_tests_and_suites_list_the_catalogue():
    tests = json.loads(run_cli("tests", "--json").stdout)
    assert len(tests) == 11 + 4 + 5 + 5 + 1 + 1 + 1 + 1 + 14 and tests[0]["id"] == "rand-read-burst"
    trace = next(t for t in tests if t["id"] == "trace")
    assert len(trace["steps_per_trace"]) == 4 and tests[-1]["id"] == "pts-e-xsr"
    suites = {s["name"]: s for s in json.loads(run_cli("suites", "--json").stdout)}
    assert len(suites["client"]["tests"]) == 11
    assert set(suites) >= {"client", "quick", "lab", "enterprise", "power", "aged", "retention", "endurance", "trace",
                           "pts", "pts-enterprise"}


def test_dry_run_prints_the_plan_with_fio_meanings_and_touches_nothing(scratch):
    target = scratch / "drive.img"
    out = run_cli("run", target, "--dry-run", "--json", "--scale", "0.01", db=scratch / "x.db")
    plan = json.loads(out.stdout)
    assert not target.exists() and not (scratch / "x.db").exists()
    assert [t["id"] for t in plan["tests"]][:2] == ["rand-read-burst", "rand-read-sustained"]
    qd1 = plan["tests"][1]["steps"][2]
    assert STEP_KEYS <= set(qd1)
    assert (qd1["rw"], qd1["bs"], qd1["iodepth"], qd1["runtime"]) == ("randread", 4096, 1, 1.0)
    assert qd1["idle_after"] == pytest.approx(0.6)
    fill = plan["tests"][-1]["steps"][-1]
    assert fill["runtime"] is None and fill["io_size"] is None and fill["size"] == 1 << 30
    assert plan["estimated_seconds"] > 0


def test_dry_run_at_scale_1_is_the_methodology():
    plan = json.loads(run_cli("run", "/var/tmp/never-created.img", "--size", "1TB",
                              "--dry-run", "--json").stdout)
    step = plan["tests"][3]["steps"][2]  # rand-write-sustained QD1
    assert (step["size"], step["runtime"], step["io_size"], step["idle_after"]) == (
        64 << 30, 60.0, 32 << 30, 60.0)


@pytest.mark.parametrize("args, message", [
    (["run", "sim:no-such-drive"], "unknown simulated drive 'no-such-drive'"),
    (["run", "sim:"], "`sim:` needs a preset"),
    (["run", "/var/tmp/x.img", "--scale", "2"], "--scale must be in (0, 1]"),
    (["run", "/var/tmp/x.img", "--suite", "nope"], "unknown suite 'nope'"),
    (["run", "/var/tmp/x.img", "--tests", "nope", "--dry-run"], "unknown test 'nope'"),
    (["run", "/var/tmp/x.img", "--size", "12 parsecs", "--dry-run"], "cannot read '12 parsecs' as a size"),
    (["run", "/var/tmp/x.img", "--size", "1GiB", "--dry-run"], "smaller --scale or a larger target"),
    (["show", "12345"], "there is no ssdlab database at"),
    (["resume", "7"], "there is no ssdlab database at"),
    (["run", "/var/tmp/x.img", "--power-meter", "no-such-meter --rail 3v3", "--dry-run"],
     "'no-such-meter' is neither a program on PATH nor an executable file"),
    (["run", "/var/tmp/x.img", "--power-meter", "hwmon:/nonexistent", "--dry-run"], "no hwmon chip directory there"),
    (["run", "sim:wd-sn850-1tb", "--power-meter", "cat"], "--power-meter measures a real drive"),
])
def test_bad_input_gets_a_clear_message_not_a_traceback(scratch, args, message):
    proc = run_cli(*args, db=scratch / "empty.db", check=False)
    assert proc.returncode != 0
    assert message in " ".join((proc.stderr + proc.stdout).split())
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["show", "12345"], "there is no run 12345"),
    (["show", "latest"], "no runs"),
    (["resume", "7"], "there is no run 7"),
])
def test_a_run_that_is_not_in_the_database_is_named(scratch, args, message):
    Store(scratch / "empty.db").close()
    proc = run_cli(*args, db=scratch / "empty.db", check=False)
    assert proc.returncode == 2 and message in " ".join(proc.stderr.split())


def test_a_foreign_file_is_not_overwritten_without_force(scratch):
    precious = scratch / "precious.img"
    precious.write_bytes(b"holiday photos" * 1000)
    proc = run_cli("run", precious, "--scale", "0.001", "--tests", "rand-read-burst",
                   db=scratch / "r.db", check=False)
    assert proc.returncode != 0 and "--force" in proc.stderr
    assert precious.read_bytes() == b"holiday photos" * 1000


def test_a_suite_file_can_be_given_by_path(scratch):
    suite = scratch / "mine.toml"
    suite.write_text('name = "mine"\ndescription = "two tests"\ntests = ["seq-read-burst", "whole-drive-fill"]\n')
    plan = json.loads(run_cli("run", scratch / "d.img", "--suite", suite, "--scale", "0.01",
                              "--dry-run", "--json").stdout)
    assert [t["id"] for t in plan["tests"]] == ["seq-read-burst", "whole-drive-fill"]
    suite.write_text('name = "mine"\ndescription = "x"\ntests = ["seq-read-burst"]\ncolour = 1\n')
    proc = run_cli("run", scratch / "d.img", "--suite", suite, "--dry-run", check=False)
    assert proc.returncode == 2 and "not a valid suite" in proc.stderr
