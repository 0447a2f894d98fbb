"""Writing traces: prepared records (numpy chunks of prepared.RECORD, in issue order) as a
file in any format ssdlab reads back, streamed chunk by chunk.

    write_trace(chunks, Path("light.csv.gz"), "csv")     # gzip by the suffix
    write_trace(chunks_from_records(Trace("usr_0.csv")), Path("usr_0.iolog"), "fio-v3")

Every text format the readers know (traces/formats.py) has a writer here, and `prepared`
writes the binary prepared trace itself. What each keeps, read back by its reader:

| format | times | offsets, lengths | device | other columns |
|---|---|---|---|---|
| fio-v3, alibaba, csv | µs | bytes | as given | - |
| msr | µs (FILETIME ticks of 100 ns) | bytes | `HOST_DISK` (a name without `_N` gets disk 0) | ResponseTime 0 |
| systor | µs (seconds, nine decimals) | bytes | the LUN | Response 0 |
| fio-v2 | ms: a `wait` line (ms since the start) before each I/O of a new ms, rounded half up | bytes | the file | - |
| tencent | whole seconds (cut) | 512 B sectors: whole sectors only | the VolumeID | - |

fio-v2 and tencent are coarse: their readers say their times cannot time a replay
(`Format.coarse_timing`), and `coarse()` says why. A prepared record has no response time:
MSR and SYSTOR '17, whose lines must have one, get 0 (`response_note()`). Only fio and the
CSV with named columns hold trims and flushes; the others refuse a trace with any.

The output is compressed by its suffix: `.gz` gzip, `.xz` xz, `.bz2` bzip2 (as the readers
recognise them by content). It is written beside its place and renamed at the end, so a
failed write leaves no partial trace.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.traces import prepared
from ssdlab.traces.fio_iolog import V2
from ssdlab.traces.fio_iolog_writer import ACTIONS, IologV3, check_file_name, op_names
from ssdlab.traces.format import SECOND_US
from ssdlab.traces.formats import BY_NAME
from ssdlab.traces.record import Record
from ssdlab.traces.tencent import SECTOR

PREPARED = "prepared"
FILETIME_TICKS_PER_US = 10
MS = 1000  # µs
_CSV_OPS = np.array([op.value for op in prepared.OPS])
_MSR_OPS = np.array(["Read", "Write"])
_RW = np.array(["R", "W"])
_TENCENT_OPS = np.array(["0", "1"])
_HOST_DISK = re.compile(r"(.+)_(\d+)")
_COMPRESSORS: dict[str, Callable[[Path], TextIO]] = {
    ".gz": lambda path: gzip.open(path, "wt", encoding="utf-8", newline="\n", compresslevel=6),
    ".xz": lambda path: lzma.open(path, "wt", encoding="utf-8", newline="\n", preset=3),
    ".bz2": lambda path: bz2.open(path, "wt", encoding="utf-8", newline="\n"),
}


class _Text:
    """A text format's writer: `head()`, `lines(chunk)` for each chunk in order, `tail()`."""

    title = ""
    device_field = ""  # what the device is in a comma-separated format's line

    def __init__(self, device: str) -> None:
        self.device = _csv_cell(device, self.device_field) if self.device_field else device
        self.records = 0

    def head(self) -> str:
        return ""

    def lines(self, chunk: np.ndarray) -> str:
        text = self._lines(chunk) if len(chunk) else ""
        self.records += len(chunk)
        return text

    def _lines(self, chunk: np.ndarray) -> str:
        raise NotImplementedError

    def tail(self) -> str:
        return ""

    def _ops(self, chunk: np.ndarray, names: np.ndarray) -> list[str]:
        return op_names(chunk, names, self.title)


def _csv_cell(name: str, what: str) -> str:
    """`name` as a field of a comma-separated line, refused where it would not read back."""
    if not name or not name.isprintable() or "," in name or name != name.strip():
        raise SsdlabError(f"{name!r} cannot be {what} in a comma-separated trace: it must be a non-empty name "
                          "without commas, control characters or white space around it")
    return name


