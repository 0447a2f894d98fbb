"""A trace step through fio (METHODOLOGY.md section 6): the prepared trace written as an fio
iolog v3, replayed with `read_iolog` onto the target (`replay_redirect`), and fio's
per-I/O latency log read back into the step's result, with the contract of the simulator's
replay (crates/ssdsim/src/run/replay.rs): timed = each record at its time, at most iodepth
outstanding; untimed = as fast as the target takes them, iodepth at a time
(`replay_no_stall`); busy time = time with at least one command outstanding, the rest idle.

fio's quirks, read in its source (iolog.c, ioengines.c, stat.c at fio-3.33; unchanged up to
3.39 unless said) and checked against Debian 12's fio 3.33 (tests/backends/test_fio_trace.py):

- fio paces a timed replay by the gap to the previous line (`delay_since_ttime`), and takes
  no gap after a line at time 0: the first record's gap to the second is dropped. The iolog's
  times are shifted by FIRST_US (every line at >= 1 µs); fio then keeps every gap.
- Each gap is counted from the previous record's issue: a record fio issues late (a full
  queue, its own delay) delays every record after it; a replay can take longer than its trace.
- fio before 3.34 drops an iolog's trims ("bad ddir: 2"): a trace with trims is refused
  (MIN_TRIM_VERSION), and on a file target with any fio (fio's engines discard only devices).
- fio before 3.36 sleeps between timed records without reaping completions, and reaps only
  when its queue is full: at a depth above 1, a command's latency runs until then (4 KiB
  reads 1 ms apart at depth 4: 7.8 ms where the file takes 0.1-0.3 ms; 66 ms at depth 64),
  and a trace shorter than the depth is left unreaped whole. Figures so made are wrong, not
  merely inflated: on such a fio a timed replay runs at depth 1 (`depth`), the records a
  trace issues together one after another, and the result says so (SERIAL_NOTE).
- Once its iolog is done fio reaps no more completions (td_io_getevents returns at once
  when td->done): the last commands still outstanding, at most iodepth - 1, are done by the
  target but are in neither fio's statistics nor its logs. The result counts fio's timed
  commands and says how many were not (TAIL_NOTE).
- `write_iolog` is ignored during a replay ("read iolog overrides write_iolog"); a v2
  iolog's `wait` is ms since fio started (traces/fio_iolog.py); a sync has no time in any log.

Timing. fio 3.33 stamps each line of its latency log with the completion's time in whole
milliseconds (stat.c: mtime_since_now) and its latency (clat, from the command's submission)
in ns; no log has the submission's time (fio 3.38's log_issue_time adds it). `timeline` rebuilds each command's [issue,
completion] at the clat's precision by replaying the trace as fio does (each record the
previous one's issue plus its gap, or at once untimed; a full queue waits for the first
completion) with the logged latencies, every issue then moved into the millisecond its
completion was stamped in (an issue later than the model's: fio was late; earlier: fio
caught up). Log lines are matched to records by direction, offset and length, the earliest
outstanding first. Busy time is the union of those intervals, idle the rest of the time
from the first issue to the last completion; the per-second series counts completions.
A gap a stamp opens at a depth above 1 is busy for its first ms (the previous completions may
have been that much later). Against replays whose every time is known (the tests): exact at
depth 1, within 0.5 % or 0.3 ms otherwise.

Latencies (count, mean, min, max, percentiles, histogram) are fio's own json+ figures of
the same commands (parse.py: fio's bins, as every fio step's), so no binning is redone here.
Both the iolog and the log are streamed: neither is ever whole in memory.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import numpy as np

from ssdlab.backends.fio.jobfile import PERCENTILES, section
from ssdlab.errors import SsdlabError
from ssdlab.model import SecondPoint, Step
from ssdlab.traces import prepared
from ssdlab.traces.record import Op

FIRST_US = 1                  # the first record's time in the iolog: fio 3.33 drops the gap after a 0
MIN_TRIM_VERSION = (3, 34)    # fio replays an iolog's trims from 3.34 (iolog: handle trim commands)
REAPS_IN_DELAY_VERSION = (3, 36)  # iolog.c: fix inaccurate clat when replay trace
LOG_NAME = "ssdlab-trace"     # the file the iolog names; replay_redirect sends its I/O to the target
LOG_CHUNK = 1 << 16           # latency log lines read at once
RECORD_CHUNK = prepared.CHUNK  # trace records matched at once
# Above this many records fio reads the iolog in pieces (read_iolog_chunked) and compresses
# its log in memory (log_compression): whole, 10^8 records would take fio about 10 GB for
# the iolog and 4 GB for the log.
CHUNKED_ABOVE = 1_000_000
LOG_COMPRESSION = "64M"
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
SHORTEST_INTERVAL_S = 1e-9    # the simulator's (recorder.rs): a last second shorter than this is this long
_FLUSH = prepared.OP_CODE[Op.FLUSH]
_TRIM = prepared.OP_CODE[Op.TRIM]
# fio's latency log columns (log_offset=1): time ms, clat ns, direction, bytes, offset, priority
_T, _CLAT, _DDIR, _BS, _OFFSET = range(5)

SERIAL_NOTE = ("fio {version} replayed this trace in time at depth 1, not {depth}: before 3.36 fio sleeps until "
               "each record's time without reaping completions and reaps only when its queue is full, so at a "
               "depth above 1 a command's latency runs until then (METHODOLOGY.md section 6). Records the trace "
               "issues together went one after another; fio 3.36 or later replays at depth {depth}")
TAIL_NOTE = ("fio timed {timed} of the trace's {records} commands: once its iolog is done fio reaps no more "
             "completions, so its last {tail} commands still outstanding were done by the target but are in "
             "neither its statistics nor its logs; the figures are those of the {timed}")
FLUSH_NOTE = ("fio logs no time for its syncs: the trace's {flushes} flushes are in the busy time only where "
              "other commands were outstanding")
LATE_NOTE = ("fio's replay ended {late_ms:.1f} ms behind the trace's times ({share:.1%} of its {span_ms:.1f} ms): "
             "fio times each record from the previous one's issue, so a record issued late (a full queue, "
             "fio's own delay) delays all after it")
CHUNKED_NOTE = ("a trace of more than {limit} records: fio read its iolog in pieces during the replay "
                "(read_iolog_chunked), a pause of a few ms every second or so, and a timed record delayed "
                "by one delays the records after it")
UNMATCHED_NOTE = ("{lines} lines of fio's latency log matched no command of the trace (by direction, offset "
                  "and length): they are left out of the busy time")
AHEAD_NOTE = ("fio issued some commands up to {ahead_ms:.1f} ms earlier than its pacing puts them (it makes up "
              "for a sleep that overran): their times are taken from fio's log, to the ms")


def shown(version: tuple[int, int] | None) -> str:
    return "of unknown version" if version is None else f"{version[0]}.{version[1]}"


def check_trims(trace: Path, version: tuple[int, int] | None, kind: str) -> None:
    """Refuse a trace with trims where fio cannot replay them (before reading any of it
    into fio): fio before 3.34 drops them, and no fio engine discards on a file."""
    if version is not None and version >= MIN_TRIM_VERSION and kind != "file":
        return
    trims = sum(int(np.count_nonzero(chunk["op"] == _TRIM)) for chunk in prepared.chunks(trace))
    if not trims:
        return
    if kind == "file":
        raise SsdlabError(f"the trace {trace} has {trims} trims and the target is a file: fio's engines send a "
                          "trim as a device discard, which a file refuses; replay it on a block device, or on the "
                          "simulator")
    raise SsdlabError(f"the trace {trace} has {trims} trims, which fio {shown(version)} cannot replay: fio before "
                      "3.34 drops an iolog's trims (\"bad ddir\"), so the drive would see another workload; "
                      "install fio 3.34 or later (`fio --version`), or replay the trace on the simulator")


def shifted(chunks: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
    """The records with every time FIRST_US later (fio keeps the first gap then)."""
    for chunk in chunks:
        moved = chunk.copy()
        moved["time_us"] += FIRST_US
        yield moved


def write_iolog(trace: Path, out: Path) -> int:
    """The prepared trace as the iolog v3 fio replays (times shifted, streamed); its records."""
    from ssdlab.traces.fio_iolog_writer import write_iolog_v3  # only a trace step needs it

    with out.open("w", encoding="utf-8", newline="\n") as file:
        return write_iolog_v3(shifted(prepared.chunks(trace)), LOG_NAME, file)


def depth(step: Step, version: tuple[int, int] | None) -> int:
    """The depth fio replays `step` at: its own, but 1 for a timed replay on a fio that
    cannot reap while it waits for a record's time (before 3.36, or of unknown version)."""
    assert step.trace is not None
    reaps = version is not None and version >= REAPS_IN_DELAY_VERSION
    return step.iodepth if reaps or not step.trace.timed else 1


