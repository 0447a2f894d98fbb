"""Reading a trace: a stream of checked records, whatever the format.

`Trace(path)` recognises the format (or takes the one named) before anything is read;
iterating it reads the file again from its start, one line at a time (a binary format's
files a chunk at a time), so memory stays flat whatever the trace's length. Every
record is checked here, once for all formats:

- a line the format cannot read is an error; reading goes on (without yielding any more
  records) to report the first few such lines and their count, up to MAX_PROBLEMS;
- an offset or length beyond sense (negative, a read or write of no bytes, an end past
  MAX_END) or a time outside 0..MAX_TIME_US is such an error too;
- a time earlier than the record before it is noted in `findings` (a replay sorts them;
  their original order is the file's), or refused with `strict`;
- a trace without a single record is an error.

Every error is an SsdlabError naming the file and the line (in a binary format, the record).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.errors import SsdlabError
from ssdlab.traces.format import BinaryFormat, Row, Skip
from ssdlab.traces.formats import detect, detect_binary, named, trace_files
from ssdlab.traces.record import MAX_END, MAX_TIME_US, Op, Record
from ssdlab.traces.source import DAMAGED, MAX_LINE, Source

_UNPACKING = re.compile(r"(?:too many|not enough) values to unpack \(expected (\d+)(?:, got (\d+))?\)")
MAX_PROBLEMS = 100  # lines in error before reading stops
SHOWN_PROBLEMS = 5  # of which the message quotes


@dataclass
class Findings:
    """What a read noticed without refusing the trace."""
    records: int = 0  # once the read is complete
    backwards: int = 0  # records earlier than the one before them
    first_backwards_line: int | None = None
    first_backwards_at: str | None = None  # as messages say where: "line 7", "record 7 of x.blktrace.1"
    skipped: Counter[str] = field(default_factory=Counter)  # lines left out, by the format's reason

    def notes(self) -> list[str]:
        notes = [f"{count} {reason} skipped" for reason, count in self.skipped.items()]
        if self.backwards:
            notes.append(f"{self.backwards} record(s) earlier than the record before them (the first on "
                         f"{self.first_backwards_at}): a replay issues them in time order")
        return notes


class Trace:
    """A trace file in one of the known formats (detected from its first bytes or its first
    non-empty line, or `format_name`); for blktrace, `files` are its per-CPU files, read
    as one trace. Iterate it for its records; `findings` holds what the last iteration
    noticed, `fraction_read()` how far it got."""

    def __init__(self, path: Path | str, format_name: str | None = None, strict: bool = False) -> None:
        self.path = Path(path)
        self.strict = strict
        self.findings = Findings()
        self._sources: list[Source] = []
        chosen = named(format_name) if format_name else None
        self.files = trace_files(self.path, chosen)
        # a binary trace's first file may be empty (blktrace's file of a CPU that did no I/O)
        sniffed = next((file for file in self.files if file.is_file() and file.stat().st_size), self.files[0])
        with Source(sniffed) as source:
            self.format = chosen or detect_binary(source.head)
            if isinstance(self.format, BinaryFormat):
                try:
                    self.format.check(source.head)
                except ValueError as exc:
                    raise SsdlabError(f"{sniffed}, record 1: not {self.format.title}: {exc}; expected "
                                      f"{self.format.columns}") from None
                return
            self.files = [sniffed]
            number, first = self._first_line(source)
        where = f"{self.path}, line {number}"
        self.format = self.format or detect(first, where)
        try:
            self.format.start(first)
        except ValueError as exc:
            raise SsdlabError(f"{where}: not {self.format.title}: {exc}; expected "
                              f"{self.format.columns}") from None

    def fraction_read(self) -> float:
        """How much of the trace's files (as stored) the iteration has read, 0 to 1."""
        sources = self._sources
        if not sources:
            return 0.0
        size = sum(source.size for source in sources)
        return min(1.0, sum(source.bytes_read() for source in sources) / size) if size else 1.0

    def __iter__(self) -> Iterator[Record]:
        findings = self.findings = Findings()
        binary = isinstance(self.format, BinaryFormat)
        with ExitStack() as stack:
            self._sources = [stack.enter_context(Source(file, binary)) for file in self.files]
            try:
                if binary:
                    opened = [(file, source.data) for file, source in zip(self.files, self._sources)]
                    yield from self._records(self.format.parse, self.format.records(opened, findings.skipped),
                                             findings)
                    return
                source = self._sources[0]
                number, first = self._first_line(source)
                parse, header = self.format.start(first)
                lines = enumerate(source.lines, number + 1)
                yield from self._records(parse, lines if header else itertools.chain([(number, first)], lines),
                                         findings)
            finally:
                self._sources = []

    def _first_line(self, source: Source) -> tuple[int, str]:
        """The first line that is not blank, and its number."""
        for number, line in enumerate(source.lines, 1):
            if line.strip():
                return number, line
        raise SsdlabError(f"{self.path} holds no records: it is empty")

    def _records(self, parse: Callable[[Any], Row | None], lines: Iterator[tuple[int, Any]],
                 findings: Findings) -> Iterator[Record]:
        """The checked records of `lines`: (number, line) for a text format, (number, item)
        for a binary one, each of which `parse` reads."""
        problems: list[tuple[str, str, str]] = []
        fmt = self.format
        count = last = 0
        number = 0
        new, record, flush = tuple.__new__, Record, Op.FLUSH
        try:
            for number, line in lines:
                try:
                    row = parse(line)
                    if row is None:
                        continue
                    time, op, offset, length, device, response = row
                    if (offset < 0 or length <= 0 and op is not flush or offset + length > MAX_END
                            or not 0 <= time <= MAX_TIME_US or response is not None and response < 0):
                        raise ValueError(_beyond_sense(*row))
                except Skip as skip:
                    findings.skipped[skip.reason] += 1
                    continue
                except (ValueError, KeyError) as exc:
                    if isinstance(line, str):
                        if line.isspace():
                            continue
                        if len(line) >= MAX_LINE and not line.endswith("\n"):
                            raise SsdlabError(f"{self.path}, line {number} is longer than {MAX_LINE} characters: "
                                              f"not {fmt.title}") from None
                    problems.append((fmt.where(number, line), _reason(exc), fmt.quote(line)))
                    if len(problems) == MAX_PROBLEMS:
                        break
                    continue
                if problems:
                    continue
                if time < last:
                    self._backwards(findings, number, fmt.where(number, line), time, last)
                last = time
                count += 1
                yield new(record, (time, op, offset, length, device, response, number))
        except DAMAGED as exc:
            raise SsdlabError(f"{self.path}: reading stopped after {fmt.unit} {number}: {exc} "
                              "(a damaged or truncated file?)") from None
        findings.records = count
        if problems:
            raise SsdlabError(self._malformed(problems, fmt.where(number, line)))
        if not count:
            skipped = f" ({'; '.join(findings.notes())})" if findings.skipped else ""
            raise SsdlabError(f"{self.path} holds no records{skipped}")

    def _backwards(self, findings: Findings, number: int, where: str, time: int, last: int) -> None:
        if self.strict:
            raise SsdlabError(f"{self.path}, {where}: time {time} µs is earlier than the {last} µs of the "
                              "record before it; without --strict such records are noted and replayed in time "
                              "order")
        if not findings.backwards:
            findings.first_backwards_line, findings.first_backwards_at = number, where
        findings.backwards += 1

    def _malformed(self, problems: list[tuple[str, str, str]], last: str) -> str:
        shown = "".join(f"\n  {where}: {reason}: {quoted!r}" for where, reason, quoted in problems[:SHOWN_PROBLEMS])
        more = len(problems) - SHOWN_PROBLEMS
        rest = (f"\n  and {more} more" if more > 0 else "") + (
            f" (reading stopped at {last})" if len(problems) == MAX_PROBLEMS else "")
        return (f"{self.path}: {len(problems)} {self.format.unit}(s) that are not {self.format.title} records"
                f"{shown}{rest}\nexpected: {self.format.columns}")


