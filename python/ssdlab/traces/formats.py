"""The formats known, and which one a file is.

A binary format (blktrace) is recognised from the file's first bytes, its magic number,
as `file` does; any other file from its first non-empty line, as `file` and
`csv.Sniffer` do: by a version line (fio), a header, or a line that only that format
reads (the CSV formats differ in their number of fields and in how they spell the
operation). No two formats read the same line (a test checks it), so the order below does
not matter.
"""

from __future__ import annotations

from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.traces import alibaba, blktrace, fio_iolog, msr, named_csv, systor, tencent
from ssdlab.traces.format import BinaryFormat, Format

FORMATS: tuple[Format | BinaryFormat, ...] = (fio_iolog.V2_FORMAT, fio_iolog.V3_FORMAT, msr.FORMAT,
                                              alibaba.FORMAT, systor.FORMAT, tencent.FORMAT, named_csv.FORMAT,
                                              blktrace.FORMAT)
BINARY = tuple(fmt for fmt in FORMATS if isinstance(fmt, BinaryFormat))
BY_NAME = {fmt.name: fmt for fmt in FORMATS}


def known() -> str:
    """The formats, as a message lists them."""
    return "; ".join(f"{fmt.name} ({fmt.title})" for fmt in FORMATS)


def named(name: str) -> Format | BinaryFormat:
    try:
        return BY_NAME[name.lower()]
    except KeyError:
        raise SsdlabError(f"unknown trace format {name!r}: the formats are {known()}") from None


def detect(first: str, where: str) -> Format:
    """The format whose files start with `first`, found at `where` (a file and line)."""
    for fmt in FORMATS:
        if fmt.sniffs(first):
            return fmt
    raise SsdlabError(f"{where}: not a trace format ssdlab knows: {first.strip()[:80]!r}. The formats are "
                      f"{known()}; name one with --format to see why a line does not fit it")


def detect_binary(head: bytes) -> BinaryFormat | None:
    """The binary format whose files start with `head`, if any."""
    return next((fmt for fmt in BINARY if fmt.sniffs_head(head)), None)


def trace_files(path: Path, fmt: Format | BinaryFormat | None) -> list[Path]:
    """The files of the trace at `path`, in `fmt` or a format not known yet: a binary
    format's several files (blktrace's per-CPU ones), or `path` alone."""
    if not isinstance(fmt, Format):
        for binary in (fmt,) if fmt else BINARY:
            if group := binary.files(path):
                return group
    return [path]