def job_text(step: Step, target: Path, ioengine: str, iolog: Path, log_prefix: Path, iodepth: int) -> str:
    """The fio job of a trace step at `iodepth`: the iolog onto the target, each command's
    latency logged (clat only: lat and slat would triple fio's memory for nothing used)."""
    assert step.trace is not None
    lines = [
        section(step),
        f"ioengine={ioengine}",
        "direct=1",
        f"iodepth={iodepth}",
        f"read_iolog={iolog}",
        f"replay_redirect={target}",
    ]
    if not step.trace.timed:
        lines.append("replay_no_stall=1")
    if step.trace.records > CHUNKED_ABOVE:
        lines += ["read_iolog_chunked=1", f"log_compression={LOG_COMPRESSION}"]
    lines += [f"percentile_list={PERCENTILES}", f"write_lat_log={log_prefix}", "log_avg_msec=0", "log_offset=1",
              "disable_lat=1", "disable_slat=1", "group_reporting=1"]
    return "\n".join(lines) + "\n"


def notes_before(step: Step, version: tuple[int, int] | None) -> list[str]:
    """What the replay's settings and fio's version say of its figures, before it runs."""
    assert step.trace is not None
    notes = []
    if depth(step, version) != step.iodepth:
        notes.append(SERIAL_NOTE.format(version=shown(version), depth=step.iodepth))
    if step.trace.records > CHUNKED_ABOVE:
        notes.append(CHUNKED_NOTE.format(limit=CHUNKED_ABOVE))
    return notes


