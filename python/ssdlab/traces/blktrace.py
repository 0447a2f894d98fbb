"""blktrace's binary dumps: what `blktrace -d DEV -o NAME` writes, one file per CPU
(NAME.blktrace.0, NAME.blktrace.1, ...), and what fio's `read_iolog` replays.

Facts from the kernel's uapi header blktrace_api.h (fio carries a copy) and fio's
blktrace.c; where ssdlab reads a record otherwise than fio, it says so below.

- A file is a run of records: a fixed header, then `pdu_len` bytes of payload (a process
  name, an unplug's count, a cgroup id...) that is not read. Version 7 (struct
  blk_io_trace, 48 bytes): magic, sequence, time, sector, bytes, action (32 bits), pid,
  device, cpu, error, pdu_len. Version 8 (struct blk_io_trace2, 64 bytes, which newer
  blktrace asks the kernel for with BLKTRACESETUP2): pid before a 64-bit action, then
  12 bytes of padding. fio 3.33 reads version 7 only.
- The first word is 0x65617400 | version, in the byte order of the machine that traced:
  each file is read in the order its first record's magic says (as fio does), and every
  record must carry the magic.
- time: ns on the kernel's monotonic clock (`ktime_get()`: since boot, not since the
  trace started; blkparse shows it from the first event). Rounded to the µs here (fio
  truncates).
- sector: in 512-byte units whatever the device's logical block size, because the block
  layer counts every bio in 512-byte sectors: on a 4Kn device, 4 KiB block 1 is sector 8
  (tests/traces/data/ holds a capture from a loop device with 4096-byte sectors that
  shows it). There is no sector size to ask for.
- bytes: the request's length in bytes.
- action: the low 16 bits the event (1 queue Q, 2 back merge M, ..., 7 issue D, 8
  complete C, ...; bit 8 says a cgroup id starts the payload), the bits from 16 up its
  categories (read, write, flush, sync, queue, ..., passthrough PC, notify, discard).
- device: the kernel's dev_t, the major number in its top 12 bits, the minor in the low
  20: the record's device is "major:minor".

Which records are I/O, as fio's queue_trace takes them: queue (Q) events, the moment a
request reached the block layer (as the program issued it: before merges, splits and
the scheduler). Of those, a discard is a trim, a flush without data a flush, any other
write a write and the rest reads. Left out, and counted by reason in the findings: every
other event (issue, complete, merge... the block layer's doing, not the workload's),
notify records (process names, messages), passthrough (PC) commands, zone management
(version 8), and Q events without data (fio warns of them and skips them too). Unlike
fio 3.33:

- a Q event that carries a cgroup id (bit 8 of its action) is read: fio compares the
  whole low 16 bits with Q and drops it;
- a write with a preflush (a flush and data in one request: blkparse's `FWS 2048 + 8`,
  a journal commit) is a flush and then a write, at the same time: fio replays the
  flush alone;
- a record cut short at the end of a file is an error, where fio stops reading there.

Per-CPU files are merged in time order as they are read (64 KiB of each file in memory
at a time), as fio's `merge_blktrace_file` does: a path NAME.blktrace.N (also
compressed, NAME.blktrace.N.gz) reads all of NAME.blktrace.* with the same ending, and a
path NAME that is no file reads NAME.blktrace.N. A record's `line` is its number in its
own file, and messages call it a record.
"""

from __future__ import annotations

import heapq
import re
import struct
from collections import Counter
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO

from ssdlab.errors import SsdlabError
from ssdlab.traces.format import BinaryFormat, Row
from ssdlab.traces.record import Op
from ssdlab.traces.source import DAMAGED

MAGIC = 0x65617400
SECTOR = 512  # bytes: the block layer's unit, whatever the device's
MINOR_BITS = 20
CHUNK = 1 << 16  # bytes read at once, of each file
# Per version: the header's fields (struct blk_io_trace, blk_io_trace2), and the places of
# time, sector, bytes, action, device and pdu_len among them.
_V7 = "IIQQIIIIIHH"  # magic sequence time sector bytes action pid device cpu error pdu_len
_V8 = "IIQQIIQIIHH12x"  # magic sequence time sector bytes pid action device cpu error pdu_len padding
_LAYOUTS = {7: (_V7, (2, 3, 4, 5, 7, 10)), 8: (_V8, (2, 3, 4, 6, 7, 10))}
VERSIONS = tuple(_LAYOUTS)
HEADERS = {order: {version: struct.Struct(order + fields) for version, (fields, _) in _LAYOUTS.items()}
           for order in "<>"}
_LONGEST = max(header.size for header in HEADERS["<"].values())
_FIELDS = {version: itemgetter(*at) for version, (_, at) in _LAYOUTS.items()}
_VERSION_AT = {"<": 0, ">": 3}  # the version's byte in the magic
_MAGIC_WORD = {order: struct.Struct(order + "I") for order in "<>"}

