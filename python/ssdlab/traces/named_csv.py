"""A plain CSV trace whose header line names its columns, for traces of any origin:

    time_us,op,offset,length,device
    0,read,0,4096,nvme0n1
    125,write,1048576,131072,nvme0n1

Columns, in any order and case (other columns are ignored):

- one time column, its unit in its name: `time_ns`, `time_us`, `time_ms` or `time_s`,
  a whole or decimal number (rounded to the µs);
- `op`: read, write, trim or flush (also r, w, t, f; discard for trim, sync for flush);
- `offset`, `length`: bytes, whole numbers (a flush has neither: both are read as 0);
- optional `device`: a name, for a trace of several disks;
- optional response time, its unit in its name like the time's (`response_us`...): how
  long the I/O took, which gives the trace's queue depth.

Fields are not quoted (the header may be).
"""

from __future__ import annotations

import csv

from ssdlab.traces.format import Format, Parser, Row, to_us
from ssdlab.traces.record import Op

_OPS = {"read": Op.READ, "r": Op.READ, "write": Op.WRITE, "w": Op.WRITE, "trim": Op.TRIM, "t": Op.TRIM,
        "discard": Op.TRIM, "flush": Op.FLUSH, "f": Op.FLUSH, "sync": Op.FLUSH}
# µs per unit, as (numerator, denominator)
_UNITS = {"ns": (1, 1000), "us": (1, 1), "ms": (1000, 1), "s": (1_000_000, 1)}
_REQUIRED = ("op", "offset", "length")


def _column(names: list[str], prefix: str, required: bool) -> tuple[int, tuple[int, int]] | None:
    """The position and unit of the one column `<prefix>_<unit>`."""
    found = [(i, _UNITS[name.removeprefix(prefix)]) for i, name in enumerate(names)
             if name.startswith(prefix) and name.removeprefix(prefix) in _UNITS]
    if len(found) > 1 or (required and not found):
        units = ", ".join(prefix + unit for unit in _UNITS)
        raise ValueError(f"the header must name {'one' if required else 'at most one'} of {units}")
    return found[0] if found else None


def _start(first: str) -> tuple[Parser, bool]:
    try:
        names = [name.strip().lower() for name in next(csv.reader([first]))]
    except csv.Error as exc:
        raise ValueError(f"not a CSV header: {exc}") from None
    missing = [name for name in _REQUIRED if name not in names]
    if missing:
        raise ValueError(f"the header names no {', '.join(missing)} column")
    time, (time_num, time_den) = _column(names, "time_", required=True)
    response = _column(names, "response_", required=False)
    op, offset, length = (names.index(name) for name in _REQUIRED)
    device = names.index("device") if "device" in names else None
    width = len(names)

    def parse(line: str) -> Row:
        cells = line.split(",")
        if len(cells) != width:
            raise ValueError(f"expected {width} comma-separated fields as the header names, found {len(cells)}")
        kind = _OPS[cells[op].strip().lower()]
        start, size = (0, 0) if kind is Op.FLUSH else (int(cells[offset]), int(cells[length]))
        return (to_us(cells[time], time_num, time_den), kind, start, size,
                None if device is None else cells[device].strip(),
                None if response is None else to_us(cells[response[0]], *response[1]))

    return parse, True


FORMAT = Format("csv", "CSV with named columns",
                "a header naming time_ns|time_us|time_ms|time_s, op, offset, length and optionally device "
                "and response_<unit>; op read, write, trim or flush; bytes", _start)