def log_lines(path: Path) -> Iterator[np.ndarray]:
    """fio's latency log, LOG_CHUNK lines at a time, as int64 rows (time ms, clat ns,
    direction, bytes, offset, priority); nothing when fio wrote none."""
    try:
        file = path.open(encoding="ascii")
    except FileNotFoundError:
        return
    with file:
        while lines := list(islice(file, LOG_CHUNK)):
            yield np.loadtxt(lines, delimiter=",", dtype=np.int64, ndmin=2)


@dataclass
class Timeline:
    """A replay's commands in time, from the trace and fio's latency log."""

    busy_ns: int = 0
    idle_ns: int = 0
    records: int = 0
    timed: int = 0               # commands fio logged (and timed)
    flushes: int = 0
    unmatched: int = 0           # log lines of no record
    ahead_ns: int = 0            # the most an issue was moved earlier than fio's pacing, to its stamp
    late_ns: int = 0             # the last record's issue after its time in the trace (timed)
    span_ns: int = 0             # first issue to last completion
    ios: dict[int, int] = field(default_factory=dict)      # fio's direction -> commands logged
    nbytes: dict[int, int] = field(default_factory=dict)   # fio's direction -> their bytes
    seconds: list[list[int]] = field(default_factory=list)  # per second: [bytes read and written, commands]

    def per_second(self) -> tuple[SecondPoint, ...]:
        """As the simulator's (recorder.rs): by completion, the last second ending at the last one."""
        span_s = self.span_ns / NS_PER_S
        points = []
        for i, (nbytes, commands) in enumerate(self.seconds):
            end = min(i + 1.0, max(span_s, i + SHORTEST_INTERVAL_S))
            points.append(SecondPoint(t_s=end, mbps=nbytes / (end - i) / 1e6, iops=commands / (end - i)))
        return tuple(points)

    def notes(self) -> list[str]:
        notes = []
        if self.records - self.flushes > self.timed:
            notes.append(TAIL_NOTE.format(timed=self.timed, records=self.records - self.flushes,
                                          tail=self.records - self.flushes - self.timed))
        if self.flushes:
            notes.append(FLUSH_NOTE.format(flushes=self.flushes))
        if self.unmatched:
            notes.append(UNMATCHED_NOTE.format(lines=self.unmatched))
        if self.ahead_ns > NS_PER_MS:
            notes.append(AHEAD_NOTE.format(ahead_ms=self.ahead_ns / 1e6))
        if self.late_ns > max(NS_PER_MS, 0.01 * self.span_ns):
            notes.append(LATE_NOTE.format(late_ms=self.late_ns / 1e6, share=self.late_ns / max(self.span_ns, 1),
                                          span_ms=self.span_ns / 1e6))
        return notes


