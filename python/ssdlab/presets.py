"""Simulator presets: ssdlab/drives/*.toml (a simulated drive each), or a user's own file.

`sim:NAME` names a built-in preset (`ssdlab drives` lists them); `sim:PATH`
(anything with a slash or ending in .toml) is a preset file of the same form.
The built-in presets are package data, read through importlib.resources, so an
installed wheel finds them as a source checkout does (the checkout's top-level
`drives` is a link to the same directory). The simulator validates a preset
when it builds the drive: an unknown key, a missing field or an impossible
value is refused with a message naming it. What each value means and where it
comes from: docs/simulator.md.
"""

from __future__ import annotations

import hashlib
import stat
import tomllib
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.text import read_text_file

BUILTIN_DIR = resources.files("ssdlab") / "drives"


@dataclass(frozen=True)
class Preset:
    name: str          # the built-in name, or the file's path
    path: Path | Traversable
    text: str          # the TOML, stored with a run so a resume uses the very same drive

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def title(self) -> str:
        """The drive's own name, from [drive] name; the preset name when it has none."""
        try:
            return tomllib.loads(self.text)["drive"]["name"]
        except (tomllib.TOMLDecodeError, KeyError, TypeError):
            return self.name


def builtin_names() -> list[str]:
    return sorted(entry.name.removesuffix(".toml") for entry in BUILTIN_DIR.iterdir()
                  if entry.name.endswith(".toml"))


def load_preset(spec: str) -> Preset:
    """A built-in preset by name, or a preset file by path."""
    if "/" in spec or spec.endswith(".toml"):
        path = Path(spec).expanduser()
        return Preset(name=spec, path=path, text=read_preset_file(path))
    if spec not in builtin_names():
        raise SsdlabError(f"unknown simulated drive {spec!r}: `ssdlab drives` lists the presets "
                          f"({', '.join(builtin_names())}), or give a preset file as sim:path/to/drive.toml")
    path = BUILTIN_DIR / f"{spec}.toml"
    return Preset(name=spec, path=path, text=path.read_text(encoding="utf-8"))


def read_preset_file(path: Path) -> str:
    """The text of a user's preset file; what is not a regular file is refused, saying what it is."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SsdlabError(f"cannot read the preset {path}: {reason}") from None
    if stat.S_ISDIR(mode):
        raise SsdlabError(f"the preset {path} is a directory: give a preset file, e.g. sim:{path}/my-drive.toml")
    # Checked before opening: opening a FIFO would wait forever for a writer.
    if not stat.S_ISREG(mode):
        raise SsdlabError(f"the preset {path} is not a regular file: give a TOML file like "
                          "those `ssdlab drives show NAME` prints")
    return read_text_file(path, "the preset")
