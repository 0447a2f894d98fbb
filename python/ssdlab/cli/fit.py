"""`ssdlab fit RUN [RUN...] -o my-drive.toml`: a simulated twin of the drive of stored runs
(twin/): a preset whose simulated runs reproduce them, with what it could and could not tell."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption, SchedulerFileOption, TlsOption
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.cli.simulations import ClusterOption
from ssdlab.cli.simulations import runner_for as where
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.text import require_utf8
from ssdlab.twin.figures import TEMPERATURE


def fit_command(
    runs: Annotated[list[str], typer.Argument(
        metavar="RUN...", help="stored runs of one drive (`ssdlab runs`; `latest`): what the twin reproduces")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE",
        help="the twin's preset file (.toml); beside it FILE.fit.json keeps what the fit measured, so that "
             "the same command resumes a stopped fit")],
    base: Annotated[str | None, typer.Option(
        metavar="PRESET", help="the preset the twin starts from and keeps every value the runs cannot tell "
                               "(default: the nearest built-in preset of the same kind)")] = None,
    hold_out: Annotated[str | None, typer.Option(
        "--hold-out", metavar="TEST,...",
        help="tests left out of the fit, to judge the twin's prediction of them")] = None,
    jobs: Annotated[int | None, typer.Option(
        help="candidate runs at once (default: one per usable core, as far as the available memory allows)")] = None,
    cluster: ClusterOption = None,
    scheduler_file: SchedulerFileOption = None,
    tls: TlsOption = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Fit a simulated twin to a drive's stored runs: a preset that reproduces them, to run where the drive can't."""
    from ssdlab.twin.fitting import fit

    if output.suffix != ".toml":
        raise SsdlabError(f"--output {shown(str(output))}: give a .toml file, the twin's preset")
    runner_for = where(cluster, scheduler_file, tls, jobs)
    held = set() if hold_out is None else {t.strip() for t in require_utf8(hold_out, "--hold-out").split(",")}
    with Store.open_existing(Path(db) if db else None, readonly=True) as store:
        run_ids = [store.resolve_run_id(require_utf8(r, "RUN")) for r in runs]
        report = fit(store, run_ids, output, base, held, jobs,
                     told=None if json_out else lambda text: err_console.print(text, highlight=False),
                     runner_for=runner_for)
    if json_out:
        print_json(report)
        return
    _print(report, output)


def _print(report: dict, output: Path) -> None:
    table = Table(title=f"twin of {shown(report['drive'])}, from {shown(report['base'])}", title_justify="left")
    heat = not math.isnan(report["rms_kelvin"])
    columns = ["parameter", "twin", "base", "search", "10 % moves a rate", *(["a temperature"] if heat else []),
               "RMS error rise at ±10 %"]
    for column in columns:
        table.add_column(column)
    for p in report["parameters"]:
        kept = "" if p["determined"] else " (kept: not determined)"
        table.add_row(p["key"], f"{p['value']:g}{kept}", f"{p['base']:g}", f"{p['low']:g}..{p['high']:g}",
                      f"{p['moves']:.1%}", *([f"{p['warms']:.1f} K"] if heat else []), f"{p['rise']:.2%}")
    console.print(table)
    if report["choices"]:
        weighed = Table(title="weighed as choices (each other value: the rise of the RMS error, the told parameters "
                              "fitted again around it)", title_justify="left")
        for column in ("choice", "twin", "base", "other values"):
            weighed.add_column(column)
        for c in report["choices"]:
            kept = "" if c["determined"] else " (kept: not told)"
            others = ", ".join(f"{w['value']:g}: {w['rates']:+.1%}" + (f" {w['kelvin']:+.1f} K" if heat else "")
                               for w in c["weighed"])
            weighed.add_row(c["key"], f"{c['value']:g}{kept}", f"{c['base']:g}", others)
        console.print(weighed)
    errors = Table(title="the twin's error per test", title_justify="left")
    for column in ("run", "test", "figures", "median |error|", "largest", "use"):
        errors.add_column(column)
    for e in report["tests"]:
        kelvins = e["unit"] == TEMPERATURE
        errors.add_row(str(e["run"]), e["test"], f"{e['figures']} {'temperatures' if kelvins else 'rates'}",
                       _error(e["median_error"], kelvins, sign=""), _error(e["largest_error"], kelvins),
                       "held out" if e["held_out"] else "fitted")
    console.print(errors)
    console.print(f"fitted rates within {report['rms_error']:.1%} RMS"
                  + (f", temperatures within {report['rms_kelvin']:.1f} K RMS" if heat else ""), highlight=False)
    console.print(f"declared by the drive: {shown('; '.join(report['declared']))}", highlight=False)
    console.print(f"the SLC cache: {shown(report['cache'])}", highlight=False)
    console.print(f"the twin: {shown(str(output))} (`ssdlab run sim:{shown(str(output))}`); "
                  f"{report['evaluations']} runs measured", highlight=False)


def _error(value: float, kelvins: bool, sign: str = "+") -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:{sign}.1f} K" if kelvins else f"{value:{sign}.1%}"