class _FioV3(_Text):
    title = "a fio iolog"  # the device: a file name, checked by IologV3

    def __init__(self, device: str) -> None:
        super().__init__(device)
        self._log = IologV3(device)

    def head(self) -> str:
        return self._log.head()

    def lines(self, chunk: np.ndarray) -> str:
        self.records += len(chunk)
        return self._log.lines(chunk)

    def tail(self) -> str:
        return self._log.tail()


class _FioV2(_Text):
    title = "a fio iolog"

    def __init__(self, device: str) -> None:
        check_file_name(device)
        super().__init__(device)
        self._ms = 0  # the last wait's

    def head(self) -> str:
        return f"{V2}\n{self.device} add\n{self.device} open\n"

    def _lines(self, chunk: np.ndarray) -> str:
        name, ms = self.device, self._ms
        out = []
        for t, a, o, n in zip(((chunk["time_us"] + MS // 2) // MS).tolist(), self._ops(chunk, ACTIONS),
                              chunk["offset"].tolist(), chunk["length"].tolist(), strict=True):
            if t != ms:
                out.append(f"{name} wait {t} 0\n")
                ms = t
            out.append(f"{name} {a} {o} {n}\n")
        self._ms = ms
        return "".join(out)

    def tail(self) -> str:
        return f"{self.device} close\n"


class _Msr(_Text):
    title = "MSR Cambridge CSV"

    def __init__(self, device: str) -> None:
        super().__init__(device)
        host, disk = (m.groups() if (m := _HOST_DISK.fullmatch(device)) else (device, "0"))
        self._where = f"{_csv_cell(host, 'a Hostname')},{disk}"

    def _lines(self, chunk: np.ndarray) -> str:
        where = self._where
        ticks = FILETIME_TICKS_PER_US
        return "".join([f"{t * ticks},{where},{a},{o},{n},0\n" for t, a, o, n in zip(
            chunk["time_us"].tolist(), self._ops(chunk, _MSR_OPS),
            chunk["offset"].tolist(), chunk["length"].tolist(), strict=True)])


class _Alibaba(_Text):
    title = "Alibaba block trace CSV"
    device_field = "a device_id"

    def _lines(self, chunk: np.ndarray) -> str:
        device = self.device
        return "".join([f"{device},{a},{o},{n},{t}\n" for t, a, o, n in zip(
            chunk["time_us"].tolist(), self._ops(chunk, _RW), chunk["offset"].tolist(), chunk["length"].tolist(),
            strict=True)])


class _Systor(_Text):
    title = "SNIA SYSTOR '17 CSV"
    device_field = "a LUN"

    def head(self) -> str:
        return "Timestamp,Response,IOType,LUN,Offset,Size\n"

    def _lines(self, chunk: np.ndarray) -> str:
        lun = self.device
        seconds, us = np.divmod(chunk["time_us"], SECOND_US)
        return "".join([f"{s}.{u:06d}000,0.000000000,{a},{lun},{o},{n}\n" for s, u, a, o, n in zip(
            seconds.tolist(), us.tolist(), self._ops(chunk, _RW), chunk["offset"].tolist(),
            chunk["length"].tolist(), strict=True)])


class _Tencent(_Text):
    title = "Tencent CBS CSV"
    device_field = "a VolumeID"

    def _lines(self, chunk: np.ndarray) -> str:
        volume = self.device
        ops = self._ops(chunk, _TENCENT_OPS)
        offset, length = chunk["offset"], chunk["length"]
        partial = (offset % SECTOR != 0) | (length % SECTOR != 0)
        if partial.any():
            at = int(np.argmax(partial))
            raise SsdlabError(f"Tencent CBS counts 512 B sectors: record {self.records + at + 1} "
                              f"(offset {int(offset[at])}, length {int(length[at])} bytes) is not whole sectors")
        return "".join([f"{t},{o},{n},{a},{volume}\n" for t, o, n, a in zip(
            (chunk["time_us"] // SECOND_US).tolist(), (offset // SECTOR).tolist(), (length // SECTOR).tolist(),
            ops, strict=True)])


class _Csv(_Text):
    title = "CSV with named columns"
    device_field = "a device"

    def head(self) -> str:
        return "time_us,op,offset,length,device\n"

    def _lines(self, chunk: np.ndarray) -> str:
        device = self.device
        return "".join([f"{t},{a},{o},{n},{device}\n" for t, a, o, n in zip(
            chunk["time_us"].tolist(), self._ops(chunk, _CSV_OPS), chunk["offset"].tolist(),
            chunk["length"].tolist(), strict=True)])


TEXT_WRITERS: dict[str, type[_Text]] = {"fio-v2": _FioV2, "fio-v3": _FioV3, "msr": _Msr, "alibaba": _Alibaba,
                                        "systor": _Systor, "tencent": _Tencent, "csv": _Csv}
WRITABLE = (*TEXT_WRITERS, PREPARED)
_RESPONSE_COLUMN = {"msr": "ResponseTime", "systor": "Response"}


def known() -> str:
    return ", ".join(WRITABLE)


def check_format(name: str) -> str:
    """`name` (any case) as a writable format's name, or an SsdlabError listing them."""
    if name.lower() not in WRITABLE:
        raise SsdlabError(f"cannot write a trace as {name!r}: the formats written are {known()}")
    return name.lower()


def coarse(name: str) -> str | None:
    """Why a trace written as `name` loses its µs timing, or None when it keeps it."""
    return None if name == PREPARED else BY_NAME[name].coarse_timing


def response_note(name: str) -> str | None:
    """What a trace written as `name` holds that its records do not: a response time of 0."""
    column = _RESPONSE_COLUMN.get(name)
    return None if column is None else (
        f"{BY_NAME[name].title} has a {column} on every line and the records have none: written as 0, so the "
        "file's queue depth (by Little's law, as `trace stats` computes it) is not the trace's")


def compression(path: Path) -> str | None:
    """The compression of a file written at `path`, from its suffix."""
    return path.suffix.lower() if path.suffix.lower() in _COMPRESSORS else None


def write_trace(chunks: Iterable[np.ndarray], path: Path, format_name: str, device: str = "0") -> int:
    """Write `chunks` (prepared.RECORD arrays in issue order) to `path` as `format_name`,
    the records' device named `device`; returns the number of records written."""
    name = check_format(format_name)
    if name == PREPARED and compression(path):
        raise SsdlabError(f"{path}: a prepared trace is not compressed: name it without {path.suffix}")
    writer = None if name == PREPARED else TEXT_WRITERS[name](device)  # checks the device's name first
    part = path.with_name(f".{path.name}.part")
    try:
        if writer is None:
            count = _write_prepared(chunks, part)
        else:
            with (_COMPRESSORS[compression(path)](part) if compression(path)
                  else part.open("w", encoding="utf-8", newline="\n")) as out:
                out.write(writer.head())
                for chunk in chunks:
                    out.write(writer.lines(_checked(chunk)))
                out.write(writer.tail())
            count = writer.records
        os.replace(part, path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise SsdlabError(f"cannot write the trace {path}: {exc.strerror or exc}") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return count


def _write_prepared(chunks: Iterable[np.ndarray], part: Path) -> int:
    with prepared.PreparedWriter(part) as writer:
        for chunk in chunks:
            writer.write(_checked(chunk))
    return writer.records


def _checked(chunk: np.ndarray) -> np.ndarray:
    if chunk.dtype != prepared.RECORD:
        raise TypeError(f"trace writers take {prepared.RECORD} records, not {chunk.dtype}")
    return chunk


def chunks_from_records(records: Iterable[Record], size: int = prepared.CHUNK) -> Iterator[np.ndarray]:
    """Canonical records (a reader's) as prepared.RECORD chunks of `size`: time, operation,
    offset and length kept; device, response time and line dropped."""
    code = prepared.OP_CODE
    rows: list[tuple[int, int, int, int]] = []
    for record in records:
        if record.length > prepared.MAX_LENGTH:
            raise SsdlabError(f"line {record.line}: a {record.op.value} of {record.length} bytes is longer than a "
                              f"prepared record holds ({prepared.MAX_LENGTH} bytes)")
        rows.append((record.time_us, record.offset, record.length, code[record.op]))
        if len(rows) == size:
            yield _chunk(rows)
            rows = []
    if rows:
        yield _chunk(rows)


def _chunk(rows: list[tuple[int, int, int, int]]) -> np.ndarray:
    chunk = prepared.empty(len(rows))
    table = np.array(rows, dtype=np.uint64)
    chunk["time_us"], chunk["offset"], chunk["length"], chunk["op"] = table.T
    return chunk

