"""`ssdlab compare`: primary scores run beside run, relative to the first run."""

import json
import sqlite3

import pytest

from ssdlab.report.summary import ScoreCell, format_value
from tests.conftest import run_cli
from tests.report_runs import synthetic_run


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "ssdlab.db"
    synthetic_run(path, ["rand-read-burst", "trim"], mbps=100.0, name="baseline")
    synthetic_run(path, ["rand-read-burst"], mbps=112.3, name="faster <i>one</i>")
    synthetic_run(path, ["rand-read-burst", "seq-write-states"], mbps=50.0)
    return path


def test_json_has_every_score_and_the_difference_to_the_first_run(db):
    doc = json.loads(run_cli("compare", "1", "2", "3", "--json", db=db).stdout)
    assert doc["runs"] == [{"id": 1, "label": "#1 baseline"},
                           {"id": 2, "label": "#2 faster <i>one</i>"},
                           {"id": 3, "label": "#3 /dev/fake0"}]
    tests = {t["id"]: t["runs"] for t in doc["tests"]}
    assert list(tests) == ["rand-read-burst", "trim", "seq-write-states"]
    base, faster, slower = tests["rand-read-burst"]
    assert base["unit"] == "MB/s" and base["relative_pct"] is None
    assert faster["value"] / base["value"] == pytest.approx(1.123, rel=1e-3)
    assert faster["relative_pct"] == pytest.approx(12.3, abs=0.01)
    assert slower["relative_pct"] == pytest.approx(-50.0, abs=0.01)
    # a test only some runs have: no score, and nothing to compare against
    assert tests["trim"][1] is None and tests["trim"][2] is None
    assert tests["seq-write-states"][0] is None
    assert tests["seq-write-states"][2]["relative_pct"] is None


def test_table_shows_values_and_signed_differences(db):
    lines = run_cli("compare", "1", "latest", db=db).stdout.splitlines()
    at = next(k for k, line in enumerate(lines) if "rand-read-burst" in line)
    assert "100.4 MB/s" in lines[at] and "50.2 MB/s" in lines[at]
    assert "-50.0 %" in lines[at + 1]  # the difference under the value
    assert not any("faster" in line for line in lines)  # run 2 was not asked for


def test_unknown_run_is_a_clear_error(db):
    proc = run_cli("compare", "1", "42", db=db, check=False)
    assert proc.returncode == 2 and "there is no run 42" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_test_that_did_not_score_shows_its_state(tmp_path):
    path = tmp_path / "ssdlab.db"
    synthetic_run(path, ["rand-read-burst", "trim"], mbps=100.0)
    synthetic_run(path, ["rand-read-burst", "trim"], mbps=100.0)
    with sqlite3.connect(path) as conn:  # as a target without what the test needs leaves it
        conn.execute("UPDATE tests SET skipped = 'no TRIM here', score = NULL WHERE run_id = 2 AND seq = 1")
    conn.close()
    doc = json.loads(run_cli("compare", "1", "2", "--json", db=path).stdout)
    trim = next(t["runs"] for t in doc["tests"] if t["id"] == "trim")
    assert trim[1] == {"value": None, "status": "skipped"}
    line = next(line for line in run_cli("compare", "1", "2", db=path).stdout.splitlines() if "trim" in line)
    assert line.rstrip(" │").endswith("skipped")


@pytest.mark.parametrize("value, unit, shown", [
    (3, "alarms", "3 alarms"), (1234, "alarms", "1,234 alarms"), (12.0, "MB/s", "12.0 MB/s"),
    (0.0931, "ms", "0.0931 ms"), (4660.04, "MB/s", "4,660.0 MB/s")])
def test_counts_are_whole_numbers_and_measures_have_their_digits(value, unit, shown):
    assert format_value(ScoreCell(value, unit, None)) == shown
