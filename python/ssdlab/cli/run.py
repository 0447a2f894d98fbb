"""`ssdlab run TARGET...`: plan a suite on a target, or run it and store every result;
several simulated drives run side by side (side_by_side.py), one run each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.backends.sim_host import Cooling
from ssdlab.catalogue import Scale
from ssdlab.catalogue.retention import duration_words
from ssdlab.cli.options import DbOption, JsonOption, ScaleOption, SuiteOption, TestsOption, parse_test_ids, size_option
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.cli.progress import AlarmReporter, ProgressReporter, progress_rows
from ssdlab.errors import SsdlabError
from ssdlab.model import Age, RunStatus
from ssdlab.session import RunRequest, dry_run_document, start_run
from ssdlab.side_by_side import Outcome, Plan, plan, run_side_by_side
from ssdlab.text import require_utf8
from ssdlab.units import format_duration, shown_date


def _age(text: str | None) -> Age | None:
    if text is None:
        return None
    try:
        return Age.parse(text)
    except ValueError as exc:
        raise SsdlabError(f"--age: {exc}") from None


def run_command(
    targets: Annotated[list[str], typer.Argument(
        metavar="TARGET...",
        help="block device (/dev/nvme0n1), file path, or sim:PRESET; several sim:PRESET targets run side by "
             "side, one run each")],
    suite: SuiteOption = "client",
    tests: TestsOption = None,
    scale: ScaleOption = 1.0,
    size: Annotated[str | None, typer.Option(
        help="size of a file target, e.g. 64GiB (default: what the suite needs)")] = None,
    name: Annotated[str | None, typer.Option(help="a label for the run")] = None,
    db: DbOption = None,
    destroy_data: Annotated[str | None, typer.Option(
        "--destroy-data", metavar="SERIAL", help="consent to erase the device with this serial")] = None,
    force: Annotated[bool, typer.Option(help="allow overwriting an existing file ssdlab did not create, or the "
                                             "data a waiting retention run is to read back")] = False,
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
        help="sim:PRESET only: how the drive is cooled (the simulator's default: a heatsink)")] = None,
    ambient_c: Annotated[float | None, typer.Option(
        "--ambient-c", metavar="C", help="sim:PRESET only: the air around the drive, °C (default 35)")] = None,
    age: Annotated[str | None, typer.Option(
        metavar="AGE", help="sim:PRESET only: the drive worn before the first test, as its life before the run "
                            "would have left it: 2000pe (P/E cycles), 80% (of its rated cycles) or 400TBW")] = None,
    jobs: Annotated[int | None, typer.Option(
        help="several sim: targets: how many drives run at once (default: one per usable core, as far as the "
             "available memory allows)")] = None,
    repeat: Annotated[int, typer.Option(
        metavar="N", help="run each measured step N times (1-10): scores are the mean over the runs, with "
                          "their spread; `compare` marks differences inside it")] = 1,
    retention_days: Annotated[float | None, typer.Option(
        "--retention-days", metavar="DAYS",
        help="the retention test: how long the drive is left powered off (default 365, JEDEC's client "
             "requirement); a real drive's run waits that long for `ssdlab resume`")] = None,
    retention_c: Annotated[float | None, typer.Option(
        "--retention-c", metavar="C",
        help="the retention test: where the drive is kept while off, °C (default 30): a shelf, or an oven; "
             "gives the equivalent time at 30 °C")] = None,
    endurance_volume: Annotated[str | None, typer.Option(
        "--endurance-volume", metavar="TB|%",
        help="the endurance test: what to write, TB (600TB) or a share of the rated TBW (100%); default the "
             "preset's rated TBW, which a real drive must state (its datasheet's)")] = None,
    endurance_workload: Annotated[str | None, typer.Option(
        "--endurance-workload", metavar="seq|random|jesd219",
        help="the endurance test: 128 KiB sequential passes, 4 KiB random writes, or the JESD219 enterprise "
             "mix (default)")] = None,
    endurance_probes: Annotated[int | None, typer.Option(
        "--endurance-probes", metavar="N",
        help="the endurance test: write the volume in N intervals, probing after each (default 10)")] = None,
    trace: Annotated[list[str] | None, typer.Option(
        "--trace", metavar="FILE",
        help="the trace test: a trace to replay, in any format `ssdlab trace stats` reads; once per trace")] = None,
    trace_format: Annotated[str | None, typer.Option(
        "--trace-format", metavar="FORMAT",
        help="the trace test: the traces' format, when detection cannot tell")] = None,
    trace_device: Annotated[str | None, typer.Option(
        "--trace-device", metavar="DEVICE", help="the trace test: replay only this disk of a trace of several")] = None,
    trace_fit: Annotated[str | None, typer.Option(
        "--trace-fit", metavar="wrap|scale",
        help="the trace test: offsets past the target wrap into it (default) or all scale by target / trace")] = None,
    trace_block: Annotated[int | None, typer.Option(
        "--trace-block", metavar="BYTES",
        help="the trace test: the target's logical block; requests grow to whole blocks (default 4096)")] = None,
    idle_cap_ms: Annotated[float | None, typer.Option(
        "--idle-cap-ms", metavar="MS",
        help="the trace test: longest gap between issue times (default 25, the reviews'; 0: no cap)")] = None,
    trace_speed: Annotated[float | None, typer.Option(
        "--trace-speed", metavar="X", help="the trace test: replay X times as fast as recorded (default 1)")] = None,
    no_timing: Annotated[bool, typer.Option(
        "--no-timing", help="the trace test: issue the records as fast as the drive takes them, --trace-qd at "
                            "a time, instead of at their times")] = False,
    trace_qd: Annotated[int | None, typer.Option(
        "--trace-qd", metavar="N",
        help="the trace test: most commands outstanding (default 1023 in time, 32 with --no-timing)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the plan; touch nothing")] = False,
    json_out: JsonOption = False,
) -> None:
    """Run a suite on a target and store every result (resumable with `ssdlab resume`)."""
    shared = RunRequest(
        target="", suite=suite, tests=parse_test_ids(tests),
        scale=Scale(scale), size=size_option("--size", size),
        name=None if name is None else require_utf8(name, "--name"),
        destroy_data=destroy_data, force=force, db=Path(db) if db else None,
        power_meter=None if power_meter is None else require_utf8(power_meter, "--power-meter"),
        apst_latency_us=apst_latency_us, no_low_power_states=no_low_power_states, cooling=cooling,
        ambient_c=ambient_c, age=_age(age), repeat=repeat, retention_days=retention_days, retention_c=retention_c,
        endurance_volume=endurance_volume, endurance_workload=endurance_workload, endurance_probes=endurance_probes,
        traces=tuple(trace or ()), trace_format=trace_format, trace_device=trace_device, trace_fit=trace_fit,
        trace_block=trace_block, idle_cap_ms=idle_cap_ms, trace_speed=trace_speed, no_timing=no_timing,
        trace_qd=trace_qd)
    runs = plan([require_utf8(t, "the target") for t in targets], shared, jobs)
    if dry_run:
        _dry_run(runs.requests, json_out)
    elif len(runs.requests) > 1:
        _run_side_by_side(runs, json_out)
    else:
        _run_one(runs.requests[0], json_out)


def _run_one(request: RunRequest, json_out: bool) -> None:
    run_id = start_run(request, show_progress=not json_out)
    if json_out:
        print_json(_run_documents(request.db, [run_id])[0])
    else:
        console.print(outcome(request.db, run_id), highlight=False)


def outcome(db: Path | None, run_id: int) -> str:
    """What became of a run that started or resumed: done, or waiting for a retention read-back."""
    from ssdlab.store import Store
    with Store.open_existing(db, readonly=True) as store:
        run = store.run(run_id)
        wait = store.pending_wait(run_id) if run.status is RunStatus.WAITING else None
        if wait is None:
            return f"run {run_id} done: `ssdlab show {run_id}` for the results"
        test = next(r.test for r in store.tests(run_id) if r.seq == wait.seq)
    off = test.steps[wait.idx].power_off
    kept = f" at {off.temperature_c:g} °C" if off is not None else ""
    return (f"run {run_id} waits: the retention pattern is written and read back fresh. Keep the drive powered off"
            f"{kept}, as stated, and come back after {shown_date(wait.until)}: `ssdlab resume {run_id}`")


def _run_side_by_side(runs: Plan, json_out: bool) -> None:
    """Every run to its end, each named by its target; then what became of each, and the exit
    status of the first that did not complete."""
    if runs.note:
        err_console.print(f"[yellow]note:[/] {shown(runs.note)}", highlight=False)
    if json_out:
        outcomes = run_side_by_side(runs.requests, runs.jobs, lambda r, run_id, tests: AlarmReporter(shown(r.target)))
    else:
        with progress_rows(side_by_side=True) as rows:
            outcomes = run_side_by_side(
                runs.requests, runs.jobs,
                lambda r, run_id, tests: ProgressReporter(tests, r.scale, rows, f"run {run_id} {shown(r.target)}"))
    done = [o for o in outcomes if o.error is None]
    if json_out:
        print_json(_run_documents(runs.requests[0].db, [o.run_id for o in done]))
    else:
        for o in done:
            console.print(f"run {o.run_id} ({shown(o.target)}) done: `ssdlab show {o.run_id}` for the results",
                          highlight=False)
    if failed := print_failures(outcomes):
        raise typer.Exit(failed[0].exit_code)


def print_failures(outcomes: list[Outcome]) -> list[Outcome]:
    """Each run that did not complete, named by its target, with why; returns them."""
    failed = [o for o in outcomes if o.error is not None]
    for o in failed:
        run = "" if o.run_id is None else f"run {o.run_id}: "
        err_console.print(f"[bold red]error:[/] {shown(o.target)}: {run}{shown(o.error, multiline=True)}",
                          highlight=False)
    return failed


def _run_documents(db: Path | None, run_ids: list[int]) -> list[dict]:
    """The stored runs as `ssdlab show --json` gives them."""
    from ssdlab.documents import run_document
    from ssdlab.store import Store
    with Store.open_existing(db, readonly=True) as store:
        return [run_document(store, run_id) for run_id in run_ids]


def _dry_run(requests: list[RunRequest], json_out: bool) -> None:
    docs = [dry_run_document(r) for r in requests]
    if json_out:
        print_json(docs[0] if len(docs) == 1 else docs)
        return
    for request, doc in zip(requests, docs):
        if len(docs) > 1:
            console.print(f"[bold underline]{shown(request.target)}[/]", highlight=False)
        _print_plan(doc)


def _print_plan(doc: dict) -> None:
    if "age" in doc:
        console.print(f"the simulated drive is worn to {doc['age']} before the first test (--age)", highlight=False)
    for test in doc["tests"]:  # the retention test's wait
        offs = [] if "skipped" in test else [step["power_off"] for step in test["steps"] if step.get("power_off")]
        for off in offs:
            kept = f"{duration_words(off['seconds'])} at {off['temperature_c']:g} °C"
            console.print(f"{test['id']}: the run stops after writing and waits {kept} (the drive kept off as you "
                          "state), then `ssdlab resume` reads it back; the wait is not in the estimate"
                          if doc["clock"] == "wall" else f"{test['id']}: the drive is powered off {kept}",
                          highlight=False)
    for test in doc["tests"]:
        if "skipped" in test:
            console.print(f"[bold]{test['id']}[/]: skipped: {shown(test['skipped'])}", highlight=False)
        else:
            console.print(f"[bold]{test['id']}[/]: {len(test['steps'])} steps"
                          + (" at most (each loop stops at steady state)" if test.get("until_steady") else ""))
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
