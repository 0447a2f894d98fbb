"""`ssdlab drives`: the simulator's presets; `ssdlab drives show NAME` prints one."""

import sys
from typing import Annotated

import typer
from rich.table import Table

from ssdlab.backends.sim import open_drive
from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, print_json, shown
from ssdlab.presets import builtin_names, load_preset
from ssdlab.units import format_bytes

drives_app = typer.Typer(help="Simulated drives (presets) for `ssdlab run sim:NAME`.",
                         invoke_without_command=True)


@drives_app.callback()
def drives_command(ctx: typer.Context, json_out: JsonOption = False) -> None:
    """List the built-in simulated drives."""
    if ctx.invoked_subcommand is not None:
        return
    rows = []
    for name in builtin_names():
        preset = load_preset(name)
        rows.append({"name": name, "model": preset.title,
                     "capacity_bytes": open_drive(preset).user_bytes, "path": str(preset.path)})
    if json_out:
        print_json(rows)
        return
    table = Table("name", "drive", "capacity")
    for row in rows:
        table.add_row(shown(row["name"]), shown(row["model"]), format_bytes(row["capacity_bytes"]))
    console.print(table)


@drives_app.command("show")
def show_drive(
    name: Annotated[str, typer.Argument(help="a preset name from `ssdlab drives`, or a .toml path")],
) -> None:
    """Print a preset: every parameter with the source it comes from."""
    preset = load_preset(name)
    open_drive(preset)  # refuses an invalid preset with the simulator's message
    sys.stdout.write(preset.text)
