"""fio 3.33's workload-shape options, read as fio reads them: bssplit, random_distribution,
rw's suffix, rate and rate_iops, flow and flow_id, ba.

Each function takes the option's value as the job file gives it (blanks around it are
dropped) and returns plain data. A value fio 3.33 refuses, or reads other than it looks,
raises ValueProblem quoting it and saying what to write; nothing else is raised. The
rules come from fio 3.33's options.c, parse.c, io_u.c and zone-dist.c, and were checked
against the fio 3.33 binary (tests/simfio/test_patterns.py says how, case by case).

Directions. bssplit, rate, rate_iops and ba take reads,writes,trims as bs= does: one value
is for all three, `a,b` gives the trims b as well, an empty field leaves its direction
unset, and a trailing comma ends the list (`rate=1m,` limits reads only, `rate=,1m` writes
and trims; fio's HOWTO says writes only, its parser does both). fio also splits these at
`:` and `-` and reads a fourth value as nothing; those forms are refused.

What fio reads other than it looks, and is refused here:
- a percentage in bssplit or zoned: fio takes atoi() of it, so `10.5` is 10, over 100 is
  100, and 0 (or junk) is an *empty* percentage, a share of what is left;
- `::` in a bssplit or zoned list ends the list there, dropping the entries after it;
- bssplit sizes that are not multiples of the direction's smallest are rounded down to one
  (without bs_unaligned): `4k/50:6k/50` issues only 4k;
- bssplit percentages over 100 in all (fio refuses that only with two empty ones, and
  otherwise draws other shares than written: `4k/60:8k/60` is 60/40 %, `4k/60:8k/60:16k/`
  is 16k only); under 100 with none empty (fio gives the rest to the size it draws last);
- a zone with accesses but no range: fio sends all of them to the zone's first block
  (`zoned:100` reads block 0 only: its one empty range is given nothing);
- random_distribution with a comma: fio 3.33 refuses it (the per-direction lists of its
  HOWTO do not parse), so one list applies to reads, writes and trims;
- a random op's suffix of 0 (`randread:0`): fio then never draws a new offset, the job is
  sequential; a count written with a unit (`randread:2k` is 2);
- units in percentages, and `%` in sizes (fio computes a huge size from it).

Bounds: block sizes and alignments 512 B to 1 GiB in 512-byte sectors (the simulator's,
as run.py's bs=, up to 1 GiB), at most fio's 64 bssplit entries and 256 zones per direction, counts
within fio's int, text at most 4096 characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ssdlab.simfio.values import ValueProblem, fio_size

DIRECTIONS = ("read", "write", "trim")
SECTOR = 512                  # the simulator's unit of blocks and offsets (run.py's)
# fio sets no largest block; the simulator's largest command (crates/ssdsim/src/bounds.rs
# STEP_BS): a TRIM of 1 GiB is valid fio
MAX_BS = 1024 * 1024 * 1024
MAX_TEXT = 4096               # longer than any sensible value
BSSPLIT_MAX = 64              # fio's, per direction (thread_options.h); it drops the rest
ZONESPLIT_MAX = 256           # likewise for zones
MAX_INT = (1 << 31) - 1       # fio keeps counts and IOPS in a C int
MAX_BYTES = (1 << 63) - 1     # fio's long long
FLOW_MAX_WEIGHT = 1000        # flow.h
FIO_DEF_ZIPF = 1.1            # fio.h: zipf and pareto without a value
FIO_DEF_PARETO = 0.2
MAX_ZIPF_THETA = 100.0        # far above any skew in use (fio-genzipf's examples are ~1)

OPS = ("read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "readwrite",
       "randrw", "trimwrite", "randtrimwrite")
RANDOM_OPS = frozenset({"randread", "randwrite", "randtrim", "randrw", "randtrimwrite"})
DISTRIBUTIONS = ("random", "zipf", "pareto", "normal", "zoned", "zoned_abs")

_DIGITS = re.compile(r"^\d{1,12}$", re.ASCII)
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$", re.ASCII)
_FRACTION = re.compile(r"^\d*\.\d+$", re.ASCII)


# ---- bssplit ----------------------------------------------------------------------------

def bssplit(text: str, kb_base: int, device_bytes: int) -> dict[str, list[tuple[int, int]]]:
    """fio's bssplit=SIZE/PCT:SIZE/PCT...[,reads list][,trims list].

    Returns {"read": [(bytes, percent), ...], "write": [...], "trim": [...]}: each list in
    the order fio keeps it (by percentage, rising; ties as written), with the percentages
    fio draws, which add up to 100: empty ones share what the others leave equally, whole
    numbers, and what that division leaves over goes to the last entry (the one fio draws
    when its running total stops short of 100). An entry may have 0 %: it is never drawn
    but is still the direction's smallest size for fio (alignment, rate_iops). An empty
    list means that direction has no split: fio uses bs= for it. A size is at most the
    device's, when device_bytes is not 0.
    """
    _check_base(kb_base, device_bytes)
    value = _clean(text, "4k/60:64k/40")
    fields = _directions(value, "lists", "4k/60:64k/40,128k/100")
    if not any(fields):
        raise ValueProblem(f"{value!r} gives no block size: write e.g. 4k/60:64k/40")
    return {d: _bssplit_list(f, kb_base, device_bytes) for d, f in zip(DIRECTIONS, fields)}


def _bssplit_list(text: str, kb_base: int, device_bytes: int) -> list[tuple[int, int]]:
    entries = _entries(text, BSSPLIT_MAX, "block sizes", "4k/60:64k/40")
    if not entries:
        return []
    split: list[tuple[int, int | None]] = []
    for entry in entries:
        size_text, slash, pct_text = entry.partition("/")
        size = _block_bytes(size_text, kb_base, "block size", "4k/60:64k/40")
        if device_bytes and size > device_bytes:
            raise ValueProblem(f"{entry!r}: the block size is larger than the device ({device_bytes} bytes)")
        split.append((size, _share(pct_text, entry) if slash else None))
    smallest = min(size for size, _ in split)
    for entry, (size, _) in zip(entries, split):
        if size % smallest:  # fio rounds every size drawn down to a multiple of the smallest
            raise ValueProblem(f"{entry!r}: {size} bytes is not a multiple of the smallest size ({smallest} "
                               f"bytes): fio 3.33 issues it as {size // smallest * smallest} bytes (without "
                               "bs_unaligned); write sizes that are multiples of the smallest")
    given = sum(p for _, p in split if p is not None)
    empty = sum(p is None for _, p in split)
    if given > 100:
        raise ValueProblem(f"{text!r}: the percentages add up to {given}, over 100: make them add up to 100")
    if not empty and given != 100:
        raise ValueProblem(f"{text!r}: the percentages add up to {given}, not 100 (fio 3.33 would give the "
                           "rest to one size): make them add up to 100, or leave one empty (4k/) for the rest")
    fill = (100 - given) // empty if empty else 0
    # qsort() by percentage (glibc's is stable for such small lists, as Python's sort)
    shares = sorted(((s, fill if p is None else p) for s, p in split), key=lambda e: e[1])
    last = shares[-1]
    shares[-1] = (last[0], last[1] + 100 - sum(p for _, p in shares))
    return shares


def _share(text: str, entry: str) -> int | None:
    """A bssplit or zoned percentage after '/': empty is a share of what is left."""
    if not text:
        return None
    if _FRACTION.match(text):
        raise ValueProblem(f"{entry!r}: fio 3.33 drops the fraction of a percentage: write a whole number")
    if not _DIGITS.match(text):
        raise ValueProblem(f"{entry!r}: {text!r} is not a percentage: write a whole number from 1 to 100, "
                           "without %, or nothing for a share of what is left")
    pct = int(text)
    if pct == 0:
        raise ValueProblem(f"{entry!r}: fio 3.33 reads a 0 percentage as an empty one (a share of what is "
                           "left): leave the entry out, or write nothing after the / for a share")
    if pct > 100:
        raise ValueProblem(f"{entry!r}: a percentage is at most 100 (fio 3.33 takes {pct} as 100)")
    return pct


# ---- random_distribution ----------------------------------------------------------------

def random_distribution(text: str, kb_base: int = 1024, span_bytes: int | None = None) -> dict[str, Any]:
    """fio's random_distribution=, one of:

    - random: {"kind": "uniform"}
    - zipf[:THETA[:CENTER]]: {"kind": "zipf", "theta": float, "center": float | None},
      theta > 0 and not 1 (fio: 1.1 if not given)
    - pareto[:H[:CENTER]]: {"kind": "pareto", "h": float, "center": ...}, 0 < h < 1 (0.2)
    - normal[:DEV[:CENTER]]: {"kind": "normal", "dev_pct": float, "center": ...}, a
      deviation as a percentage of the range, 0 <= dev < 100 (0)
    - zoned:A/R:A/R...: {"kind": "zoned", "zones": [(access_pct, range_pct), ...]}
    - zoned_abs:A/SIZE:...: {"kind": "zoned_abs", "zones": [(access_pct, bytes), ...]}

    center (0..1) places the distribution's peak at that fraction of the range; None is
    fio's default: a random place (seeded) for zipf and pareto, the middle for normal.
    fio then scatters the ranks it draws with a hash, so zipf's hot blocks are not
    next to each other. Zones: the access percentages add up to 100; ranges follow one
    another from the start, an empty one takes an equal share of what the others leave
    (`zoned:50/5:30/15:20/` gives 20/80), whole percentages, so `zoned:40/:40/:20/`
    covers 99 % (33 each) and the last 1 % is never reached, as in fio. The list is for
    reads, writes and trims alike. zoned_abs sizes (kb_base applies) may not add up to more
    than span_bytes, the job's span, when it is given (fio fails the job then).
    """
    _check_base(kb_base, 0 if span_bytes is None else span_bytes)
    value = _clean(text, "zipf:1.2")
    if "," in value:
        raise ValueProblem(f"{value!r}: fio 3.33 refuses a comma here (per-direction zones do not parse): "
                           "write one list, e.g. zoned:60/10:40/90; it is used for reads, writes and trims")
    kind, colon, rest = value.partition(":")
    if kind not in DISTRIBUTIONS:
        hint = f" (fio's names are lower case: {kind.lower()})" if kind.lower() in DISTRIBUTIONS else ""
        raise ValueProblem(f"{kind!r} is not a random distribution{hint}: write one of "
                           f"{', '.join(DISTRIBUTIONS)}, e.g. zipf:1.2")
    if kind == "random":
        if colon:
            raise ValueProblem(f"{value!r}: random (uniform) takes no value, fio ignores it: write random")
        return {"kind": "uniform"}
    if kind in ("zoned", "zoned_abs"):
        if not rest:
            raise ValueProblem(f"{value!r} names no zones: write e.g. "
                               + ("zoned:60/10:40/90" if kind == "zoned" else "zoned_abs:60/20g:40/100g"))
        if kind == "zoned":
            return {"kind": "zoned", "zones": _relative_zones(rest)}
        return {"kind": "zoned_abs", "zones": _absolute_zones(rest, kb_base, span_bytes)}
    return _skewed(kind, value, rest if colon else None)


def _skewed(kind: str, value: str, rest: str | None) -> dict[str, Any]:
    example = {"zipf": "zipf:1.2", "pareto": "pareto:0.2", "normal": "normal:10"}[kind]
    number = {"zipf": FIO_DEF_ZIPF, "pareto": FIO_DEF_PARETO, "normal": 0.0}[kind]
    center: float | None = None
    if rest is not None:
        parts = rest.split(":")
        if len(parts) > 2:
            raise ValueProblem(f"{value!r}: at most a value and a center (fio ignores more): write e.g. "
                               f"{example}:0.25")
        number = _float(parts[0], value, example)
        if len(parts) == 2:
            center = _float(parts[1], value, f"{example}:0.25")
            if not 0.0 <= center <= 1.0:
                raise ValueProblem(f"{value!r}: the center is a fraction of the range, from 0 to 1: write e.g. "
                                   f"{example}:0.25, or leave it out")
    if kind == "zipf":
        if number == 1.0:
            raise ValueProblem(f"{value!r}: fio's Zipf theta must not be 1: write e.g. zipf:1.2 or zipf:0.9")
        if not 0.0 < number <= MAX_ZIPF_THETA:
            raise ValueProblem(f"{value!r}: a Zipf theta is above 0 and at most {MAX_ZIPF_THETA:g} (write "
                               "random for uniform): write e.g. zipf:1.2")
        return {"kind": "zipf", "theta": number, "center": center}
    if kind == "pareto":
        if not 0.0 < number < 1.0:
            raise ValueProblem(f"{value!r}: fio's Pareto h is between 0 and 1, both excluded: write e.g. "
                               "pareto:0.2")
        return {"kind": "pareto", "h": number, "center": center}
    if not 0.0 <= number < 100.0:
        raise ValueProblem(f"{value!r}: fio's normal deviation is a percentage from 0 to under 100: write "
                           "e.g. normal:10")
    return {"kind": "normal", "dev_pct": number, "center": center}


def _float(text: str, value: str, example: str) -> float:
    """A decimal number; fio's sscanf("%lf") would also take "1.2abc", "nan" and hex."""
    if len(text) > 40 or not _FLOAT.match(text):
        raise ValueProblem(f"{value!r}: {text!r} is not a number: write e.g. {example}")
    number = float(text)
    if not math.isfinite(number):
        raise ValueProblem(f"{value!r}: {text!r} is too large: write e.g. {example}")
    return number