class _Log:
    """fio's log lines in completion order, by key (direction, offset, bytes): the earliest
    not yet matched first. Lines are read as records need them, at most `window` ahead.
    A key's lines are one (stamp ms, clat ns) pair, or a list of them when several wait."""

    def __init__(self, path: Path, window: int) -> None:
        self._chunks = log_lines(path)
        self._rows: Iterator[list[int]] = iter(())
        self._pending: dict[tuple[int, int, int], tuple[int, int] | list[tuple[int, int]]] = {}
        self.held = 0
        self._window = window

    def take(self, key: tuple[int, int, int]) -> tuple[int, int] | None:
        """The (stamp ms, clat ns) of the earliest unmatched line of `key`; None when the log
        has none within its window (fio did not log the command)."""
        pending = self._pending
        while (lines := pending.get(key)) is None:
            if self.held >= self._window or not self._read():
                return None
        self.held -= 1
        if isinstance(lines, tuple):
            del pending[key]
            return lines
        found = lines.pop(0)
        if len(lines) == 1:
            pending[key] = lines[0]
        return found

    def _read(self) -> bool:
        row = next(self._rows, None)
        if row is None:
            chunk = next(self._chunks, None)
            if chunk is None:
                return False
            self._rows = iter(chunk.tolist())
            row = next(self._rows)
        key, line = (row[_DDIR], row[_OFFSET], row[_BS]), (row[_T], row[_CLAT])
        waiting = self._pending.get(key)
        if waiting is None:
            self._pending[key] = line
        elif isinstance(waiting, tuple):
            self._pending[key] = [waiting, line]
        else:
            waiting.append(line)
        self.held += 1
        return True

    def rest(self) -> int:
        """Lines no record took (the rest of the log read to its end)."""
        while self._read():
            pass
        return self.held


def timeline(trace: Path, log: Path, timed: bool, iodepth: int) -> Timeline:
    """Each command's [issue, completion] rebuilt from the trace and fio's latency log (see
    the module's docstring), and what they add up to. Times are ns on the log's clock."""
    log_lines_ = _Log(log, window=max(4 * iodepth, LOG_CHUNK))
    replay = _Replay(timed, iodepth)
    for chunk in prepared.chunks(trace, RECORD_CHUNK):
        rows = list(zip(chunk["time_us"].tolist(), chunk["length"].tolist(), chunk["op"].tolist(),
                        [None if op == _FLUSH else log_lines_.take((op, offset, length)) for offset, length, op
                         in zip(chunk["offset"].tolist(), chunk["length"].tolist(), chunk["op"].tolist(),
                                strict=True)], strict=True))
        replay.run(rows)
    found = replay.found
    found.unmatched = log_lines_.rest()
    found.span_ns = replay.all_done - replay.origin
    return found


