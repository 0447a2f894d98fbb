"""`ssdlab sweep BASE --set KEY=V1,V2,...`: a suite over variants of a simulated drive, each
variant an ordinary run, side by side on this machine's cores or on a Dask cluster's workers
(`--cluster`; distributed/); `ssdlab sweep --resume N` runs what an interrupted sweep has left."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ssdlab.catalogue import Scale
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
    test_settings,
)
from ssdlab.cli.output import console, err_console, print_json, shown
from ssdlab.cli.progress import AlarmReporter, SweepProgress
from ssdlab.cli.run import print_failures
from ssdlab.cli.simulations import ClusterOption
from ssdlab.cli.simulations import runner_for as where
from ssdlab.cli.sweeps import print_table
from ssdlab.distributed.results import sweep_table
from ssdlab.distributed.specs import SweepSpec
from ssdlab.distributed.sweeps import SweepPlan, new_sweep, resume_sweep, run_sweep
from ssdlab.errors import SsdlabError
from ssdlab.session import RunRequest
from ssdlab.store import Store
from ssdlab.text import require_utf8


def sweep_command(
    base: Annotated[str | None, typer.Argument(
        metavar="BASE", help="the simulated drive to vary: a preset name (`ssdlab drives`) or a preset .toml "
                             "file")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=V1,V2,...",
        help="a preset key and its values, e.g. cache.max_cell_share=0.3,0.5; repeated, every combination "
             "(a grid)")] = None,
    variants: Annotated[Path | None, typer.Option(
        "--variants", metavar="FILE",
        help="a list of variants: a .toml file of \\[\\[variants]] tables of overrides, or a .csv file (a header "
             "of keys, a row per variant)")] = None,
    sample: Annotated[list[str] | None, typer.Option(
        "--sample", metavar="KEY=LOW..HIGH",
        help="a numeric key drawn uniformly from a range (integers for an integer key); repeated, with "
             "--samples")] = None,
    samples: Annotated[int | None, typer.Option(metavar="N", help="with --sample: how many variants to draw")] = None,
    seed: Annotated[int | None, typer.Option(
        metavar="S", help="with --sample: the random generator's seed (default 1): the same seed, the same "
                          "variants")] = None,
    suite: SuiteOption = "client",
    tests: TestsOption = None,
    scale: ScaleOption = 1.0,
    repeat: Annotated[int, typer.Option(
        metavar="N", help="run each measured step N times (1-10): scores are the mean over the runs")] = 1,
    jobs: Annotated[int | None, typer.Option(
        help="how many variants run at once (default: one per usable core, as far as the available memory "
             "allows)")] = None,
    resume: Annotated[str | None, typer.Option(
        "--resume", metavar="SWEEP_ID",
        help="run what sweep SWEEP_ID (from `ssdlab sweeps`, or latest) has left: its variants without a run, "
             "and its runs not finished; with its own drive, suite and options")] = None,
    cluster: ClusterOption = None,
    scheduler_file: SchedulerFileOption = None,
    tls: TlsOption = None,
    apst_latency_us: ApstLatencyOption = None,
    no_low_power_states: NoLowPowerStatesOption = False,
    cooling: CoolingOption = None,
    ambient_c: AmbientOption = None,
    age: AgeOption = None,
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
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Run a suite on variants of a simulated drive, each variant a run, and show their primary scores."""
    db_path = Path(db) if db else None
    runner_for = where(cluster, scheduler_file, tls, jobs)
    settings = test_settings(retention_days, retention_c, endurance_volume, endurance_workload, endurance_probes,
                             trace, trace_format, trace_device, trace_fit, trace_block, idle_cap_ms, trace_speed,
                             no_timing, trace_qd)
    if resume is not None:
        given = [name for name, value in (("BASE", base), ("--set", set_), ("--variants", variants),
                                          ("--sample", sample), ("--samples", samples), ("--seed", seed),
                                          ("--suite", suite != "client"), ("--tests", tests),
                                          ("--scale", scale != 1.0), ("--repeat", repeat != 1),
                                          ("--apst-latency-us", apst_latency_us is not None),
                                          ("--no-low-power-states", no_low_power_states), ("--cooling", cooling),
                                          ("--ambient-c", ambient_c is not None), ("--age", age),
                                          ("the retention, endurance and trace options",
                                           any(v not in (None, (), False) for v in settings.values()))) if value]
        if given:
            raise SsdlabError(f"--resume runs a stored sweep with its own drive, variants, suite, scale, host and "
                              f"test settings: leave out {', '.join(given)}")
        plan = resume_sweep(require_utf8(resume, "--resume"), db_path, jobs, runner_for)
    else:
        if base is None:
            raise SsdlabError("give the drive to vary (a preset from `ssdlab drives`, or a preset file), or "
                              "--resume SWEEP_ID")
        spec = SweepSpec(sets=tuple(require_utf8(s, "--set") for s in set_ or ()), variants_file=variants,
                         ranges=tuple(require_utf8(s, "--sample") for s in sample or ()), samples=samples,
                         seed=seed)
        shared = RunRequest(target="", suite=suite, tests=parse_test_ids(tests), scale=Scale(scale), repeat=repeat,
                            db=db_path, apst_latency_us=apst_latency_us, no_low_power_states=no_low_power_states,
                            cooling=cooling, ambient_c=ambient_c, age=parse_age(age), **settings)
        plan = new_sweep(require_utf8(base, "the base preset"), spec, shared, jobs, runner_for)
    _run(plan, json_out)


def _run(plan: SweepPlan, json_out: bool) -> None:
    """Every job to its end; then the sweep's table, what did not complete, and the exit status
    of the first that did not."""
    if plan.runner.note:
        err_console.print(f"[yellow]note:[/] {shown(plan.runner.note)}", highlight=False)
    done_before = plan.variants - len(plan.jobs)
    if json_out:
        outcomes = run_sweep(plan, lambda request, run_id, tests: AlarmReporter(shown(request.target)))
    else:
        err_console.print(f"sweep {plan.sweep_id}: {len(plan.jobs)} of {plan.variants} variants to run",
                          highlight=False)
        with SweepProgress(f"sweep {plan.sweep_id}", plan.estimated_s, plan.variants, done_before) as progress:
            outcomes = run_sweep(plan, progress.reporter_for)
    with Store.open_existing(plan.db, readonly=True) as store:
        table = sweep_table(store, plan.sweep_id)
    if json_out:
        print_json(table.document())
    else:
        print_table(table)
    if failed := print_failures(outcomes):
        err_console.print(f"sweep {plan.sweep_id}: {len(failed)} of {plan.variants} variants did not complete: "
                          f"`ssdlab sweep --resume {plan.sweep_id}` runs what is missing", highlight=False)
        raise typer.Exit(failed[0].exit_code)
    if not json_out:
        console.print(f"sweep {plan.sweep_id} done: `ssdlab sweeps show {plan.sweep_id}` for its table, "
                      f"`--csv FILE` to write it", highlight=False)
