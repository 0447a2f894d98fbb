"""Suites: ordered lists of catalogue tests, kept as TOML files in this package.

A suite is named by the stem of its file (`client`, `quick`) or given as a path
to a TOML file of the same form: `name`, `description`, `tests = [ids]`.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from ssdlab.catalogue import check_selection
from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.model import Suite
from ssdlab.text import read_text_file


def builtin_names() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files(__package__).iterdir()
                  if p.name.endswith(".toml"))


def parse_suite(text: str, origin: str) -> Suite:
    try:
        suite = Suite.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise SsdlabError(f"{origin} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise SsdlabError(f"{origin} is not a valid suite ({validation_problems(exc)}); a suite has "
                          "`name`, `description` and `tests = [...]`, nothing else") from None
    check_selection(suite.tests, origin)
    return suite


def load_suite(name_or_path: str) -> tuple[Suite, str]:
    """The suite and its TOML text (stored with the run, so a resumed run uses the same)."""
    if name_or_path in builtin_names():
        text = resources.files(__package__).joinpath(f"{name_or_path}.toml").read_text()
        return parse_suite(text, f"suite {name_or_path!r}"), text
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        text = read_text_file(path, "the suite file")
        return parse_suite(text, str(path)), text
    raise SsdlabError(f"unknown suite {name_or_path!r}: built-in suites are "
                      f"{', '.join(builtin_names())}, or give the path of a .toml file")
