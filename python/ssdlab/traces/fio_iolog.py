"""fio's iologs, versions 2 and 3: what fio's `write_iolog` writes and `read_iolog` replays.

Facts from fio's HOWTO.rst ("Trace file format") and its iolog.c at tag fio-3.33 (Debian
12's fio); where the two disagree, from the source, as METHODOLOGY.md section 6 says:

- The first line names the version: `fio version 2 iolog` or `fio version 3 iolog`.
- Version 2 lines are `FILE ACTION` with ACTION add, open or close, and `FILE ACTION
  OFFSET LENGTH` with ACTION read, write, trim, sync, datasync or wait. Offsets and lengths
  are bytes. `wait N` is not "N µs after the previous wait" as the HOWTO says: fio 3.33
  (read_iolog_get) sleeps until N *milliseconds since fio started*: fio 3.33 replays a
  log whose one wait is `wait 1500` in 1.8 s, not in 1.5 ms. A record takes the time of
  the last wait before it, so v2 times are coarse: the I/O between two waits goes at once.
- Version 3 (fio >= 3.31) puts a timestamp first on every line, `TIME FILE ACTION [OFFSET
  LENGTH]`, and has no `wait` (fio ignores one with an error; here it is an error). TIME
  is µs since the log started: fio writes
  `utime_since_now(&td->io_log_start_time)` (log_io_u) and replays the differences in µs
  (the HOWTO says only "relative to the beginning of the run").
- fio 3.33 writes version 3 only: an `add` line for every file of the job, then `open`,
  the I/O, `close`; its sync lines carry the last offset and length 0 (a flush here, with
  neither). It writes trims, but does not replay them (3.34 does).

A file must be `add`ed before a line uses it, as fio requires. Each file is a device of the
trace (its name is the record's device).
"""

from __future__ import annotations

from collections.abc import Callable

from ssdlab.traces.format import Format, Parser, Row
from ssdlab.traces.record import Op

V2 = "fio version 2 iolog"
V3 = "fio version 3 iolog"
_IO = {"read": Op.READ, "write": Op.WRITE, "trim": Op.TRIM, "sync": Op.FLUSH, "datasync": Op.FLUSH}
_FILE_ACTIONS = ("add", "open", "close")
MS = 1000  # µs


def _file_action(added: set[str], name: str, action: str) -> None:
    if action == "add":
        added.add(name)
    elif action not in _FILE_ACTIONS:
        raise ValueError(f"{action!r} is not a file action (add, open, close)")
    elif name not in added:
        raise ValueError(f"{action} of {name!r}, which no `add` line named before")


def _io(time_us: int, added: set[str], name: str, action: str, offset: str, length: str) -> Row:
    op = _IO[action]
    if name not in added:
        raise ValueError(f"{action} on {name!r}, which no `add` line named before")
    if op is Op.FLUSH:
        int(offset), int(length)  # numbers, as fio's sscanf requires; a flush has no range
        return time_us, op, 0, 0, name, None
    return time_us, op, int(offset), int(length), name, None


def _v2() -> Parser:
    added: set[str] = set()
    now = 0  # µs: the last wait's

    def parse(line: str) -> Row | None:
        nonlocal now
        cells = line.split()
        if len(cells) == 4:
            if cells[1] == "wait":
                now = int(cells[2]) * MS
                return None
            return _io(now, added, *cells)
        if len(cells) == 2:
            _file_action(added, *cells)
            return None
        raise ValueError(f"expected 2 or 4 fields, found {len(cells)}")

    return parse


def _v3() -> Parser:
    added: set[str] = set()

    def parse(line: str) -> Row | None:
        cells = line.split()
        if len(cells) == 5:
            return _io(int(cells[0]), added, *cells[1:])
        if len(cells) == 3:
            int(cells[0])
            _file_action(added, *cells[1:])
            return None
        raise ValueError(f"expected 3 or 5 fields, found {len(cells)}")

    return parse


def _starter(version: str, parser: Callable[[], Parser]) -> Callable[[str], tuple[Parser, bool]]:
    def start(first: str) -> tuple[Parser, bool]:
        if first.strip() != version:
            raise ValueError(f"the first line must be {version!r}")
        return parser(), True

    return start


_ACTIONS = "ACTION read, write, trim, sync or datasync; add, open or close"
V2_FORMAT = Format("fio-v2", "fio iolog v2", f"{V2!r}, then FILE ACTION [OFFSET LENGTH] ({_ACTIONS}, or wait MS)",
                   _starter(V2, _v2),
                   coarse_timing="fio iolog v2 times I/O only with its wait lines, in ms: the I/O between "
                                 "two waits has no time of its own")
V3_FORMAT = Format("fio-v3", "fio iolog v3", f"{V3!r}, then TIME_US FILE ACTION [OFFSET LENGTH] ({_ACTIONS})",
                   _starter(V3, _v3))
