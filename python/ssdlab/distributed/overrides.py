"""A variant of a simulated drive: its preset with some keys given other values.

A key is a dotted path into the preset's TOML (`drive.cache.max_cell_share`), its leading
`drive.` optional (`cache.max_cell_share`). Only a key the preset has can be overridden, and
only with a value of its type: an integer for an integer, a number for a float, true or
false for a boolean, text for a string; arrays are not swept. A key the preset lacks is
refused with the nearest keys it has, since a misspelt key would otherwise sweep nothing.
Whether a value is possible (its bounds, a geometry that holds the capacity) is the
simulator's to say, when the variant's drive is built.

The variant's preset is written whole (tomli-w), without the base's comments: a comment
citing the source of a value the sweep replaced would be wrong, and `ssdlab drives show
BASE` keeps the sources.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from ssdlab.errors import SsdlabError
from ssdlab.presets import Preset
from ssdlab.text import printable, require_utf8

Value = bool | int | float | str
DRIVE = "drive."
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 200
INT64 = range(-(2**63), 2**63)  # TOML's integers
NEAREST = 4  # how many of the preset's keys a refusal suggests
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class PresetKeys:
    """The keys of a preset (`preset`, for messages) with their values: what overrides may set."""

    preset: str
    values: Mapping[str, Any]

    @classmethod
    def of(cls, preset: Preset) -> PresetKeys:
        try:
            table = tomllib.loads(preset.text)
        except ValueError as exc:  # TOMLDecodeError, or an integer too long for Python to convert
            raise SsdlabError(f"the preset {preset.name} is not valid TOML: {exc}") from None
        return cls(base_name(preset), dict(_leaves(table)))

    def resolve(self, key: str) -> str:
        """The full dotted path of `key`; refused, with the nearest keys, when the preset has none."""
        key = _checked_text(key, "a key", MAX_KEY_CHARS).strip()
        if not key:
            raise SsdlabError("an override needs a key: KEY=VALUE, e.g. drive.cache.max_cell_share=0.3")
        for candidate in (key, DRIVE + key):
            if candidate in self.values:
                return candidate
        full = key if key.startswith(DRIVE) else DRIVE + key
        if inside := [k for k in self.values if k.startswith(full + ".")]:
            raise SsdlabError(f"{printable(key)} is a table of the preset {self.preset}, not a value: give one of "
                              f"its keys, e.g. {', '.join(inside[:NEAREST])}")
        raise SsdlabError(f"{printable(key)} is not a key of the preset {self.preset}: "
                          f"{self._nearest(full)}; `ssdlab drives show` prints every key of a preset")

    def _nearest(self, full: str) -> str:
        nearest = difflib.get_close_matches(full, list(self.values), n=NEAREST, cutoff=0.6)
        if not nearest:  # nothing alike: the keys of the nearest table that exists
            table = full.rpartition(".")[0]
            while table and not (nearest := [k for k in self.values if k.startswith(table + ".")][:NEAREST]):
                table = table.rpartition(".")[0]
        return "the nearest are " + ", ".join(nearest) if nearest else "its keys start with drive."

    def parse(self, key: str, text: str) -> Value:
        """A value as written on a command line or in a CSV cell, of `key`'s type (`key` resolved)."""
        text = _checked_text(text, f"the value of {key}", MAX_VALUE_CHARS).strip()
        existing = self.values[key]
        if not text:
            raise SsdlabError(f"{key} has an empty value: give {_kind(existing)}")
        if isinstance(existing, bool):
            if text not in ("true", "false"):
                raise SsdlabError(f"{key} is a boolean: give true or false, not {printable(text)!r}")
            return text == "true"
        if isinstance(existing, int):
            if not _INTEGER.fullmatch(text):
                raise SsdlabError(f"{key} is an integer: give a whole number such as {existing}, "
                                  f"not {printable(text)!r}")
            return self.check(key, int(text))
        if isinstance(existing, float):
            try:
                number = float(text)
            except ValueError:
                raise SsdlabError(f"{key} is a number: give one such as {existing!r}, "
                                  f"not {printable(text)!r}") from None
            return self.check(key, number)
        return self.check(key, text)

    def check(self, key: str, value: object) -> Value:
        """A value given typed (a TOML file's, a sample's), if of `key`'s type (`key` resolved);
        an integer stands for a float, not the other way round."""
        existing = self.values[key]
        if isinstance(existing, bool) or isinstance(value, bool):
            if isinstance(existing, bool) and isinstance(value, bool):
                return value
        elif isinstance(existing, int):
            if isinstance(value, int):
                if value not in INT64:
                    raise SsdlabError(f"{key} is given a number beyond TOML's 64-bit integers")
                return value
        elif isinstance(existing, float):
            if isinstance(value, int | float):
                if isinstance(value, int) and value not in INT64:
                    raise SsdlabError(f"{key} is given a number beyond TOML's 64-bit integers")
                if isinstance(value, float) and not math.isfinite(value):
                    raise SsdlabError(f"{key} must be a finite number, not {value}")
                return float(value)
        elif isinstance(existing, str):
            if isinstance(value, str):
                return _checked_text(value, f"the value of {key}", MAX_VALUE_CHARS)
        else:
            raise SsdlabError(f"{key} is {_kind(existing)}: a sweep sets numbers, booleans and strings")
        raise SsdlabError(f"{key} is {_kind(existing)}, not {_kind(value)} ({_given(value)})")


def base_name(preset: Preset) -> str:
    """The preset's short name: a built-in's name, a file's stem."""
    return Path(preset.name).stem if preset.name.endswith(".toml") or "/" in preset.name else preset.name


def apply_overrides(base: Preset, overrides: Mapping[str, Value]) -> str:
    """The whole TOML of the base preset with `overrides` (resolved keys, checked values) set."""
    table = copy.deepcopy(tomllib.loads(base.text))
    for key, value in overrides.items():
        *path, leaf = key.split(".")
        inner = table
        for part in path:
            inner = inner[part]
        inner[leaf] = value
    settings = ", ".join(f"{key} = {shown_value(value)}" for key, value in overrides.items())
    header = (f"# {base_name(base)} with {printable(settings)}\n"
              f"# the sources of the other values: `ssdlab drives show {printable(base.name)}`\n\n")
    return header + tomli_w.dumps(table)


def short_key(key: str) -> str:
    return key.removeprefix(DRIVE)


def shown_value(value: Value) -> str:
    """As TOML writes a boolean and a number; a string as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def variant_name(base: str, overrides: Mapping[str, Value]) -> str:
    """`wd-sn850-1tb[cache.max_cell_share=0.3,geometry.dies_per_channel=8]`: the base and what differs."""
    return f"{base}[{','.join(f'{short_key(k)}={shown_value(v)}' for k, v in overrides.items())}]"


def _leaves(table: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    found = []
    for name, value in table.items():
        if isinstance(value, dict):
            found += _leaves(value, f"{prefix}{name}.")
        else:
            found.append((f"{prefix}{name}", value))
    return found


def _checked_text(text: str, what: str, limit: int) -> str:
    require_utf8(text, what)
    if len(text) > limit:
        raise SsdlabError(f"{what} is {len(text)} characters long: at most {limit}")
    return text


def _given(value: object) -> str:
    if isinstance(value, int) and value not in INT64:
        return "beyond TOML's 64-bit integers"  # too long to print, and Python refuses to
    return printable(repr(value))[:MAX_VALUE_CHARS]


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean (true or false)"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "a table" if isinstance(value, dict) else type(value).__name__
