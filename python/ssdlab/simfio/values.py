"""fio's value forms: sizes, times and whole numbers as fio 3.33 reads them.

Sizes: fio's default kb_base=1024 reads k/m/g/t/p (with or without a trailing b or i)
as powers of two and, the other way round from IEC, kib/mib/gib/tib/pib as powers of
ten (checked against fio 3.33: size=1MiB reads 1 003 520 bytes at bs=4k); kb_base=1000
swaps the two. A plain 0x number is hexadecimal. A percentage is a share of the device.
Times: a whole number in the option's default unit, or with us/usec/ms/msec/s/m/h/d.

fio 3.33 reads a number with strtoll and its unit from the letters right after it, so
it misreads some forms without a word: `1.5g` is 1 byte, `1.5s` is 1 s, `4 k` is 4
bytes, `500 ms` is 500 s, `1min` is 1 us. Those are refused here, saying what to write.
Numbers are read in ASCII digits only; one longer than any sensible value is refused
before any arithmetic, so no input can make a number too large to compute with.
"""

from __future__ import annotations

import re
from typing import NoReturn

_SIZE = re.compile(r"^(\d+)(?:([kmgtp])(ib|i|b)?|(b))?$", re.IGNORECASE | re.ASCII)
_HEX = re.compile(r"^0x([0-9a-f]+)$", re.IGNORECASE | re.ASCII)
_POWER = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_TIME = re.compile(r"^(\d+)(us|usec|ms|msec|s|m|h|d)?$", re.IGNORECASE | re.ASCII)
_MICROSECONDS = {"us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 10**6, "m": 60 * 10**6,
                 "h": 3600 * 10**6, "d": 86400 * 10**6}
_PERCENT = re.compile(r"^(\d+)%$", re.ASCII)
_WHOLE = re.compile(r"^(\d+)$", re.ASCII)
_FRACTION = re.compile(r"^\d*\.\d", re.ASCII)
_SPACED = re.compile(r"^\d+\s+[a-z%]", re.IGNORECASE | re.ASCII)
_WORD = re.compile(r"^\d+[a-z]+$", re.IGNORECASE | re.ASCII)
_MAX_DIGITS = 40  # more than any byte count or time fio takes; longer is refused as too large


class ValueProblem(ValueError):
    """A value fio would not accept, or would misread; the message says what to write."""


def fio_size(text: str, device_bytes: int, kb_base: int = 1024) -> int:
    text = text.strip()
    if m := _PERCENT.match(text):
        share = _number(m.group(1))
        if not 0 < share <= 100:
            raise ValueProblem(f"{text!r} is not a share of the device between 0 and 100 %")
        return device_bytes * share // 100
    if m := _HEX.match(text):
        return _number(m.group(1), 16)
    m = _SIZE.match(text)
    if not m:
        _misread(text, "a size", "1536k for 1.5m", "4k, 128k, 1g or 50%")
    digits, prefix, suffix, _ = m.groups()
    base = kb_base
    if suffix and suffix.lower() == "ib":  # fio's inversion of the IEC names
        base = 1000 if kb_base == 1024 else 1024
    return _number(digits) * base ** _POWER[prefix.lower()] if prefix else _number(digits)


def fio_time(text: str, default_unit: str) -> float:
    """Seconds."""
    text = text.strip()
    m = _TIME.match(text)
    if not m:
        _misread(text, "a time", "1500ms for 1.5s", "60, 500ms or 2m")
    digits, unit = m.groups()
    return _number(digits) * _MICROSECONDS[(unit or default_unit).lower()] / 10**6


def fio_int(text: str) -> int:
    """A whole number (iodepth, rwmixread, thinktime_blocks)."""
    m = _WHOLE.match(text.strip())
    if not m:
        raise ValueProblem(f"{text!r} is not a whole number")
    return _number(m.group(1))


def fio_bool(text: str | None) -> bool:
    """A flag: present without a value, or 0/1."""
    if text is None or text.strip() in ("1", "true", "yes", "on"):
        return True
    if text.strip() in ("0", "false", "no", "off"):
        return False
    raise ValueProblem(f"{text!r} is not 0 or 1")


def _misread(text: str, what: str, whole_example: str, examples: str) -> NoReturn:
    """Refuse `text`, saying how fio 3.33 would misread it when it would."""
    if _FRACTION.match(text):
        raise ValueProblem(f"fio 3.33 drops a fraction and its unit: write a whole number, "
                           f"e.g. {whole_example}")
    if _SPACED.match(text):
        raise ValueProblem("fio 3.33 reads a unit only right after the number: remove the space")
    if what == "a time" and _WORD.match(text):
        raise ValueProblem("fio 3.33 reads an unknown unit as microseconds: write us, ms, s, m, "
                           "h or d")
    raise ValueProblem(f"{text!r} is not {what}: write e.g. {examples}")


def _number(digits: str, base: int = 10) -> int:
    if len(digits) > _MAX_DIGITS:
        raise ValueProblem(f"{digits[:12]}... is too large")
    return int(digits, base)