def _zone_entries(text: str, example: str) -> list[tuple[int, str | None]]:
    """(access percentage, text after '/' or None) for each A/R of a zone list."""
    zones = []
    for entry in _entries(text, ZONESPLIT_MAX, "zones", example):
        access_text, slash, size_text = entry.partition("/")
        # fio reads the access share as a size and keeps its low 8 bits: 300 is 44
        if _FRACTION.match(access_text):
            raise ValueProblem(f"{entry!r}: fio 3.33 drops the fraction of a percentage: write a whole number")
        if not _DIGITS.match(access_text) or int(access_text) > 100:
            raise ValueProblem(f"{entry!r}: {access_text!r} is not a share of the accesses: write a whole "
                               f"percentage from 0 to 100 before the /, e.g. {example}")
        zones.append((int(access_text), size_text if slash else None))
    if not zones:
        raise ValueProblem(f"{text!r} names no zones: write e.g. {example}")
    total = sum(a for a, _ in zones)
    if total != 100:
        raise ValueProblem(f"{text!r}: the access percentages add up to {total}, not 100 (fio 3.33 "
                           f"refuses that): write e.g. {example}")
    return zones


def _relative_zones(text: str) -> list[tuple[int, int]]:
    example = "zoned:60/10:30/20:10/"
    zones = [(a, None if r is None else _share(r, f"{a}/{r}")) for a, r in _zone_entries(text, example)]
    given = sum(r for _, r in zones if r is not None)
    empty = sum(r is None for _, r in zones)
    if given > 100:
        raise ValueProblem(f"{text!r}: the ranges add up to {given} %, over 100 (fio 3.33 refuses that): "
                           f"write e.g. {example}")
    fill = (100 - given) // empty if empty else 0
    if empty == 1 and len(zones) == 1:
        fill = 0  # fio counts a lone empty range as the full 100 % taken, leaving it 0
    result = [(a, fill if r is None else r) for a, r in zones]
    for a, r in result:
        if a and not r:
            raise ValueProblem(f"{text!r}: a zone with {a} % of the accesses gets no range (fio 3.33 sends "
                               "them all to one block): give it a range, e.g. zoned:100/100 or "
                               "zoned:50/10:50/90")
    return result


