"""Reading what nvme-cli and smartctl print. Every failure is an SsdlabError that names
the command and the field, never a KeyError or ValueError traceback: a tool's output
changes between versions and drives, and the user must learn which part did not fit."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.external import Completed

# 128-bit counters: a JSON number, or a string: "123" (nvme-cli 2.2-2.3, smartctl's KEY_s),
# "123.000000" (2.1's %Lf; "123,000000" where the decimal point is a comma). 40 digits hold
# any 128-bit value.
_COUNTER = re.compile(r"\s*([0-9]{1,40})(?:[.,]0{6})?\s*")
# A number in a locale's digit groups ("178,037,231", "178.037.231", "2.000"), as nvme-cli
# 2.3 prints counters in the locale it runs in: never read as a number ("2.000" is 2000).
_GROUPED = re.compile(r"\s*[0-9]{1,3}([^0-9]{1,4})[0-9]{3}(?:\1[0-9]{3})*\s*")

Record = TypeVar("Record", bound=BaseModel)

# A drive that does not answer must not hold a run up: nvme-cli and smartctl answer in
# milliseconds, or not at all.
TIMEOUT_S = 30.0


def failure(argv: Sequence[str], done: Completed, detail: str | None = None) -> SsdlabError:
    """The error for a command that failed; `detail` defaults to its last line of stderr."""
    if detail is None:
        lines = done.stderr.strip().splitlines()
        detail = lines[-1] if lines else ""
    return SsdlabError(f"`{' '.join(argv)}` failed (exit status {done.returncode})"
                       + (f": {detail}" if detail else ""))


def build(record: type[Record], command: str, **values: Any) -> Record:
    try:
        return record(**values)
    except ValidationError as exc:
        raise SsdlabError(f"`{command}` printed values out of range: {validation_problems(exc)}") from None


class Json:
    """A JSON object a command printed; `where` is the path to it (`psds[3]`)."""

    def __init__(self, data: dict[str, Any], command: str, where: str = "") -> None:
        self.data, self.command, self.where = data, command, where

    @classmethod
    def parse(cls, text: str, command: str) -> Json:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise SsdlabError(f"`{command}` did not print JSON: {text.strip()[:80]!r}") from None
        if not isinstance(data, dict):
            raise SsdlabError(f"`{command}` printed JSON that is not an object")
        return cls(data, command)

    def error(self, key: str, problem: str) -> SsdlabError:
        return SsdlabError(f"`{self.command}`: field `{self.where}{key}` {problem}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def _get(self, key: str) -> Any:
        if not self.has(key):
            raise self.error(key, "is missing")
        return self.data[key]

    def integer(self, key: str) -> int:
        """A whole number, within 128 bits (the widest field of NVMe and ATA logs)."""
        value = self._get(key)
        match = _COUNTER.fullmatch(value) if isinstance(value, str) else None
        if match is not None:
            number = int(match.group(1))
        elif isinstance(value, str) and _GROUPED.fullmatch(value):
            raise self.error(key, f"is {_shown(value)}: {_DIGIT_GROUPS} ({_locale_named()}). ssdlab runs its "
                             "programs with LC_ALL=C, so something sets the locale again (a wrapper script?): "
                             "run the program itself, or use nvme-cli 2.4 or later, which prints plain numbers")
        elif isinstance(value, float) and value.is_integer() or isinstance(value, int) and not isinstance(value, bool):
            number = int(value)
        else:
            raise self.error(key, f"is {_shown(value)}, not a whole number")
        if abs(number) >> 128:
            raise self.error(key, "is larger than 128 bits")
        return number

    def optional_integer(self, key: str) -> int | None:
        return self.integer(key) if self.has(key) else None

    def text(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str):
            raise self.error(key, f"is {_shown(value)}, not text")
        return value.strip()

    def flag(self, key: str) -> bool:
        value = self._get(key)
        if not isinstance(value, bool):
            raise self.error(key, f"is {_shown(value)}, not true or false")
        return value

    def child(self, key: str) -> Json:
        value = self._get(key)
        if not isinstance(value, dict):
            raise self.error(key, "is not an object")
        return Json(value, self.command, f"{self.where}{key}.")

    def has_object(self, key: str) -> bool:
        return isinstance(self.data.get(key), dict)

    def optional_child(self, key: str) -> Json | None:
        return self.child(key) if self.has(key) else None

    def children(self, key: str) -> list[Json]:
        """The objects of a list; an absent list is empty."""
        if not self.has(key):
            return []
        value = self.data[key]
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.error(key, "is not a list of objects")
        return [Json(item, self.command, f"{self.where}{key}[{i}].") for i, item in enumerate(value)]

    def optional_integers(self, key: str) -> list[int | None]:
        """A list of numbers with gaps (null); an absent list is empty."""
        if not self.has(key):
            return []
        value = self.data[key]
        if not isinstance(value, list):
            raise self.error(key, "is not a list")
        return [None if item is None else Json({f"[{i}]": item}, self.command, f"{self.where}{key}").integer(f"[{i}]")
                for i, item in enumerate(value)]


_DIGIT_GROUPS = ("digits grouped by a locale's thousands separator, as nvme-cli 2.3 prints counters in the locale "
                 "it runs in")


def _locale_named() -> str:
    """The locale this process was given, which its programs would inherit."""
    for variable in ("LC_ALL", "LC_NUMERIC", "LANG"):
        if name := os.environ.get(variable):
            return f"here {variable}={name}"
    return "no locale is set here"


def _shown(value: Any) -> str:
    """A value in an error message, cut short: a field may hold a whole document."""
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:40] + "..."
