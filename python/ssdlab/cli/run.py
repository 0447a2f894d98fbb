"""`ssdlab run TARGET`: plan a suite on a target, or run it and store every result."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.backends.sim_host import Cooling
from ssdlab.catalogue import Scale
from ssdlab.cli.options import DbOption, JsonOption
from ssdlab.cli.output import console, print_json, shown
from ssdlab.errors import SsdlabError
from ssdlab.session import RunRequest, dry_run_document, start_run
from ssdlab.text import require_utf8
from ssdlab.units import format_duration, parse_size


def _size(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise SsdlabError(f"--size: {exc}") from None


def _test_ids(text: str | None) -> tuple[str, ...] | None:
    """`--tests a, b`: the ids in order (the session refuses an empty or repeated list)."""
    if text is None:
        return None
    return tuple(t.strip() for t in text.split(",") if t.strip())


def run_command(
    target: Annotated[str, typer.Argument(help="block device (/dev/nvme0n1), file path, or sim:PRESET")],
    suite: Annotated[str, typer.Option(help="built-in suite name (`ssdlab suites`) or a suite .toml file")] = "client",
    tests: Annotated[str | None, typer.Option(help="only these test ids, comma-separated, in this order")] = None,
    scale: Annotated[float, typer.Option(help="0 < F <= 1: multiply spans, byte and time limits and idle times")] = 1.0,
    size: Annotated[str | None, typer.Option(
        help="size of a file target, e.g. 64GiB (default: what the suite needs)")] = None,
    name: Annotated[str | None, typer.Option(help="a label for the run")] = None,
    db: DbOption = None,
    destroy_data: Annotated[str | None, typer.Option(
        "--destroy-data", metavar="SERIAL", help="consent to erase the device with this serial")] = None,
    force: Annotated[bool, typer.Option(help="allow overwriting an existing file ssdlab did not create")] = False,
    power_meter: Annotated[str | None, typer.Option(
        "--power-meter", metavar="CMD|hwmon:PATH",
        help="measure energy per step: a command printing `t_seconds,watts` lines, or an ina2xx-style "
             "hwmon power chip")] = None,
    apst_latency_us: Annotated[int | None, typer.Option(
        "--apst-latency-us", metavar="US",
        help="sim:PRESET only: the host's APST latency limit in µs (Linux's default 100000; 0: APST off)")] = None,
    no_low_power_states: Annotated[bool, typer.Option(
        "--no-low-power-states",
        help="sim:PRESET only: a platform on which the drive cannot reach its non-operational power states "
             "(no PCIe L1.2)")] = False,
    cooling: Annotated[Cooling | None, typer.Option(
        help="sim:PRESET only: how the drive is cooled (the simulator's default: bare)")] = None,
    ambient_c: Annotated[float | None, typer.Option(
        "--ambient-c", metavar="C", help="sim:PRESET only: the air around the drive, °C")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the plan; touch nothing")] = False,
    json_out: JsonOption = False,
) -> None:
    """Run a suite on a target and store every result (resumable with `ssdlab resume`)."""
    request = RunRequest(
        target=require_utf8(target, "the target"), suite=suite, tests=_test_ids(tests),
        scale=Scale(scale), size=_size(size),
        name=None if name is None else require_utf8(name, "--name"),
        destroy_data=destroy_data, force=force, db=Path(db) if db else None,
        power_meter=None if power_meter is None else require_utf8(power_meter, "--power-meter"),
        apst_latency_us=apst_latency_us, no_low_power_states=no_low_power_states, cooling=cooling,
        ambient_c=ambient_c)
    if dry_run:
        doc = dry_run_document(request)
        if json_out:
            print_json(doc)
        else:
            _print_plan(doc)
        return
    run_id = start_run(request, show_progress=not json_out)
    if json_out:
        from ssdlab.documents import run_document
        from ssdlab.store import Store
        with Store.open_existing(request.db, readonly=True) as store:
            print_json(run_document(store, run_id))
    else:
        console.print(f"run {run_id} done: `ssdlab show {run_id}` for the results")


def _print_plan(doc: dict) -> None:
    for test in doc["tests"]:
        console.print(f"[bold]{test['id']}[/]: {len(test['steps'])} steps")
    duration = format_duration(doc["estimated_seconds"])
    if doc["clock"] == "drive":
        console.print(f"estimated drive time: {duration} (the simulated drive's virtual time, "
                      "not wall time)")
    else:
        console.print(f"estimated time: {duration}")
    if doc["refusals"]:
        console.print("the real run will refuse this device:")
        for reason in doc["refusals"]:
            console.print(f"  - {shown(reason, multiline=True)}", highlight=False)
