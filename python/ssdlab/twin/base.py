"""The preset a twin starts from: a built-in preset of the same kind, made the runs' size.

The base gives every value the runs cannot determine (geometry but its size, power, heat,
wear, errors), with its own citations, and the search's starting point. By default it is the
built-in preset closest to the drive: the same native cell mode (a simulated drive's; TLC
for a real one, whose cells the runs do not name), the same link where the runs tell it,
then the nearest capacity; never the
simulated drive's own preset, whose twin would then start at the answer.
"""

from __future__ import annotations

import tomllib

import tomlkit

from ssdlab.errors import SsdlabError
from ssdlab.presets import Preset, builtin_names, load_preset
from ssdlab.twin.sources import Source


def choose_base(sources: list[Source], asked: str | None) -> Preset:
    """The preset `--base` names, else the nearest built-in one (not the runs' own)."""
    if asked is not None:
        return load_preset(asked)
    own = {s.run.identity.get("preset_sha256") for s in sources}
    capacity = drive_bytes(sources)
    builtins = [load_preset(name) for name in builtin_names()]
    # a simulated drive's cell mode is its preset's; a real drive's is taken to be TLC, the common one
    modes = {_mode(p) for p in builtins if p.sha256 in own} or {"tlc"}
    link = drive_link(sources)
    candidates = [p for p in builtins if p.sha256 not in own]
    if not candidates:
        raise SsdlabError("no built-in preset to start the twin from: give one with --base")
    return min(candidates, key=lambda p: (_mode(p) not in modes, link is not None and _link(p) != link,
                                          abs(_capacity(p) - capacity), p.name))


def drive_bytes(sources: list[Source]) -> int:
    """The drive's capacity, as its runs recorded it."""
    found = {int(s.run.identity["capacity_bytes"]) for s in sources if s.run.identity.get("capacity_bytes")}
    if len(found) != 1:
        raise SsdlabError("the runs do not record one capacity of the drive: fit runs ssdlab made on it")
    return found.pop()


def drive_link(sources: list[Source]) -> str | None:
    """The drive's host link where the runs tell it: a simulated drive's is its preset's (a
    real drive's is not recorded yet: the twin keeps its base's)."""
    for source in sources:
        identity = source.run.identity
        if source.run.target_kind != "sim":
            continue
        try:  # its preset, built in or a file, as long as it is still the one the run used
            preset = load_preset(str(identity.get("preset")))
        except SsdlabError:
            continue
        if preset.sha256 == identity.get("preset_sha256"):
            return str(tomllib.loads(preset.text)["drive"]["host"]["link"])
    return None


def sized(base: Preset, capacity_bytes: int, link: str | None = None) -> tomlkit.TOMLDocument:
    """The base's document with the drive's capacity, its flash grown or shrunk (blocks per plane)
    to keep the base's spare share, and its link where the runs tell it."""
    # the base's own title comments go: the twin's file says what it is
    lines = base.text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), 0)
    doc = tomlkit.parse("".join(lines[start:]))
    drive = doc["drive"]
    user_gb = capacity_bytes / 1e9
    ratio = user_gb / float(drive["user_capacity_gb"])
    blocks = drive["geometry"]["blocks_per_plane"]
    drive["user_capacity_gb"] = round(user_gb, 3)
    drive["geometry"]["blocks_per_plane"] = max(8, round(int(blocks) * ratio))
    if link is not None:
        drive["host"]["link"] = link
    return doc


def _capacity(preset: Preset) -> float:
    return float(tomllib.loads(preset.text)["drive"]["user_capacity_gb"]) * 1e9


def _mode(preset: Preset) -> str:
    return str(tomllib.loads(preset.text)["drive"].get("native_mode", "tlc"))


def _link(preset: Preset) -> str:
    return str(tomllib.loads(preset.text)["drive"]["host"]["link"])
