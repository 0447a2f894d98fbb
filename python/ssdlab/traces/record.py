"""The canonical trace record: what every reader yields, whatever the format.

A record is a plain tuple (NamedTuple) because a trace may hold 10^8 of them: a tuple is
built in about a tenth of a microsecond, a frozen dataclass in several times that.
Readers check every record when they build it (reader.py), so a Record is always within
the bounds below.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class Op(enum.StrEnum):  # a str: hashed in C (an Enum hashes in Python), so a dict by Op is cheap
    READ = "read"
    WRITE = "write"
    TRIM = "trim"
    FLUSH = "flush"  # fio's sync and datasync; no offset, no length


class Record(NamedTuple):
    time_us: int  # issue time, µs, on the trace's own clock (not rebased to 0)
    op: Op
    offset: int  # bytes
    length: int  # bytes; 0 only for a flush
    device: str | None  # the disk, volume or file of a trace of several; None when it names none
    response_us: int | None  # completion minus issue, µs, where the trace records it
    line: int  # in the (decompressed) file, for messages


# 1 PiB: past any single drive and volume in the public traces, yet far from the 2^63 at
# which a byte offset stops fitting the signed 64 bits of fio, the kernel and numpy.
MAX_END = 1 << 50
# int64 µs with room for arithmetic; MSR's FILETIME clock (µs since 1601) is about 2^53.
MAX_TIME_US = 1 << 62
