"""`ssdlab run TARGET...`: plan a suite on a target, or run it and store every result;
several simulated drives run side by side (side_by_side.py), one run each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ssdlab.catalogue import Scale
from ssdlab.catalogue.retention import duration_words
from ssdlab.cli.options import (
    AgeOption,
    AmbientOption,
    ApstLatencyOption,
    CoolingOption,
    DbOption,
    EnduranceProbesOption,
    EnduranceVolumeOption,
    EnduranceWorkloadOption,
    IdleCapOption,
    JsonOption,
    MixedVersionsOption,
    NoLowPowerStatesOption,
    NoTimingOption,
    RetentionCOption,
    RetentionDaysOption,
    ScaleOption,
    SchedulerFileOption,
    SuiteOption,
    TestsOption,
    TlsOption,
    TraceBlockOption,
    TraceDeviceOption,
    TraceFitOption,
    TraceFormatOption,
    TraceOption,
    TraceQdOption,
    TraceSpeedOption,
    parse_age,
    parse_test_ids,
    size_option,
    test_settings,
)
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.cli.progress import AlarmReporter, ProgressReporter, progress_rows
from ssdlab.errors import SsdlabError
from ssdlab.model import RunStatus
from ssdlab.session import RunRequest, dry_run_document, start_run
from ssdlab.side_by_side import Outcome, Plan, ReporterFor, plan, run_side_by_side
from ssdlab.text import require_utf8
from ssdlab.units import format_duration, shown_date


def run_command(
    targets: Annotated[list[str] | None, typer.Argument(
        metavar="TARGET...",
        help="block device (/dev/nvme0n1), file path, or sim:PRESET; several sim:PRESET targets run side by "
             "side, one run each; HOST:/dev/NAME, a drive of a fleet (--cluster)")] = None,
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
    apst_latency_us: ApstLatencyOption = None,
    no_low_power_states: NoLowPowerStatesOption = False,
    cooling: CoolingOption = None,
    ambient_c: AmbientOption = None,
    age: AgeOption = None,
    jobs: Annotated[int | None, typer.Option(
        help="several sim: targets: how many drives run at once (default: one per usable core, as far as the "
             "available memory allows)")] = None,
    repeat: Annotated[int, typer.Option(
        metavar="N", help="run each measured step N times (1-10): scores are the mean over the runs, with "
                          "their spread; `compare` marks differences inside it")] = 1,
    retention_days: RetentionDaysOption = None,
    retention_c: RetentionCOption = None,
    endurance_volume: EnduranceVolumeOption = None,
    endurance_workload: EnduranceWorkloadOption = None,
    endurance_probes: EnduranceProbesOption = None,
    trace: TraceOption = None,
    trace_format: TraceFormatOption = None,
    trace_device: TraceDeviceOption = None,
    trace_fit: TraceFitOption = None,
    trace_block: TraceBlockOption = None,
    idle_cap_ms: IdleCapOption = None,
    trace_speed: TraceSpeedOption = None,
    no_timing: NoTimingOption = False,
    trace_qd: TraceQdOption = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="ADDRESS",
        help="targets HOST:/dev/NAME: run on the drives of a fleet, each on the `ssdlab worker` of its host, "
             "through the Dask scheduler at ADDRESS (docs/sweeps.md)")] = None,
    fleet: Annotated[Path | None, typer.Option(
        "--fleet", metavar="FILE",
        help="with --cluster: the drives to run on, instead of TARGETs, each with its host and its consent "
             "(docs/sweeps.md)")] = None,
    scheduler_file: SchedulerFileOption = None,
    tls: TlsOption = None,
    allow_mixed_versions: MixedVersionsOption = False,
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
        ambient_c=ambient_c, age=parse_age(age), repeat=repeat,
        **test_settings(retention_days, retention_c, endurance_volume, endurance_workload, endurance_probes, trace,
                        trace_format, trace_device, trace_fit, trace_block, idle_cap_ms, trace_speed, no_timing,
                        trace_qd))
    named = [require_utf8(t, "the target") for t in targets or []]
    if cluster is not None or scheduler_file is not None:
        requests = _fleet_requests(named, fleet, shared)
        _run_on_fleet(requests, cluster, scheduler_file, tls, allow_mixed_versions, jobs, dry_run, json_out)
        return
    if fleet is not None:
        raise SsdlabError("--fleet names drives on other hosts: give the fleet's --cluster ADDRESS too")
    if not named:
        raise SsdlabError("give a TARGET: a block device, a file, or sim:PRESET (`ssdlab drives` lists presets)")
    refuse_fleet_targets(named)
    runs = plan(named, shared, jobs)
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


def refuse_fleet_targets(targets: list[str]) -> None:
    """A drive of a fleet (HOST:/dev/NAME) is reached through its cluster only."""
    from ssdlab.targets.resolve import fleet_target
    if fleet := [t for t in targets if fleet_target(t)]:
        raise SsdlabError(f"{', '.join(fleet)}: a drive on another host runs through the fleet's cluster: "
                          "give --cluster ADDRESS (its host runs `ssdlab worker --drive`)")


def _fleet_requests(targets: list[str], fleet: Path | None, shared: RunRequest) -> list[RunRequest]:
    """A request per drive: the TARGETs, each HOST:/dev/NAME, or the drives of the fleet file
    (each with its own consent, else --destroy-data's)."""
    from dataclasses import replace

    from ssdlab.distributed.fleet_file import read_fleet
    from ssdlab.targets.resolve import fleet_target
    if fleet is not None:
        if targets:
            raise SsdlabError("give the drives as TARGETs or in --fleet FILE, not both")
        return [replace(shared, target=d.target, destroy_data=d.destroy_data or shared.destroy_data)
                for d in read_fleet(fleet)]
    if not targets:
        raise SsdlabError("give the fleet's drives as TARGETs, HOST:/dev/NAME, or in --fleet FILE")
    if not_fleet := [t for t in targets if not fleet_target(t)]:
        raise SsdlabError(f"{', '.join(not_fleet)}: with --cluster, targets are drives of the fleet, "
                          "HOST:/dev/NAME (simulated drives on a cluster: `ssdlab sweep --cluster`)")
    return [replace(shared, target=t) for t in targets]


def _run_on_fleet(requests: list[RunRequest], cluster: str | None, scheduler_file: Path | None,
                  tls: Path | None, allow_mixed_versions: bool, jobs: int | None, dry_run: bool,
                  json_out: bool) -> None:
    """Each drive run on the worker of its host, stored here."""
    from ssdlab.distributed.fleet import FleetRunner
    from ssdlab.distributed.runner import RunJob
    if jobs is not None:
        raise SsdlabError("--jobs is for simulated drives on this machine; a fleet's drives each run on their host")
    runner = FleetRunner.checked(cluster, scheduler_file, tls, allow_mixed_versions=allow_mixed_versions)
    runner.connect()
    if dry_run:
        _print_plans(requests, runner.plans(requests), json_out)
        return
    follow_outcomes(lambda reporter_for: runner.run([RunJob(r) for r in requests], reporter_for), requests[0].db,
                    json_out)


def _run_side_by_side(runs: Plan, json_out: bool) -> None:
    """Every run to its end, each named by its target; then what became of each, and the exit
    status of the first that did not complete."""
    if runs.note:
        err_console.print(f"[yellow]note:[/] {shown(runs.note)}", highlight=False)
    follow_outcomes(lambda reporter_for: run_side_by_side(runs.requests, runs.jobs, reporter_for),
                    runs.requests[0].db, json_out)


def follow_outcomes(run: Callable[[ReporterFor], list[Outcome]], db: Path | None, json_out: bool) -> None:
    """Runs followed as they go (`run` given the reporter of each), then what became of each,
    and the exit status of the first that did not complete."""
    if json_out:
        outcomes = run(lambda r, run_id, tests: AlarmReporter(shown(r.target)))
    else:
        with progress_rows(side_by_side=True) as rows:
            outcomes = run(
                lambda r, run_id, tests: ProgressReporter(tests, r.scale, rows, f"run {run_id} {shown(r.target)}"))
    done = [o for o in outcomes if o.error is None]
    if json_out:
        print_json(_run_documents(db, [o.run_id for o in done]))
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
    _print_plans(requests, [dry_run_document(r) for r in requests], json_out)


def _print_plans(requests: list[RunRequest], docs: list[dict], json_out: bool) -> None:
    if json_out:
        print_json(docs[0] if len(docs) == 1 else docs)
        return
    for request, doc in zip(requests, docs):
        if len(docs) > 1:
            console.print(f"[bold underline]{shown(request.target)}[/]", highlight=False)
        _print_plan(doc)


def _print_plan(doc: dict) -> None:
    if "host" in doc:
        console.print(f"planned on {shown(doc['host'])}, the drive's host, by its `ssdlab worker`", highlight=False)
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