def _absolute_zones(text: str, kb_base: int, span_bytes: int | None) -> list[tuple[int, int]]:
    example = "zoned_abs:60/20g:40/100g"
    result = []
    for access, size_text in _zone_entries(text, example):
        if size_text is None:  # fio: a size of 0
            if access:
                raise ValueProblem(f"{text!r}: a zone with {access} % of the accesses gets no size (fio 3.33 "
                                   f"sends them all to one block): give it one, e.g. {example}")
            result.append((access, 0))
            continue
        size = _bytes(size_text, kb_base, "a zone size", example)
        if size % SECTOR or (access and not size):
            raise ValueProblem(f"{text!r}: {size_text!r} must be a whole number of {SECTOR}-byte sectors, "
                               f"above 0, e.g. {example}")
        result.append((access, size))
    total = sum(size for _, size in result)
    if span_bytes is not None and total > span_bytes:
        raise ValueProblem(f"{text!r}: the zones add up to {total} bytes, more than the job's span of "
                           f"{span_bytes} (fio 3.33 fails the job): make them smaller")
    if total > MAX_BYTES:
        raise ValueProblem(f"{text!r}: the zones add up to more than fio 3.33 holds ({MAX_BYTES} bytes)")
    return result


# ---- rw ---------------------------------------------------------------------------------

