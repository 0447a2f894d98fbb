"""Fitting a trace to a target: its records as a prepared trace (prepared.py) that one
drive or file of `target_bytes` can replay.

In order, each a user's choice (`Fit`), each reported in `Prepared.notes`:

1. Device filter: a trace of several disks keeps the records of one.
2. Time order: records earlier than the one before them are sorted into time order (the
   file's order kept among equal times), by sorted runs merged from disk when the trace is
   longer than one run, so memory stays flat (the reader refuses them instead in strict mode).
3. Times from the first record, divided by `speed` (2: twice as fast), then every gap
   between consecutive issue times capped at `idle_cap_us` (25 ms, METHODOLOGY.md section
   6: "each timestamp becomes the previous one plus the smaller of the original gap and
   25 ms").
4. Offsets into the target: wrapped (modulo its size) or scaled (by target / the trace's
   extent, the largest end of any record); a request that would end past the target
   moves back to end at its end.
5. Alignment to the target's logical block: a request grows to the blocks it touches.

Reading the trace is the slow part (Python, one record at a time); the rest runs on
numpy chunks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.traces import prepared
from ssdlab.traces.fit import Fit, Prepared
from ssdlab.traces.prepared import OP_CODE, OPS
from ssdlab.traces.reader import Trace
from ssdlab.traces.record import Op
from ssdlab.units import format_bytes

# Records sorted in memory at once when a trace is out of order (64 MiB of them with their
# positions); longer traces are sorted in runs of this many, merged from disk.
SORT_RUN = 1 << 21
_RAW = np.dtype([("time_us", "<i8"), ("offset", "<u8"), ("length", "<u8"), ("op", "u1")])
_RUN = np.dtype([("time_us", "<i8"), ("seq", "<u8"), ("offset", "<u8"), ("length", "<u8"), ("op", "u1")])
_FLUSH = OP_CODE[Op.FLUSH]


def prepare(trace: Trace, fit: Fit, target_bytes: int, out: Path,
            progress: Callable[[float], None] | None = None) -> Prepared:
    """Fit `trace` to a target of `target_bytes` (whole logical blocks), written to `out`."""
    return _prepare(lambda raw: _read(trace, fit, raw, progress), f"{trace.path} ({trace.format.title})",
                    trace.findings.notes, fit, target_bytes, out)


def prepare_records(chunks: Iterable[np.ndarray], source: str, fit: Fit, target_bytes: int, out: Path) -> Prepared:
    """Fit records already canonical (chunks of prepared.RECORD: a synthetic trace's) to a target
    of `target_bytes`, written to `out`; `source` names them."""
    def read(raw: Path) -> _Read:
        found = _Read()
        with raw.open("wb") as file:
            for chunk in chunks:
                _append(np.array(chunk[["time_us", "offset", "length", "op"]], dtype=_RAW), file, found)
        return found
    return _prepare(read, source, list, fit, target_bytes, out)


def _prepare(read_into: Callable[[Path], _Read], source: str, findings: Callable[[], list[str]], fit: Fit,
             target_bytes: int, out: Path) -> Prepared:
    """Pass 1 (`read_into` the raw file), time order, pass 2 (the fit) into `out`."""
    if target_bytes < fit.block or target_bytes % fit.block:
        raise SsdlabError(f"a target of {target_bytes} bytes is not whole logical blocks of {fit.block}: "
                          "give the target's logical block size")
    with tempfile.TemporaryDirectory(prefix="ssdlab-trace-", dir=out.parent) as work:
        raw = Path(work) / "raw"
        read = read_into(raw)
        if read.records == 0:
            where = f" of device {fit.device}" if fit.device is not None else ""
            raise SsdlabError(f"{source}: no record{where} to replay"
                              + (f" (devices in it: {', '.join(sorted(read.devices)[:10])})" if read.devices else ""))
        notes = findings()
        if fit.device is not None:
            notes.append(f"{read.other_device} records of other devices left out")
        ordered: Iterator[np.ndarray] = _chunks_of(raw, _RAW)
        if not read.in_order:
            ordered = _merged(_sorted_runs(raw, Path(work)))
            notes.append("records sorted into time order for the replay")
        fitter = _Fitter(fit, target_bytes, read.extent, read.first_us)
        with prepared.PreparedWriter(out) as writer:
            for chunk in ordered:
                writer.write(fitter.fitted(chunk))
    notes.extend(fitter.notes())
    return Prepared(path=str(out), source=source, fit=fit, target_bytes=target_bytes, records=writer.records,
                    ops={op.value: int(n) for op, n in zip(OPS, fitter.counts, strict=True)},
                    bytes={op.value: int(n) for op, n in zip(OPS, fitter.volume, strict=True)},
                    duration_us=fitter.last_new, original_duration_us=read.last_us - read.first_us,
                    extent=read.extent, notes=notes)


class _Read:
    """What the first pass found."""

    def __init__(self) -> None:
        self.records = self.other_device = self.extent = 0
        self.first_us = 0
        self.last_us = -1  # the latest time so far
        self.in_order = True
        self.devices: set[str] = set()


def _read(trace: Trace, fit: Fit, raw: Path, progress: Callable[[float], None] | None) -> _Read:
    """Pass 1: the trace's records (of the device kept) to `raw`, in file order."""
    read = _Read()
    want = fit.device
    code = OP_CODE
    rows: list[tuple[int, int, int, int]] = []
    with raw.open("wb") as file:
        for record in trace:
            if want is not None and record.device != want:
                read.other_device += 1
                if record.device is not None and len(read.devices) < 1000:
                    read.devices.add(record.device)
                continue
            rows.append((record.time_us, record.offset, record.length, code[record.op]))
            if len(rows) == prepared.CHUNK:
                _append(np.array(rows, dtype=_RAW), file, read)
                rows.clear()
                if progress:
                    progress(trace.fraction_read())
        _append(np.array(rows, dtype=_RAW), file, read)
    return read


def _append(chunk: np.ndarray, file: BinaryIO, read: _Read) -> None:
    """Raw records to the raw file, noting their order, extent and times in `read`."""
    if not len(chunk):
        return
    times = chunk["time_us"]
    if read.records == 0:
        read.first_us = int(times[0])
    if times[0] < read.last_us or np.any(times[1:] < times[:-1]):
        read.in_order = False
    ends = chunk["offset"] + chunk["length"]
    read.extent = max(read.extent, int(ends.max()))
    read.records += len(chunk)
    read.last_us = max(read.last_us, int(times.max()))
    chunk.tofile(file)


def _chunks_of(path: Path, dtype: np.dtype, size: int = prepared.CHUNK) -> Iterator[np.ndarray]:
    table = np.memmap(path, dtype=dtype, mode="r")
    for start in range(0, len(table), size):
        yield np.array(table[start:start + size])


def _sorted_runs(raw: Path, work: Path) -> list[np.memmap]:
    """The raw records in runs of SORT_RUN, each sorted by time (file order among equals)."""
    table = np.memmap(raw, dtype=_RAW, mode="r")
    runs = []
    for number, start in enumerate(range(0, len(table), SORT_RUN)):
        part = np.array(table[start:start + SORT_RUN])
        order = np.argsort(part["time_us"], kind="stable")
        run = np.empty(len(part), dtype=_RUN)
        for name in _RAW.names:
            run[name] = part[name][order]
        run["seq"] = order + start
        path = work / f"run{number}"
        run.tofile(path)
        runs.append(np.memmap(path, dtype=_RUN, mode="r"))
    return runs


def _merged(runs: list[np.memmap], block: int = prepared.CHUNK) -> Iterator[np.ndarray]:
    """The records of sorted `runs` in (time, position) order, a block from each at a time:
    everything up to the smallest last key of the blocks that do not end their run can go."""
    at = [0] * len(runs)
    while True:
        blocks = [(i, run[at[i]:at[i] + block]) for i, run in enumerate(runs) if at[i] < len(run)]
        if not blocks:
            return
        bounds = [(int(b["time_us"][-1]), int(b["seq"][-1])) for i, b in blocks if at[i] + len(b) < len(runs[i])]
        limit = min(bounds) if bounds else None
        taken = []
        for i, b in blocks:
            if limit is None:
                n = len(b)
            else:
                t, s = b["time_us"], b["seq"]
                n = int(np.count_nonzero((t < limit[0]) | ((t == limit[0]) & (s <= limit[1]))))
            taken.append(np.array(b[:n]))
            at[i] += n
        out = np.concatenate(taken)
        out = out[np.lexsort((out["seq"], out["time_us"]))]
        raw = np.empty(len(out), dtype=_RAW)
        for name in _RAW.names:
            raw[name] = out[name]
        yield raw


class _Fitter:
    """Pass 2: raw chunks in time order to prepared records, with the fit's counts."""

    def __init__(self, fit: Fit, target: int, extent: int, first_us: int) -> None:
        self.fit, self.target, self.extent, self.first_us = fit, target, extent, first_us
        self.last_scaled: int | None = None  # the previous record's time, scaled, before capping
        self.last_new = 0  # and after
        self.counts = np.zeros(len(OPS), dtype=np.int64)
        self.volume = np.zeros(len(OPS), dtype=np.int64)
        self.capped = self.capped_us = self.moved = self.realigned = 0

    def fitted(self, raw: np.ndarray) -> np.ndarray:
        out = prepared.empty(len(raw))
        out["time_us"] = self._times(raw["time_us"])
        sized = raw["op"] != _FLUSH
        offset, length = self._placed(raw["offset"][sized].astype(np.int64), raw["length"][sized].astype(np.int64))
        out["offset"][sized] = offset
        out["length"][sized] = length
        out["op"] = raw["op"]
        self.counts += np.bincount(raw["op"], minlength=len(OPS))
        self.volume += np.bincount(raw["op"][sized], weights=length, minlength=len(OPS)).astype(np.int64)
        return out

    def _times(self, times: np.ndarray) -> np.ndarray:
        scaled = np.floor((times - self.first_us) / self.fit.speed).astype(np.int64)
        previous = scaled[0] if self.last_scaled is None else self.last_scaled
        gaps = np.diff(scaled, prepend=previous)
        if self.fit.idle_cap_us is not None:
            over = gaps > self.fit.idle_cap_us
            self.capped += int(np.count_nonzero(over))
            self.capped_us += int((gaps[over] - self.fit.idle_cap_us).sum())
            gaps = np.minimum(gaps, self.fit.idle_cap_us)
        new = self.last_new + np.cumsum(gaps)
        self.last_scaled, self.last_new = int(scaled[-1]), int(new[-1])
        return new

    def _placed(self, offset: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        block, target = self.fit.block, self.target
        start = offset // block * block
        end = -(-(offset + length) // block) * block
        self.realigned += int(np.count_nonzero((start != offset) | (end - start != length)))
        length = end - start
        if len(length) and int(length.max()) > min(target, prepared.MAX_LENGTH // block * block):
            raise SsdlabError(f"a request of {format_bytes(int(length.max()))} does not fit a target of "
                              f"{format_bytes(target)}: replay it on a larger target")
        if self.fit.offsets == "wrap":
            placed = start % target
        else:
            placed = (start.astype(np.float64) * (target / max(self.extent, 1))).astype(np.int64) // block * block
        past = placed + length > target
        self.moved += int(np.count_nonzero(past | (placed != start)))
        return np.where(past, target - length, placed), length

    def notes(self) -> list[str]:
        notes = []
        if self.fit.offsets == "scale":
            notes.append(f"offsets scaled by {self.target / max(self.extent, 1):.4g} "
                         f"(the trace's extent {format_bytes(self.extent)} into {format_bytes(self.target)})")
        elif self.moved:
            notes.append(f"{self.moved} requests past the target's {format_bytes(self.target)} wrapped into it")
        if self.realigned:
            notes.append(f"{self.realigned} requests grown to whole {format_bytes(self.fit.block)} blocks")
        if self.capped:
            notes.append(f"{self.capped} gaps over {self.fit.idle_cap_us / 1000:g} ms capped, "
                         f"{self.capped_us / 1e6:.1f} s of idle taken out")
        if self.fit.speed != 1:
            notes.append(f"times divided by {self.fit.speed:g}")
        return notes
