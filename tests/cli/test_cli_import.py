"""`ssdlab import fio-json`: real fio outputs stored as runs, read back by `runs`, `show`,
`compare` and `report` beside a simulated run; bad files refused one by one. In-process:
the commands as main.py mounts them."""

from __future__ import annotations

import json
import socket

import pytest
import typer
from typer.testing import CliRunner

from ssdlab.cli.compare import compare_command
from ssdlab.cli.export import export_command
from ssdlab.cli.importing import import_app
from ssdlab.cli.report import report_command
from ssdlab.cli.run import run_command
from ssdlab.cli.runs import runs_command
from ssdlab.cli.show import show_command
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from tests.conftest import run_cli, table_column
from tests.paths import GOLDEN, SMALL_PRESET

DATA = GOLDEN / "fio_json"
GOOD = ["fio-3.33-several-jobs.json", "fio-3.33-jsonplus.json", "fio-3.33-client.json",
        "public/fio-3.26-windowsaio-randwrite.json"]


def mounted() -> typer.Typer:
    """The commands these tests use, mounted as main.py mounts them."""
    app = typer.Typer()
    for name, command in (("run", run_command), ("runs", runs_command), ("show", show_command),
                          ("export", export_command), ("compare", compare_command), ("report", report_command)):
        app.command(name)(command)
    app.add_typer(import_app, name="import")
    return app


APP = mounted()


