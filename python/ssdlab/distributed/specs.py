"""A sweep's variants, as the user gives them: a grid (`--set KEY=V1,V2,...`, repeated: every
combination, the first key changing slowest), a list (`--variants FILE`: a TOML file of
`[[variants]]` tables of overrides, or a CSV file whose header names the keys and each row a
variant), or seeded random samples (`--sample KEY=LOW..HIGH`, repeated, `--samples N
--seed S`: uniform in each range, integers for an integer key; a number rounded to four
significant digits, so that a variant's name says its value exactly).

A sweep has at least one and at most MAX_VARIANTS variants, none twice.
"""

from __future__ import annotations

import csv
import itertools
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.distributed.overrides import PresetKeys, Value, variant_name
from ssdlab.errors import SsdlabError
from ssdlab.text import printable, read_text_file

MAX_VARIANTS = 1000
MAX_SEED = 2**63 - 1
SAMPLE_DIGITS = 4  # significant digits of a sampled number

Overrides = dict[str, Value]  # a variant: resolved key -> value, in the order given


@dataclass(frozen=True)
class SweepSpec:
    """What the command line gave; exactly one of grid, list or samples."""

    sets: tuple[str, ...] = ()  # --set KEY=V1,V2,...
    variants_file: Path | None = None  # --variants FILE
    ranges: tuple[str, ...] = ()  # --sample KEY=LOW..HIGH
    samples: int | None = None  # --samples N
    seed: int | None = None  # --seed S

    def variants(self, keys: PresetKeys) -> list[Overrides]:
        """Every variant, checked: keys the preset has, values of their types, none twice."""
        given = [name for name, used in (("--set", self.sets), ("--variants", self.variants_file),
                                         ("--sample", self.ranges)) if used]
        if len(given) != 1:
            raise SsdlabError(f"{' and '.join(given)} each give a whole sweep: use one of them"
                              if given else "give the variants: --set KEY=V1,V2,... (a grid), --variants FILE "
                                            "(a list) or --sample KEY=LOW..HIGH with --samples N (random)")
        if not self.ranges and (self.samples is not None or self.seed is not None):
            raise SsdlabError("--samples and --seed go with --sample KEY=LOW..HIGH")
        if self.sets:
            found = grid(self.sets, keys)
        elif self.variants_file is not None:
            found = listed(self.variants_file, keys)
        else:
            if self.samples is None:
                raise SsdlabError("--sample needs --samples N: how many variants to draw")
            found = sampled(self.ranges, self.samples, 1 if self.seed is None else self.seed, keys)
        return checked(found, keys.preset)

    def document(self) -> dict[str, Any]:
        """As stored with the sweep."""
        if self.sets:
            return {"set": list(self.sets)}
        if self.variants_file is not None:
            return {"variants": str(self.variants_file)}
        return {"sample": list(self.ranges), "samples": self.samples, "seed": 1 if self.seed is None else self.seed}


def grid(assignments: Sequence[str], keys: PresetKeys) -> list[Overrides]:
    columns: dict[str, list[Value]] = {}
    for assignment in assignments:
        key, texts = _assignment(assignment, "--set", "KEY=V1,V2,...", keys)
        if key in columns:
            raise SsdlabError(f"--set gives {key} twice: give all its values in one --set {key}=V1,V2,...")
        values = [keys.parse(key, text) for text in texts.split(",")]
        if repeated := _repeated(values):
            raise SsdlabError(f"--set {key} gives {printable(str(repeated))} twice: give each value once")
        columns[key] = values
    _bounded(math.prod(len(v) for v in columns.values()), "--set gives")
    return [dict(zip(columns, combination)) for combination in itertools.product(*columns.values())]


def listed(path: Path, keys: PresetKeys) -> list[Overrides]:
    text = read_text_file(path, "the variants file")
    if path.suffix == ".toml":
        return _toml_variants(text, path, keys)
    if path.suffix == ".csv":
        return _csv_variants(text, path, keys)
    raise SsdlabError(f"the variants file {path} must end in .toml ([[variants]] tables of overrides) "
                      "or .csv (a header of keys, a row per variant)")


def _toml_variants(text: str, path: Path, keys: PresetKeys) -> list[Overrides]:
    try:
        document = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer too long for Python to convert
        raise SsdlabError(f"the variants file {path} is not valid TOML: {exc}") from None
    tables = document.get("variants")
    if set(document) != {"variants"} or not isinstance(tables, list):
        raise SsdlabError(f"the variants file {path} holds [[variants]] tables of overrides and nothing else, "
                          "e.g. [[variants]] then cache.max_cell_share = 0.3 on the next line")
    _bounded(len(tables), f"the variants file {path} gives")
    found = []
    for number, table in enumerate(tables, start=1):
        where = f"variant {number} of {path}"
        if not isinstance(table, dict) or not table:
            raise SsdlabError(f"{where} sets nothing: give KEY = VALUE lines under each [[variants]]")
        found.append(_within(where, lambda t=table: _toml_variant(t, keys)))
    return found


