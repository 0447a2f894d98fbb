"""Reading a trace: a stream of checked records, whatever the format.

`Trace(path)` recognises the format (or takes the one named) before anything is read;
iterating it reads the file again from its start, one line at a time, so memory stays
flat whatever the trace's length. Every record is checked here, once for all formats:

- a line the format cannot read is an error; reading goes on (without yielding any more
  records) to report the first few such lines and their count, up to MAX_PROBLEMS;
- an offset or length beyond sense (negative, a read or write of no bytes, an end past
  MAX_END) or a time outside 0..MAX_TIME_US is such an error too;
- a time earlier than the record before it is noted in `findings` (a replay sorts them;
  their original order is the file's), or refused with `strict`;
- a trace without a single record is an error.

Every error is an SsdlabError naming the file and the line.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.text import printable
from ssdlab.traces.format import Parser, Skip
from ssdlab.traces.formats import detect, named
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
    skipped: Counter[str] = field(default_factory=Counter)  # lines left out, by the format's reason

    def notes(self) -> list[str]:
        notes = [f"{count} {reason} skipped" for reason, count in self.skipped.items()]
        if self.backwards:
            notes.append(f"{self.backwards} record(s) earlier than the record before them (the first on line "
                         f"{self.first_backwards_line}): a replay issues them in time order")
        return notes


class Trace:
    """A trace file in one of the known formats (detected from its first non-empty line,
    or `format_name`). Iterate it for its records; `findings` holds what the last
    iteration noticed, `fraction_read()` how far it got."""

    def __init__(self, path: Path | str, format_name: str | None = None, strict: bool = False) -> None:
        self.path = Path(path)
        self.strict = strict
        self.findings = Findings()
        self._source: Source | None = None
        with Source(self.path) as source:
            number, first = self._first_line(source)
        where = f"{self.path}, line {number}"
        self.format = named(format_name) if format_name else detect(first, where)
        try:
            self.format.start(first)
        except ValueError as exc:
            raise SsdlabError(f"{where}: not {self.format.title}: {exc}; expected "
                              f"{self.format.columns}") from None

    def fraction_read(self) -> float:
        return self._source.fraction_read() if self._source else 0.0

    def __iter__(self) -> Iterator[Record]:
        findings = self.findings = Findings()
        with Source(self.path) as source:
            self._source = source
            try:
                number, first = self._first_line(source)
                parse, header = self.format.start(first)
                lines = enumerate(source.lines, number + 1)
                yield from self._records(parse, lines if header else itertools.chain([(number, first)], lines),
                                         findings)
            finally:
                self._source = None

    def _first_line(self, source: Source) -> tuple[int, str]:
        """The first line that is not blank, and its number."""
        for number, line in enumerate(source.lines, 1):
            if line.strip():
                return number, line
        raise SsdlabError(f"{self.path} holds no records: it is empty")

    def _records(self, parse: Parser, lines: Iterator[tuple[int, str]], findings: Findings) -> Iterator[Record]:
        problems: list[tuple[int, str, str]] = []
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
                    if line.isspace():
                        continue
                    if len(line) >= MAX_LINE and not line.endswith("\n"):
                        raise SsdlabError(f"{self.path}, line {number} is longer than {MAX_LINE} characters: "
                                          f"not {self.format.title}") from None
                    problems.append((number, _reason(exc), line))
                    if len(problems) == MAX_PROBLEMS:
                        break
                    continue
                if problems:
                    continue
                if time < last:
                    self._backwards(findings, number, time, last)
                last = time
                count += 1
                yield new(record, (time, op, offset, length, device, response, number))
        except DAMAGED as exc:
            raise SsdlabError(f"{self.path}: reading stopped after line {number}: {exc} "
                              "(a damaged or truncated file?)") from None
        findings.records = count
        if problems:
            raise SsdlabError(self._malformed(problems, number))
        if not count:
            skipped = f" ({'; '.join(findings.notes())})" if findings.skipped else ""
            raise SsdlabError(f"{self.path} holds no records{skipped}")

    def _backwards(self, findings: Findings, number: int, time: int, last: int) -> None:
        if self.strict:
            raise SsdlabError(f"{self.path}, line {number}: time {time} µs is earlier than the {last} µs of the "
                              "record before it; without --strict such records are noted and replayed in time "
                              "order")
        if not findings.backwards:
            findings.first_backwards_line = number
        findings.backwards += 1

    def _malformed(self, problems: list[tuple[int, str, str]], last_line: int) -> str:
        shown = "".join(f"\n  line {number}: {reason}: {printable(line.strip()[:100])!r}"
                        for number, reason, line in problems[:SHOWN_PROBLEMS])
        more = len(problems) - SHOWN_PROBLEMS
        rest = (f"\n  and {more} more" if more > 0 else "") + (
            f" (reading stopped at line {last_line})" if len(problems) == MAX_PROBLEMS else "")
        return (f"{self.path}: {len(problems)} line(s) that are not {self.format.title} records{shown}{rest}\n"
                f"expected: {self.format.columns}")


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
