"""`ssdlab analyze fill`: the table, the JSON, and clear refusals of bad files."""

import json

import pytest
import typer
from typer.testing import CliRunner

from ssdlab.cli.analyze import analyze_app
from ssdlab.errors import SsdlabError

CURVE = "".join(f"{g},3000\n" for g in range(1, 21)) + "".join(f"{g},1000\n" for g in range(21, 37))


@pytest.fixture
def ssdlab():
    """Run `ssdlab ARGS` with `analyze` mounted as main.py mounts it. `main` turns an
    SsdlabError into its message and exit status 2, so refusals are checked as such."""
    app = typer.Typer()
    app.add_typer(analyze_app, name="analyze")
    return lambda *args: CliRunner().invoke(app, [str(a) for a in args])


def test_json_is_the_analysis(ssdlab, tmp_path):
    csv = tmp_path / "fill.csv"
    csv.write_text("gib,mbps\n" + CURVE)
    result = ssdlab("analyze", "fill", csv, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"slc_cache_gib", "phases", "last16_mbps", "mean_mbps", "finding"}
    assert doc["slc_cache_gib"] == 20.0 and doc["last16_mbps"] == 1000.0
    assert [(p["kind"], p["start_gib"], p["end_gib"], p["mean_mbps"]) for p in doc["phases"]] == [
        ("cache", 0.0, 20.0, 3000.0), ("native", 20.0, 36.0, 1000.0)]
    assert doc["mean_mbps"] == round(36 / (20 / 3000 + 16 / 1000), 2)


def test_table_without_header_line(ssdlab, tmp_path):
    csv = tmp_path / "fill.csv"
    csv.write_text(CURVE)
    result = ssdlab("analyze", "fill", csv)
    assert result.exit_code == 0, result.output
    assert "cache" in result.stdout and "native" in result.stdout
    assert "SLC cache: about 20 GiB" in result.stdout
    assert "last 16 GiB: 1000.0 MB/s" in result.stdout


@pytest.mark.parametrize("content, message", [
    (None, "No such file"),
    ("gib,mbps\n1,100\n2,fast\n", "line 3: mbps is not a number: 'fast'"),
    ("1,100\n2,nan\n", "line 2: mbps is not a number"),
    ("gib,mbps\n1,100\n", "1 data line(s); a fill curve needs at least 2"),
    ("", "0 data line(s)"),
    ("1,100\n3,100\n2,100\n", "line 3: gib 2 is not more than the 3 before it"),
    ("1,100\n2,-5\n", "line 2: mbps must be from 0.001 to 1000000, found -5"),
    ("0,100\n1,100\n", "line 1: gib must be greater than 0"),
    ("1,100,7\n2,100\n", "line 1: expected 2 columns gib,mbps, found 3"),
    ("GiB;MB/s\n1;100\n", "line 1: expected 2 columns"),
], ids=["missing", "word", "nan", "one-point", "empty", "decreasing", "negative", "zero-gib",
        "three-columns", "wrong-separator"])
def test_bad_files_are_refused_with_what_and_where(ssdlab, tmp_path, content, message):
    csv = tmp_path / "fill.csv"
    if content is not None:
        csv.write_text(content)
    result = ssdlab("analyze", "fill", csv)
    assert isinstance(result.exception, SsdlabError) and result.stdout == ""
    assert message in str(result.exception) and str(csv) in str(result.exception)
