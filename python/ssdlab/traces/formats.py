"""The formats known, and which one a file is.

A file is recognised from its first non-empty line, as `file` and `csv.Sniffer` do: by a
version line (fio), a header, or a line that only that format reads (the CSV formats
differ in their number of fields and in how they spell the operation). No two formats
read the same line (a test checks it), so the order below does not matter.
"""

from __future__ import annotations

from ssdlab.errors import SsdlabError
from ssdlab.traces import alibaba, fio_iolog, msr, named_csv, systor, tencent
from ssdlab.traces.format import Format

FORMATS: tuple[Format, ...] = (fio_iolog.V2_FORMAT, fio_iolog.V3_FORMAT, msr.FORMAT, alibaba.FORMAT,
                               systor.FORMAT, tencent.FORMAT, named_csv.FORMAT)
BY_NAME = {fmt.name: fmt for fmt in FORMATS}


def known() -> str:
    """The formats, as a message lists them."""
    return "; ".join(f"{fmt.name} ({fmt.title})" for fmt in FORMATS)


def named(name: str) -> Format:
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
