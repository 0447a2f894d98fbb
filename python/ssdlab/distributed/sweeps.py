"""A sweep: one suite over variants of a simulated drive, each variant an ordinary run of its
base preset with some keys overridden (overrides.py), stored with its whole preset text.

Every variant's drive is built before anything is stored or run, so a variant the simulator
refuses (a bound, a geometry that cannot hold the capacity) stops the sweep with the
simulator's message and the variant's name. Then the sweep and all its variants are stored
together, and each variant's run is recorded as its own as soon as the run exists.

`ssdlab sweep --resume N` runs what is missing: a variant without a run gets a new one, a
run that did not finish is continued (session.resume_run), a finished one is left as it is.
Variants not yet run are made from the base preset's text stored with the sweep, and run
with the suite it stored, so a resumed sweep runs the very drives and tests it began with.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ssdlab.backends.sim import open_drive
from ssdlab.backends.sim_host import Cooling
from ssdlab.catalogue import Scale, estimated_seconds
from ssdlab.distributed.local import LocalRunner
from ssdlab.distributed.overrides import PresetKeys, Value, apply_overrides, base_name, variant_name
from ssdlab.distributed.runner import Outcome, ReporterFor, RunJob, Runner, RunnerFor
from ssdlab.distributed.specs import SweepSpec
from ssdlab.errors import SsdlabError
from ssdlab.execution import Reporter
from ssdlab.model import Age, RunStatus, Test, TestStatus
from ssdlab.presets import Preset, load_preset
from ssdlab.session import RunRequest, dry_run_document, selected_tests
from ssdlab.store import Store
from ssdlab.store.sweeps import SweepRecord
from ssdlab.targets.resolve import SIM_PREFIX


@dataclass(frozen=True)
class SweepPlan:
    sweep_id: int
    variants: int  # in the sweep
    jobs: list[RunJob]  # what is left to run, in the sweep's order
    indexes: list[int]  # each job's variant
    estimated_s: float  # the jobs' remaining tests, in the drives' time: the whole sweep's ETA
    runner: Runner
    db: Path | None  # where the sweep is stored (None: the default database)


def new_sweep(base_spec: str, spec: SweepSpec, shared: RunRequest, asked_jobs: int | None,
              runner_for: RunnerFor = LocalRunner.planned) -> SweepPlan:
    """A sweep of `base_spec` (a built-in preset or a preset file) over the variants `spec`
    gives, each run as `shared` says; stored only once every variant has been checked."""
    base = load_preset(base_spec)
    open_drive(base)  # a base the simulator refuses is named as the base, not as its first variant
    variants = spec.variants(PresetKeys.of(base))
    _, suite_toml, _ = selected_tests(shared)  # and --suite, --tests checked
    names = [variant_name(base_name(base), overrides) for overrides in variants]
    jobs = [RunJob(_variant_request(shared, base, name, overrides)) for name, overrides in zip(names, variants)]
    runner = runner_for(jobs, asked_jobs)
    estimated = sum(dry_run_document(job.request)["estimated_seconds"] for job in jobs)
    with Store(shared.db) as store:
        sweep_id = store.create_sweep(
            base=base_spec, base_toml=base.text, suite=shared.suite, spec=spec.document(),
            options={"tests": None if shared.tests is None else list(shared.tests), "scale": shared.scale.factor,
                     "repeat": shared.repeat, "suite_toml": suite_toml, **_host_options(shared)},
            variants=list(zip(names, variants)))
    return SweepPlan(sweep_id, len(jobs), jobs, list(range(len(jobs))), estimated, runner, shared.db)


def resume_sweep(sweep_text: str, db: Path | None, asked_jobs: int | None,
                 runner_for: RunnerFor = LocalRunner.planned) -> SweepPlan:
    """What sweep `sweep_text` has left to run: its variants without a run, and its runs not finished."""
    with Store.open_existing(db, readonly=True) as store:
        sweep = store.sweep(store.resolve_sweep_id(sweep_text))
        variants = store.sweep_variants(sweep.id)
        stored = {v.idx: store.run(v.run_id) for v in variants if v.run_id is not None}
        # a run's tests still to run: the part of the sweep's estimate it has left
        unfinished = {v.idx: sum(estimated_seconds(r.test, Scale(stored[v.idx].scale), sweep.options["repeat"])
                                 for r in store.tests(v.run_id)
                                 if r.status not in (TestStatus.DONE, TestStatus.SKIPPED))
                      for v in variants if v.idx in stored}
    shared = _shared_request(sweep, db)
    base = Preset(sweep.base, Path(sweep.base), sweep.base_toml)
    left = [v for v in variants if v.idx not in stored or stored[v.idx].status is not RunStatus.DONE]
    if not left:
        raise SsdlabError(f"sweep {sweep.id} is complete: `ssdlab sweeps show {sweep.id}` for its results")
    if any(v.idx not in stored for v in left) and selected_tests(shared)[1] != sweep.options["suite_toml"]:
        raise SsdlabError(f"the suite {sweep.suite} is not the one sweep {sweep.id} began with (it has changed "
                          "since): put its file back as it was, or start a new sweep")
    jobs = [RunJob(_variant_request(shared, base, v.name, v.overrides), v.run_id) for v in left]
    runner = runner_for(jobs, asked_jobs)
    estimated = sum(unfinished[v.idx] if job.resume is not None else dry_run_document(job.request)["estimated_seconds"]
                    for v, job in zip(left, jobs))
    return SweepPlan(sweep.id, len(variants), jobs, [v.idx for v in left], estimated, runner, db)


def run_sweep(plan: SweepPlan, reporter_for: ReporterFor) -> list[Outcome]:
    """Every job of the plan, each new run recorded as its variant's as soon as it is made (a
    run killed in that instant is left out of the sweep, whose resume makes the variant anew)."""
    new = {job.request.target: idx for job, idx in zip(plan.jobs, plan.indexes) if job.resume is None}

    def recorded(request: RunRequest, run_id: int, tests: list[Test]) -> Reporter:
        if (idx := new.get(request.target)) is not None:
            with Store(plan.db) as store:
                store.set_variant_run(plan.sweep_id, idx, run_id)
        return reporter_for(request, run_id, tests)

    return plan.runner.run(plan.jobs, recorded)


def _variant_request(shared: RunRequest, base: Preset, name: str, overrides: dict[str, Value]) -> RunRequest:
    return replace(shared, target=SIM_PREFIX + name, preset_text=apply_overrides(base, overrides))


# the retention, endurance and trace tests' settings a sweep stores as they are (cli/options.py)
_TEST_SETTINGS = ("retention_days", "retention_c", "endurance_volume", "endurance_workload", "endurance_probes",
                  "trace_format", "trace_device", "trace_fit", "trace_block", "idle_cap_ms", "trace_speed",
                  "no_timing", "trace_qd")


def _host_options(shared: RunRequest) -> dict:
    """The simulated drives' host and prior life, and the tests' settings, every run of the
    sweep shares, as stored (the traces by absolute path: a resume may start elsewhere)."""
    return {"apst_latency_us": shared.apst_latency_us, "no_low_power_states": shared.no_low_power_states,
            "cooling": None if shared.cooling is None else shared.cooling.value, "ambient_c": shared.ambient_c,
            "age": None if shared.age is None else shared.age.model_dump(mode="json"),
            "traces": [_absolute(t) for t in shared.traces], **{k: getattr(shared, k) for k in _TEST_SETTINGS}}


def _absolute(trace: str) -> str:
    """A trace file by its absolute path; a built-in trace's name as it is."""
    path = Path(trace).expanduser()
    return str(path.resolve()) if path.exists() else trace


def _shared_request(sweep: SweepRecord, db: Path | None) -> RunRequest:
    """What every run of the sweep shares, as the sweep stored it (a sweep stored before its
    host options or test settings were: the simulator's default host, new drives, the tests'
    defaults)."""
    options = sweep.options
    cooling, age = options.get("cooling"), options.get("age")
    return RunRequest(target="", suite=sweep.suite, tests=None if options["tests"] is None else tuple(options["tests"]),
                      scale=Scale(options["scale"]), repeat=options["repeat"], db=db,
                      apst_latency_us=options.get("apst_latency_us"),
                      no_low_power_states=options.get("no_low_power_states", False),
                      cooling=None if cooling is None else Cooling(cooling), ambient_c=options.get("ambient_c"),
                      age=None if age is None else Age.model_validate(age), traces=tuple(options.get("traces", ())),
                      **{k: options[k] for k in _TEST_SETTINGS if k in options})