# Events (the low 16 bits of an action, less the cgroup flag)
QUEUE = 1
CGROUP = 1 << 8
_EVENTS = {2: "back merge (M)", 3: "front merge (F)", 4: "get request (G)", 5: "sleep request (S)",
           6: "requeue (R)", 7: "issue (D)", 8: "complete (C)", 9: "plug (P)", 10: "unplug (U)",
           11: "unplug by timer (UT)", 12: "insert (I)", 13: "split (X)", 14: "bounce (B)", 15: "remap (A)",
           16: "abort", 17: "driver data", 18: "zone plug", 19: "zone unplug"}
# Categories (an action's bits from 16 up)
WRITE, FLUSH, PC, NOTIFY, DISCARD = 1 << 1, 1 << 2, 1 << 9, 1 << 10, 1 << 13
ZONE_MANAGEMENT = 0b11111 << 17  # version 8: zone reset, reset all, finish, open, close
# Why a record is left out, by what counts it while reading (an event's number, or these)
_NOTIFY, _PC, _ZONE, _EMPTY = -1, -2, -3, -4
_SKIPPED = {_NOTIFY: "notify record(s) (process names, messages)", _PC: "passthrough (PC) event(s)",
            _ZONE: "zone management event(s)", _EMPTY: "queue (Q) event(s) without data"}
# A queue event with none of these categories is I/O, if it has data or is a flush
_SPECIAL = (NOTIFY | PC | ZONE_MANAGEMENT) << 16

_PER_CPU = re.compile(r"(?P<name>.+)\.blktrace\.(?P<cpu>\d+)(?P<ending>(?:\.[A-Za-z0-9]+)?)")
# An item: its time in ns (the merge's key), which file it is from as messages say it
# (empty for a trace of one file), and its row.
Item = tuple[int, str, Row]


def check(head: bytes) -> None:
    """Raises ValueError unless `head` starts with a blktrace record's magic."""
    if len(head) < 4:
        raise ValueError(f"{len(head)} bytes, less than a record's magic")
    if _byte_order(head) is None:
        raise ValueError(f"it starts with {head[:4].hex(' ')}, not a blktrace record's magic "
                         f"{MAGIC >> 8:06x}xx (in either byte order)")


def _byte_order(head: bytes) -> str | None:
    if len(head) < 4:
        return None
    for order, word in _MAGIC_WORD.items():
        if word.unpack_from(head)[0] & ~0xFF == MAGIC:
            return order
    return None


def files(path: Path) -> list[Path] | None:
    """The per-CPU files of the trace `path` names, in CPU order; None when `path` is no
    per-CPU file (nor the prefix of some)."""
    own = _PER_CPU.fullmatch(path.name)
    if own and path.is_file():
        name, ending = own["name"], own["ending"]
    elif not own and not path.exists():
        name, ending = path.name, ""
    else:
        return None
    found = []
    if path.parent.is_dir():
        for sibling in path.parent.iterdir():
            match = _PER_CPU.fullmatch(sibling.name)
            if match and match["name"] == name and match["ending"] == ending:
                found.append((int(match["cpu"]), sibling.name, sibling))
    return [sibling for *_, sibling in sorted(found)] or None


def records(opened: list[tuple[Path, BinaryIO]], skipped: Counter[str]) -> Iterator[tuple[int, Item]]:
    """The records of every file, merged in time order; those left out are counted in
    `skipped`, by reason, as each file is read to its end."""
    streams = [_file_records(path, data, f" of {path.name}" if len(opened) > 1 else "", skipped)
               for path, data in opened]
    if len(streams) == 1:
        return streams[0]
    return heapq.merge(*streams, key=_time)


def _time(numbered: tuple[int, Item]) -> int:
    return numbered[1][0]