def rw_suffix(text: str, kb_base: int, device_bytes: int) -> tuple[str, int, int]:
    """fio's rw=OP[:SUFFIX] as (op, seq_add, nr).

    op is one of OPS, readwrite given as rw. For a random op (rand*), SUFFIX is how many
    I/Os fio issues at each new random offset, sequentially after it (nr, 1 without a
    suffix; seq_add 0). For a sequential op it is a size, maybe negative, that fio adds to
    each next offset after the first (the end of the last I/O): `write:4k` leaves a 4k
    hole after every write, `read:-8k` at bs=4k goes backwards (fio starts at the span's
    start, then wraps to its end); nr is 1. At most the device's size either way, in
    whole sectors.
    """
    _check_base(kb_base, device_bytes)
    value = _clean(text, "randread", spaces_after_colon=True)
    if "," in value:
        raise ValueProblem(f"{value!r}: fio 3.33 ignores what follows a comma here: write e.g. read:4k or "
                           "randread:8 for a suffix")
    op, colon, suffix = value.partition(":")
    if op not in OPS:
        hint = f" (fio's names are lower case: {op.lower()})" if op.lower() in OPS else ""
        raise ValueProblem(f"{op!r} is not an I/O pattern{hint}: write one of {', '.join(OPS)}")
    op = "rw" if op == "readwrite" else op
    if not colon:
        return op, 0, 1
    suffix = suffix.strip()  # fio strips blanks after the colon
    if op in RANDOM_OPS:
        if not _DIGITS.match(suffix):
            raise ValueProblem(f"{value!r}: after a random pattern fio 3.33 takes a count of I/Os per random "
                               f"offset, reading only its digits: write e.g. {op}:8")
        nr = int(suffix)
        if nr == 0:
            raise ValueProblem(f"{value!r}: with 0 fio 3.33 never draws a new random offset (the job is "
                               f"sequential): write {op}:1, or a sequential pattern")
        if nr > MAX_INT:
            raise ValueProblem(f"{value!r}: at most {MAX_INT} I/Os per random offset")
        return op, 0, nr
    sign, body = (-1, suffix[1:]) if suffix[:1] == "-" else (1, suffix[1:] if suffix[:1] == "+" else suffix)
    if not body:
        raise ValueProblem(f"{value!r}: after a sequential pattern fio 3.33 takes a size to skip (or go "
                           f"back, with -): write e.g. {op}:4k or {op}:-8k")
    add = _bytes(body, kb_base, "a size to skip", f"{op}:4k or {op}:-8k")
    if add > device_bytes:
        raise ValueProblem(f"{value!r}: skips more than the whole device ({device_bytes} bytes)")
    if add % SECTOR:
        raise ValueProblem(f"{value!r}: must be a whole number of {SECTOR}-byte sectors, the simulated "
                           "drive's")
    return op, sign * add, 1