def ssdlab(*args):
    result = CliRunner().invoke(APP, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Run 1: a simulated run; runs 2 to 5: the GOOD files, imported in one command."""
    path = tmp_path_factory.mktemp("import") / "ssdlab.db"
    ran = ssdlab("run", f"sim:{SMALL_PRESET}", "--tests", "seq-read-burst", "--scale", "0.001", "--db", path)
    assert ran.exit_code == 0, ran.output
    imported = ssdlab("import", "fio-json", *(DATA / f for f in GOOD), "--drive", "a drive [bold]measured[/]",
                      "--db", path)
    assert imported.exit_code == 0, imported.output
    return path, imported


def test_each_file_is_a_run_said_as_it_is_stored(db):
    _, imported = db
    lines = imported.stdout.splitlines()
    assert lines[0].endswith("fio-3.33-several-jobs.json: run 2, 3 step(s), fio-3.33, measured 2026-11-27 06:54:02 UTC")
    assert any("run 5, 1 step(s), fio-3.26" in line for line in lines)
    assert "All clients" in imported.stdout and "flags written bare" in imported.stdout


def test_imported_runs_are_listed_as_imported(db):
    path, _ = db
    runs = json.loads(ssdlab("runs", "--db", path, "--json").stdout)
    assert [(r["id"], r["suite"], r["status"], r["tests_done"]) for r in runs[1:]] == [
        (n, "fio-json (imported)", "done", 1) for n in range(2, 6)]
    assert runs[1]["name"] == "fio-3.33-several-jobs.json" and runs[1]["created_at"].startswith("2026-11-27T06:54")
    # the machine that ran each: this one for the simulated run, fio's client for the client's output
    assert [r["host"] for r in runs] == [socket.gethostname(), None, None, "localhost", None]
    table = ssdlab("runs", "--db", path).stdout
    assert "fio-json (imported)" in table and "fio-3.33-client.json" in table
    assert table_column(table, "host") == [socket.gethostname(), "", "", "localhost", ""]


def test_show_has_every_job_with_its_figures(db):
    path, _ = db
    shown = json.loads(ssdlab("show", "2", "--db", path, "--json").stdout)
    assert shown["engine"]["fio_version"] == "fio-3.33"
    assert shown["run"]["identity"]["drive"] == "a drive [bold]measured[/]"
    (test,) = shown["tests"]
    assert test["id"] == "fio-json" and test["status"] == "done"
    assert [s["label"] for s in test["steps"]] == ["seqread-128k", "randwrite-4k", "randrw-70"]
    randrw = test["steps"][2]
    assert randrw["params"]["rwmixread"] == 70 and set(randrw["result"]) >= {"read", "write"}
    table = ssdlab("show", "2", "--db", path).stdout
    assert "randrw-70" in table and "fio_version=fio-3.33" in table
    assert "drive=a drive [bold]measured[/]" in table  # a user's text is shown as text


def test_export_has_the_histogram_and_the_job(db):
    path, _ = db
    exported = json.loads(ssdlab("export", "3", "--db", path).stdout)
    step = exported["tests"][0]["steps"][0]
    assert step["result_full"]["write"]["latency"]["histogram"]
    assert step["commands"][0].startswith("[global]\n")


def test_compare_and_report_take_imported_and_simulated_runs(db, tmp_path):
    path, _ = db
    compared = json.loads(ssdlab("compare", "2", "1", "5", "--db", path, "--json").stdout)
    rows = {t["id"]: t["runs"] for t in compared["tests"]}
    assert rows["fio-json"][0] == {"value": None, "status": "done"} and rows["fio-json"][1] is None
    assert rows["seq-read-burst"][1]["unit"] == "MB/s"
    out = tmp_path / "report.html"
    reported = ssdlab("report", "2", "5", "1", "-o", out, "--db", path)
    assert reported.exit_code == 0, reported.output
    html = out.read_text()
    assert "fio-json" in html and "seqread-128k" in html and "fio-3.26" in html and "seq-read-burst" in html


def test_bad_files_are_refused_one_by_one_and_the_others_stored(tmp_path):
    db = tmp_path / "ssdlab.db"
    cut = tmp_path / "cut.json"
    cut.write_bytes((DATA / "fio-3.33-json.json").read_bytes()[:3000])
    text = tmp_path / "notes.txt"
    text.write_text("Jobs: 1 (f=1): [r(1)][100.0%]\n")
    result = ssdlab("import", "fio-json", DATA / "fio-3.33-trim.json", cut, DATA / "fio-3.33-job-error.txt",
                    text, tmp_path / "missing.json", DATA / "fio-3.33-two-clients.json", "--db", db)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 4
    assert f"{cut}: fio's JSON in it is incomplete or damaged" in errors[0]
    assert "fio-3.33-job-error.txt: fio's job 'unaligned' ended with an error: EINVAL" in errors[1]
    assert f"{text}: no fio JSON output in it" in errors[2]
    assert "cannot read the fio output" in errors[3] and "missing.json" in errors[3]
    assert "2 of 6 files imported; 4 not" in result.stderr
    with Store.open_existing(db) as store:
        assert [(r.id, r.name) for r in store.runs()] == [(1, "fio-3.33-trim.json"), (2, "fio-3.33-two-clients.json")]


def test_json_output_says_each_files_outcome(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"fio version": "fio-3.33", "timestamp": 1, "jobs": []}')
    result = ssdlab("import", "fio-json", DATA / "fio-3.33-trim.json", bad, "--name", "trims",
                    "--db", tmp_path / "x.db", "--json")
    assert result.exit_code == 2
    good, refused = json.loads(result.stdout)
    assert (good["run"], good["steps"], good["fio_version"]) == (1, 3, "fio-3.33")
    assert any("ioengine=falloc" in n["note"] for n in good["step_notes"])
    assert refused == {"file": str(bad), "error": f"{bad}: fio's JSON holds no job: record the output of a fio "
                                                  "run that ran jobs"}
    with Store.open_existing(tmp_path / "x.db") as store:
        assert store.run(1).name == "trims"


def test_the_ssdlab_command_has_it_and_says_a_refusal_in_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("fio: this is not JSON\n")
    proc = run_cli("import", "fio-json", bad, db=tmp_path / "x.db", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0] == (f"error: {bad}: no fio JSON output in it (it begins 'fio: this is not "
                                           "JSON'): give the file fio wrote with --output-format=json or json+")


@pytest.mark.parametrize("option", ["--name", "--drive"])
def test_a_name_that_is_not_utf8_is_refused_before_anything_is_stored(tmp_path, option):
    with pytest.raises(SsdlabError, match=f"{option} 'caf\\\\udcc3' is not UTF-8 text"):
        ssdlab("import", "fio-json", DATA / "fio-3.33-json.json", option, "caf\udcc3", "--db", tmp_path / "x.db")
    with Store(tmp_path / "x.db") as store:
        assert store.runs() == []
