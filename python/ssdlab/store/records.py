"""Versioned JSON records: every JSON value the store keeps carries its schema version,
and is read through upgrades, so a record written by any earlier ssdlab still reads.

A stored record is a JSON object with its version under SCHEMA_KEY. Records written
by ssdlab 0.1.0 have no version: they are version 1. A kind's current version is one
more than its number of upgrades; `upgrades[n - 1]` turns a version-n value into a
version-(n + 1) value, and reading applies every upgrade from the stored version on.
The database is never rewritten to upgrade records: reading does it, every time, so a
database stays readable by the release that wrote it (until its SQL schema changes).

To change a record's shape: change the model, then append one upgrade to its kind.
A kind that nests another (a test's steps are steps) upgrades the nested values in
its own upgrade, by calling the nested kind's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ssdlab.errors import SsdlabError
from ssdlab.model import Step, StepResult, Test
from ssdlab.store.failures import Damaged
from ssdlab.telemetry.records import HealthLog
from ssdlab.telemetry.results import TemperatureSeries

SCHEMA_KEY = "schema_version"

Upgrade = Callable[[Any], Any]


@dataclass(frozen=True)
class RecordKind:
    name: str
    model: type[BaseModel] | None = None  # the value read is this model; else plain JSON
    upgrades: tuple[Upgrade, ...] = ()

    @property
    def version(self) -> int:
        return len(self.upgrades) + 1


def _commands_as_an_object(commands: list[str]) -> dict[str, Any]:
    """2: 0.1.0 stored a step's commands as a bare list, which cannot carry a version."""
    return {"commands": commands}


TEST = RecordKind("test definition", Test)
STEP = RecordKind("step", Step)
RESULT = RecordKind("step result", StepResult)
COMMANDS = RecordKind("step commands", upgrades=(_commands_as_an_object,))
SCORE = RecordKind("score")
IDENTITY = RecordKind("target identity")
HOST = RecordKind("host")
ENGINE = RecordKind("engine")
OPTIONS = RecordKind("run options")
HEALTH = RecordKind("health log", HealthLog)
TEMPERATURES = RecordKind("temperature series", TemperatureSeries)
SWEEP_SPEC = RecordKind("sweep spec")
SWEEP_OPTIONS = RecordKind("sweep options")
OVERRIDES = RecordKind("variant overrides")


def dump(kind: RecordKind, value: BaseModel | dict[str, Any]) -> str:
    """The JSON text to store: `value` at its kind's current version."""
    fields = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return json.dumps({SCHEMA_KEY: kind.version, **fields})


def load(kind: RecordKind, text: str) -> Any:
    """A stored record at the current version: the kind's model, or plain JSON."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise Damaged(f"a stored {kind.name} is not JSON ({exc})") from None
    version = value.pop(SCHEMA_KEY, 1) if isinstance(value, dict) else 1
    if not isinstance(version, int) or version < 1:
        raise Damaged(f"a stored {kind.name} has schema version {version!r}")
    if version > kind.version:
        raise SsdlabError(
            f"this database holds a {kind.name} of schema version {version}, written by a newer "
            f"ssdlab; this one reads up to version {kind.version}: upgrade ssdlab")
    for upgrade in kind.upgrades[version - 1:]:
        value = upgrade(value)
    if kind.model is None:
        return value
    try:
        return kind.model.model_validate(value)
    except ValidationError as exc:
        raise Damaged(f"a stored {kind.name} is not valid: "
                               f"{exc.errors()[0]['msg']}") from None
