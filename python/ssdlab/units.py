"""Units and their spelling.

MB/s is 10^6 bytes/s (reviews' unit). Sizes are bytes; KiB, MiB, GiB and TiB
are powers of two, and KB, MB, GB, TB powers of ten, as fio reads them with
`kb_base=1024` for the binary forms.
"""

from __future__ import annotations

import re
from datetime import datetime
from fractions import Fraction

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40
MB = 10**6
GB = 10**9
MAX_BYTES = (1 << 63) - 1  # fio, the kernel (off_t) and SQLite all count bytes in signed 64 bits

_SUFFIXES = {
    "": 1,
    "b": 1,
    "k": KiB, "kib": KiB, "kb": 10**3,
    "m": MiB, "mib": MiB, "mb": 10**6,
    "g": GiB, "gib": GiB, "gb": 10**9,
    "t": TiB, "tib": TiB, "tb": 10**12,
}
_UNITS = (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB))

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$", re.ASCII)
_MAX_DIGITS = 40  # far more than MAX_BYTES has; longer numbers are refused before any arithmetic


def parse_size(text: str) -> int:
    """Parse '512', '4k', '64GiB', '1.5 TB' into bytes, exactly (no float rounding).

    Bare K/M/G/T mean powers of two (as fio and dd read them); KB/MB/GB/TB
    are powers of ten; KiB/MiB/GiB/TiB are powers of two.
    """
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _SUFFIXES:
        raise ValueError(
            f"cannot read {text!r} as a size: write a number with an optional unit, "
            "such as 512, 4k, 64GiB or 1TB"
        )
    number, unit = m.groups()
    value = Fraction(number) * _SUFFIXES[unit.lower()] if len(number) <= _MAX_DIGITS else None
    if value is None or value > MAX_BYTES:
        raise ValueError(f"{text!r} is too large: sizes go up to {MAX_BYTES} bytes (8 EiB)")
    if value.denominator != 1:
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return int(value)


def format_bytes(n: float) -> str:
    """Binary units for sizes: '16 GiB', '128 KiB', '512 B', '1.50 GiB'.

    A size that is not a whole number of its unit is cut, not rounded, to two
    decimals (4095 B is '3.99 KiB'), and one that would then read as whole (4097 B
    as '4.00 KiB') goes down a unit ('4097 B'): a printed size never looks exact
    when it is not, nor larger than it is.
    """
    sign, magnitude = ("-" if n < 0 else ""), abs(n)
    for unit, size in _UNITS:
        if magnitude < size:
            continue
        if magnitude % size == 0:
            return f"{sign}{int(magnitude // size)} {unit}"
        hundredths = int(magnitude * 100 // size)  # int: a float would round large sizes
        if hundredths % 100:
            return f"{sign}{hundredths // 100}.{hundredths % 100:02d} {unit}"
    return f"{sign}{int(magnitude)} B"


def per_second(count: float, seconds: float) -> float:
    """A rate, 0 when no time passed."""
    return count / seconds if seconds > 0 else 0.0


def mbps(nbytes: float, seconds: float) -> float:
    """Throughput in MB/s (10^6 bytes per second)."""
    return per_second(nbytes, seconds) / MB


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def shown_date(iso: str) -> str:
    """A stored time as a reader wants it: '2026-11-28 03:10 UTC'."""
    return f"{datetime.fromisoformat(iso):%Y-%m-%d %H:%M:%S} UTC"