# ---- rate, rate_iops, ba, flow ----------------------------------------------------------

def rate(text: str, kb_base: int, device_bytes: int) -> dict[str, int | None]:
    """fio's rate=READS[,WRITES][,TRIMS] in bytes/s; None: no limit (unset, or 0).
    device_bytes only keeps the sizes' signature: a rate is not a share of the device."""
    _check_base(kb_base, device_bytes)
    return _per_direction(text, "1m,500k", lambda f: _bytes(f, kb_base, "a rate", "1m or 500k"),
                          0, MAX_BYTES, "bytes/s")


def rate_iops(text: str, kb_base: int = 1024) -> dict[str, int | None]:
    """fio's rate_iops=READS[,WRITES][,TRIMS]; None: no limit (unset, or 0). fio reads the
    count as it reads a size: rate_iops=1k is 1024 (1000 with kb_base=1000)."""
    _check_base(kb_base, 0)
    return _per_direction(text, "500,200", lambda f: _bytes(f, kb_base, "a count of I/Os", "500 or 2k"),
                          0, MAX_INT, "I/Os per second")


def blockalign(text: str, kb_base: int, device_bytes: int) -> dict[str, int | None]:
    """fio's ba= (blockalign=) READS[,WRITES][,TRIMS] in bytes; None: fio's default, the
    direction's smallest block size (fio also uses that for sequential jobs). At most
    the device's size, when device_bytes is not 0."""
    _check_base(kb_base, device_bytes)
    found = _per_direction(text, "4k,8k", lambda f: _bytes(f, kb_base, "an alignment", "4k"),
                           SECTOR, min(MAX_BS, device_bytes or MAX_BS), "bytes", zero_is_unset=False)
    for v in found.values():
        if v is not None and v % SECTOR:
            raise ValueProblem(f"{text.strip()!r}: must be a whole number of {SECTOR}-byte sectors, the "
                               "simulated drive's")
    return found


