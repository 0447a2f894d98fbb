"""fio's value forms: sizes, times and whole numbers as fio itself reads them.

Sizes: fio's default kb_base=1024 reads k/m/g/t (with or without a trailing b)
as powers of two and, the other way round from IEC, kib/mib/gib/tib as powers
of ten (checked against fio 3.33: size=1MiB writes 1 003 520 bytes at bs=4k).
A percentage is a share of the device. Times: a number in the option's default
unit, or with us/ms/s/m/h. Numbers are read exactly (no float rounding) and in
ASCII digits only; one longer than any sensible value is refused before any
arithmetic, so no input can make a number too large to compute with.
"""

from __future__ import annotations

import re
from fractions import Fraction

_NUMBER = r"(\d+(?:\.\d+)?)"
_SIZE = re.compile(rf"^\s*{_NUMBER}\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE | re.ASCII)
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_TIME = re.compile(rf"^\s*{_NUMBER}\s*(us|ms|s|m|h|d)?\s*$", re.IGNORECASE | re.ASCII)
_SECONDS = {"us": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600,
            "d": 86400}
_PLAIN = re.compile(rf"^\s*{_NUMBER}\s*$", re.ASCII)
_WHOLE = re.compile(r"^\s*(\d+)\s*$", re.ASCII)
_MAX_DIGITS = 40  # more than any byte count or time fio takes; longer is refused as too large


class ValueProblem(ValueError):
    """A value fio would not accept; the message says what was expected."""


def fio_size(text: str, device_bytes: int) -> int:
    text = text.strip()
    if text.endswith("%"):
        share = _exact(text[:-1], _PLAIN, f"{text!r} is not a percentage")
        if not 0 < share <= 100:
            raise ValueProblem(f"{text!r} is not a share of the device between 0 and 100 %")
        return int(device_bytes * share / 100)
    m = _SIZE.match(text)
    if not m:
        raise ValueProblem(f"{text!r} is not a size: write e.g. 4k, 128k, 1g or 50%")
    number, prefix, iec, _ = m.groups()
    base = 1000 if iec else 1024
    return int(_number(number) * base ** _POWER[prefix.lower()])


def fio_time(text: str, default_unit: str) -> float:
    """Seconds."""
    m = _TIME.match(text)
    if not m:
        raise ValueProblem(f"{text!r} is not a time: write e.g. 60, 500ms or 2m")
    number, unit = m.groups()
    return float(_number(number) * _SECONDS[(unit or default_unit).lower()])


def fio_int(text: str) -> int:
    """A whole number (iodepth, rwmixread, thinktime_blocks)."""
    return int(_exact(text, _WHOLE, f"{text!r} is not a whole number"))


def fio_bool(text: str | None) -> bool:
    """A flag: present without a value, or 0/1."""
    if text is None or text.strip() in ("1", "true", "yes", "on"):
        return True
    if text.strip() in ("0", "false", "no", "off"):
        return False
    raise ValueProblem(f"{text!r} is not 0 or 1")


def _exact(text: str, form: re.Pattern[str], problem: str) -> Fraction:
    m = form.match(text)
    if not m:
        raise ValueProblem(problem)
    return _number(m.group(1))


def _number(digits: str) -> Fraction:
    if len(digits) > _MAX_DIGITS:
        raise ValueProblem(f"{digits[:12]}... is too large")
    return Fraction(digits)
