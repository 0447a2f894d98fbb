"""Simulator presets: drives/*.toml (a simulated drive each), or a user's own file.

`sim:NAME` names a built-in preset (`ssdlab drives` lists them); `sim:PATH`
(anything with a slash or ending in .toml) is a preset file of the same form.
The simulator validates a preset when it builds the drive: an unknown key, a
missing field or an impossible value is refused with a message naming it.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import SsdlabError

# The presets live beside the package in a source checkout (make demo / make test).
DRIVES_DIR = Path(__file__).resolve().parents[2] / "drives"


@dataclass(frozen=True)
class Preset:
    name: str          # the built-in name, or the file's path
    path: Path
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
    return sorted(p.stem for p in DRIVES_DIR.glob("*.toml"))


def load_preset(spec: str) -> Preset:
    """A built-in preset by name, or a preset file by path."""
    if "/" in spec or spec.endswith(".toml"):
        path = Path(spec).expanduser()
        name = spec
    else:
        path = DRIVES_DIR / f"{spec}.toml"
        name = spec
        if not path.is_file():
            raise SsdlabError(f"unknown simulated drive {spec!r}: `ssdlab drives` lists the presets "
                              f"({', '.join(builtin_names())}), or give a preset file as sim:path/to/drive.toml")
    try:
        text = path.read_text()
    except OSError as exc:
        raise SsdlabError(f"cannot read the preset {path}: {exc.strerror}") from None
    return Preset(name=name, path=path, text=text)
