"""Writing fio iolog v3: the lines fio's `read_iolog` replays, from prepared records.

    with open("trace.iolog", "w") as out:
        write_iolog_v3(prepared.chunks(path), "/dev/nvme0n1", out)

The format is fio_iolog.py's (fio 3.33's iolog.c): `fio version 3 iolog`, then
`TIME FILE ACTION` for the file's `add` and `open`, `TIME FILE ACTION OFFSET LENGTH` per
I/O (read, write, trim; sync for a flush, with offset and length 0), and `TIME FILE close`
after the last. Times are written as given, in µs, add and open at the first record's,
close at the last's: this module adds none of fio 3.33's quirks (the first gap dropped
when the first record is at 0...); whoever replays with fio adjusts the times first.
Records are numpy chunks of prepared.RECORD, so a trace of any length streams.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.traces import prepared
from ssdlab.traces.record import Op

V3 = "fio version 3 iolog"
# fio's action per prepared op code (prepared.OPS' order)
ACTIONS = np.array([{Op.READ: "read", Op.WRITE: "write", Op.TRIM: "trim", Op.FLUSH: "sync"}[op]
                    for op in prepared.OPS])


def check_file_name(name: str) -> None:
    """fio splits an iolog's lines at white space: a file name must have none."""
    if not name or any(char.isspace() for char in name) or not name.isprintable():
        raise SsdlabError(f"{name!r} cannot name a file in a fio iolog: it must be a non-empty name without "
                          "white space or control characters")


def op_names(chunk: np.ndarray, names: np.ndarray, format_title: str) -> list[str]:
    """Each record's operation as `names` spells it (indexed by op code), refusing codes
    the format has no name for."""
    ops = chunk["op"]
    if len(ops) and int(ops.max()) >= len(names):
        code = int(ops[ops >= len(names)][0])
        what = prepared.OPS[code].value if code < len(prepared.OPS) else f"operation code {code}"
        raise SsdlabError(f"{format_title} cannot hold a {what}: it has "
                          f"{', '.join(prepared.OPS[i].value for i in range(len(names)))} only")
    return names[ops].tolist()


class IologV3:
    """The text of an iolog v3 in pieces: `head()`, `lines(chunk)` for each chunk in
    order, then `tail()`."""

    def __init__(self, file_name: str) -> None:
        check_file_name(file_name)
        self.name = file_name
        self.records = 0
        self.last_us = 0

    def head(self) -> str:
        return V3 + "\n"

    def lines(self, chunk: np.ndarray) -> str:
        if not len(chunk):
            return ""
        name = self.name
        times = chunk["time_us"].tolist()
        opened = "" if self.records else f"{times[0]} {name} add\n{times[0]} {name} open\n"
        text = opened + "".join([f"{t} {name} {a} {o} {n}\n" for t, a, o, n in zip(
            times, op_names(chunk, ACTIONS, "a fio iolog"), chunk["offset"].tolist(), chunk["length"].tolist(),
            strict=True)])
        self.records += len(chunk)
        self.last_us = times[-1]
        return text

    def tail(self) -> str:
        opened = "" if self.records else f"0 {self.name} add\n0 {self.name} open\n"
        return f"{opened}{self.last_us} {self.name} close\n"


def write_iolog_v3(chunks: Iterable[np.ndarray], file_name_in_log: str, out: TextIO) -> int:
    """Write the records of `chunks` (prepared.RECORD arrays, in issue order) to `out` as
    an iolog v3 whose I/O goes to `file_name_in_log`; returns the number of records."""
    log = IologV3(file_name_in_log)
    out.write(log.head())
    for chunk in chunks:
        out.write(log.lines(chunk))
    out.write(log.tail())
    return log.records
