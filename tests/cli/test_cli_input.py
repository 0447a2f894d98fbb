"""Bad input through the command line: a plain one-line message and an exit status,
never a traceback; and names from users shown literally, never obeyed by the terminal."""

import json
import shutil
import socket
import sqlite3

import pytest

from ssdlab.store import Store
from ssdlab.units import GiB, KiB, MiB, TiB, format_bytes
from tests.conftest import run_cli, table_column
from tests.loop_devices import loop_device, require, run
from tests.paths import SMALL_PRESET as SMALL

SIM = f"sim:{SMALL}"
ESC_NAME = "\x1b[31mred [bold]bold"
SHOWN_NAME = "\\x1b[31mred [bold]bold"  # the ESC as an escape, the markup as typed
LONG_NAME = "a-run-name-long-enough-that-an-80-column-table-would-have-to-cut-or-wrap-it"
NOT_UTF8 = "\udcff"  # how Python hands over the byte 0xff of a command line (surrogateescape)


def refused(proc, *phrases, status=2):
    """The command failed with `status` and one plain line that holds every phrase."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == status, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for noise in ("Traceback", "validation error for", "errors.pydantic.dev"):
        assert noise not in proc.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Run 1: a name with an ESC and rich markup, at scale 0.001; run 2: a long name, 0.002."""
    path = tmp_path_factory.mktemp("input") / "ssdlab.db"
    run_cli("run", SIM, "--tests", "seq-read-burst", "--scale", "0.001", "--name", ESC_NAME, db=path)
    run_cli("run", SIM, "--tests", "seq-read-burst", "--scale", "0.002", "--name", LONG_NAME, db=path)
    return path


# -- files that are not UTF-8 text, and a byte-order mark ------------------------------

