"""Text that comes from users and devices: reading their files, showing their strings.

Run names, file paths and device models are whatever a user typed or a drive
reported. Shown raw, an ESC starts a terminal escape sequence (colours, cursor
moves, even a rewritten title bar) and a bidirectional override reorders what
follows it; chart renderers may not lay such characters out at all. So every
such string is shown through `printable`, which writes the invisible characters
as Python-style escapes (`\\x1b`, `\\u202e`): visible, unambiguous, harmless.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from ssdlab.errors import SsdlabError

# Control (Cc), format (Cf: bidi overrides, zero-width characters), surrogate (Cs:
# undecodable bytes of a command-line argument), line and paragraph separators (Zl,
# Zp), and unassigned code points and non-characters (Cn: vl-convert aborts on U+FFFE).
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Cn"})

# Suites, presets and job files are a few KiB; a fill CSV of a whole drive in 1 MiB
# segments is about 20 MiB. Anything larger is the wrong file (or /dev/zero).
MAX_TEXT_FILE_BYTES = 64 << 20


def printable(text: str, multiline: bool = False) -> str:
    """`text` with every invisible character written as its escape; the rest unchanged.
    `multiline` keeps line breaks and tabs, for messages laid out on several lines;
    a name is one line, and a line break in it could pass for another line of output."""
    if text.isprintable():  # the common case, and a fast one
        return text
    kept = "\n\t" if multiline else ""
    return "".join(_escaped(char) if unicodedata.category(char) in _INVISIBLE and char not in kept
                   else char for char in text)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def read_text_file(path: Path, what: str) -> str:
    """A user's text file, UTF-8 with or without a byte-order mark (Windows editors
    write one); anything else is an SsdlabError naming the file and the problem."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_TEXT_FILE_BYTES + 1)  # /dev/zero must not fill the memory
    except OSError as exc:
        raise SsdlabError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_TEXT_FILE_BYTES:
        raise SsdlabError(f"{what} {path} is larger than {MAX_TEXT_FILE_BYTES >> 20} MiB: "
                          "it cannot be a file of this kind")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SsdlabError(f"{what} {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} "
                          f"on line {line}): save it as UTF-8") from None


def require_utf8(value: str, what: str) -> str:
    """`value`, when it can be stored: Python hands a command-line argument's undecodable
    bytes over as lone surrogates, which neither UTF-8 nor SQLite can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SsdlabError(f"{what} {value!r} is not UTF-8 text: use UTF-8 characters "
                          "(bytes from another encoding cannot be stored)") from None
    return value
