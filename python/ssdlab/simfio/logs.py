"""fio 3.33's log files (write_lat_log, write_bw_log, write_iops_log), written from simulated I/O.

What fio 3.33 writes, read from its source (init.c, stat.c, iolog.c, io_u.c) and checked
against the real program (tests/golden/fio_logs/):

Files. `write_lat_log=NAME` makes `NAME_lat.N.log`, `NAME_slat.N.log` and `NAME_clat.N.log`
(each unless disable_lat, disable_slat, disable_clat), `write_bw_log=NAME` `NAME_bw.N.log`,
`write_iops_log=NAME` `NAME_iops.N.log`. NAME is the job's name (its `name=`, else its
section) when the option has no value. N is the job's number in the whole job file,
from 1, each clone of `numjobs` numbered in turn. With `per_job_logs=0` there is no `.N`,
and fio *appends* to the file (jobs that share a name share it, and so does a run after
another). A log is written even when it has no lines: a synchronous engine (psync...)
times no submissions, so its slat log is empty.

Lines. `time, value, ddir, bs` then `, offset` with `log_offset=1`, then the priority: with
`log_prio=1` the I/O's priority value in hex (`0x%04x`, e.g. `0x4003` for prio=3), else
`1` for the real-time class and `0` otherwise. All columns are integers, separated by
", ". The time is in ms since the job's start (after ramp_time), truncated; ddir is 0 read,
1 write, 2 trim.

Values. Latencies are in ns: lat from the I/O's start, clat from its issue, slat between
them. A line per I/O (`log_avg_msec=0`): bw is the I/O's bytes * 1,000,000 / its clat in
ns (integer division; 0 when clat is 0) -- bytes per ms, not the KiB/s of fio's
documentation -- and iops is 1.

Windows (`log_avg_msec=W`): each direction is averaged on its own; a line has bs 0,
offset 0 and priority 0. The latency logs add each I/O to its direction's window at its
completion (slat at its submission); the first I/O of a direction that completes W ms or
more after that window's start closes the window, at its own time, with the mean of the
window's I/Os (itself included) rounded half up, or their maximum with
`log_max_value=1`; the next window starts at the multiple of W at or below that time. At
the job's end each direction's open window is written, at the end's time. The bw and
iops logs are sampled every W ms (every `bwavgtime` / `iopsavgtime` when the job sets it,
the window then the smaller of the two): each direction that completed I/O in the
interval gets a line, `bytes * 1000 / ms / 1024` KiB/s or `I/Os * 1000 / ms` IOPS
(integer divisions). What completes after the last sample is in no line. fio samples on
its helper thread's clock, so its first sample lands up to a window late (at 142 ms for
W=100) and the others drift by a ms; the simulator samples at exact multiples of W.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ssdlab.errors import SsdlabError

READ, WRITE, TRIM = 0, 1, 2
DIRECTIONS = (READ, WRITE, TRIM)      # fio's DDIR_RWDIR_CNT: the directions a log has
NS_PER_MS = 1_000_000
IOPRIO_CLASS_SHIFT = 13               # Linux: an I/O priority is class << 13 | level
IOPRIO_CLASS_RT = 1
LOG_MSEC_SLACK = 1                    # fio (not on Windows): a bw/iops window this short of W closes
_CHUNK_LINES = 65536                  # lines per write, so a long run's log is never built whole


class IoRecord(NamedTuple):
    """One simulated I/O of a job: completed `done_ns` after the job's start (after its
    ramp_time, as fio's logs count: I/O during the ramp is in no log), after `latency_ns`
    (issued at done_ns - latency_ns; the simulator has no submission time, so clat = lat
    and slat = 0), of `bs` bytes at byte `offset`, ddir 0 read 1 write 2 trim."""

    done_ns: int
    latency_ns: int
    ddir: int
    bs: int
    offset: int


@dataclass(frozen=True)
class FioLogOptions:
    """A job's log options, as parsed from its job file.

    `lat_log`, `bw_log`, `iops_log`: the value of write_lat_log, write_bw_log,
    write_iops_log, "" when the option is given without one (fio then uses the job's name),
    None when the job does not ask for that log. `job_number` is fio's number of the job
    (1 for the job file's first job; a job with numjobs=n takes n numbers). `ioprio` is
    the priority fio gives the job's I/O: class << 13 | level (prioclass, prio), 0 when
    neither is set. `slat_measured`: fio times submissions (asynchronous engines only);
    otherwise the slat log is written empty. `bw_avg_msec`, `iops_avg_msec`: bwavgtime
    and iopsavgtime when the job sets them (None: fio then samples every log_avg_msec)."""

    job_name: str
    job_number: int
    lat_log: str | None = None
    bw_log: str | None = None
    iops_log: str | None = None
    log_avg_msec: int = 0
    log_max_value: bool = False
    log_offset: bool = False
    per_job_logs: bool = True
    log_prio: bool = False
    ioprio: int = 0
    slat_measured: bool = False
    bw_avg_msec: int | None = None
    iops_avg_msec: int | None = None
    disable_lat: bool = False
    disable_clat: bool = False
    disable_slat: bool = False


@dataclass(frozen=True)
class FioLogFile:
    """One log file fio writes: its kind (lat, slat, clat, bw, iops), its name (a path
    relative to fio's working directory unless the option named an absolute one), and
    the option that asked for it."""

    kind: str
    name: str
    option: str


def fio_log_files(options: FioLogOptions) -> list[FioLogFile]:
    """The log files fio 3.33 writes for a job with these options, in the order fio sets
    them up (lat, slat, clat, bw, iops)."""
    _check_options(options)
    wanted = [("write_lat_log", options.lat_log, "lat", not options.disable_lat),
              ("write_lat_log", options.lat_log, "slat", not options.disable_slat),
              ("write_lat_log", options.lat_log, "clat", not options.disable_clat),
              ("write_bw_log", options.bw_log, "bw", True),
              ("write_iops_log", options.iops_log, "iops", True)]
    files = []
    for option, base, kind, enabled in wanted:
        if base is None or not enabled:
            continue
        stem = base or options.job_name
        number = f".{options.job_number}" if options.per_job_logs else ""
        files.append(FioLogFile(kind, f"{stem}_{kind}{number}.log", option))
    return files


def fio_log_lines(options: FioLogOptions, kind: str, records: Iterable[IoRecord],
                  end_ns: int | None = None) -> Iterator[str]:
    """The lines (each ending in a newline) of the job's `kind` log, from its records.
    `end_ns`: when the job ended (its last completion when None); windowed latency logs
    close their last windows then."""
    _check_options(options)
    ios = _sorted_records(records)
    end = _end_ns(ios, end_ns)
    yield from _lines(options, kind, ios, end)


def write_fio_logs(options: FioLogOptions, records: Iterable[IoRecord], *,
                   end_ns: int | None = None, directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write the log files fio 3.33 would write for a job (see fio_log_files), from its
    simulated I/O; return their paths. Relative names are taken from `directory` (the
    working directory when None), as fio takes them from its own. `end_ns`: when the job
    ended, in ns since its start (its last completion when None).

    Every file is checked before any is written: a name with a NUL, a file that is a
    directory or not a regular file, or a missing directory is refused, and a failed
    write raised, as an SsdlabError saying what to do."""
    files = fio_log_files(options)
    ios = _sorted_records(records)
    end = _end_ns(ios, end_ns)
    base = Path(directory) if directory is not None else Path.cwd()
    targets = [(f, _checked_target(base, f)) for f in files]
    mode = "w" if options.per_job_logs else "a"       # fio appends without per-job names
    written = []
    for f, path in targets:
        lines = _lines(options, f.kind, ios, end)
        try:
            with open(path, mode, encoding="ascii", newline="\n") as out:
                chunk: list[str] = []
                for line in lines:
                    chunk.append(line)
                    if len(chunk) >= _CHUNK_LINES:
                        out.write("".join(chunk))
                        chunk.clear()
                out.write("".join(chunk))
        except OSError as exc:
            raise SsdlabError(f"{f.option}: cannot write the log {path}: {exc.strerror or exc}; "
                              f"make it writable or name another file with {f.option}=") from None
        written.append(path)
    return written


def ioprio_value(prioclass: int, prio: int) -> int:
    """fio's priority of a job's I/O when prioclass or prio is set: the class (best effort
    when 0) shifted above the level, as Linux's ioprio_set takes it."""
    return ((prioclass or 2) << IOPRIO_CLASS_SHIFT) | prio


# -- checks -----------------------------------------------------------------------------------

def _check_options(o: FioLogOptions) -> None:
    if o.job_number < 1:
        raise ValueError(f"job_number must be 1 or more, not {o.job_number}")
    for option, value in (("log_avg_msec", o.log_avg_msec), ("bwavgtime", o.bw_avg_msec),
                          ("iopsavgtime", o.iops_avg_msec)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise SsdlabError(f"{option}={value}: must be a whole number of ms, 0 or more")
    if not 0 <= o.ioprio < 1 << 16:
        raise ValueError(f"ioprio must be a 16-bit priority value, not {o.ioprio}")
    bases = (("write_lat_log", o.lat_log), ("write_bw_log", o.bw_log), ("write_iops_log", o.iops_log))
    if any(base == "" for _, base in bases):
        bases += (("name", o.job_name),)         # the job's name is the logs' name
    for option, base in bases:
        if base is not None and "\0" in base:
            raise SsdlabError(f"{option}: a log's name cannot contain a NUL character; "
                              f"name a plain file or path")


def _checked_target(base: Path, f: FioLogFile) -> Path:
    path = base / f.name
    fix = f"name another file with {f.option}="
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = path.parent
        if not parent.is_dir():
            raise SsdlabError(f"{f.option}: cannot write the log {path}: the directory {parent} "
                              f"does not exist; create it or {fix}") from None
        if not os.access(parent, os.W_OK | os.X_OK):
            raise SsdlabError(f"{f.option}: cannot write the log {path}: the directory {parent} "
                              f"is not writable; {fix}") from None
        return path
    except OSError as exc:
        raise SsdlabError(f"{f.option}: cannot write the log {path}: {exc.strerror or exc}; "
                          f"{fix}") from None
    if stat.S_ISDIR(st.st_mode):
        raise SsdlabError(f"{f.option}: the log {path} would replace a directory; {fix}")
    if not stat.S_ISREG(st.st_mode):
        raise SsdlabError(f"{f.option}: the log {path} exists and is not a regular file "
                          f"(a device, pipe or socket); {fix}")
    if not os.access(path, os.W_OK):
        raise SsdlabError(f"{f.option}: the log {path} is not writable; {fix}")
    return path


class _Ios(NamedTuple):
    """A job's records as columns, in completion order."""

    done: list[int]
    latency: list[int]
    ddir: list[int]
    bs: list[int]
    offset: list[int]


def _sorted_records(records: Iterable[IoRecord]) -> _Ios:
    problem = "an I/O record is five integers (done_ns, latency_ns, ddir, bs, offset)"
    try:
        table = np.asarray(records if isinstance(records, np.ndarray) else list(records))
    except ValueError:          # records of different lengths
        raise ValueError(problem) from None
    if table.size == 0:
        return _Ios([], [], [], [], [])
    if table.ndim != 2 or table.shape[1] != 5 or table.dtype.kind not in "iu":
        raise ValueError(f"{problem}, not {table.dtype} of shape {table.shape}")
    done, latency, ddir, bs, offset = table.T
    bad = (ddir < 0) | (ddir > 2) | (latency < 0) | (bs < 0) | (offset < 0) | (done < latency)
    if bad.any():
        raise ValueError(f"an I/O record must have ddir 0, 1 or 2, be issued at or after the "
                         f"job's start, with bs and offset 0 or more: {table[bad.argmax()].tolist()}")
    table = table[np.argsort(done, kind="stable")]    # completions at one ns keep their order
    return _Ios(*(column.tolist() for column in table.T))


def _end_ns(ios: _Ios, end_ns: int | None) -> int:
    last = ios.done[-1] if ios.done else 0
    if end_ns is None:
        return last
    if end_ns < last:
        raise ValueError(f"end_ns ({end_ns}) is before the last completion ({last})")
    return end_ns


# -- lines ------------------------------------------------------------------------------------

def _lines(o: FioLogOptions, kind: str, ios: _Ios, end_ns: int) -> Iterator[str]:
    """The `kind` log's lines: a line per I/O, or per window (bs, offset and priority 0)."""
    if kind not in ("lat", "clat", "slat", "bw", "iops"):
        raise ValueError(f"not a log kind: {kind}")
    if kind == "slat" and not o.slat_measured:
        return
    window = _rate_window_ms(o, kind) if kind in ("bw", "iops") else o.log_avg_msec
    if window and kind in ("bw", "iops"):
        windows = _windowed(o, _rates(kind, ios, end_ns, _rate_interval_ms(o, kind)), end_ns // NS_PER_MS,
                            window, slack_ms=LOG_MSEC_SLACK)
        yield from _format(o, ((t, v, d, 0, 0) for t, v, d in windows), _priority(o, 0))
        return
    if kind == "slat":          # at its submission: by issue time
        order = sorted(range(len(ios.done)), key=lambda i: ios.done[i] - ios.latency[i])
        ios = _Ios(*([column[i] for i in order] for column in ios))
        times = [d - lat for d, lat in zip(ios.done, ios.latency)]
        values: Iterable[int] = [0] * len(times)
    else:
        times = ios.done
        if kind == "bw":        # bytes per ms of clat: fio's per-I/O "KiB/s"
            values = [b * 1_000_000 // lat if lat else 0 for b, lat in zip(ios.bs, ios.latency)]
        elif kind == "iops":
            values = [1] * len(times)
        else:
            values = ios.latency
    ms = [t // NS_PER_MS for t in times]
    if window:
        windows = _windowed(o, zip(ms, values, ios.ddir), end_ns // NS_PER_MS, window)
        yield from _format(o, ((t, v, d, 0, 0) for t, v, d in windows), _priority(o, 0))
    else:
        yield from _format(o, zip(ms, values, ios.ddir, ios.bs, ios.offset), _priority(o, o.ioprio))


def _priority(o: FioLogOptions, ioprio: int) -> str:
    if o.log_prio:
        return f"0x{ioprio:04x}"
    return "1" if ioprio >> IOPRIO_CLASS_SHIFT == IOPRIO_CLASS_RT else "0"


def _format(o: FioLogOptions, rows: Iterable[tuple[int, int, int, int, int]], prio: str) -> Iterator[str]:
    """(ms, value, ddir, bs, offset) rows as fio prints them."""
    if o.log_offset:
        return (f"{t}, {v}, {d}, {b}, {f}, {prio}\n" for t, v, d, b, f in rows)
    return (f"{t}, {v}, {d}, {b}, {prio}\n" for t, v, d, b, _ in rows)


# -- windows ----------------------------------------------------------------------------------

class _Window:
    """A direction's open window: its values' count, running mean (fio's, in floating
    point, so that its rounding is fio's) and maximum."""

    __slots__ = ("n", "mean", "max")

    def __init__(self) -> None:
        self.n, self.mean, self.max = 0, 0.0, 0

    def add(self, value: int) -> None:
        step = value - self.mean
        if step:
            self.mean += step / (self.n + 1.0)
        self.n += 1
        self.max = max(self.max, value)

    def value(self, log_max: bool) -> int:
        return self.max if log_max else int(self.mean + 0.5)


def _windowed(o: FioLogOptions, events: Iterable[tuple[int, int, int]], end_ms: int, width: int,
              slack_ms: int = 0) -> Iterator[tuple[int, int, int]]:
    """(ms, value, ddir) of each window, per direction, over (ms, value, ddir) events: a
    window closes at the first event `width` ms or more after its start (or `slack_ms`
    short of it), and the next starts at the multiple of `width` at or before that event;
    the windows still open close at the end."""
    windows = {d: _Window() for d in DIRECTIONS}
    start = dict.fromkeys(DIRECTIONS, 0)
    for t, value, ddir in events:
        w = windows[ddir]
        w.add(value)
        if t < start[ddir] or width - (t - start[ddir]) > slack_ms:
            continue
        yield t, w.value(o.log_max_value), ddir
        windows[ddir] = _Window()
        start[ddir] = t - t % width
    for ddir in DIRECTIONS:
        if windows[ddir].n:
            yield end_ms, windows[ddir].value(o.log_max_value), ddir


def _rate_interval_ms(o: FioLogOptions, kind: str) -> int:
    """How often fio samples the job's bw (or iops) for its log: bwavgtime (iopsavgtime)
    when the job sets it, else log_avg_msec."""
    given = o.bw_avg_msec if kind == "bw" else o.iops_avg_msec
    return o.log_avg_msec if given is None else given


def _rate_window_ms(o: FioLogOptions, kind: str) -> int:
    """The bw (iops) log's window: log_avg_msec, or bwavgtime (iopsavgtime) when the job
    sets it shorter. 0: a line per I/O."""
    return min(o.log_avg_msec, _rate_interval_ms(o, kind))


def _rates(kind: str, ios: _Ios, end_ns: int, every_ms: int) -> Iterator[tuple[int, int, int]]:
    """(ms, rate, ddir) at every multiple of `every_ms` up to the end, for each direction
    with completions since the last: KiB/s for bw, IOPS for iops. An interval without
    completions gives nothing, so it is skipped."""
    every_ns = every_ms * NS_PER_MS
    done, n = ios.done, len(ios.done)
    i = 0
    while i < n:
        tick_ns = -(-done[i] // every_ns) * every_ns or every_ns   # the end of done[i]'s interval
        if tick_ns > end_ns:
            return
        amount = dict.fromkeys(DIRECTIONS, 0)
        while i < n and done[i] <= tick_ns:
            amount[ios.ddir[i]] += ios.bs[i] if kind == "bw" else 1
            i += 1
        for ddir in DIRECTIONS:
            if amount[ddir]:
                rate = amount[ddir] * 1000 // every_ms
                yield tick_ns // NS_PER_MS, rate // 1024 if kind == "bw" else rate, ddir
