"""What a trace format is to the reader: how to recognise it from its first line and how
to turn each line into a record. Each format's module builds one `Format` (a binary one,
blktrace, a `BinaryFormat`); formats.py lists them; reader.py drives them.

A format's parser takes one line (with its line break) and returns `(time_us, op, offset,
length, device, response_us)`, or None for a line that is not I/O (fio's `add`, `open`,
`close`). It raises ValueError or KeyError for a line it cannot read (a wrong number of
fields is the ValueError of unpacking `line.split(",")`, an unknown operation the KeyError
of its lookup: reader.py words them for the user), and `Skip` for a line its format's
documentation says to leave out. Bounds and order are checked by the reader, once for
every format.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ssdlab.text import printable
from ssdlab.traces.record import Op

SECOND_US = 1_000_000

Row = tuple[int, Op, int, int, str | None, int | None]
Parser = Callable[[str], Row | None]


class Skip(Exception):
    """A line the format's own documentation says to leave out; `reason` is counted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Format:
    name: str  # as --format takes it
    title: str
    columns: str  # the shape of a line, quoted in messages
    # Given the first non-empty line: a parser for the data lines (a new one for each read:
    # fio's keeps state), and whether that first line was a header rather than data.
    # Raises ValueError when the line cannot start a file of this format.
    start: Callable[[str], tuple[Parser, bool]]
    # Why the trace's times cannot drive a replay in time, for formats whose clock is too
    # coarse; replay then offers --no-timing.
    coarse_timing: str | None = None
    unit = "line"  # what messages count in

    def where(self, number: int, line: str) -> str:
        """Where `line` is, in a message that has named the file."""
        return f"line {number}"

    def quote(self, line: str) -> str:
        """`line` as a message shows it."""
        return printable(line.strip()[:100])

    def sniffs(self, first: str) -> bool:
        """Whether `first`, the first non-empty line of a file, starts a file of this format."""
        try:
            parse, header = self.start(first)
            if not header:
                parse(first)
        except Skip:
            return True
        except (ValueError, KeyError):
            return False
        return True


@dataclass(frozen=True)
class BinaryFormat:
    """A format of binary records (blktrace), recognised from its first bytes rather than
    from a line, whose trace may be spread over several files read as one.

    `records` takes the trace's files, open and decompressed, and a Counter, and yields
    `(number, item)` in issue order: `number` counts the records of the item's own file
    from 1 (a record's `line`), `item` is what `parse` turns into a row (raising
    ValueError, as a line's parser does, for one it cannot make sense of). Records the format leaves out are not
    yielded (a blktrace has several for each I/O, and an exception each would be slow) but
    counted in the Counter by reason, as Skip is. Damage to a file's structure (a record cut
    short, a bad magic) is an SsdlabError naming the file and the record, raised by
    `records` itself.
    """
    name: str
    title: str
    columns: str  # what a record holds, quoted in messages
    # Given the first bytes of a file (source.HEAD_BYTES of them, or all of a shorter file):
    # raises ValueError when they cannot start a file of this format.
    check: Callable[[bytes], None]
    # The files of the trace that a path names (blktrace's per-CPU files), or None for the path alone.
    files: Callable[[Path], list[Path] | None]
    records: Callable[[list[tuple[Path, BinaryIO]], Counter[str]], Iterator[tuple[int, Any]]]
    parse: Callable[[Any], Row | None]
    where: Callable[[int, Any], str]  # as Format.where, for an item
    quote: Callable[[Any], str]  # as Format.quote, for an item
    coarse_timing: str | None = None
    unit = "record"

    def sniffs(self, first: str) -> bool:
        """Never from a line of text: see `sniffs_head`."""
        return False

    def sniffs_head(self, head: bytes) -> bool:
        """Whether `head`, the first bytes of a file, start a file of this format."""
        try:
            self.check(head)
        except ValueError:
            return False
        return True


def csv_format(name: str, title: str, header: str, parse: Parser, notes: str = "", **kwargs) -> Format:
    """A comma-separated format with fixed columns, whose files may start with `header`."""
    names = header.lower().split(",")

    def start(first: str) -> tuple[Parser, bool]:
        return parse, [cell.strip().strip('"').lower() for cell in first.split(",")] == names

    return Format(name, title, header + (f" ({notes})" if notes else ""), start, **kwargs)


def to_us(text: str, numerator: int, denominator: int = 1) -> int:
    """A time or duration in whole µs (rounded half up) from `text` in a unit of
    numerator/denominator µs: (1, 1000) for ns, (10**6, 1) for s. Whole numbers are exact;
    others go through a float (exact to the µs for Unix times in seconds)."""
    if text.strip().isdigit():
        return (int(text) * numerator * 2 + denominator) // (2 * denominator)
    scaled = float(text) * numerator / denominator
    if not math.isfinite(scaled):
        raise ValueError(f"{text.strip()!r} is not a finite time")
    return math.floor(scaled + 0.5)
