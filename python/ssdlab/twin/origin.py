"""Where a twin came from: the `[twin]` table `ssdlab fit` writes into a twin's preset (the
simulator ignores it), read back so that a twin's runs and reports name the measured runs it
was fitted to."""

from __future__ import annotations

import tomllib
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ssdlab.errors import SsdlabError, validation_problems

Text = Annotated[str, Field(min_length=1, max_length=4096)]


class Origin(BaseModel):
    """The drive a twin is of, and its runs it was fitted to, in which database."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    drive: Text  # the drive's model, or a simulated drive's preset
    serial: Text | None = None
    runs: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1, max_length=1000)]
    database: Text
    base: Text  # the preset it started from

    def described(self) -> str:
        serial = f" serial {self.serial}" if self.serial else ""
        runs = ", ".join(str(r) for r in self.runs)
        return (f"a twin of {self.drive}{serial}, fitted by `ssdlab fit` from {self.base} to run"
                f"{'s' if len(self.runs) > 1 else ''} {runs} of {self.database}")


def origin_of(preset_text: str) -> Origin | None:
    """The origin a preset's `[twin]` table records; None when it has none."""
    try:
        table = tomllib.loads(preset_text).get("twin")
    except tomllib.TOMLDecodeError:
        return None  # the simulator says what is wrong with the preset
    if table is None:
        return None
    try:
        return Origin.model_validate(table)
    except ValidationError as exc:
        raise SsdlabError(f"the preset's [twin] table is not what `ssdlab fit` writes ({validation_problems(exc)}): "
                          "mend it, or remove the table (the preset runs the same without it)") from None
