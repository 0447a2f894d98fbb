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
from typing import Any

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
    read = drive_link(sources)
    link = None if read is None else read[0]["link"]
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


# the simulator's links and their payload ceilings (config/host.rs); its PCIe 3.0 x4 carries
# 3500 MB/s of its 3938 MB/s line rate (8 GT/s x 4 lanes, 128b/130b): the share any link keeps
LINKS = {"pcie3x4": 3500.0, "pcie4x4": 7000.0}
PAYLOAD_SHARE = 3500.0 / (8 * 4 * 128 / 130 / 8 * 1000)


def drive_link(sources: list[Source]) -> tuple[dict[str, Any], str] | None:
    """The drive's host link where the runs tell it, as `[drive.host]` fields, and where it was
    read: a real drive's PCIe link as its kernel reported it, a simulated drive's preset."""
    for source in sources:
        identity = source.run.identity
        if source.run.target_kind == "sim":
            try:  # its preset, built in or a file, as long as it is still the one the run used
                preset = load_preset(str(identity.get("preset")))
            except SsdlabError:
                continue
            if preset.sha256 == identity.get("preset_sha256"):
                return dict(tomllib.loads(preset.text)["drive"]["host"]), "the simulated drive's link"
        elif link := identity.get("pcie_link"):
            return _pcie_fields(float(link["gts"]), int(link["width"])), \
                f"its PCIe link, {link['gts']:g} GT/s x{link['width']}"
    return None


def _pcie_fields(gts: float, width: int) -> dict[str, Any]:
    """The simulator's link nearest a PCIe link, with its payload ceiling when it differs."""
    kind = "pcie4x4" if gts >= 16 else "pcie3x4"
    encoding = 128 / 130 if gts >= 8 else 0.8  # PCIe 3.0 on, and 1.0-2.0's 8b/10b
    payload = round(gts * width * encoding / 8 * 1000 * PAYLOAD_SHARE)
    return {"link": kind, **({"payload_mbps": float(payload)} if abs(payload - LINKS[kind]) > 1 else {})}


def sized(base: Preset, capacity_bytes: int, host: dict[str, Any] | None = None) -> tomlkit.TOMLDocument:
    """The base's document with the drive's capacity, its flash grown or shrunk (blocks per plane)
    to keep the base's spare share, and its link (`[drive.host]`) where the runs tell it."""
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
    if host is not None:
        table = tomlkit.table()
        for key, value in host.items():
            table[key] = value
        drive["host"] = table
    return doc


def _capacity(preset: Preset) -> float:
    return float(tomllib.loads(preset.text)["drive"]["user_capacity_gb"]) * 1e9


def _mode(preset: Preset) -> str:
    return str(tomllib.loads(preset.text)["drive"].get("native_mode", "tlc"))


def _link(preset: Preset) -> str:
    return str(tomllib.loads(preset.text)["drive"]["host"]["link"])