class _Replay:
    """fio's replay loop run again with the logged latencies, each issue kept within the
    millisecond its completion was stamped in."""

    def __init__(self, timed: bool, iodepth: int) -> None:
        self.found = Timeline()
        self.timed, self.iodepth = timed, iodepth
        self.outstanding: list[int] = []  # completions of the commands issued, earliest first
        self.started = False
        self.issue = self.origin = self.all_done = 0
        self.first_us = self.previous_us = 0

    def _start(self, rows: list[tuple[int, int, int, tuple[int, int] | None]]) -> None:
        """The first issue: midway between the earliest its own stamp allows and the latest
        those of the records after it allow (each issued no earlier, or its gap later when
        timed): as the model places every issue at its earliest, the span would otherwise
        start up to 1 ms early."""
        timed_rows = [(time_us, line) for time_us, _, _, line in rows if line is not None]
        first_us, (stamp, clat) = timed_rows[0]
        earliest = stamp * NS_PER_MS - clat
        latest = min((stamp + 1) * NS_PER_MS - 1 - clat - ((time_us - first_us) * 1000 if self.timed else 0)
                     for time_us, (stamp, clat) in timed_rows)
        self.issue = self.origin = self.all_done = max(earliest, (earliest + latest) // 2)
        self.first_us = self.previous_us = first_us
        self.started = True

    def run(self, rows: list[tuple[int, int, int, tuple[int, int] | None]]) -> None:
        found, timed, outstanding, seconds = self.found, self.timed, self.outstanding, self.found.seconds
        if not self.started and any(line is not None for *_, line in rows):
            self._start(rows)
        issue, all_done, previous_us = self.issue, self.all_done, self.previous_us
        for time_us, length, op, line in rows:
            found.records += 1
            if line is None:  # a flush, or a command fio did not log: no time of its own
                found.flushes += op == _FLUSH
                if self.started and timed:
                    issue += (time_us - previous_us) * 1000
                    previous_us = time_us
                continue
            stamp, clat = line[0] * NS_PER_MS, line[1]
            # fio's pacing: the previous issue plus the gap (none untimed), once a slot is free
            paced = issue + (time_us - previous_us) * 1000 if timed else issue
            while outstanding and outstanding[0] <= paced:
                heapq.heappop(outstanding)
            if len(outstanding) >= self.iodepth:
                paced = max(paced, heapq.heappop(outstanding))
            # ... within the millisecond fio stamped the completion in
            unforced = paced
            if paced + clat < stamp:  # fio issued it later than its pacing
                paced = stamp - clat
            elif (ahead := paced + clat - (stamp + NS_PER_MS - 1)) > 0:  # fio made up for a late sleep
                paced = max(paced - ahead, issue)
                found.ahead_ns = max(found.ahead_ns, ahead)
            issue, previous_us = paced, time_us
            done = issue + clat
            if issue > all_done:
                # A gap its stamp opened (fio issued it later than its pacing) is busy for up to the 1 ms
                # a stamp leaves open when others could have been outstanding: the previous commands'
                # completions were up to 1 ms later than their earliest, which this model takes.
                unsure = max(min(issue - max(all_done, unforced), NS_PER_MS), 0) if self.iodepth > 1 else 0
                found.busy_ns += unsure
                found.idle_ns += issue - all_done - unsure
            found.busy_ns += max(0, done - max(issue, all_done))
            all_done = max(all_done, done)
            heapq.heappush(outstanding, done)
            found.timed += 1
            found.ios[op] = found.ios.get(op, 0) + 1
            found.nbytes[op] = found.nbytes.get(op, 0) + length
            second = max(done - self.origin, 0) // NS_PER_S
            while len(seconds) <= second:
                seconds.append([0, 0])
            seconds[second][0] += 0 if op == _TRIM else length
            seconds[second][1] += 1
            if timed:
                found.late_ns = issue - self.origin - (time_us - self.first_us) * 1000
        self.issue, self.all_done, self.previous_us = issue, all_done, previous_us
