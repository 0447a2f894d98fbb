"""A prepared trace: the canonical records of a trace fitted to one target, in a binary
file both backends replay (the simulator reads it itself, the fio backend turns it into an
iolog v3), so that a trace is parsed and fitted once, however many drives and states replay it.

The file: a 32-byte header (MAGIC, the record count as little-endian u64, 16 bytes reserved
as zero), then RECORD per record, little-endian, in issue order. Times are µs from the
replay's start (the first record at 0); offsets and lengths are bytes, whole logical blocks
of the target; op is OPS' index (fio's data direction numbers: 0 read, 1 write, 2 trim,
3 flush, whose offset and length are 0). crates/ssdsim/src/run/trace.rs reads the same
layout: change both or neither.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.traces.record import Op

MAGIC = b"SSDLTRC\x01"
HEADER_BYTES = 32
RECORD = np.dtype([("time_us", "<u8"), ("offset", "<u8"), ("length", "<u4"), ("op", "u1"), ("pad", "V3")])
assert RECORD.itemsize == 24
OPS = (Op.READ, Op.WRITE, Op.TRIM, Op.FLUSH)
OP_CODE = {op: code for code, op in enumerate(OPS)}
MAX_LENGTH = (1 << 32) - 1  # one request; far past any device's largest transfer
CHUNK = 1 << 16  # records read or written at once: 1.5 MiB


class PreparedWriter:
    """Writes records chunk by chunk; the header's count is set when it closes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records = 0
        self._file: BinaryIO = path.open("wb")
        self._file.write(_header(0))

    def write(self, chunk: np.ndarray) -> None:
        if chunk.dtype != RECORD:
            raise TypeError(f"a prepared trace holds {RECORD}, not {chunk.dtype}")
        chunk.tofile(self._file)
        self.records += len(chunk)

    def close(self) -> None:
        self._file.seek(0)
        self._file.write(_header(self.records))
        self._file.close()

    def __enter__(self) -> PreparedWriter:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            self._file.close()
            self.path.unlink(missing_ok=True)


def records(path: Path) -> int:
    """The record count of a prepared trace, after checking its header and length."""
    with path.open("rb") as file:
        header = file.read(HEADER_BYTES)
    if len(header) < HEADER_BYTES or header[:8] != MAGIC:
        raise SsdlabError(f"{path} is not a prepared trace of this version of ssdlab: prepare it again")
    count = int.from_bytes(header[8:16], "little")
    expected = HEADER_BYTES + count * RECORD.itemsize
    if path.stat().st_size != expected:
        raise SsdlabError(f"{path}: {path.stat().st_size} bytes where its {count} records take {expected}: "
                          "the file is damaged or still being written; prepare it again")
    return count


def chunks(path: Path, size: int = CHUNK) -> Iterator[np.ndarray]:
    """The records of a prepared trace, `size` at a time (memory flat in its length)."""
    count = records(path)
    table = np.memmap(path, dtype=RECORD, mode="r", offset=HEADER_BYTES, shape=(count,)) if count else ()
    for start in range(0, count, size):
        yield np.array(table[start:start + size])


def empty(n: int) -> np.ndarray:
    return np.zeros(n, dtype=RECORD)


def _header(count: int) -> bytes:
    return MAGIC + count.to_bytes(8, "little") + bytes(HEADER_BYTES - 16)
