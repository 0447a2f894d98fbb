"""The page of a sweep (`ssdlab sweeps report`): what was swept and how far it got, a row per
variant with its primary scores (distributed/results.py's table), and each test's primary
score charted against each swept key.

A chart per test and swept key, when the variants scored on the test hold more than one value
of the key (else a line says why there is none). A numeric key is a numeric axis; a string or
a boolean a categorical one, in the order the variants give its values. A grid or a list draws
a line per combination of the other keys' values (along a line only the charted key changes),
at most MAX_LINES of them, else points; random samples share no such combinations, so they are
points, coloured by the next key's value. A variant of a list that leaves a key out has the
base preset's value of it, which the table marks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.distributed.overrides import PresetKeys, Value, short_key, shown_value
from ssdlab.distributed.results import ScoreColumn, SweepTable, VariantRow
from ssdlab.presets import Preset
from ssdlab.report.charts import Chart, score_against_key, slug
from ssdlab.report.sections import Section, Table
from ssdlab.report.summary import ScoreCell, format_value
from ssdlab.store.sweeps import SweepRecord
from ssdlab.text import printable

MAX_LINES = 10  # a colour each in Vega's palette; more lines would share colours: points instead
KIND = "sweep"  # each section's data-shape

Values = dict[str, dict[str, Value]]  # variant name -> key -> its value (the base's where not overridden)


@dataclass(frozen=True)
class SweepView:
    table: SweepTable
    facts: Table  # the sweep: base, suite, tests, scale, how the variants were given, how far it got
    results: Table  # a row per variant: its run, state, keys' values and scores
    notes: tuple[str, ...]  # the keys not charted, and why
    sections: tuple[Section, ...]  # a section per test: its charts

    @property
    def charts(self) -> list[Chart]:
        return [chart for section in self.sections for chart in section.charts]


def sweep_view(table: SweepTable) -> SweepView:
    base = PresetKeys.of(Preset(table.sweep.base, Path(table.sweep.base), table.sweep.base_toml)).values
    values = {row.name: {key: row.overrides.get(key, base.get(key)) for key in table.keys} for row in table.rows}
    varied = [key for key in table.keys if len(_distinct(values, table.rows, key)) > 1]
    notes = [f"{printable(short_key(key))} has one value in every variant "
             f"({printable(shown_value(_distinct(values, table.rows, key)[0]))}): no chart against it"
             for key in table.keys if key not in varied]
    if not table.tests:
        notes.append("no variant has run yet: no charts")
    names: set[str] = set()
    sections = tuple(_test_section(column, table, values, varied, names) for column in table.tests)
    return SweepView(table, _facts(table), _results(table, base), tuple(notes), sections)


def _facts(table: SweepTable) -> Table:
    sweep = table.sweep
    options = sweep.options
    tests = ", ".join(options["tests"]) if options["tests"] else "every test of the suite"
    states = Counter(row.status for row in table.rows)
    rows = (("base preset", sweep.base), ("suite", sweep.suite), ("tests", tests),
            ("scale", f"{options['scale']:g}"), ("measured steps run", f"{options['repeat']} time(s) each"),
            ("variants given as", _spec(sweep, len(table.rows))),
            ("swept keys", ", ".join(map(short_key, table.keys))),
            ("variants", f"{len(table.rows)}: " + ", ".join(f"{n} {state}" for state, n in states.items())),
            ("created (UTC)", sweep.created_at[:19].replace("T", " ")))
    return Table(f"Sweep {sweep.id}", ("what", "value"), tuple((name, printable(value)) for name, value in rows))


def _spec(sweep: SweepRecord, variants: int) -> str:
    spec = sweep.spec
    if "set" in spec:
        return f"a grid of {variants} variants: " + " ".join(f"--set {s}" for s in spec["set"])
    if "sample" in spec:
        return (f"{spec['samples']} random samples, seed {spec['seed']}: "
                + " ".join(f"--sample {s}" for s in spec["sample"]))
    return f"a list of {variants} variants: --variants {spec['variants']}"


def _results(table: SweepTable, base: Mapping[str, Any]) -> Table:
    header = ("variant", "run", "state", *(short_key(key) for key in table.keys),
              *(f"{column.test}: {column.name}" for column in table.tests))
    rows = tuple((row.name, "" if row.run_id is None else str(row.run_id), row.status,
                  *(shown_value(row.overrides[key]) if key in row.overrides
                    else f"{shown_value(base[key])} (base)" for key in table.keys),
                  *(score_text(row.scores.get(column.test), column.unit) for column in table.tests))
                 for row in table.rows)
    return Table("A row per variant, each test's primary score", tuple(map(printable, header)),
                 tuple(tuple(map(printable, row)) for row in rows))


def score_text(value: float | None, unit: str) -> str:
    """'4,337.8 MB/s' as the report and `sweeps show` print a score; empty without one."""
    return "" if value is None else format_value(ScoreCell(value, unit, None))


def _test_section(column: ScoreColumn, table: SweepTable, values: Values, varied: list[str],
                  names: set[str]) -> Section:
    scored = [row for row in table.rows if row.scores.get(column.test) is not None]
    axis = f"{column.name} ({column.unit})" if column.unit else column.name
    findings, charts = [], []
    if not scored:
        findings.append("no variant has a score for it yet: no charts")
    for key in varied if scored else ():
        if len(distinct := _distinct(values, scored, key)) < 2:
            findings.append(f"no chart against {printable(short_key(key))}: the variants scored on it all have "
                            f"{printable(shown_value(distinct[0]))}")
            continue
        chart, finding = _chart(column, axis, key, [k for k in varied if k != key], scored, values,
                                sampled="sample" in table.sweep.spec, names=names)
        charts.append(chart)
        findings += [finding] if finding else []
    return Section(column.test, printable(f"{column.test}: {axis}"), KIND, tuple(findings), tuple(charts), ())


def _chart(column: ScoreColumn, axis: str, key: str, others: list[str], scored: list[VariantRow],
           values: Values, sampled: bool, names: set[str]) -> tuple[Chart, str | None]:
    """The chart of `column`'s score against `key`; and a line saying why it has no lines, if so."""
    numeric = all(_numeric(values[row.name][key]) for row in scored)
    rows = [{"variant": printable(row.name), "run": str(row.run_id),
             "value": _plotted(values[row.name][key], numeric), "score": row.scores[column.test]}
            for row in scored]
    shown_key, title = printable(short_key(key)), printable(f"{column.test}: {column.name} against {short_key(key)}")
    colour, colour_numeric, lines, finding = None, False, not sampled, None
    if others and sampled:  # coloured by the next key's value: a gradient if it is a number
        colour, colour_numeric = printable(short_key(others[0])), _numeric(values[scored[0].name][others[0]])
        for row, plotted in zip(scored, rows):
            plotted["series"] = _plotted(values[row.name][others[0]], colour_numeric)
    elif others:  # a line per combination of the other keys' values, in their order
        colour = printable(", ".join(map(short_key, others)))
        order = {k: _order([values[row.name][k] for row in scored]) for k in others}
        ranked = sorted(zip(scored, rows), key=lambda pair: tuple(order[k](values[pair[0].name][k]) for k in others))
        rows = [plotted | {"series": printable(", ".join(shown_value(values[row.name][k]) for k in others))}
                for row, plotted in ranked]
        if (count := len({r["series"] for r in rows})) > MAX_LINES:
            lines, finding = False, (f"{title}: {count} combinations of {colour} are too many for a line each: "
                                     "points only")
        title += f", a line per {colour}" if lines else ""
    name = _unique(slug(KIND, column.test, "against", short_key(key)), names)
    categories = None if numeric else list(dict.fromkeys(_plotted(values[row.name][key], False) for row in scored))
    whole = numeric and all(isinstance(values[row.name][key], int) for row in scored)
    return score_against_key(name, title, rows, shown_key, printable(axis), categories, whole, colour,
                             colour_numeric, lines), finding


def _distinct(values: Values, rows: Sequence[VariantRow], key: str) -> list[Value]:
    """The key's values in the rows, in their order, each once (a key's values share one type)."""
    return list(dict.fromkeys(values[row.name][key] for row in rows))


def _numeric(value: Value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _plotted(value: Value, numeric: bool) -> Value:
    return value if numeric else printable(shown_value(value))


def _order(given: list[Value]) -> Any:
    """How to sort a key's values: numbers by size, text and booleans as the variants give them."""
    if all(_numeric(v) for v in given):
        return lambda value: value
    first = {value: k for k, value in reversed(list(enumerate(given)))}
    return first.__getitem__


def _unique(name: str, names: set[str]) -> str:
    """Two keys may slug alike (`a_b`, `a-b`): each chart's element id must be its own."""
    found, n = name, 1
    while found in names:
        n += 1
        found = f"{name}-{n}"
    names.add(found)
    return found