def _file_records(path: Path, data: BinaryIO, label: str, skipped: Counter[str]) -> Iterator[tuple[int, Item]]:
    """The records of one file, as (record number, item), read a chunk at a time."""
    left_out: Counter[int] = Counter()
    buf, pos, number = b"", 0, 0
    headers = version_at = None
    try:
        while True:
            if len(buf) - pos < _LONGEST:
                buf = buf[pos:] + data.read(CHUNK)
                pos = 0
                if not buf:
                    break
            number += 1
            if headers is None:
                order = _byte_order(buf)
                if order is None:
                    if len(buf) < 4:
                        raise _damaged(path, 1, f"cut short: {len(buf)} bytes, less than a record's magic")
                    raise _damaged(path, 1, f"not a blktrace record: it starts with {buf[:4].hex(' ')}, not the "
                                            f"magic {MAGIC >> 8:06x}xx (in either byte order)")
                headers, version_at, word = HEADERS[order], _VERSION_AT[order], _MAGIC_WORD[order]
            header = headers.get(buf[pos + version_at]) if len(buf) - pos >= 4 else None
            if header is None or len(buf) - pos < header.size:
                _refuse(path, number, buf[pos:], word)
            fields = header.unpack_from(buf, pos)
            if fields[0] & ~0xFF != MAGIC:
                _refuse(path, number, buf[pos:], word)
            time, sector, nbytes, action, device, pdu_len = _FIELDS[fields[0] & 0xFF](fields)
            pos += header.size + pdu_len
            if pos > len(buf):
                more = data.read(pos - len(buf))
                if len(buf) + len(more) < pos:
                    raise _damaged(path, number, f"its payload of {pdu_len} bytes (pdu_len) runs past the end of "
                                                 "the file")
                buf += more
            if action & 0xFFFF != QUEUE or action & _SPECIAL or not nbytes:
                why = _left_out(action, nbytes)
                if why is not None:
                    left_out[why] += 1
                    continue
            for row in _rows(time, sector, nbytes, action, device):
                yield number, (time, label, row)
    except DAMAGED as exc:
        raise SsdlabError(f"{path}: reading stopped after record {number}: {exc} (a damaged or truncated "
                          "file?)") from None
    for why, count in sorted(left_out.items()):
        skipped[_SKIPPED.get(why) or f"{_EVENTS.get(why, f'action {why}')} event(s)"] += count


def _refuse(path: Path, number: int, rest: bytes, word: struct.Struct) -> None:
    """Why the record at `rest`, the file's bytes from there on, cannot be read."""
    if len(rest) < 4:
        raise _damaged(path, number, f"cut short: {len(rest)} bytes, less than a record's magic")
    magic = word.unpack_from(rest)[0]
    if magic & ~0xFF != MAGIC:
        raise _damaged(path, number, f"magic {magic:#010x} is not a blktrace record's {MAGIC >> 8:06x}xx: the file "
                                     "is damaged, or the records before were not what they seemed")
    version = magic & 0xFF
    if version not in _LAYOUTS:
        raise _damaged(path, number, f"blktrace version {version}, which ssdlab does not read (it reads versions "
                                     f"{' and '.join(map(str, VERSIONS))})")
    raise _damaged(path, number, f"cut short: {len(rest)} of its {HEADERS['<'][version].size} bytes (a copy of a "
                                 "trace still being written, or a damaged file?)")


def _damaged(path: Path, number: int, why: str) -> SsdlabError:
    return SsdlabError(f"{path}, record {number}: {why}")


def _left_out(action: int, nbytes: int) -> int | None:
    """Why a record is left out (an event's number, or _NOTIFY...), or None for I/O."""
    categories = action >> 16
    if categories & NOTIFY:
        return _NOTIFY
    event = action & 0xFFFF & ~CGROUP
    if event != QUEUE:
        return event
    if categories & PC:
        return _PC
    if categories & ZONE_MANAGEMENT:
        return _ZONE
    if not nbytes and (categories & DISCARD or not categories & FLUSH):
        return _EMPTY
    return None


def _rows(time: int, sector: int, nbytes: int, action: int, device: int) -> tuple[Row, ...]:
    """The I/O of a queue event: one row, or a flush and a write for a write with a preflush."""
    categories = action >> 16
    time_us = (time + 500) // 1000
    disk = f"{device >> MINOR_BITS}:{device & ((1 << MINOR_BITS) - 1)}"
    if categories & DISCARD:
        op = Op.TRIM
    elif categories & FLUSH:
        flush = (time_us, Op.FLUSH, 0, 0, disk, None)
        if not nbytes:
            return (flush,)
        return flush, (time_us, Op.WRITE if categories & WRITE else Op.READ, sector * SECTOR, nbytes, disk, None)
    else:
        op = Op.WRITE if categories & WRITE else Op.READ
    return ((time_us, op, sector * SECTOR, nbytes, disk, None),)


parse = itemgetter(2)  # an item's row


def where(number: int, item: Item) -> str:
    return f"record {number}{item[1]}"


def quote(item: Item) -> str:
    time, _, (time_us, op, offset, length, device, _) = item
    return f"Q {op.value} of {length} bytes at sector {offset // SECTOR} of {device}, time {time} ns"


FORMAT = BinaryFormat(
    "blktrace", "blktrace binary dump",
    f"blk_io_trace records (versions {', '.join(map(str, VERSIONS))}) of the magic {MAGIC:#x} | version, "
    "in either byte order; queue (Q) events of reads, writes, discards and flushes",
    check, files, records, parse, where, quote)