def _toml_variant(table: dict[str, Any], keys: PresetKeys) -> Overrides:
    overrides: Overrides = {}
    for name, value in _flattened(table).items():
        key = keys.resolve(name)
        if key in overrides:
            raise SsdlabError(f"{key} is set twice")
        overrides[key] = keys.check(key, value)
    return overrides


def _csv_variants(text: str, path: Path, keys: PresetKeys) -> list[Overrides]:
    try:
        rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
    except csv.Error as exc:
        raise SsdlabError(f"the variants file {path} is not valid CSV: {exc}") from None
    if not rows:
        raise SsdlabError(f"the variants file {path} is empty: a header of keys, then a row per variant")
    header = [_within(f"the header of {path}", lambda name=name: keys.resolve(name)) for name in rows[0]]
    if repeated := _repeated(header):
        raise SsdlabError(f"the header of {path} names {repeated} twice")
    _bounded(len(rows) - 1, f"the variants file {path} gives")
    found = []
    for number, row in enumerate(rows[1:], start=2):
        where = f"line {number} of {path}"
        if len(row) != len(header):
            raise SsdlabError(f"{where} has {len(row)} values for {len(header)} keys")
        found.append(_within(where, lambda row=row: {key: keys.parse(key, cell) for key, cell in zip(header, row)}))
    return found


def sampled(ranges: Sequence[str], count: int, seed: int, keys: PresetKeys) -> list[Overrides]:
    import numpy as np  # only a sweep of samples needs it

    if not 1 <= count <= MAX_VARIANTS:
        raise SsdlabError(f"--samples must be 1 to {MAX_VARIANTS}, not {count}")
    if not 0 <= seed <= MAX_SEED:
        raise SsdlabError(f"--seed must be 0 to {MAX_SEED}, not {seed}")
    rng = np.random.default_rng(seed)
    columns: dict[str, list[Value]] = {}
    for text in ranges:
        key, span = _assignment(text, "--sample", "KEY=LOW..HIGH", keys)
        if key in columns:
            raise SsdlabError(f"--sample gives {key} twice: give one range per key")
        low_text, dots, high_text = span.partition("..")
        if not dots:
            raise SsdlabError(f"--sample {key} needs a range LOW..HIGH, e.g. {key}=1..8")
        low, high = keys.parse(key, low_text), keys.parse(key, high_text)
        if isinstance(low, bool | str) or isinstance(high, bool | str):
            raise SsdlabError(f"--sample draws numbers, and {key} is not one: give its values with --set")
        if low > high:
            raise SsdlabError(f"--sample {key}: the range {low}..{high} is empty: give LOW..HIGH")
        if not math.isfinite(high - low):
            raise SsdlabError(f"--sample {key}: the range {low}..{high} is too wide to draw from")
        if isinstance(low, int):
            columns[key] = [int(v) for v in rng.integers(low, high, size=count, endpoint=True)]
        else:
            columns[key] = [min(max(float(f"{v:.{SAMPLE_DIGITS}g}"), low), high)
                            for v in rng.uniform(low, high, size=count)]
    variants = [dict(zip(columns, values)) for values in zip(*columns.values())]
    if len({_identity(v) for v in variants}) < len(variants):
        raise SsdlabError(f"{count} samples of these ranges repeat a variant: widen the ranges, or draw fewer")
    return variants


def checked(variants: list[Overrides], base: str) -> list[Overrides]:
    """At least one, at most MAX_VARIANTS, none twice (the same values in another order too)."""
    if not variants:
        raise SsdlabError("the sweep has no variant: give at least one")
    _bounded(len(variants), "the sweep has")
    first: dict[frozenset, int] = {}
    for number, overrides in enumerate(variants, start=1):
        if (earlier := first.setdefault(_identity(overrides), number)) != number:
            raise SsdlabError(f"variants {earlier} and {number} are the same drive, "
                              f"{printable(variant_name(base, overrides))}: give each variant once")
    return variants


def _assignment(text: str, option: str, form: str, keys: PresetKeys) -> tuple[str, str]:
    """The (resolved) key and the text after `=`."""
    key, equals, values = text.partition("=")
    if not equals or not values.strip():
        raise SsdlabError(f"{option} {printable(text)!r}: give {form}")
    return keys.resolve(key), values


def _bounded(count: int, what: str) -> None:
    if count > MAX_VARIANTS:
        raise SsdlabError(f"{what} {count} variants: a sweep has at most {MAX_VARIANTS}; split it into several")


def _within(where: str, make: Any) -> Any:
    """`make()`, its refusal prefixed with where it was found."""
    try:
        return make()
    except SsdlabError as exc:
        raise SsdlabError(f"{where}: {exc}") from None


def _flattened(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in table.items():
        if isinstance(value, dict) and value:
            found |= _flattened(value, f"{prefix}{name}.")
        else:
            found[f"{prefix}{name}"] = value
    return found


def _identity(overrides: Overrides) -> frozenset:
    # True == 1 == 1.0 in Python: the type keeps a boolean from passing for a number
    return frozenset((key, type(value), value) for key, value in overrides.items())


def _repeated(values: Sequence[Any]) -> Any:
    """The first value given twice, or None."""
    seen: list[Any] = []
    for value in values:
        if value in seen:
            return value
        seen.append(value)
    return None
