"""sim fio's log files (write_lat_log, write_bw_log, write_iops_log) as fio 3.33 writes them.

The golden logs (tests/golden/fio_logs/, README there) are real fio 3.33's: their names,
their columns, and, replayed, their values per I/O."""

import os
import re
import shutil
import subprocess

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.simfio import logs
from ssdlab.simfio.logs import FioLogOptions, IoRecord, fio_log_files, fio_log_lines, ioprio_value, write_fio_logs
from tests.paths import GOLDEN

GOLDEN_LOGS = GOLDEN / "fio_logs"
FIO = shutil.which("fio")
MS = 1_000_000

# the jobs of each golden job file, as the caller parses them
CASES = {
    "perio": [FioLogOptions("perio", 1, lat_log="perio", bw_log="perio", iops_log="perio")],
    "offset": [FioLogOptions("first", 1, iops_log="first"),
               FioLogOptions("offset", 2, lat_log="offset", bw_log="offset", iops_log="offset",
                             log_offset=True, log_prio=True)],
    "avg": [FioLogOptions("avg", 1, lat_log="avg", bw_log="avg", iops_log="avg", log_avg_msec=100,
                          log_offset=True),
            FioLogOptions("max", 2, lat_log="max", bw_log="max", iops_log="max", log_avg_msec=100,
                          log_max_value=True)],
    # libaio: fio times submissions; two jobs named aio, per_job_logs=0, names from the job
    "shared": [FioLogOptions("aio", n, lat_log="", iops_log="", per_job_logs=False, slat_measured=True)
               for n in (1, 2)],
}


def records_of(lines, bs=4096):
    """Records whose log lines are these (time ms, clat ns, ddir, bs[, offset]) lines: each
    completes in the last ns of its line's ms."""
    out = []
    for cols in lines:
        t, lat, ddir, size = map(int, cols[:4])
        offset = int(cols[4]) if len(cols) == 6 else 0
        out.append(IoRecord(t * MS + MS - 1, lat, ddir, size, offset))
    return out


def read_log(path):
    return [line.split(", ") for line in path.read_text().splitlines()]


def shape(line):
    """Each column's kind: an integer or fio's hex priority; None for anything else
    (another separator, a float, a space)."""
    kinds = []
    for col in line.rstrip("\n").split(", "):
        kinds.append("int" if re.fullmatch(r"[0-9]+", col) else
                     "hex" if re.fullmatch(r"0x[0-9a-f]{4}", col) else None)
    return tuple(kinds)


def mixed_records(n=40, bs=4096):
    """n I/Os, reads and writes, one every 3 ms, of 50 to 89 us."""
    return [IoRecord((i + 1) * 3 * MS, 50_000 + 1000 * i, i % 2, bs, i * bs) for i in range(n)]


