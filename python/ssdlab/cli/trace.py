"""`ssdlab trace stats FILE`: what a block I/O trace holds (traces/stats.py), in any
format the readers know (traces/formats.py), compressed or not. `ssdlab trace list` and
`ssdlab trace make NAME -o FILE`: the built-in synthetic traces (traces/synthetic.py),
written in any format (traces/writers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ssdlab.cli.options import JsonOption, size_option
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.errors import SsdlabError
from ssdlab.traces import FORMATS, Trace, synthetic, writers
from ssdlab.traces.stats import trace_stats
from ssdlab.units import format_bytes

trace_app = typer.Typer(help="Block I/O traces: fio iologs, MSR, Alibaba, SYSTOR '17, Tencent CBS, CSV; "
                             "built-in synthetic traces.", no_args_is_help=True)

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


# -- built-in synthetic traces -------------------------------------------------------------

# Output suffixes (before any .gz, .xz or .bz2) that name a format.
SUFFIX_FORMATS = {".csv": "csv", ".iolog": "fio-v3", ".prepared": writers.PREPARED}
# The spec's fields as the command line's options call them, for messages.
OPTION_NAMES = {"read_bytes": "--read", "write_bytes": "--written", "read_share": "--read-share",
                "sequential_share": "--sequential-share", "random_sizes": "--sizes",
                "sequential_size": "--sequential-size", "run_bytes": "--run-length", "mean_qd": "--mean-qd",
                "qd1_share": "--qd1-share", "locality.zipf.theta": "--zipf", "locality.zones.zones": "--zones",
                "locality.zones": "--zones", "locality": "--zipf/--zones", "footprint": "--footprint",
                "idle_share": "--idle-share", "burst_requests": "--burst-requests", "duration_s": "--duration",
                "device_size": "--device-size"}


def _gb(n: float) -> str:
    return f"{n / 1e9:.4g} GB"


@trace_app.command("list")
def list_command(json_out: JsonOption = False) -> None:
    """The built-in synthetic traces and their figures at scale 1 (`ssdlab trace make NAME`
    writes one)."""
    stated = [spec.stated() for spec in synthetic.BUILTIN.values()]
    if json_out:
        print_json({"traces": stated, "note": synthetic.NOT_THE_REVIEWS})
        return
    table = Table("name", "read", "written", "mean QD", "at QD1", "reads", "sequential", "mean request",
                  "requests", "duration", "idle", "footprint")
    for row in stated:
        table.add_row(row["name"], _gb(row["read_bytes"]), _gb(row["write_bytes"]), f"{row['mean_qd']:g}",
                      "-" if row["qd1_share"] is None else f"{row['qd1_share']:.0%}", f"{row['read_share']:.0%}",
                      f"{row['sequential_share']:.0%} of bytes", format_bytes(row["mean_request_bytes"]),
                      f"{row['requests'] / 1e6:.3g} M", _seconds(round(row["duration_s"] * 1e6)),
                      f"{row['idle_share']:.0%}", _gb(row["footprint"]))
    console.print(table)
    for row in stated:
        console.print(f"{row['name']}: {row['about']}", highlight=False)
    console.print("Their figures beyond the reviews' totals, queue depths and QD1 share are estimates "
                  "(docs/traces.md); the mean queue depth is the one a drive much faster than the arrivals sees: "
                  "replayed, it is the drive's doing. `--scale` multiplies the totals and the duration.",
                  highlight=False)


def _format_of(out: Path, format_name: str | None) -> str:
    if format_name is not None:
        return writers.check_format(format_name)
    stem = out.with_suffix("") if writers.compression(out) else out
    if stem.suffix.lower() in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[stem.suffix.lower()]
    raise SsdlabError(f"{out}: name the format with --format, one of {writers.known()} (a name ending in "
                      f"{', '.join(SUFFIX_FORMATS)} says it)")


def _changes(options: dict[str, object]) -> dict[str, object]:
    """The spec's fields the user's variant options set."""
    changes: dict[str, object] = {}
    for field in ("read_bytes", "write_bytes", "sequential_size", "run_bytes", "footprint", "device_size"):
        if (value := size_option(OPTION_NAMES[field], options[field])) is not None:
            changes[field] = value
    for field in ("read_share", "sequential_share", "mean_qd", "qd1_share", "idle_share", "burst_requests",
                  "duration_s"):
        if options[field] is not None:
            changes[field] = options[field]
    if options["sizes"] is not None:
        changes["random_sizes"] = synthetic.parse_sizes(options["sizes"])
    if options["zipf"] is not None and options["zones"] is not None:
        raise SsdlabError("--zipf and --zones are two localities: give one")
    if options["zipf"] is not None:
        changes["locality"] = {"kind": "zipf", "theta": options["zipf"]}
    if options["zones"] is not None:
        changes["locality"] = synthetic.parse_zones(options["zones"])
    return changes


@trace_app.command("make")
def make_command(
    name: Annotated[str, typer.Argument(help="a built-in trace: destroyer-like, heavy-like or light-like "
                                             "(`ssdlab trace list`)")],
    out: Annotated[Path, typer.Option("-o", "--output", help="the file to write; .gz, .xz or .bz2 compresses it")],
    format_name: Annotated[str | None, typer.Option(
        "--format", help=f"one of {writers.known()}; by default from the file's name (.csv, .iolog, "
                         ".prepared)")] = None,
    scale: Annotated[float, typer.Option(help="multiply the totals and the duration, from 1e-06 to 10")] = 1.0,
    seed: Annotated[int, typer.Option(help="the random draw: the same seed gives the same trace")] = 0,
    device_size: Annotated[str | None, typer.Option(
        "--device-size", metavar="BYTES", help="the drive the trace addresses (default 1TB); the footprint is cut "
                                               "to it")] = None,
    device: Annotated[str | None, typer.Option(
        help="the disk or file the trace's lines name (default: the trace's name for fio and csv, 0 for the "
             "others)")] = None,
    force: Annotated[bool, typer.Option(help="replace FILE if it exists")] = False,
    coarse: Annotated[bool, typer.Option(
        help="write a format that keeps times only to the ms (fio-v2) or the second (tencent)")] = False,
    json_out: JsonOption = False,
    read: Annotated[str | None, typer.Option("--read", metavar="BYTES", help="variant: bytes read at scale 1",
                                             rich_help_panel="Variants")] = None,
    written: Annotated[str | None, typer.Option(metavar="BYTES", help="variant: bytes written at scale 1",
                                                rich_help_panel="Variants")] = None,
    read_share: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="variant: reads' share of the requests by count, 0 to 1",
        rich_help_panel="Variants")] = None,
    sequential_share: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="variant: share of the bytes in sequential runs, 0 to 1",
        rich_help_panel="Variants")] = None,
    sizes: Annotated[str | None, typer.Option(
        metavar="SIZE:PCT,...", help="variant: random request sizes and their percent by count, e.g. 4k:70,64k:30",
        rich_help_panel="Variants")] = None,
    sequential_size: Annotated[str | None, typer.Option(
        metavar="BYTES", help="variant: the size of a sequential run's requests", rich_help_panel="Variants")] = None,
    run_length: Annotated[str | None, typer.Option(
        metavar="BYTES", help="variant: a sequential run's mean length", rich_help_panel="Variants")] = None,
    mean_qd: Annotated[float | None, typer.Option(
        help="variant: mean queue depth on a drive much faster than the arrivals, 1 to 32",
        rich_help_panel="Variants")] = None,
    qd1_share: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="variant: share of requests arriving alone (QD1)", rich_help_panel="Variants")] = None,
    zipf: Annotated[float | None, typer.Option(
        metavar="THETA", help="variant: zipf locality of this exponent over 1 MiB regions",
        rich_help_panel="Variants")] = None,
    zones: Annotated[str | None, typer.Option(
        metavar="PCT/PCT,...", help="variant: zoned locality as fio writes it, e.g. 60/10,30/20,10/70",
        rich_help_panel="Variants")] = None,
    footprint: Annotated[str | None, typer.Option(
        metavar="BYTES", help="variant: the span of addresses the trace uses", rich_help_panel="Variants")] = None,
    idle_share: Annotated[float | None, typer.Option(
        min=0.0, max=0.99, help="variant: share of the time in gaps over 25 ms", rich_help_panel="Variants")] = None,
    burst_requests: Annotated[int | None, typer.Option(
        help="variant: mean requests between idle gaps", rich_help_panel="Variants")] = None,
    duration: Annotated[float | None, typer.Option(
        metavar="SECONDS", help="variant: the trace's length at scale 1", rich_help_panel="Variants")] = None,
) -> None:
    """Write a built-in synthetic trace, or a variant of it, to FILE in any format ssdlab
    reads. The built-ins are synthetic and seeded, shaped after published figures of the
    reviews' traces: they are not the reviews' traces."""
    spec = synthetic.builtin(name)
    fmt = _format_of(out, format_name)
    synthetic.check_scale(scale)
    synthetic.check_seed(seed)
    if (why := writers.coarse(fmt)) and not coarse:
        raise SsdlabError(f"{fmt} cannot hold the trace's µs timing ({why}): add --coarse to write it anyway, or "
                          f"choose another format ({writers.known()})")
    if out.is_dir():
        raise SsdlabError(f"{out} is a directory: name a file to write")
    if out.exists() and not force:
        raise SsdlabError(f"{out} exists: add --force to replace it")
    changes = _changes({"read_bytes": read, "write_bytes": written, "sequential_size": sequential_size,
                        "run_bytes": run_length, "footprint": footprint, "device_size": device_size,
                        "read_share": read_share, "sequential_share": sequential_share, "mean_qd": mean_qd,
                        "qd1_share": qd1_share, "idle_share": idle_share, "burst_requests": burst_requests,
                        "duration_s": duration, "sizes": sizes, "zipf": zipf, "zones": zones})
    spec, notes = synthetic.variant(spec, changes, OPTION_NAMES)
    generator = synthetic.Generator(spec, scale, seed)
    if spec.footprint > spec.device_size:
        notes.append(f"the footprint is cut to the device: {_gb(spec.footprint_used())} of {_gb(spec.footprint)}")
    if note := writers.response_note(fmt):
        notes.append(note)
    if why:
        notes.append(why)
    tally = synthetic.Tally()
    written_name = device if device is not None else (name if fmt.startswith("fio") or fmt == "csv" else "0")
    chunks = tally.counted(generator.chunks())
    if err_console.is_terminal:
        total = float(generator.budgets.sum())
        with Progress(TextColumn(f"generating {shown(name)}"), BarColumn(), TimeRemainingColumn(),
                      console=err_console, transient=True) as bar:
            task = bar.add_task("make", total=1.0)
            writers.write_trace(_reporting(chunks, tally, total, lambda f: bar.update(task, completed=f)), out, fmt,
                                written_name)
    else:
        writers.write_trace(chunks, out, fmt, written_name)
    summary = {"file": str(out), "format": fmt, "name": name, "variant": {_option(k, v): _plain(v)
                                                                          for k, v in changes.items()},
               "scale": scale, "seed": seed, "records": tally.records, "read_bytes": tally.read_bytes,
               "write_bytes": tally.write_bytes, "reads": tally.reads, "duration_us": tally.last_us,
               "device_size": spec.device_size, "footprint": spec.footprint_used(), "about": spec.about,
               "notes": notes}
    if json_out:
        print_json(summary)
        return
    variant = " (a variant: " + ", ".join(f"{k} {v}" for k, v in summary["variant"].items()) + ")" if changes else ""
    console.print(f"{shown(out)}: {name}{shown(variant)} at scale {scale:g}, seed {seed}, as {fmt}: "
                  f"{tally.records} records, {_gb(tally.read_bytes)} read, {_gb(tally.write_bytes)} written, "
                  f"over {_seconds(tally.last_us)}", highlight=False)
    console.print(shown(synthetic.NOT_THE_REVIEWS), highlight=False)
    for note in notes:
        console.print(f"[yellow]note:[/] {shown(note)}", highlight=False)


def _reporting(chunks: Iterator[np.ndarray], tally: synthetic.Tally, total: float,
               report: Callable[[float], object]) -> Iterator[np.ndarray]:
    for chunk in chunks:
        yield chunk
        report(min(1.0, (tally.read_bytes + tally.write_bytes) / total) if total else 1.0)


def _option(field: str, value: object) -> str:
    if field == "locality":
        return "--zones" if isinstance(value, synthetic.Zones) else "--zipf"
    return OPTION_NAMES[field]


def _plain(value: object) -> object:
    """A variant option's value as JSON holds it."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value.model_dump() if hasattr(value, "model_dump") else value
