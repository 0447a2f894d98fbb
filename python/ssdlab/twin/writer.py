"""The twin as a preset file: the base's document, its name the drive's, each value the runs
set carrying where it came from, in the citation style of the built-in presets."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import tomlkit

from ssdlab.presets import Preset
from ssdlab.twin.choices import Choice
from ssdlab.twin.evaluate import table_of
from ssdlab.twin.origin import Origin
from ssdlab.twin.search import Fitted
from ssdlab.twin.sources import Source
from ssdlab.twin.space import Parameter, source_of_ambient


def twin_text(doc: tomlkit.TOMLDocument, base: Preset, sources: Sequence[Source], params: Sequence[Parameter],
              choices: Sequence[Choice], fitted: Fitted, fitted_tests: Sequence[tuple[int, str]],
              link_read: str | None, database: Path, read: Collection[str]) -> str:
    """The twin's preset; `read`: the searched keys whose start was read from the runs (their
    notes say so), which keep that note when the search cannot move them."""
    out = tomlkit.parse(tomlkit.dumps(doc))
    runs = ", ".join(str(s.run.id) for s in sources)
    model = sources[0].run.identity.get("model") or sources[0].run.target
    serial = sources[0].run.identity.get("serial")
    origin = Origin(drive=model, serial=serial or None, runs=[s.run.id for s in sources],
                    database=str(database.resolve()), base=base.name)
    out["twin"] = origin.model_dump(exclude_none=True)
    out["twin"].comment("what the twin was fitted to (ssdlab's reports name it; the simulator ignores it)")
    drive = out["drive"]
    drive["name"] = f"Twin of {model}"
    drive["name"].comment(f"fitted by `ssdlab fit` to run{'s' if len(sources) > 1 else ''} {runs}")
    drive["user_capacity_gb"].comment(f"read from run {sources[0].run.id}: its drive's capacity")
    if link_read is not None:
        drive["host"]["link"].comment(f"read from run {sources[0].run.id}: {link_read}")
    tests = len(fitted_tests)
    fitted_runs = sorted({sources[i].run.id for i, _ in fitted_tests})
    fitted_to = f"run{'s' if len(fitted_runs) > 1 else ''} {', '.join(map(str, fitted_runs))}"
    taken = [c for c in choices if fitted.values[c.key] != c.base]
    moved_with = {f.key: c.key.rsplit(".", 1)[1] for c in taken for f in c.follows}
    for c in choices:
        table, leaf = table_of(out, c.key)
        others = weighed(fitted, c.key)
        if c in taken:
            table[leaf] = fitted.values[c.key]
            table[leaf].comment(f"fitted to {fitted_to} ({tests} tests): against {others}, the others fitted "
                                "again around each")
        elif fitted.determined(c.key):
            table[leaf].comment(f"the base's ({base.name}), which the runs tell: against {others}, the others "
                                "fitted again around each")
        else:
            table[leaf].comment(f"typical value, the base's ({base.name}): the runs do not tell it (against {others})")
    searched = {p.key for p in params}
    for key, leaf_of_choice in moved_with.items():
        if key not in searched:
            table, leaf = table_of(out, key)
            table[leaf] = fitted.values[key]
            table[leaf].comment(f"the base's ({base.name}) bytes with the twin's {leaf_of_choice}")
    if "drive.geometry.blocks_per_plane" not in moved_with:
        drive["geometry"]["blocks_per_plane"].comment(
            f"the base's ({base.name}) spare share at the drive's capacity")
    ambients = []
    for p in params:
        if (source := source_of_ambient(p.key)) is not None:  # a run's condition, not the twin's
            ambients.append(f"{fitted.values[p.key]:.1f} °C in run {sources[source].run.id}")
            continue
        table, leaf = table_of(out, p.key)
        if fitted.determined(p.key):
            table[leaf] = fitted.values[p.key]
            table[leaf].comment(
                f"fitted to {fitted_to} ({tests} tests): 10 % moves {moved(fitted, p.key)}, the RMS error "
                f"+{fitted.rise[p.key]:.1%}; the base's value {back(fitted, p.key)} (searched {p.low:g}..{p.high:g})")
        elif p.key in moved_with:
            table[leaf] = fitted.values[p.key]
            table[leaf].comment(
                f"the base's typical value ({p.base:g}) with the twin's {moved_with[p.key]}: the runs do not "
                f"determine it (10 % moves {moved(fitted, p.key, at_most=True)})")
        elif p.key not in read:
            table[leaf].comment(
                f"typical value, the base's ({base.name}): the runs do not determine it (10 % moves "
                f"{moved(fitted, p.key, at_most=True)})")
    header = (f"# A simulated twin of {model}, fitted by `ssdlab fit` to run{'s' if len(sources) > 1 else ''} "
              f"{runs} (ssdlab's database).\n"
              f"# Values without a fitted or read note are the base preset's ({base.name}), with its citations:\n"
              "# typical values the runs cannot tell. What a twin can and cannot predict: docs/twin.md.\n")
    if ambients:
        header += (f"# The runs did not record the air around the drive; estimated from its temperatures: "
                   f"{', '.join(ambients)} (`--ambient-c` runs the twin so).\n")
    header += "\n"
    return header + tomlkit.dumps(out)


def weighed(fitted: Fitted, key: str) -> str:
    """What each other value of choice `key` costs."""
    return ", ".join(f"{option:g} the RMS error {cost(fitted, rates, kelvin)}"
                     for option, (rates, kelvin) in sorted(fitted.weighed[key].items()))


def moved(fitted: Fitted, key: str, at_most: bool = False) -> str:
    """What 10 % of `key` moves (`at_most`: no more than that): a rate, by a share; a
    temperature, where the runs hold any, by kelvins."""
    rate, kelvin = f"{fitted.moves[key]:.1%}", f"{fitted.warms[key]:.1f} K"
    if at_most:
        return f"no rate more than {rate}" + (f" and no temperature more than {kelvin}" if fitted.warmed else "")
    return f"a rate {rate}" + (f", a temperature {kelvin}" if fitted.warmed else "")


def back(fitted: Fitted, key: str) -> str:
    """What putting `key` back at the base's value would cost."""
    return cost(fitted, fitted.back[key], fitted.back_kelvin[key])


def cost(fitted: Fitted, rates: float, kelvin: float) -> str:
    """A rise of the rates' RMS error, and of the temperatures' where the runs hold any."""
    return f"{rates:+.1%}" + (f", {kelvin:+.1f} K" if fitted.warmed else "")
