"""A trace file as lines of text (or, for a binary format, bytes), whatever it was
compressed with.

Compression is recognised by its magic bytes, not by the file's name (a .csv may be
gzipped, a download may have lost its suffix): gzip, xz and bzip2 are read as they are
decompressed, so a file of any size streams. Lines are read at most MAX_LINE characters at
a time: a file without line breaks (a binary file, /dev/zero) never sits in memory whole.
Bytes that are not UTF-8 become U+FFFD, and fail the line they are in as any other
unreadable text does.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import io
import itertools
import lzma
import os
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

from ssdlab.errors import SsdlabError

MAX_LINE = 1 << 16  # characters; a trace's lines have tens
HEAD_BYTES = 64  # of the (decompressed) start, by which a binary format is recognised
# What reading a damaged or truncated file raises, at any layer.
DAMAGED = (OSError, EOFError, lzma.LZMAError, zlib.error)
_DECOMPRESSORS = ((b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw)), (b"\xfd7zXZ\x00", lzma.LZMAFile),
                  (b"BZh", bz2.BZ2File))
_REFUSED = {b"\x28\xb5\x2f\xfd": "zstd-compressed: decompress it first (zstd -d)",
            b"PK\x03\x04": "a zip archive: extract the trace first (unzip)"}
_TAR_MAGIC_AT, _TAR_MAGIC = 257, b"ustar"  # in a tar archive's first header


class Source:
    """An open trace file: `head` holds its first HEAD_BYTES bytes (decompressed), `lines`
    iterates its text from the first line (with `binary`, `data` reads its bytes instead),
    `bytes_read()` how far the reading got. A context manager; closing it closes every
    layer."""

    def __init__(self, path: Path, binary: bool = False) -> None:
        self._stack = ExitStack()
        try:
            self._raw = self._stack.enter_context(open(path, "rb"))
            self.size = os.fstat(self._raw.fileno()).st_size
        except OSError as exc:
            raise SsdlabError(f"cannot read the trace {path}: {exc.strerror or exc}") from None
        try:
            data = self._decompressed(path)
            self.head = data.peek(HEAD_BYTES)[:HEAD_BYTES]
            if binary:
                self.data = data
                return
            lines = self._text_lines(data)
            first = next(lines, None)
        except DAMAGED as exc:
            self.close()
            raise SsdlabError(f"{path}: the compressed data is damaged: {exc}") from None
        except SsdlabError:
            self.close()
            raise
        # A byte-order mark (Windows editors write one) is not part of the first line.
        self.lines: Iterator[str] = lines if first is None else itertools.chain(
            [first.removeprefix("\ufeff")], lines)

    def _decompressed(self, path: Path) -> BinaryIO:
        data: BinaryIO = self._raw
        magic = data.peek(6)[:6]
        for prefix, refusal in _REFUSED.items():
            if magic.startswith(prefix):
                raise SsdlabError(f"{path} is {refusal}")
        for prefix, opener in _DECOMPRESSORS:
            if magic.startswith(prefix):
                data = self._stack.enter_context(opener(self._raw))
                break
        if data.peek(_TAR_MAGIC_AT + 5)[_TAR_MAGIC_AT:_TAR_MAGIC_AT + 5] == _TAR_MAGIC:
            raise SsdlabError(f"{path} is a tar archive: extract the trace first (tar xf)")
        return data

    def _text_lines(self, data: BinaryIO) -> Iterator[str]:
        text = self._stack.enter_context(io.TextIOWrapper(data, encoding="utf-8", errors="replace"))
        return iter(functools.partial(text.readline, MAX_LINE), "")

    def bytes_read(self) -> int:
        """How much of the file as stored (compressed or not) has been read; of `size`."""
        return self._raw.tell()

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
