"""A trace step through fio (backends/fio/trace_replay.py): the iolog it writes, fio 3.33's
replay quirks shown with the real fio and their workarounds, and the timeline rebuilt from
fio's latency log (checked against replays whose every command's time is known).

fio's dropping of an iolog's trims before 3.34 is shown by
tests/traces/test_fio_recorded.py::test_fio_replays_the_v2_sample_as_we_read_it."""

import heapq
import json
import os
import re
import subprocess
import tracemalloc

import numpy as np
import pytest

from ssdlab.backends.fio import FioBackend, runner, trace_replay
from ssdlab.errors import SsdlabError
from ssdlab.external import Commands, Completed
from ssdlab.model import Op, Step, TraceReplay
from ssdlab.traces import Trace, prepared
from ssdlab.traces.fio_iolog_writer import write_iolog_v3
from ssdlab.units import MiB

SIZE = 16 * MiB
READ, WRITE, TRIM, FLUSH = 0, 1, 2, 3
MS = 1000  # µs


@pytest.fixture
def target(scratch):
    path = scratch / "target.img"
    path.write_bytes(os.urandom(MiB) * (SIZE // MiB))
    return path


def records(times_us, ops=None, lengths=None, seed=1):
    """Prepared records at `times_us`: reads unless `ops` says, 4 KiB unless `lengths`, offsets spread."""
    n = len(times_us)
    rng = np.random.default_rng(seed)
    table = prepared.empty(n)
    table["time_us"] = times_us
    table["op"] = READ if ops is None else ops
    table["length"] = 4096 if lengths is None else lengths
    table["offset"] = rng.integers(0, (SIZE - 64 * 1024) // 4096, n) * 4096
    table["offset"][table["op"] == FLUSH] = 0
    table["length"][table["op"] == FLUSH] = 0
    return table


def prepared_file(path, table):
    with prepared.PreparedWriter(path) as writer:
        writer.write(table)
    return path


def fio_version():
    return runner.parse_version(subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout)


def run_fio(tmp, iolog, target, iodepth=1, timed=True):
    """fio replaying `iolog` onto `target` as the backend's job does: its JSON job and its
    latency log's rows (time ms, clat ns, direction, bytes, offset)."""
    step = Step(label="replay", rw=Op.RANDREAD, bs=4096, iodepth=iodepth, size=SIZE,
                trace=TraceReplay(path=str(iolog), records=1, timed=timed))
    job = tmp / "replay.fio"
    job.write_text(trace_replay.job_text(step, target, "io_uring", iolog, tmp / "replay", step.iodepth))
    done = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True, text=True, timeout=120,
                          check=True)
    rows = np.concatenate([*trace_replay.log_lines(tmp / "replay_clat.1.log"), np.zeros((0, 6), np.int64)])
    return json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0], rows


def trace_step(path, count, iodepth=1, timed=True, label="replay"):
    return Step(label=label, rw=Op.RANDRW, rwmixread=50, bs=4096, iodepth=iodepth, size=SIZE,
                trace=TraceReplay(path=str(path), records=count, timed=timed))


# -- the iolog --------------------------------------------------------------------------


def test_the_iolog_holds_the_records_a_microsecond_later_and_fio_replays_them_in_order(scratch, target):
    rng = np.random.default_rng(3)
    ops = rng.choice([READ, WRITE, FLUSH], size=300, p=[0.6, 0.35, 0.05])
    table = records(np.arange(300) * 20, ops, rng.choice([4096, 8192, 65536], size=300))
    trace = prepared_file(scratch / "t.trc", table)
    iolog = scratch / "t.iolog"
    assert trace_replay.write_iolog(trace, iolog) == 300
    text = iolog.read_text().splitlines()
    assert text[:3] == ["fio version 3 iolog", f"1 {trace_replay.LOG_NAME} add", f"1 {trace_replay.LOG_NAME} open"]
    back = list(Trace(iolog))  # our own reader of fio's iologs
    assert [(r.time_us, r.offset, r.length) for r in back] == [
        (t + 1, o, n) for t, o, n in zip(table["time_us"].tolist(), table["offset"].tolist(),
                                         table["length"].tolist(), strict=True)]
    assert [r.op for r in back] == [prepared.OPS[op] for op in ops]
    # fio's own log of the replay: at depth 1 its completions are in issue order (fio
    # 3.33 ignores write_iolog during a replay: "read iolog overrides write_iolog")
    job, rows = run_fio(scratch, iolog, target, iodepth=1, timed=False)
    sized = table[table["op"] != FLUSH]
    assert rows[:, 2:5].tolist() == np.stack([sized["op"], sized["length"], sized["offset"]], axis=1).tolist()
    assert job["sync"]["total_ios"] == np.count_nonzero(ops == FLUSH)  # flushes replayed as fio's sync


def test_fio_drops_the_gap_after_a_record_at_time_zero_and_the_shifted_iolog_keeps_it(scratch, target):
    table = records([0, 60 * MS, 120 * MS])
    raw = scratch / "raw.iolog"
    with raw.open("w") as out:  # the canonical times as they are: the first record at 0
        write_iolog_v3([table], "x", out)
    _, rows = run_fio(scratch, raw, target)
    gaps = np.diff(rows[:, 0])  # ms between completions
    assert gaps[0] < 30 <= gaps[1], rows  # fio 3.33 issued the second at once, the third 60 ms later
    shifted = scratch / "shifted.iolog"
    trace_replay.write_iolog(prepared_file(scratch / "t.trc", table), shifted)
    _, rows = run_fio(scratch, shifted, target)
    assert (np.diff(rows[:, 0]) >= 55).all(), rows


def test_fio_waits_ms_in_a_v2_iolog(scratch, target):
    """`wait 500` is 500 ms since fio started (fio_iolog.py), not 500 µs after the last
    wait: fio 3.33. The log's times are from the job's start, some 100 ms after fio's."""
    v2 = scratch / "v2.iolog"
    v2.write_text(f"fio version 2 iolog\n{target} add\n{target} open\n{target} read 0 4096\n{target} wait 500 0\n"
                  f"{target} read 4096 4096\n{target} close\n")
    _, rows = run_fio(scratch, v2, target)
    assert rows[1, 0] - rows[0, 0] >= 250, rows


def test_fio_does_not_reap_the_last_commands_of_a_replay_which_the_result_says(scratch, target):
    """fio 3.33: once its iolog is done, fio takes no more completions (td_io_getevents
    returns at once when td->done): the last iodepth - 1 commands are done but not counted."""
    table = records(np.zeros(100, np.int64), np.full(100, WRITE))
    table["offset"] = np.arange(100) * 4096
    trace = prepared_file(scratch / "t.trc", table)
    target.write_bytes(bytes(SIZE))
    outcome = FioBackend(target, "file", purge=lambda: ()).run_step(trace_step(trace, 100, iodepth=4, timed=False))
    result = outcome.result
    assert result.write.ios == result.write.latency.count == 97
    assert any("fio timed 97 of the trace's 100 commands" in note for note in result.notes)
    data = target.read_bytes()
    assert all(data[4096 * i:4096 * (i + 1)] != bytes(4096) for i in range(100))  # all 100 were written


# -- trims -------------------------------------------------------------------------------


class FioOfVersion(Commands):
    """The real fio, saying it is `version`."""

    def __init__(self, version):
        self.version = version

    def run(self, argv, timeout=None):
        if list(argv[1:]) == ["--version"]:
            return Completed(tuple(argv), 0, f"fio-{self.version}\n", "")
        return super().run(argv, timeout)


def test_a_trace_with_trims_is_refused_on_fio_before_3_34(scratch, target):
    trace = prepared_file(scratch / "t.trc", records([0, 10, 20], [READ, TRIM, WRITE]))
    with pytest.raises(SsdlabError, match="1 trims, which fio 3.33 cannot replay: fio before 3.34 drops"):
        FioBackend(target, "device", purge=lambda: (), commands=FioOfVersion("3.33")).run_step(trace_step(trace, 3))
    if fio_version() < trace_replay.MIN_TRIM_VERSION:  # this machine's fio says the same
        with pytest.raises(SsdlabError, match="install fio 3.34 or later"):
            FioBackend(target, "device", purge=lambda: ()).run_step(trace_step(trace, 3))
    with pytest.raises(SsdlabError, match="fio of unknown version cannot replay"):
        trace_replay.check_trims(trace, None, "device")
    with pytest.raises(SsdlabError, match="the target is a file"):  # no fio discards on a file
        trace_replay.check_trims(trace, (3, 39), "file")
    trace_replay.check_trims(prepared_file(scratch / "r.trc", records([0, 10])), (3, 33), "file")  # no trims: fine


def test_a_trace_with_trims_goes_to_fio_3_34(scratch, target):
    trace = prepared_file(scratch / "t.trc", records([0, 10, 20], [READ, TRIM, WRITE]))
    trace_replay.check_trims(trace, (3, 34), "device")
    iolog = scratch / "t.iolog"
    trace_replay.write_iolog(trace, iolog)
    assert " trim " in iolog.read_text()
    if fio_version() < trace_replay.MIN_TRIM_VERSION:
        # the step runs (a file passed off as a device); this fio then drops the trim
        result = FioBackend(target, "device", purge=lambda: (), commands=FioOfVersion("3.34")).run_step(
            trace_step(trace, 3)).result
        assert (result.read.ios, result.write.ios, result.trim) == (1, 1, None)
        assert "bad ddir: 2" in result.notes


# -- the timeline ------------------------------------------------------------------------


def log_file(path, rows):
    """A latency log as fio 3.33 writes it (log_offset=1): time ms, clat ns, direction, bytes, offset, 0."""
    path.write_text("".join(f"{t}, {c}, {d}, {n}, {o}, 0\n" for t, c, d, n, o in rows))
    return path


def test_busy_time_is_the_union_of_the_commands_and_idle_the_rest(tmp_path):
    # timed at depth 2: A at 0 for 300 µs, B at 100 µs for 100 µs (inside A), C at 2 ms for 400 µs
    table = records([0, 100, 2000])
    trace = prepared_file(tmp_path / "t.trc", table)
    epoch = 7_000_000  # ns from fio's job start to the first issue
    issues, clats = [epoch, epoch + 100_000, epoch + 2_000_000], [300_000, 100_000, 400_000]
    done = [i + c for i, c in zip(issues, clats, strict=True)]
    order = sorted(range(3), key=lambda k: done[k])
    log = log_file(tmp_path / "clat.log", [(done[k] // 1_000_000, clats[k], READ, 4096, int(table["offset"][k]))
                                           for k in order])
    line = trace_replay.timeline(trace, log, timed=True, iodepth=2)
    assert (line.busy_ns, line.idle_ns, line.span_ns) == (700_000, 1_700_000, 2_400_000)
    assert (line.timed, line.records, line.ios, line.nbytes) == (3, 3, {READ: 3}, {READ: 3 * 4096})
    assert [p.iops for p in line.per_second()] == pytest.approx([3 / 0.0024])
    assert line.notes() == []
    # untimed at depth 1 the same latencies follow one another: busy is their sum
    stamps, t = [], epoch
    for clat in clats:
        t += clat + 5_000  # fio's own time between a completion and the next issue
        stamps.append(t // 1_000_000)
    log = log_file(tmp_path / "qd1.log", [(s, c, READ, 4096, int(o)) for s, c, o
                                          in zip(stamps, clats, table["offset"].tolist(), strict=True)])
    line = trace_replay.timeline(trace, log, timed=False, iodepth=1)
    assert line.busy_ns == sum(clats) and line.idle_ns < 1_000_000


def test_flushes_and_commands_fio_did_not_log_are_counted_and_said(tmp_path):
    table = records([0, 10, 20, 30], [READ, FLUSH, READ, READ])
    trace = prepared_file(tmp_path / "t.trc", table)
    log = log_file(tmp_path / "clat.log", [(1, 50_000, READ, 4096, int(table["offset"][0])),
                                           (1, 60_000, READ, 4096, int(table["offset"][2])),
                                           (1, 70_000, WRITE, 4096, 12345 * 4096)])  # no such record
    line = trace_replay.timeline(trace, log, timed=True, iodepth=4)
    assert (line.records, line.flushes, line.timed, line.unmatched) == (4, 1, 2, 1)
    notes = " ".join(line.notes())
    assert "fio timed 2 of the trace's 3 commands" in notes and "1 flushes" in notes and "1 lines" in notes


def fio_like(times_us, clats, timed, depth, host_ns, epoch_ns):
    """Issue and completion times of a replay as fio 3.33 runs it: each record at the
    previous issue plus its gap (timed) or at once, after a free slot and fio's own time."""
    issue, done, outstanding, x = [], [], [], epoch_ns
    for k, clat in enumerate(clats):
        if k:
            x += max((times_us[k] - times_us[k - 1]) * 1000 if timed else 0, host_ns)
        while outstanding and outstanding[0] <= x:
            heapq.heappop(outstanding)
        if len(outstanding) >= depth:
            x = max(x, heapq.heappop(outstanding)) + host_ns
        issue.append(x)
        done.append(x + clat)
        heapq.heappush(outstanding, x + clat)
    return issue, done


def union(issue, done):
    busy, end = 0, 0
    for s, e in sorted(zip(issue, done, strict=True)):
        busy += max(0, e - max(s, end))
        end = max(end, e)
    return busy


@pytest.mark.parametrize(("timed", "depth", "gap_us"), [(False, 1, 0), (False, 4, 0), (False, 32, 0), (True, 1, 300),
                                                        (True, 4, 100), (True, 32, 20), (True, 32, 200)])
def test_the_timeline_of_a_replay_whose_every_time_is_known(tmp_path, timed, depth, gap_us):
    """Logs written as fio writes them (whole-ms stamps, completion order) from replays whose
    every issue and completion is known: busy and idle within 0.5 %, or 0.3 ms (the stamps'
    resolution at the replay's ends); at depth 1 the busy time is exact."""
    n = 5000
    rng = np.random.default_rng(depth + gap_us)
    table = records(np.cumsum(rng.exponential(gap_us, n)).astype(np.int64) if gap_us else np.zeros(n, np.int64),
                    (rng.random(n) < 0.3).astype(np.uint8))
    table["time_us"] -= table["time_us"][0]
    clats = rng.lognormal(np.log(80_000), 0.4, n).astype(np.int64).tolist()
    issue, done = fio_like(table["time_us"].tolist(), clats, timed, depth, 3_000, 3_456_789)
    order = sorted(range(n), key=lambda k: done[k])
    log = log_file(tmp_path / "clat.log", [(done[k] // 1_000_000, clats[k], int(table["op"][k]), 4096,
                                            int(table["offset"][k])) for k in order])
    line = trace_replay.timeline(prepared_file(tmp_path / "t.trc", table), log, timed, depth)
    busy, span = union(issue, done), max(done) - issue[0]
    assert line.timed == n and line.unmatched == 0
    if depth == 1:
        assert line.busy_ns == busy
    assert line.busy_ns == pytest.approx(busy, rel=0.005, abs=300_000)
    assert line.busy_ns + line.idle_ns == line.span_ns == pytest.approx(span, abs=1_000_000)
    assert sum(p.iops * min(1.0, line.span_ns / 1e9 - i) for i, p in enumerate(line.per_second())) \
        == pytest.approx(n)


def test_the_timeline_streams(tmp_path, monkeypatch):
    """Three times the records take the memory of one chunk of them, not three times as much
    (chunks of 1000 here, to keep tracemalloc's slow count short)."""
    monkeypatch.setattr(trace_replay, "RECORD_CHUNK", 1000)
    monkeypatch.setattr(trace_replay, "LOG_CHUNK", 1000)

    def peak(n):
        table = records(np.arange(n) * 10, seed=n)
        trace = prepared_file(tmp_path / f"{n}.trc", table)
        log = log_file(tmp_path / f"{n}.log", ((k // 100, 50_000, READ, 4096, o)
                                               for k, o in enumerate(table["offset"].tolist())))
        tracemalloc.start()
        try:
            line = trace_replay.timeline(trace, log, timed=True, iodepth=8)
            return tracemalloc.get_traced_memory()[1], line.timed
        finally:
            tracemalloc.stop()

    small, small_timed = peak(10_000)
    large, large_timed = peak(30_000)
    assert (small_timed, large_timed) == (10_000, 30_000)
    assert large < 1.3 * small and large < 4 << 20, (small, large)


# -- through the backend -------------------------------------------------------------------


def test_a_trace_step_through_the_fio_backend(scratch, target):
    rng = np.random.default_rng(5)
    ops = rng.choice([READ, WRITE], size=100, p=[0.7, 0.3])
    table = records(np.arange(100) * 2 * MS, ops, rng.choice([4096, 16384], size=100))
    trace = prepared_file(scratch / "t.trc", table)
    backend = FioBackend(target, "file", purge=lambda: ())
    outcome = backend.run_step(trace_step(trace, 100, iodepth=1, timed=True))
    r = outcome.result
    text, = outcome.commands
    assert f"replay_redirect={target}" in text and "read_iolog=" in text and "replay_no_stall" not in text
    assert "log_offset=1" in text and "log_avg_msec=0" in text and "iodepth=1" in text
    assert {name: (d.ios, d.bytes) for name, d in r.directions.items()} == {
        name: (int(np.count_nonzero(ops == op)), int(table["length"][ops == op].sum()))
        for name, op in (("read", READ), ("write", WRITE))}
    assert r.read.latency.count == r.read.ios and r.read.latency.p99_ns >= r.read.latency.p50_ns > 0
    assert r.read.busy_s == r.write.busy_s == r.busy_s > 0
    # timed: the replay lasts the trace's 198 ms at least, idle between the commands
    assert r.busy_s + r.idle_s >= 0.198 and r.idle_s > 0
    assert sum(p.iops * (p.t_s - i) for i, p in enumerate(r.per_second)) == pytest.approx(100)
    assert r.engine in ("io_uring", "libaio")
    assert not any("inflated" in note for note in r.notes)  # depth 1
    untimed = backend.run_step(trace_step(trace, 100, iodepth=1, timed=False))
    assert "replay_no_stall=1" in untimed.commands[0]
    u = untimed.result
    # as fast as the file takes them: idle only for fio's own time between two commands, not the trace's gaps
    assert u.ios == 100 and u.idle_s < min(r.idle_s / 10, u.busy_s)


def test_a_timed_replay_on_fio_before_3_36_runs_at_depth_1_and_says_so(scratch):
    trace = prepared_file(scratch / "t.trc", records([0, 10]))
    assert trace_replay.notes_before(trace_step(trace, 2, iodepth=1), (3, 33)) == []
    assert trace_replay.notes_before(trace_step(trace, 2, iodepth=4, timed=False), (3, 33)) == []
    assert trace_replay.notes_before(trace_step(trace, 2, iodepth=4), (3, 36)) == []
    assert [trace_replay.depth(trace_step(trace, 2, iodepth=4, timed=timed), version)
            for timed, version in ((True, (3, 33)), (True, None), (True, (3, 36)), (False, (3, 33)))] == [1, 1, 4, 4]
    note, = trace_replay.notes_before(trace_step(trace, 2, iodepth=4), (3, 33))
    assert re.search(r"fio 3.33 replayed this trace in time at depth 1, not 4", note)


def test_a_timed_replay_at_depth_through_fio_3_33_measures_the_targets_latency(scratch, target):
    # reads 1 ms apart: at depth 4, fio 3.33 would reap none until four are outstanding (about
    # 3 ms, every read); at depth 1 each read's latency is the file's own. The median: a few
    # reads slowed by other tests on a loaded machine (pytest runs two workers per core) move
    # the mean past 1 ms (1.32 ms seen), while the defect delays every read
    trace = prepared_file(scratch / "t.trc", records([1000 * i for i in range(50)]))
    backend = FioBackend(target, "file", purge=lambda: ())
    if backend.fio_version is None or backend.fio_version >= (3, 36):
        pytest.skip("the fio here reaps while it waits")
    outcome = backend.run_step(trace_step(trace, 50, iodepth=4))
    assert "iodepth=1" in outcome.commands[0]
    r = outcome.result
    assert r.ios == 50 and r.read.latency.p50_ns < 1_000_000
    assert any("at depth 1, not 4" in note for note in r.notes)


def test_a_large_trace_is_read_by_fio_in_pieces(scratch):
    step = trace_step(scratch / "t.trc", trace_replay.CHUNKED_ABOVE + 1, iodepth=8, timed=False)
    text = trace_replay.job_text(step, scratch / "target", "io_uring", scratch / "t.iolog", scratch / "log", 8)
    assert "read_iolog_chunked=1" in text and "log_compression=" in text
    assert any("in pieces" in note for note in trace_replay.notes_before(step, (3, 33)))