def test_a_suite_file_that_is_not_utf8_is_refused(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_bytes(b'name = "x"\ndescription = "\xff"\ntests = ["seq-read-burst"]\n')
    refused(run_cli("run", SIM, "--suite", suite, "--dry-run", check=False),
            "is not UTF-8 text (byte 0xff on line 2)")


def test_a_preset_file_that_is_not_utf8_is_refused(tmp_path):
    preset = tmp_path / "drive.toml"
    preset.write_bytes(SMALL.read_bytes().replace(b"Small TLC", b"Small \xff TLC"))
    refused(run_cli("run", f"sim:{preset}", "--dry-run", check=False), "is not UTF-8 text")


def test_a_fio_job_file_that_is_not_utf8_is_refused(tmp_path):
    job = tmp_path / "job.fio"
    job.write_bytes(b"[a]\nrw=read\nsize=1m\nname=\xfe\n")
    refused(run_cli("sim", "fio", job, "--drive", SMALL, check=False),
            "is not UTF-8 text (byte 0xfe on line 4)")


def test_a_fill_csv_that_is_not_utf8_is_refused(tmp_path):
    csv = tmp_path / "fill.csv"
    csv.write_bytes(b"gib,mbps\n1,100\n2,\xff\n")
    refused(run_cli("analyze", "fill", csv, check=False), "is not UTF-8 text (byte 0xff on line 3)")


def test_a_fill_csv_header_after_a_byte_order_mark_is_read(tmp_path):
    csv = tmp_path / "fill.csv"
    csv.write_bytes("\ufeffgib,mbps\n1,3000\n2,3000\n3,1000\n".encode())
    doc = json.loads(run_cli("analyze", "fill", csv, "--json").stdout)
    assert doc["phases"][0]["start_gib"] == 0.0


@pytest.mark.parametrize("content, phrase", [
    (b"gib,mbps\n1,1\x00\n2,2\n", "mbps is not a number"),
    (b"gib,mbps\n1,1e-9\n2,2\n", "mbps must be from 0.001 to 1000000"),
    (b"gib,mbps\n1e300,100\n2e300,100\n", "gib must be greater than 0 and at most 1000000"),
    (b"gib,mbps\n" + b"1" * 200_000 + b",1\n", "not a CSV file"),  # over the csv field limit
])
def test_a_fill_csv_with_nonsense_is_refused(tmp_path, content, phrase):
    csv = tmp_path / "fill.csv"
    csv.write_bytes(content)
    refused(run_cli("analyze", "fill", csv, check=False), phrase)


# -- command-line values --------------------------------------------------------------

def test_a_run_name_that_is_not_utf8_is_refused_and_nothing_is_stored(tmp_path):
    db = tmp_path / "x.db"
    refused(run_cli("run", SIM, "--tests", "seq-read-burst", "--scale", "0.001",
                    "--name", f"run {NOT_UTF8}", db=db, check=False),
            "--name", "is not UTF-8 text")
    assert not db.exists()


@pytest.mark.parametrize("command", [["show"], ["export"], ["resume"], ["compare", "1"],
                                     ["report", "-o", "r.html", "1"]])
@pytest.mark.parametrize("run_id", ["99999999999999999999999", "9223372036854775808", "①"])
def test_run_ids_that_cannot_be_runs_are_refused(tmp_path, command, run_id):
    Store(tmp_path / "x.db").close()
    refused(run_cli(*command, run_id, db=tmp_path / "x.db", check=False, cwd=tmp_path),
            f"{run_id!r} is not a run id")


@pytest.mark.parametrize("args, phrase", [
    (["--size", "99999999999999999999TB"], "sizes go up to 9223372036854775807 bytes"),
    (["--size", "0.5"], "is not a whole number of bytes"),
    (["--scale", "-1"], "--scale must be in (0, 1], got -1"),
    (["--scale", "nan"], "--scale must be in (0, 1], got nan"),
    (["--scale", "inf"], "--scale must be in (0, 1], got inf"),
    (["--tests", ","], "--tests names no test"),
    (["--tests", ""], "--tests names no test"),
    (["--tests", "seq-read-burst, seq-read-burst"], "--tests names 'seq-read-burst' more than once"),
    (["--tests", "seq-read-burst,nope"], "unknown test 'nope'"),
])
def test_nonsense_options_of_run_are_refused_and_nothing_is_stored(tmp_path, args, phrase):
    db = tmp_path / "x.db"
    refused(run_cli("run", tmp_path / "d.img", *args, db=db, check=False), phrase)
    refused(run_cli("run", SIM, "--scale", "0.001", *args, db=db, check=False), phrase)
    assert not db.exists()


# -- fio job files for the simulator --------------------------------------------------

@pytest.mark.parametrize("option, phrase", [
    ("bs=0", "bs=0: must be from 512 B to 1 GiB"),
    ("bs=1000", "bs=1000: must be a multiple of 512 bytes"),
    ("bs=-4k", "bs=-4k: '-4k' is not a size"),
    ("bs=2g", "bs=2g: must be from 512 B to 1 GiB"),
    ("bs=4q", "bs=4q: '4q' is not a size"),
    ("bs=" + "9" * 100, "is too large"),
    ("thinktime_blocks=0", "thinktime_blocks=0: must be from 1 to 2147483647"),
    ("thinktime=2h", "thinktime=2h: must be from 0 s to 3,600 s"),
    ("size=0", "size=0: must be from 4 KiB to 14.90 GiB"),
    ("size=20g", "size=20g: must be from 4 KiB to 14.90 GiB"),
    ("size=0%", "'0%' is not a share of the device between 0 and 100 %"),
    ("offset=20g", "offset=20g: must be from 0 B to 14.90 GiB"),
    ("io_size=1k", "io_size=1k: must be from 4 KiB to"),
    ("iodepth=0", "iodepth=0: must be from 1 to 4096"),
    ("iodepth=99999999999999999999999", "must be from 1 to 4096"),
    ("iodepth=two", "iodepth=two: 'two' is not a whole number"),
    ("rwmixread=150", "rwmixread=150: must be from 0 to 100"),
    ("rwmixwrite=-5", "rwmixwrite=-5: '-5' is not a whole number"),
    ("runtime=0", "runtime=0: must be more than 0 s and at most 1,000,000 s"),
    ("runtime=1e5", "'1e5' is not a time"),
    ("time_based=2", "time_based=2: '2' is not 0 or 1"),
    ("rw=sideways", "rw=sideways: 'sideways' is not an I/O pattern: write one of read, write"),
])
def test_fio_job_values_out_of_range_are_refused_naming_the_option_and_range(tmp_path, option, phrase):
    job = tmp_path / "job.fio"
    job.write_text(f"[mixed]\nrw=randrw\nsize=1m\n{option}\n")
    refused(run_cli("sim", "fio", job, "--drive", SMALL, check=False),
            f"job.fio: job [mixed] (line 1): {option.split('=')[0]}=", phrase)


def test_a_fio_job_over_the_whole_drive_says_so(tmp_path):
    job = tmp_path / "job.fio"
    job.write_text("[fill]\nrw=write\nbs=1m\n[short]\nrw=write\nsize=1m\n")
    proc = run_cli("sim", "fio", job, "--drive", SMALL)
    note = ("note: job [fill] has no size=, io_size= or runtime=, so it simulates the whole "
            "drive's capacity: write of 14.90 GiB (15,999,172,608 bytes); add size= for a "
            "shorter job")
    assert [line for line in proc.stderr.splitlines() if line.startswith("note:")] == [note]


# -- names shown literally ------------------------------------------------------------

def test_runs_shows_names_escaped_and_whole_rows_when_piped(db):
    out = run_cli("runs", db=db).stdout
    assert "\x1b" not in out and SHOWN_NAME in out
    rows = [line for line in out.splitlines() if LONG_NAME in line]
    assert len(rows) == 1 and str(SMALL) in rows[0]  # one full row, nothing cut


def test_runs_shows_the_host_that_made_each_run(db):
    assert table_column(run_cli("runs", db=db).stdout, "host") == [socket.gethostname()] * 2
    runs = json.loads(run_cli("runs", "--json", db=db).stdout)
    assert [r["host"] for r in runs] == [socket.gethostname()] * 2
    assert f"host: {socket.gethostname()}" in run_cli("show", "1", db=db).stdout.splitlines()


def test_show_prints_the_name_escaped_and_the_status(db):
    out = run_cli("show", "1", db=db).stdout
    assert "\x1b" not in out
    assert f"run 1 {SHOWN_NAME}" in out and "[done]" in out.splitlines()[0]


def test_compare_prints_names_escaped_and_warns_of_different_scales(db):
    proc = run_cli("compare", "1", "2", db=db)
    assert "\x1b" not in proc.stdout and f"#1 {SHOWN_NAME}" in proc.stdout
    warning = ("warning: the runs were made at different scales (run 1 at 0.001, run 2 at 0.002): "
               "their scores are not comparable")
    assert proc.stderr.strip() == warning
    doc = json.loads(run_cli("compare", "1", "2", "--json", db=db).stdout)
    assert doc["warnings"] == [warning.removeprefix("warning: ")]


def test_compare_of_runs_at_one_scale_has_no_warning(db):
    proc = run_cli("compare", "2", "--json", db=db)
    assert json.loads(proc.stdout)["warnings"] == [] and proc.stderr == ""


def test_charts_of_a_run_named_with_control_characters_export(db, tmp_path):
    run_cli("report", "1", "-o", tmp_path / "r.html", "--png", tmp_path / "png",
            "--svg", tmp_path / "svg", db=db)
    svg = next((tmp_path / "svg").glob("*.svg")).read_text()
    assert "\x1b" not in svg and "\\x1b[31mred" in svg
    assert next((tmp_path / "png").glob("*.png")).stat().st_size > 0


# -- plans ----------------------------------------------------------------------------

def test_a_dry_run_on_a_simulated_drive_says_its_time_is_the_drives(tmp_path):
    plan = ("--tests", "seq-read-burst", "--scale", "0.01", "--dry-run")
    out = run_cli("run", SIM, *plan).stdout
    assert "estimated drive time: " in out and "virtual time, not wall time" in out
    assert json.loads(run_cli("run", SIM, *plan, "--json").stdout)["clock"] == "drive"
    doc = json.loads(run_cli("run", tmp_path / "d.img", "--size", "1GiB", *plan, "--json").stdout)
    assert doc["clock"] == "wall" and doc["refusals"] == []


@pytest.mark.root
def test_a_dry_run_on_a_device_the_run_will_refuse_says_so_and_why(tmp_path):
    require("mkfs.ext4", "wipefs")
    with loop_device(tmp_path / "disk.img", size=GiB) as device:
        run("mkfs.ext4", "-q", str(device))
        plan = ("--tests", "seq-read-burst", "--scale", "0.01", "--dry-run")
        lines = run_cli("run", device, *plan).stdout.splitlines()
        at = lines.index("the real run will refuse this device:")
        assert "signatures of a filesystem" in lines[at + 1] and "(ext4)" in lines[at + 1]
        doc = json.loads(run_cli("run", device, *plan, "--json").stdout)
        assert len(doc["refusals"]) == 1 and "(ext4)" in doc["refusals"][0]


# -- resume --------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_resume_on_a_file_ssdlab_no_longer_recognises_does_not_advise_force(scratch):
    db, target = scratch / "r.db", scratch / "d.img"
    run_cli("run", target, "--size", "1GiB", "--tests", "seq-write-burst", "--scale", "0.001", db=db)
    with sqlite3.connect(db) as conn:  # as an interrupted run would be
        conn.execute("UPDATE tests SET status = 'running'")
        conn.execute("UPDATE runs SET status = 'failed'")
    conn.close()
    target.with_name("d.img.ssdlab").unlink()  # the marker is gone: not provably ours
    message = refused(run_cli("resume", "latest", db=db, check=False))
    assert "--force" not in message and "no longer the file this run wrote" in message


# -- units ---------------------------------------------------------------------------

@pytest.mark.parametrize("nbytes, shown", [
    (0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1025, "1025 B"), (1034, "1034 B"),
    (1035, "1.01 KiB"), (4095, "3.99 KiB"), (4096, "4 KiB"), (4097, "4097 B"),
    (MiB - 1, "1023.99 KiB"), (MiB, "1 MiB"), (1536 * MiB, "1.50 GiB"), (GiB + 1, "1073741825 B"),
    (GiB + 100 * KiB, "1024.09 MiB"), (10**12, "931.32 GiB"), (2 * TiB - 1, "1.99 TiB"),
    (1024 * TiB, "1024 TiB"), (-4095, "-3.99 KiB"), (2**61 + 1, "2305843009213693953 B"),
])
def test_sizes_are_never_printed_rounded_up_to_look_exact(nbytes, shown):
    assert format_bytes(nbytes) == shown