# -- (a) names ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_file_names_as_fio(case, tmp_path):
    golden = {p.name for p in (GOLDEN_LOGS / case).glob("*.log")}
    for options in CASES[case]:
        write_fio_logs(options, mixed_records(), directory=tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == golden
    assert {f.name for o in CASES[case] for f in fio_log_files(o)} == golden


def test_names_as_fio_builds_them():
    o = FioLogOptions("job", 3, lat_log="logs/x", bw_log="", iops_log=None)
    assert [(f.kind, f.name, f.option) for f in fio_log_files(o)] == [
        ("lat", "logs/x_lat.3.log", "write_lat_log"), ("slat", "logs/x_slat.3.log", "write_lat_log"),
        ("clat", "logs/x_clat.3.log", "write_lat_log"), ("bw", "job_bw.3.log", "write_bw_log")]
    shared = FioLogOptions("job", 3, bw_log="x", per_job_logs=False)
    assert [f.name for f in fio_log_files(shared)] == ["x_bw.log"]
    assert [f.name for f in fio_log_files(FioLogOptions("job", 1))] == []
    # disable_lat/disable_slat/disable_clat leave out their file
    assert [f.kind for f in fio_log_files(FioLogOptions("j", 1, lat_log="", disable_slat=True))] == ["lat", "clat"]


def test_a_synchronous_engines_slat_log_is_empty_as_fios(tmp_path):
    assert (GOLDEN_LOGS / "perio" / "perio_slat.1.log").stat().st_size == 0
    write_fio_logs(CASES["perio"][0], mixed_records(), directory=tmp_path)
    assert (tmp_path / "perio_slat.1.log").stat().st_size == 0


def test_logs_are_written_without_records(tmp_path):
    paths = write_fio_logs(CASES["perio"][0], [], directory=tmp_path)
    assert len(paths) == 5 and all(p.stat().st_size == 0 for p in paths)


# -- (b) columns and format ------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_columns_as_fio(case, tmp_path):
    for options in CASES[case]:
        write_fio_logs(options, mixed_records(), directory=tmp_path)
    for golden in (GOLDEN_LOGS / case).glob("*.log"):
        theirs = {shape(line) for line in golden.read_text().splitlines()}
        ours = {shape(line) for line in (tmp_path / golden.name).read_text().splitlines()}
        assert None not in {k for s in ours for k in s}, golden.name
        assert ours == theirs, golden.name


@pytest.mark.parametrize("log_offset, log_prio, expected", [
    (False, False, "3, 50000, 0, 4096, 0\n"),
    (True, False, "3, 50000, 0, 4096, 0, 0\n"),
    (False, True, "3, 50000, 0, 4096, 0x0000\n"),
    (True, True, "3, 50000, 0, 4096, 0, 0x0000\n")])
def test_line_format(log_offset, log_prio, expected):
    o = FioLogOptions("j", 1, lat_log="", log_offset=log_offset, log_prio=log_prio)
    assert next(fio_log_lines(o, "lat", mixed_records())) == expected


def test_the_priority_column():
    rt = ioprio_value(1, 4)                 # prioclass=1 (real time), prio=4
    be = ioprio_value(0, 3)                 # prio=3 alone: best effort, as fio's 0x4003
    assert (rt, be) == (0x2004, 0x4003)

    def line(**kw):
        return next(fio_log_lines(FioLogOptions("j", 1, iops_log="", **kw), "iops", mixed_records()))

    assert line(ioprio=rt) == "3, 1, 0, 4096, 1\n"
    assert line(ioprio=be) == "3, 1, 0, 4096, 0\n"
    assert line(ioprio=be, log_prio=True) == "3, 1, 0, 4096, 0x4003\n"
    # a window's line has priority 0
    assert line(ioprio=rt, log_avg_msec=1) == "3, 1000, 0, 0, 0\n"   # 1 I/O in 1 ms


# -- (c) a line per I/O -----------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["lat", "clat", "bw", "iops"])
def test_a_line_per_io_in_completion_order(kind):
    records = mixed_records()
    shuffled = records[1::2] + records[::2]
    o = FioLogOptions("j", 1, lat_log="", bw_log="", iops_log="", log_offset=True)
    lines = [line.split(", ") for line in fio_log_lines(o, kind, shuffled)]
    assert len(lines) == len(records)
    for cols, r in zip(lines, records):
        assert [int(c) for c in cols[2:5]] == [r.ddir, r.bs, r.offset]
        assert int(cols[0]) == r.done_ns // MS
        value = int(cols[1])
        assert value == {"lat": r.latency_ns, "clat": r.latency_ns, "iops": 1,
                         "bw": r.bs * 1_000_000 // r.latency_ns}[kind]


def test_bw_per_io_is_bytes_per_ms_of_clat():
    o = FioLogOptions("j", 1, bw_log="")
    records = [IoRecord(5 * MS, 31066, 1, 4096, 0), IoRecord(6 * MS, 0, 0, 4096, 0),
               IoRecord(7 * MS, 2 * MS, 2, 1 << 20, 0)]
    assert list(fio_log_lines(o, "bw", records)) == [
        "5, 131848, 1, 4096, 0\n", "6, 0, 0, 4096, 0\n", "7, 524288, 2, 1048576, 0\n"]


def test_slat_of_an_asynchronous_engine_a_zero_per_io_at_its_issue():
    o = FioLogOptions("j", 1, lat_log="", slat_measured=True, log_offset=True)
    records = [IoRecord(10 * MS, 9 * MS, 0, 4096, 0),      # issued at 1 ms
               IoRecord(5 * MS, 1 * MS, 1, 8192, 4096)]    # issued at 4 ms
    assert list(fio_log_lines(o, "slat", records)) == ["1, 0, 0, 4096, 0, 0\n", "4, 0, 1, 8192, 4096, 0\n"]
    assert list(fio_log_lines(FioLogOptions("j", 1, lat_log=""), "slat", records)) == []


@pytest.mark.parametrize("case, job, log", [("perio", 0, "perio_clat.1.log"),
                                             ("offset", 1, "offset_clat.2.log")])
def test_fios_own_ios_replayed_give_its_logs(case, job, log):
    """fio's clat log as records: the clat, bw and iops logs are fio's own, line for line (the
    lat log is the clat log: the simulator's I/O have no submission time)."""
    options = CASES[case][job]
    records = records_of(read_log(GOLDEN_LOGS / case / log))
    for kind in ("clat", "lat", "bw", "iops"):
        golden = (GOLDEN_LOGS / case / log.replace("_clat", f"_{'clat' if kind == 'lat' else kind}"))
        assert "".join(fio_log_lines(options, kind, records)) == golden.read_text(), kind


# -- (d) windows ------------------------------------------------------------------------------

WINDOWED = [IoRecord(10 * MS, 100_000, 0, 4096, 0),
            IoRecord(50 * MS, 300_000, 0, 4096, 4096),
            IoRecord(60 * MS, 1_000_000, 1, 4096, 0),
            IoRecord(120 * MS, 200_000, 0, 4096, 0),     # a read past 100 ms: closes the reads' window
            IoRecord(130 * MS, 50_000, 0, 4096, 0),      # the next window, from 100 ms (not 120)
            IoRecord(199 * MS, 1, 0, 4096, 0),           # 99 ms into it: stays open
            IoRecord(201 * MS, 2, 0, 4096, 0),           # 101 ms: closes it; the next from 200 ms
            IoRecord(250 * MS, 3_000, 1, 4096, 0),       # the first write past 100 ms
            IoRecord(260 * MS, 4, 0, 4096, 0),
            IoRecord(261 * MS, 5, 0, 4096, 0)]


def test_latency_windows_by_hand():
    o = FioLogOptions("j", 1, lat_log="", log_avg_msec=100)
    assert list(fio_log_lines(o, "lat", WINDOWED, end_ns=300 * MS)) == [
        "120, 200000, 0, 0, 0\n",             # (100000 + 300000 + 200000) / 3, at the closing read
        "201, 16668, 0, 0, 0\n",              # (50000 + 1 + 2) / 3 = 16667.67
        "250, 501500, 1, 0, 0\n",             # (1000000 + 3000) / 2
        "300, 5, 0, 0, 0\n"]                  # the open window at the job's end: 4.5 rounded up


def test_latency_windows_maximum_by_hand():
    o = FioLogOptions("j", 1, lat_log="", log_avg_msec=100, log_max_value=True, log_offset=True, log_prio=True)
    assert list(fio_log_lines(o, "clat", WINDOWED, end_ns=300 * MS)) == [
        "120, 300000, 0, 0, 0, 0x0000\n", "201, 50000, 0, 0, 0, 0x0000\n", "250, 1000000, 1, 0, 0, 0x0000\n",
        "300, 5, 0, 0, 0, 0x0000\n"]


def test_latency_windows_end_at_the_last_completion_by_default():
    o = FioLogOptions("j", 1, lat_log="", log_avg_msec=100)
    assert list(fio_log_lines(o, "lat", WINDOWED))[-1] == "261, 5, 0, 0, 0\n"
    with pytest.raises(ValueError, match="before the last completion"):
        list(fio_log_lines(o, "lat", WINDOWED, end_ns=260 * MS))


def test_windows_that_never_close_are_written_at_the_end():
    o = FioLogOptions("j", 1, lat_log="", log_avg_msec=1000)
    records = [IoRecord(t * MS, lat, d, 4096, 0) for t, lat, d in
               [(1, 10, 0), (2, 20, 1), (3, 40, 2), (4, 31, 0)]]
    assert list(fio_log_lines(o, "lat", records, end_ns=7 * MS + 5)) == [
        "7, 21, 0, 0, 0\n", "7, 20, 1, 0, 0\n", "7, 40, 2, 0, 0\n"]   # 20.5 rounds to 21


RATES = ([IoRecord(t * MS, 1000, 0, 4096, 0) for t in range(10, 101, 10)]   # 10 reads in 0-100 ms
         + [IoRecord(150 * MS, 1000, 1, 8192, 0), IoRecord(160 * MS, 1000, 1, 8192, 0)]
         + [IoRecord(250 * MS, 1000, 0, 4096, 0),
            IoRecord(310 * MS, 1000, 0, 1000, 0),         # 1000 B in 100 ms: 9.77 KiB/s
            IoRecord(420 * MS, 1000, 0, 4096, 0)])        # after the last sample (400 ms): in no line


def test_bw_windows_by_hand():
    o = FioLogOptions("j", 1, bw_log="", log_avg_msec=100, log_offset=True)
    assert list(fio_log_lines(o, "bw", RATES, end_ns=450 * MS)) == [
        "100, 400, 0, 0, 0, 0\n",            # 40960 B in 100 ms: 400 KiB/s
        "200, 160, 1, 0, 0, 0\n",            # 16384 B: 160 KiB/s; no read in 100-200 ms, no read line
        "300, 40, 0, 0, 0, 0\n",
        "400, 9, 0, 0, 0, 0\n"]


def test_iops_windows_by_hand():
    o = FioLogOptions("j", 1, iops_log="", log_avg_msec=100)
    assert list(fio_log_lines(o, "iops", RATES, end_ns=450 * MS)) == [
        "100, 100, 0, 0, 0\n", "200, 20, 1, 0, 0\n", "300, 10, 0, 0, 0\n", "400, 10, 0, 0, 0\n"]
    # a job shorter than a window has no line (fio's, too: its sample never comes)
    assert list(fio_log_lines(o, "iops", RATES[:3], end_ns=99 * MS)) == []


def test_bwavgtime_sets_the_interval():
    o = FioLogOptions("j", 1, bw_log="", iops_log="", log_avg_msec=100, bw_avg_msec=200, iops_avg_msec=0)
    assert list(fio_log_lines(o, "bw", RATES, end_ns=450 * MS)) == [
        "200, 200, 0, 0, 0\n", "200, 80, 1, 0, 0\n", "400, 24, 0, 0, 0\n"]   # 5096 B in 200 ms: 24.88
    # iopsavgtime=0: a window of 0 ms, a line per I/O
    assert len(list(fio_log_lines(o, "iops", RATES))) == len(RATES)


def test_the_golden_windows_follow_the_same_rules():
    """fio's own windowed logs: latency lines at multiples of 100 ms and the last at the
    job's end (1050 ms); bw and iops lines 100 ms apart from the same samples (bw in KiB/s
    of 4 KiB I/O: 4 x IOPS, up to the rounding), none after the last sample."""
    for job in ("avg", "max"):
        number = 1 if job == "avg" else 2
        lat = read_log(GOLDEN_LOGS / "avg" / f"{job}_lat.{number}.log")
        bw = read_log(GOLDEN_LOGS / "avg" / f"{job}_bw.{number}.log")
        iops = read_log(GOLDEN_LOGS / "avg" / f"{job}_iops.{number}.log")
        assert [int(c[0]) % 100 for c in lat[:-2]] == [0] * (len(lat) - 2)
        assert {int(c[0]) for c in lat[-2:]} <= {1050, 1051}
        assert all(c[3:] in (["0", "0", "0"], ["0", "0"]) for c in lat + bw + iops)
        times = [int(c[0]) for c in bw[::2]]
        assert all(99 <= b - a <= 101 for a, b in zip(times, times[1:]))
        assert int(bw[-1][0]) < int(lat[-1][0])
        for b, i in zip(bw, iops):
            assert b[2] == i[2] and 4 * int(i[1]) <= int(b[1]) <= 4 * int(i[1]) + 3


def test_the_mean_is_rounded_as_fio_rounds_it():
    o = FioLogOptions("j", 1, lat_log="", log_avg_msec=1000)
    values = [1, 2, 2, 3, 7, 1_000_001, 5]
    records = [IoRecord((i + 1) * MS, v, 0, 512, 0) for i, v in enumerate(values)]
    assert list(fio_log_lines(o, "lat", records)) == [f"7, {round(sum(values) / 7)}, 0, 0, 0\n"]


# -- writing ----------------------------------------------------------------------------------

def test_per_job_logs_0_appends_as_fio(tmp_path):
    """Two jobs named aio with per_job_logs=0 share a file: fio's has both jobs' lines."""
    golden = read_log(GOLDEN_LOGS / "shared" / "aio_iops.log")
    assert len(golden) == 16
    for options in CASES["shared"]:
        write_fio_logs(options, mixed_records(8), directory=tmp_path)
    assert len((tmp_path / "aio_iops.log").read_text().splitlines()) == 16
    assert len((tmp_path / "aio_slat.log").read_text().splitlines()) == 16


def test_per_job_logs_replace_an_old_file(tmp_path):
    (tmp_path / "j_iops.1.log").write_text("old\n" * 100)
    write_fio_logs(FioLogOptions("j", 1, iops_log=""), mixed_records(3), directory=tmp_path)
    assert (tmp_path / "j_iops.1.log").read_text() == "3, 1, 0, 4096, 0\n6, 1, 1, 4096, 0\n9, 1, 0, 4096, 0\n"


def test_absolute_and_relative_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    [rel] = write_fio_logs(FioLogOptions("j", 1, bw_log="sub/x"), mixed_records(2))
    assert rel == tmp_path / "sub" / "x_bw.1.log" and rel.exists()
    [abs_] = write_fio_logs(FioLogOptions("j", 1, bw_log=str(tmp_path / "y")), mixed_records(2),
                            directory="/nonexistent")
    assert abs_ == tmp_path / "y_bw.1.log" and abs_.exists()


def test_a_name_with_nul_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match="write_bw_log: .*NUL"):
        write_fio_logs(FioLogOptions("j", 1, bw_log="a\0b"), [], directory=tmp_path)
    with pytest.raises(SsdlabError, match="name: .*NUL"):
        write_fio_logs(FioLogOptions("j\0", 1, lat_log=""), [], directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_is_never_replaced(tmp_path):
    (tmp_path / "x_clat.1.log").mkdir()
    with pytest.raises(SsdlabError, match=r"write_lat_log: .*x_clat\.1\.log would replace a directory; "
                                          r"name another file with write_lat_log="):
        write_fio_logs(FioLogOptions("j", 1, lat_log="x", bw_log="x"), mixed_records(), directory=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["x_clat.1.log"]    # nothing written: checked first
    assert (tmp_path / "x_clat.1.log").is_dir()


def test_not_a_regular_file_is_refused(tmp_path):
    os.mkfifo(tmp_path / "x_bw.1.log")
    with pytest.raises(SsdlabError, match="not a regular file"):
        write_fio_logs(FioLogOptions("j", 1, bw_log="x"), mixed_records(), directory=tmp_path)


def test_a_missing_directory_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match=r"the directory .*/nowhere does not exist; create it or name"):
        write_fio_logs(FioLogOptions("j", 1, iops_log="nowhere/x"), [], directory=tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_directory_is_refused(tmp_path):
    (tmp_path / "ro").mkdir(mode=0o500)
    with pytest.raises(SsdlabError, match="is not writable"):
        write_fio_logs(FioLogOptions("j", 1, iops_log="ro/x"), [], directory=tmp_path)


def test_a_failed_write_says_what_to_do(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(logs, "open", full, raising=False)
    with pytest.raises(SsdlabError, match=r"write_iops_log: cannot write the log .*x_iops\.1\.log: "
                                          r"No space left on device; make it writable or name another"):
        write_fio_logs(FioLogOptions("j", 1, iops_log="x"), mixed_records(), directory=tmp_path)


def test_bad_values_are_refused():
    with pytest.raises(SsdlabError, match="log_avg_msec=-1"):
        fio_log_files(FioLogOptions("j", 1, bw_log="", log_avg_msec=-1))
    with pytest.raises(ValueError, match="ddir"):
        list(fio_log_lines(FioLogOptions("j", 1, bw_log=""), "bw", [IoRecord(1, 1, 3, 512, 0)]))
    with pytest.raises(ValueError, match="issued at or after"):
        list(fio_log_lines(FioLogOptions("j", 1, bw_log=""), "bw", [IoRecord(1, 2, 0, 512, 0)]))


def test_a_long_run_with_short_windows_is_quick():
    """A completion every 1000 s, 1 ms windows: the empty intervals are skipped."""
    o = FioLogOptions("j", 1, bw_log="", log_avg_msec=1)
    records = [IoRecord(k * 1000 * 1000 * MS, 1000, 0, 1024, 0) for k in range(1, 1001)]
    lines = list(fio_log_lines(o, "bw", records))
    assert len(lines) == 1000 and lines[0] == "1000000, 1000, 0, 0, 0\n"


def test_records_of_numpy_integers():
    np = pytest.importorskip("numpy")
    records = np.array([[3 * MS, 1000, 0, 4096, 0]], dtype=np.int64)
    assert list(fio_log_lines(FioLogOptions("j", 1, lat_log=""), "lat", records)) == ["3, 1000, 0, 4096, 0\n"]
    with pytest.raises(ValueError, match="five integers"):
        list(fio_log_lines(FioLogOptions("j", 1, lat_log=""), "lat", [(1.5, 1, 0, 512, 0)]))


# -- the real fio -----------------------------------------------------------------------------

@pytest.mark.skipif(FIO is None, reason="fio is not installed (CI installs it)")
def test_live_fio_replayed(tmp_path):
    """fio run now: its clat log as records gives its bw and iops logs again, line for line
    (fio reads its clock once per log, so a time may be a ms later than the clat's)."""
    version = subprocess.run([FIO, "--version"], capture_output=True, text=True).stdout.strip()
    if version != "fio-3.33":
        pytest.skip(f"the logs are fio 3.33's; this is {version}")
    (tmp_path / "job.fio").write_text(
        f"[live]\nfilename={tmp_path / 'data'}\nsize=1m\nbs=4k\nrw=randrw\nioengine=psync\nnumber_ios=64\n"
        "write_lat_log=live\nwrite_bw_log=live\nwrite_iops_log=live\nlog_offset=1\n")
    subprocess.run([FIO, "--output=/dev/null", "job.fio"], cwd=tmp_path, check=True, timeout=60)
    options = FioLogOptions("live", 1, lat_log="live", bw_log="live", iops_log="live", log_offset=True)
    assert {p.name for p in tmp_path.glob("*.log")} == {f.name for f in fio_log_files(options)}
    records = records_of(read_log(tmp_path / "live_clat.1.log"))
    assert len(records) == 64
    for kind in ("bw", "iops"):
        theirs = read_log(tmp_path / f"live_{kind}.1.log")
        ours = [line.rstrip("\n").split(", ") for line in fio_log_lines(options, kind, records)]
        assert [c[1:] for c in ours] == [c[1:] for c in theirs], kind
        assert all(0 <= int(t[0]) - int(o[0]) <= 1 for o, t in zip(ours, theirs)), kind