def flow(text: str, kb_base: int = 1024) -> int:
    """fio's flow= weight, 0 (no flow control, fio's default) to 1000."""
    return _one_int(text, kb_base, "3", FLOW_MAX_WEIGHT)


def flow_id(text: str, kb_base: int = 1024) -> int:
    """fio's flow_id=, the group whose jobs flow= weighs against each other (fio: 0)."""
    return _one_int(text, kb_base, "1", MAX_INT)


def _one_int(text: str, kb_base: int, example: str, high: int) -> int:
    _check_base(kb_base, 0)
    value = _clean(text, example)
    if any(c in value for c in ",:-"):
        raise ValueProblem(f"{value!r}: one whole number, from 0 to {high}: write e.g. {example}")
    n = _bytes(value, kb_base, "a whole number", example)
    if n > high:
        raise ValueProblem(f"{value!r}: must be from 0 to {high}")
    return n


def _per_direction(text: str, example: str, parse: Callable[[str], int], low: int, high: int, unit: str,
                   zero_is_unset: bool = True) -> dict[str, int | None]:
    value = _clean(text, example)
    if ":" in value or "-" in value:
        raise ValueProblem(f"{value!r}: fio 3.33 reads ':' and '-' here as commas: separate the reads', "
                           f"writes' and trims' values with commas, e.g. {example}")
    fields = _directions(value, "values", example)
    if not any(fields):
        raise ValueProblem(f"{value!r} gives no value: write e.g. {example}")
    found: dict[str, int | None] = {}
    for direction, field in zip(DIRECTIONS, fields):
        n = parse(field) if field else None
        if n is not None and not (low <= n <= high or (zero_is_unset and n == 0)):
            lowest = f"from {low} to" if low else "at most"
            raise ValueProblem(f"{value!r}: {field!r} must be {lowest} {high} {unit}")
        found[direction] = None if n is None or (zero_is_unset and n == 0) else n
    return found


