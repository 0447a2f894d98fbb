"""`ssdlab trace stats FILE`: what a block I/O trace holds (traces/stats.py), in any
format the readers know (traces/formats.py), compressed or not."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.traces import FORMATS, Trace
from ssdlab.traces.stats import trace_stats
from ssdlab.units import format_bytes

trace_app = typer.Typer(help="Block I/O traces: fio iologs, MSR, Alibaba, SYSTOR '17, Tencent CBS, CSV.",
                        no_args_is_help=True)

FormatOption = Annotated[str | None, typer.Option(
    "--format", help=f"the trace's format, one of {', '.join(f.name for f in FORMATS)}; "
                     "detected from its first line by default")]
StrictOption = Annotated[bool, typer.Option(
    "--strict", help="refuse a trace whose times go backwards, instead of noting it")]


@trace_app.command("stats")
def stats_command(file: Annotated[Path, typer.Argument(help="a trace file, plain, gzip, xz or bzip2")],
                  format_name: FormatOption = None, strict: StrictOption = False,
                  json_out: JsonOption = False) -> None:
    """Records, bytes read and written, request sizes, duration, idle share, queue depth and
    devices of a trace, read in one pass."""
    trace = Trace(file, format_name, strict)
    if err_console.is_terminal:
        with Progress(TextColumn("reading"), BarColumn(), TimeRemainingColumn(),
                      console=err_console, transient=True) as bar:
            task = bar.add_task("read", total=1.0)
            stats = trace_stats(trace, lambda fraction: bar.update(task, completed=fraction))
    else:
        stats = trace_stats(trace)
    if json_out:
        print_json(stats)
        return
    _print(stats)


def _print(stats: dict[str, Any]) -> None:
    console.print(f"{shown(stats['file'])}: {stats['format_title']}, {stats['records']} records over "
                  f"{_seconds(stats['duration_us'])}", highlight=False)
    ops = Table("operation", "count", "bytes")
    for op, done in stats["ops"].items():
        if done["count"]:
            ops.add_row(op, str(done["count"]), format_bytes(done["bytes"]))
    console.print(ops)
    sizes = Table("request size", "reads", "writes", "trims")
    for row in stats["sizes"]:
        sizes.add_row(f"{format_bytes(row['from_bytes'])} to {format_bytes(row['to_bytes'])}",
                      str(row["read"]), str(row["write"]), str(row["trim"]))
    console.print(sizes)
    idle = stats["idle"]
    cap = f"{idle['gap_over_us'] / 1000:g} ms"
    console.print(f"idle: {idle['share']:.1%} of the time, in {idle['gaps']} gap(s) over {cap}; "
                  f"{_seconds(idle['capped_duration_us'])} with each capped at {cap}", highlight=False)
    depth = stats["queue_depth"]
    console.print("queue depth: " + (
        f"mean {_number(depth['mean'])}, {_number(depth['mean_while_busy'])} while busy "
        f"(busy {_number(depth['busy_share'], '.1%')} of the time)" if depth["known"]
        else f"unknown: {depth['why']}"), highlight=False)
    devices = sorted(stats["devices"].items(), key=lambda item: -item[1])
    more = f" and {stats['other_devices']} records on further devices" if stats["other_devices"] else ""
    if devices:
        console.print(f"devices: {len(devices)}: " + ", ".join(f"{shown(name)} ({count})" for name, count
                                                              in devices[:10])
                      + (", ..." if len(devices) > 10 else "") + more, highlight=False)
    for note in ([stats["coarse_timing"]] if stats["coarse_timing"] else []) + stats["notes"]:
        console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)


def _seconds(us: int) -> str:
    return f"{us / 1e6:.6g} s"


def _number(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)