def _beyond_sense(time: int, op: Op, offset: int, length: int, device: str | None, response: int | None) -> str:
    if offset < 0 or length < 0:
        return f"offset {offset} and length {length} must not be negative"
    if length == 0:
        return f"a {op.value} of 0 bytes"
    if offset + length > MAX_END:
        return (f"the {op.value} ends at byte {offset + length}, beyond {MAX_END} (1 PiB), the most a trace "
                "may address")
    if not 0 <= time <= MAX_TIME_US:
        return f"time {time} µs is outside 0 to {MAX_TIME_US} µs"
    return f"response time {response} µs is negative"


def _reason(exc: Exception) -> str:
    """What was wrong with a line, in the user's terms rather than Python's."""
    if isinstance(exc, KeyError):
        return f"{exc.args[0]!r} is not a value this format knows there"
    text = str(exc)
    if unpacked := _UNPACKING.match(text):  # `a, b, c = line.split(",")`
        expected, found = unpacked.groups()
        return f"expected {expected} comma-separated fields, found {found or 'more'}"
    for python, ours in (("invalid literal for int() with base 10: ", "is not a whole number"),
                         ("could not convert string to float: ", "is not a number")):
        if text.startswith(python):
            return f"{text.removeprefix(python)} {ours}"
    if "Exceeds the limit" in text:  # int() of thousands of digits
        return "a number of thousands of digits"
    return text