# ---- shared -----------------------------------------------------------------------------

def _clean(text: object, example: str, spaces_after_colon: bool = False) -> str:
    if not isinstance(text, str):
        raise ValueProblem(f"{text!r} is not text: write e.g. {example}")
    if len(text) > MAX_TEXT:
        raise ValueProblem(f"{text[:24]!r}... is longer than {MAX_TEXT} characters")
    value = text.strip()
    if not value:
        raise ValueProblem(f"no value: write e.g. {example}")
    checked = value.partition(":")[0] if spaces_after_colon else value
    if any(c.isspace() for c in checked):
        raise ValueProblem(f"{value!r} has a blank inside, which fio 3.33 misreads or refuses: remove it, "
                           f"e.g. {example}")
    if not value.isascii() or not value.isprintable():
        raise ValueProblem(f"{value!r} has a character fio does not read here: write e.g. {example}")
    return value


def _directions(value: str, what: str, example: str) -> tuple[str, str, str]:
    """fio's reads,writes,trims: what is not followed by a comma goes on to the trims."""
    fields = value.split(",")
    if len(fields) > 3:
        raise ValueProblem(f"{value!r}: at most three {what}, for reads, writes and trims (fio "
                           f"3.33 ignores a fourth): write e.g. {example}")
    if len(fields) == 1:
        return fields[0], fields[0], fields[0]
    if len(fields) == 2:
        return fields[0], fields[1], fields[1]
    return fields[0], fields[1], fields[2]


def _entries(text: str, most: int, what: str, example: str) -> list[str]:
    """The ':'-separated entries of a bssplit or zone list; one ':' may end it."""
    if not text:
        return []
    entries = text.split(":", most + 1)
    if len(entries) > 1 and entries[-1] == "":
        entries.pop()
    if len(entries) > most:
        raise ValueProblem(f"{text[:40]!r}...: at most {most} {what} per direction (fio 3.33 drops the "
                           "rest)")
    if "" in entries:
        raise ValueProblem(f"{text!r}: an empty entry ('::', or ':' first) ends fio 3.33's list there, "
                           f"dropping what follows: write e.g. {example}")
    return entries


def _bytes(text: str, kb_base: int, what: str, example: str) -> int:
    """A size in bytes as fio reads one, not a share of the device."""
    if "%" in text:
        raise ValueProblem(f"{text!r} is not {what}: a percentage is not taken here (fio 3.33 computes "
                           f"a huge number from it): write e.g. {example}")
    try:
        n = fio_size(text, 0, kb_base)
    except ValueProblem as exc:
        if "is not a size" in str(exc):
            raise ValueProblem(f"{text!r} is not {what}: write e.g. {example}") from None
        raise
    if n > MAX_BYTES:
        raise ValueProblem(f"{text!r} is too large: fio 3.33 holds at most {MAX_BYTES}")
    return n


def _block_bytes(text: str, kb_base: int, what: str, example: str) -> int:
    size = _bytes(text, kb_base, f"a {what}", example)
    if problem := block_size_problem(size):
        raise ValueProblem(f"{text!r}: a {what} {problem}")
    return size


def block_size_problem(size: int) -> str | None:
    """What is wrong with a block of `size` bytes for the simulated drive; None: nothing."""
    if not SECTOR <= size <= MAX_BS:
        return "must be from 512 B to 1 GiB"
    if size % SECTOR:
        return f"must be a multiple of {SECTOR} bytes, the simulated drive's sector"
    return None


def _check_base(kb_base: object, device_bytes: object) -> None:
    if not isinstance(kb_base, int) or isinstance(kb_base, bool) or kb_base not in (1000, 1024):
        raise ValueProblem(f"kb_base={kb_base!r}: must be 1024 or 1000")
    if not isinstance(device_bytes, int) or isinstance(device_bytes, bool) or device_bytes < 0:
        raise ValueProblem(f"{device_bytes!r} is not a device size in bytes")
