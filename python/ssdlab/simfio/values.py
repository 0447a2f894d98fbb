"""fio's value forms: sizes and times as fio itself reads them.

Sizes: fio's default kb_base=1024 reads k/m/g/t (with or without a trailing b)
as powers of two and, the other way round from IEC, kib/mib/gib/tib as powers
of ten (checked against fio 3.33: size=1MiB writes 1 003 520 bytes at bs=4k).
A percentage is a share of the device. Times: a number in the option's default
unit, or with us/ms/s/m/h.
"""

from __future__ import annotations

import re

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$", re.IGNORECASE)
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class ValueProblem(ValueError):
    """A value fio would not accept; the message says what was expected."""


def fio_size(text: str, device_bytes: int) -> int:
    text = text.strip()
    if text.endswith("%"):
        try:
            share = float(text[:-1])
        except ValueError:
            raise ValueProblem(f"{text!r} is not a percentage") from None
        if not 0 < share <= 100:
            raise ValueProblem(f"{text!r} is not a share of the device between 0 and 100 %")
        return int(device_bytes * share / 100)
    m = _SIZE.match(text)
    if not m:
        raise ValueProblem(f"{text!r} is not a size: write e.g. 4k, 128k, 1g or 50%")
    number, prefix, iec, _ = m.groups()
    base = 1000 if iec else 1024
    return int(float(number) * base ** _POWER[prefix.lower()])


def fio_time(text: str, default_unit: str) -> float:
    """Seconds."""
    m = _TIME.match(text)
    if not m:
        raise ValueProblem(f"{text!r} is not a time: write e.g. 60, 500ms or 2m")
    number, unit = m.groups()
    return float(number) * _SECONDS[(unit or default_unit).lower()]


def fio_bool(text: str | None) -> bool:
    """A flag: present without a value, or 0/1."""
    if text is None or text.strip() in ("1", "true", "yes", "on"):
        return True
    if text.strip() in ("0", "false", "no", "off"):
        return False
    raise ValueProblem(f"{text!r} is not 0 or 1")
