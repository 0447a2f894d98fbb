"""Units and their spelling.

MB/s is 10^6 bytes/s (reviews' unit). Sizes are bytes; KiB, MiB, GiB and TiB
are powers of two, and KB, MB, GB, TB powers of ten, as fio reads them with
`kb_base=1024` for the binary forms.
"""

from __future__ import annotations

import re

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40
MB = 10**6

_SUFFIXES = {
    "": 1,
    "b": 1,
    "k": KiB, "kib": KiB, "kb": 10**3,
    "m": MiB, "mib": MiB, "mb": 10**6,
    "g": GiB, "gib": GiB, "gb": 10**9,
    "t": TiB, "tib": TiB, "tb": 10**12,
}

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """Parse '512', '4k', '64GiB', '1.5 TB' into bytes.

    Bare K/M/G/T mean powers of two (as fio and dd read them); KB/MB/GB/TB
    are powers of ten; KiB/MiB/GiB/TiB are powers of two.
    """
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _SUFFIXES:
        raise ValueError(
            f"cannot read {text!r} as a size: write a number with an optional unit, "
            "such as 512, 4k, 64GiB or 1TB"
        )
    value = float(m.group(1)) * _SUFFIXES[m.group(2).lower()]
    if value != int(value):
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return int(value)


def format_bytes(n: float) -> str:
    """Binary units for sizes: '16 GiB', '128 KiB', '512 B'."""
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(n) >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{n:.0f} B"


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
