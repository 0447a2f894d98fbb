"""Starting and resuming runs: choose the tests, open the target safely, build the
backend, record the conditions, execute."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from ssdlab import locks, signals
from ssdlab.backends import Backend
from ssdlab.backends.fio import FioBackend
from ssdlab.backends.sim import SimBackend
from ssdlab.backends.sim_host import (
    DEFAULT_HOST,
    MAX_AMBIENT_C,
    MAX_APST_LATENCY_US,
    MIN_AMBIENT_C,
    Cooling,
    SimHost,
)
from ssdlab.catalogue import (
    Endurance,
    PtsTest,
    Retention,
    Scale,
    TraceReplayTest,
    check_selection,
    compile_tests,
    estimated_seconds,
    lookup,
)
from ssdlab.catalogue import endurance as endurance_test
from ssdlab.catalogue import retention as retention_test
from ssdlab.catalogue import trace as trace_test
from ssdlab.errors import Interrupted, SsdlabError, validation_problems
from ssdlab.execution import Reporter, execute
from ssdlab.external import Commands
from ssdlab.model import Age, PowerOff, RunStatus, Test, TestStatus, Wait
from ssdlab.model.steps import REAL_DRIVES_AGE
from ssdlab.presets import Preset, load_preset
from ssdlab.repeats import MAX_REPEAT
from ssdlab.store import Store, default_path
from ssdlab.suites import load_suite, parse_suite
from ssdlab.targets import Target, TargetKind, consent, files, identity, purge, resolve, safety
from ssdlab.targets.resolve import SIM_PREFIX, fleet_target
from ssdlab.targets.sysfs import SYSFS
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.meters import PowerMeter, parse_power_meter
from ssdlab.telemetry.needs import missing
from ssdlab.telemetry.probe import probe
from ssdlab.telemetry.simulated import SimulatedNvme
from ssdlab.twin.origin import origin_of
from ssdlab.units import GiB

SIM_HOST = "sim_host"  # the run option that keeps a simulated drive's SimHost
SIM_AGE = "sim_age"  # the run option that keeps a simulated drive's Age (`--age`), when it has one


@dataclass(frozen=True)
class RunRequest:
    target: str
    suite: str = "client"
    tests: tuple[str, ...] | None = None
    scale: Scale = Scale(1.0)
    size: int | None = None
    name: str | None = None
    destroy_data: str | None = None
    force: bool = False
    db: Path | None = None
    power_meter: str | None = None  # --power-meter: a command, or hwmon:PATH
    # a simulated drive's host (backends/sim_host.py); None: the simulator's default
    apst_latency_us: int | None = None  # --apst-latency-us
    no_low_power_states: bool = False  # --no-low-power-states
    cooling: Cooling | None = None  # --cooling
    ambient_c: float | None = None  # --ambient-c
    age: Age | None = None  # --age: the simulated drive worn to this before the first test (its prior life)
    repeat: int = 1  # --repeat: each measured step this many times (repeats.py)
    # the retention test's wait (catalogue/retention.py); None: JEDEC's client conditions
    retention_days: float | None = None  # --retention-days
    retention_c: float | None = None  # --retention-c
    # the endurance test's volume, workload and probes (catalogue/endurance.py)
    endurance_volume: str | None = None  # --endurance-volume
    endurance_workload: str | None = None  # --endurance-workload
    endurance_probes: int | None = None  # --endurance-probes
    # the trace test's traces and how they are fitted and replayed (catalogue/trace.py)
    traces: tuple[str, ...] = ()  # --trace, once per trace
    trace_format: str | None = None  # --trace-format
    trace_device: str | None = None  # --trace-device
    trace_fit: str | None = None  # --trace-fit wrap|scale
    trace_block: int | None = None  # --trace-block
    idle_cap_ms: float | None = None  # --idle-cap-ms
    trace_speed: float | None = None  # --trace-speed
    no_timing: bool = False  # --no-timing
    trace_qd: int | None = None  # --trace-qd
    # a simulated drive's preset as its text (a sweep's variant: distributed/), which `target`
    # (sim:NAME) then only names; None: the preset `target` names
    preset_text: str | None = None


def selected_tests(request: RunRequest) -> tuple[str, str, list[str]]:
    """(suite name, suite TOML, test ids): the suite's tests, or those of --tests."""
    suite, text = load_suite(request.suite)
    if request.tests is None:
        return suite.name, text, list(suite.tests)
    check_selection(request.tests, "--tests")
    return suite.name, text, list(request.tests)


def retention_wait(request: RunRequest, test_ids: list[str]) -> PowerOff | None:
    """The retention test's wait the options give, refused out of bounds or without that test."""
    wait = retention_test.retention_wait(request.retention_days, request.retention_c)
    if wait is not None and not any(isinstance(lookup(t), Retention) for t in test_ids):
        raise SsdlabError("--retention-days and --retention-c set the retention test's wait, which the selected "
                          "tests do not include: add `--suite retention`, or leave them out")
    return wait


def endurance_fields(request: RunRequest, test_ids: list[str], preset_text: str | None) -> dict | None:
    """The endurance test's fields the options give (None without that test), refused out of
    bounds, or when given without the test. `preset_text`: a simulated drive's preset."""
    given = [name for name, value in (("--endurance-volume", request.endurance_volume),
                                      ("--endurance-workload", request.endurance_workload),
                                      ("--endurance-probes", request.endurance_probes)) if value is not None]
    if not any(isinstance(lookup(t), Endurance) for t in test_ids):
        if given:
            raise SsdlabError(f"{' and '.join(given)} set the endurance test, which the selected tests do not "
                              "include: add `--suite endurance`, or leave them out")
        return None
    return endurance_test.endurance_plan(request.endurance_volume, request.endurance_workload,
                                         request.endurance_probes, preset_text, simulated=preset_text is not None)


def trace_fields(request: RunRequest, test_ids: list[str]) -> dict | None:
    """The trace test's fields the options give (None without that test), refused out of bounds,
    or when given without the test."""
    given = [name for name, value in (("--trace", request.traces), ("--trace-format", request.trace_format),
                                      ("--trace-device", request.trace_device), ("--trace-fit", request.trace_fit),
                                      ("--trace-block", request.trace_block), ("--idle-cap-ms", request.idle_cap_ms),
                                      ("--trace-speed", request.trace_speed), ("--no-timing", request.no_timing),
                                      ("--trace-qd", request.trace_qd)) if value not in (None, (), False)]
    if not any(isinstance(lookup(t), TraceReplayTest) for t in test_ids):
        if given:
            raise SsdlabError(f"{' and '.join(given)} set the trace test, which the selected tests do not include: "
                              "add `--suite trace`, or leave them out")
        return None
    return trace_test.trace_plan(request.traces, request.trace_format, request.trace_device, request.trace_fit,
                                 request.trace_block, request.idle_cap_ms, request.trace_speed, request.no_timing,
                                 request.trace_qd)


def default_file_size(test_ids: list[str], scale: Scale) -> int:
    """Enough for the largest span of the tests, in whole GiB, at least 1 GiB."""
    largest = max(lookup(t).span(scale) for t in test_ids)
    return max(GiB, math.ceil(largest / GiB) * GiB)


def planned_capacity(request: RunRequest, test_ids: list[str]) -> int:
    """The target's capacity without touching it (for planning and --dry-run)."""
    if request.target.startswith(SIM_PREFIX):
        return open_simulated(request.target, request.preset_text, sim_host(request), request.age)[0].capacity
    path = Path(request.target).expanduser()
    if path.is_block_device():
        return resolve.device_capacity(path)
    resolve.refuse_file_path(path, request.force)
    if request.size is not None:
        return request.size
    if path.is_file():
        return path.stat().st_size
    return default_file_size(test_ids, request.scale)


def power_meter(request: RunRequest) -> PowerMeter | None:
    """The meter --power-meter names, refused before anything is touched when it cannot be
    used; a simulated drive has no power to measure."""
    if request.power_meter is None:
        return None
    if request.target.startswith(SIM_PREFIX):
        raise SsdlabError("--power-meter measures a real drive: a simulated drive's power comes from "
                          "its preset. Leave --power-meter out, or give a device or file target")
    return parse_power_meter(request.power_meter)


def sim_host(request: RunRequest) -> SimHost | None:
    """The host of a simulated drive from the run's options; None for a real target, whose
    host is the machine itself (the options are refused for it, --age too)."""
    if request.age is not None and not request.target.startswith(SIM_PREFIX):
        raise SsdlabError(f"--age wears a simulated drive as a state; {REAL_DRIVES_AGE}. Leave --age out, "
                          "or give a sim:PRESET target")
    given = {"--apst-latency-us": request.apst_latency_us is not None,
             "--no-low-power-states": request.no_low_power_states,
             "--cooling": request.cooling is not None, "--ambient-c": request.ambient_c is not None}
    if not request.target.startswith(SIM_PREFIX):
        if named := [option for option, set_ in given.items() if set_]:
            raise SsdlabError(f"{' and '.join(named)} set up a simulated drive's host; a real drive's is this "
                              "machine. Leave them out, or give a sim:PRESET target")
        return None
    latency, ambient = request.apst_latency_us, request.ambient_c
    if latency is not None and not 0 <= latency <= MAX_APST_LATENCY_US:
        raise SsdlabError(f"--apst-latency-us must be 0 (APST off) to {MAX_APST_LATENCY_US} µs, not {latency}")
    if ambient is not None and not MIN_AMBIENT_C <= ambient <= MAX_AMBIENT_C:  # NaN too
        raise SsdlabError(f"--ambient-c must be {MIN_AMBIENT_C:g} to {MAX_AMBIENT_C:g} °C, not {ambient:g}")
    return SimHost(low_power_states=not request.no_low_power_states, cooling=request.cooling, ambient_c=ambient,
                   **({} if latency is None else {"apst_latency_us": latency}))


def dry_run_document(request: RunRequest) -> dict:
    meter = power_meter(request)
    host = sim_host(request)
    _, _, test_ids = selected_tests(request)
    wait = retention_wait(request, test_ids)
    simulated = (open_simulated(request.target, request.preset_text, host, request.age)[0]
                 if host is not None else None)
    capacity = simulated.capacity if simulated else planned_capacity(request, test_ids)
    endurance = endurance_fields(request, test_ids, simulated.preset.text if simulated else None)
    tests = compile_tests(test_ids, request.scale, capacity, wait, endurance, trace_fields(request, test_ids))
    skipped = planned_skips(request, tests, capacity, meter is not None, simulated)
    keys = ("rw", "bs", "iodepth", "offset", "size", "runtime", "io_size", "rwmixread",
            "idle_after", "label", "phase", "burst_bytes", "duty_cycle", "per_gib_series",
            "rate_iops", "fill_state", "time_based", "age", "power_off")
    # A simulated drive runs in virtual time: the estimate is the drive's time, not the wall's.
    clock = "drive" if request.target.startswith(SIM_PREFIX) else "wall"
    # A plan must not look runnable on a device that the real run will refuse.
    path = Path(request.target).expanduser()
    refusals = safety.refusal_reasons(path, Commands()) if path.is_block_device() else []
    return {"target": request.target, "capacity": capacity, "scale": request.scale.factor,
            "tests": [{"id": t.id, "steps": [s.model_dump(mode="json", include=set(keys)) for s in t.steps],
                       **({"skipped": skipped[t.id]} if t.id in skipped else {}),
                       # its loops stop at steady state: the steps and time are the worst case
                       **({"until_steady": True} if isinstance(lookup(t.id), PtsTest) else {})} for t in tests],
            "estimated_seconds": round(sum(estimated_seconds(t, request.scale, request.repeat)
                                           for t in tests if t.id not in skipped)),
            "repeat": request.repeat, "clock": clock, "refusals": refusals,
            **({"age": str(request.age)} if request.age is not None else {})}


def planned_skips(request: RunRequest, tests: list[Test], capacity: int, has_meter: bool,
                  simulated: SimBackend | None) -> dict[str, str]:
    """Why each test that needs more than I/O would be skipped on this target (its id ->
    the reason), from the probe the run itself makes; only read-only queries, and none
    when no test needs them. `simulated`: the drive of a sim: target."""
    needs = {t.id: lookup(t.id).needs() for t in tests}
    if not any(needs.values()):
        return {}
    if simulated is not None:
        found = probe(Target(request.target, TargetKind.SIM, None, capacity), SimulatedNvme(simulated.drive))
    else:
        path = Path(request.target).expanduser()
        kind = TargetKind.DEVICE if path.is_block_device() else TargetKind.FILE
        found = probe(Target(request.target, kind, path, capacity), Commands())
    engine = simulated.name if simulated else FioBackend.name  # the engine a real target runs on
    return {test_id: reason for test_id, test_needs in needs.items()
            if (reason := missing(test_needs, found, has_meter, engine))}


def open_simulated(spec: str, preset_text: str | None = None, host: SimHost = DEFAULT_HOST,
                   age: Age | None = None) -> tuple[SimBackend, dict]:
    """A fresh simulated drive on `host`, worn to `age` when given (refused when its preset
    cannot reach it); on resume, from the very preset text the run stored."""
    name = spec[len(SIM_PREFIX):]
    if not name:
        raise SsdlabError("`sim:` needs a preset: `ssdlab drives` lists them, e.g. sim:wd-sn850-1tb")
    preset = load_preset(name) if preset_text is None else Preset(name, Path(name), preset_text)
    backend = SimBackend(preset, host=host, age=age)
    ident = {"preset": preset.name, "model": preset.title, "capacity_bytes": backend.capacity,
             "preset_sha256": preset.sha256}
    if (origin := origin_of(preset.text)) is not None:
        ident["twin_of"] = origin.described()
    return backend, ident


def _open(spec: str, size: int, force: bool, commands: Commands, holds: ExitStack,
          serial_consent: str | None, meter: PowerMeter | None, sys_root: Path,
          recorded_identity: dict | None = None, reuse: bool = False) -> tuple[FioBackend, dict, RunTelemetry]:
    """The target held for this process, its safety checks and consent (a device), its
    telemetry, and the backend with its purge, idling through the telemetry (no sensor
    read while the drive idles) and telling it when its I/O ran. `holds` keeps the target
    held until the run ends."""
    target = _held_target(spec, size, force, commands, holds, reuse)
    if target.kind is TargetKind.DEVICE:
        safety.check_device(target.path, commands)  # under the claim: nothing can start using it
        ident = identity.device_identity(target.path, commands)
        if recorded_identity is not None and serial_consent is None:
            serial_consent = consent.recorded_consent(ident, recorded_identity)
        cleared = consent.confirm_destroy(target.path, ident, serial_consent)
        do_purge = lambda: purge.purge_device(cleared, commands, sys_root=sys_root)  # noqa: E731
    else:
        ident = identity.file_identity(target.path)
        do_purge = lambda: purge.purge_file(target)  # noqa: E731
    telemetry = RunTelemetry(probe(target, commands, sys_root), meter)
    backend = FioBackend(target.path, target.kind.value, purge=do_purge, commands=commands, sleep=telemetry.idle,
                         io_window=telemetry.io_window)
    return backend, ident, telemetry


def _held_target(spec: str, size: int, force: bool, commands: Commands, holds: ExitStack,
                 reuse: bool) -> Target:
    """Resolve the target and hold it. An existing target is held first, since resolving may
    resize a file; a new file is held as soon as it exists (made with O_EXCL: one creator)."""
    path = files.real_path(Path(spec).expanduser())  # a link to a file ssdlab made: hold that
    held_first = path.exists()
    if held_first:
        holds.enter_context(_hold(path, commands))
    target = resolve.resolve(spec, size=size, force=force, commands=commands, reuse=reuse)
    if not held_first:
        holds.enter_context(_hold(target.path, commands))
    return target


def _hold(path: Path, commands: Commands) -> locks.Hold:
    if not path.is_block_device():
        return locks.hold_file(path)
    try:
        return locks.hold_device(path)
    except locks.DeviceClaimed:
        safety.check_device(path, commands)  # names what uses it, when it can tell
        raise


def _simulated_telemetry(spec: str, backend: SimBackend) -> RunTelemetry:
    """The simulated drive read as a real one, through nvme-cli's answers from the simulator."""
    return RunTelemetry(probe(Target(spec, TargetKind.SIM, None, backend.capacity), SimulatedNvme(backend.drive)))


def _execute(store: Store, run_id: int, backend: Backend, tests: list[Test],
             show_progress: bool | Callable[[int, list[Test]], Reporter], telemetry: RunTelemetry,
             scale: Scale, repeat: int = 1) -> None:
    """`show_progress`: a progress bar, or not, or a reporter made for the run's id and tests."""
    try:  # from the moment the run exists: an interrupt then always says how to resume
        from ssdlab.cli.progress import AlarmReporter, ProgressReporter
        if callable(show_progress):
            execute(store, run_id, backend, show_progress(run_id, tests), telemetry, scale, repeat)
            return
        if not show_progress:
            execute(store, run_id, backend, AlarmReporter(), telemetry, scale, repeat)
            return
        with ProgressReporter(tests, scale) as reporter:
            execute(store, run_id, backend, reporter, telemetry, scale, repeat)
    except (KeyboardInterrupt, Exception) as exc:
        if not (isinstance(exc, KeyboardInterrupt) or signals.stop_asked()):
            raise
        # the stop a signal asked, whatever error the code it interrupted made of it
        raise Interrupted(f"run {run_id} interrupted; finished tests are stored. "
                          f"`ssdlab resume {run_id}` continues from the first unfinished test") from None


def start_run(request: RunRequest, show_progress: bool | Callable[[int, list[Test]], Reporter] = True,
              sys_root: Path = SYSFS) -> int:
    """`show_progress`: a progress bar, or not, or a reporter made for the run's id and tests;
    `sys_root`: where the target's telemetry is looked for (the kernel's sysfs)."""
    commands = Commands()
    meter = power_meter(request)
    host = sim_host(request)
    suite_name, suite_toml, test_ids = selected_tests(request)
    wait = retention_wait(request, test_ids)
    if not 1 <= request.repeat <= MAX_REPEAT:
        raise SsdlabError(f"--repeat {request.repeat}: give 1 to {MAX_REPEAT} (each measured step that many times)")
    options: dict = {"force": request.force, "power_meter": request.power_meter, "repeat": request.repeat}
    with ExitStack() as holds:
        if host is not None:
            backend, ident = open_simulated(request.target, request.preset_text, host, request.age)
            kind, capacity = TargetKind.SIM, backend.capacity
            options["preset_toml"] = backend.preset.text
            options[SIM_HOST] = host.model_dump()
            if request.age is not None:
                options[SIM_AGE] = request.age.model_dump(mode="json")
            tests = compile_tests(test_ids, request.scale, capacity, wait,
                                  endurance_fields(request, test_ids, backend.preset.text),
                                  trace_fields(request, test_ids))
            telemetry = _simulated_telemetry(request.target, backend)
        else:
            _refuse_waited_on(request, commands)
            capacity = planned_capacity(request, test_ids)
            # refused before anything is touched
            tests = compile_tests(test_ids, request.scale, capacity, wait, endurance_fields(request, test_ids, None),
                                  trace_fields(request, test_ids))
            backend, ident, telemetry = _open(request.target, capacity, request.force, commands, holds,
                                              request.destroy_data, meter, sys_root)
            kind = TargetKind(backend.kind)
        options["size"] = capacity
        store = holds.enter_context(Store(request.db))
        run_id = store.create_run(
            name=request.name, target=request.target, target_kind=kind.value,
            suite=suite_name, suite_toml=suite_toml, scale=request.scale.factor, tests=tests,
            identity=ident, host=identity.host_identity(commands), engine=backend.describe(),
            options=options,
            before_commit=lambda new_id: holds.enter_context(locks.hold_run(store.path, new_id)))
        _execute(store, run_id, backend, tests, show_progress, telemetry, request.scale, request.repeat)
    return run_id


def resume_run(run_id_text: str, db: Path | None, destroy_data: str | None,
               show_progress: bool | Callable[[int, list[Test]], Reporter] = True,
               warn: Callable[[str], None] = lambda _: None) -> int:
    """`show_progress` as start_run's; `warn`: told what the user should know before the run
    goes on (a retention run read back before its date)."""
    commands = Commands()
    with ExitStack() as holds:
        store = holds.enter_context(Store.open_existing(db, readonly=False))
        run_id = store.resolve_run_id(run_id_text)
        store.run(run_id)  # it exists
        holds.enter_context(locks.hold_run(store.path, run_id))
        run = store.run(run_id)  # read under the hold: no other process changes it now
        _refuse_fleet_run(run_id, run.target)
        if run.status is RunStatus.DONE:
            raise SsdlabError(f"run {run_id} is already complete: `ssdlab show {run_id}`")
        extras = store.run_extras(run_id)
        parse_suite(extras["suite_toml"], f"the suite stored with run {run_id}")
        if run.target_kind == TargetKind.SIM:
            # a run stored before the host was an option ran on the default host
            host = SimHost.parse(extras["options"].get(SIM_HOST, {}), f"the simulated host stored with run {run_id}")
            age = _stored_age(extras["options"].get(SIM_AGE), run_id)
            backend, _ = open_simulated(run.target, extras["options"]["preset_toml"], host, age)
            telemetry = _simulated_telemetry(run.target, backend)
        else:
            if (wait := store.pending_wait(run_id)) is not None:
                _check_waited(run_id, run.target, run.target_kind, run.identity, wait, commands, warn)
            meter = _recorded_meter(store, run_id, extras["options"].get("power_meter"))
            backend, _, telemetry = _open(run.target, extras["options"]["size"], False, commands, holds,
                                          destroy_data, meter, SYSFS, recorded_identity=run.identity, reuse=True)
        store.set_run_engine(run_id, backend.describe())
        pending = [r.test for r in store.tests(run_id) if r.status not in (TestStatus.DONE, TestStatus.SKIPPED)]
        _execute(store, run_id, backend, pending, show_progress, telemetry, Scale(run.scale),
                 int(extras["options"].get("repeat", 1)))
    return run_id


def _refuse_fleet_run(run_id: int, target: str) -> None:
    """A run on a fleet's drive goes on on its host (`ssdlab resume --cluster`), not here."""
    if fleet_target(target):
        raise SsdlabError(f"run {run_id} ran on a drive of a fleet ({target}): `ssdlab resume {run_id} --cluster "
                          "ADDRESS` continues it on its host")


def _refuse_waited_on(request: RunRequest, commands: Commands) -> None:
    """A new run on a drive (or file) whose data a retention run waits to read back is refused
    before anything touches it (a file may be resized when opened), unless --force."""
    path = Path(request.target).expanduser()
    db = request.db or default_path()
    if not (path.exists() and db.exists()):
        return
    device = path.is_block_device()
    found = identity.device_identity(path, commands) if device else identity.file_identity(files.real_path(path))
    with Store.open_existing(request.db) as store:
        retention_test.check_not_waited_on(store.runs(), (TargetKind.DEVICE if device else TargetKind.FILE).value,
                                           found, request.force)


def _check_waited(run_id: int, target: str, kind: str, recorded: dict, wait: Wait, commands: Commands,
                  warn: Callable[[str], None]) -> None:
    """A retention test's data is read back only from the drive (or file) it was written to,
    checked before the target is opened (which may resize a file); a resume before the date is
    said. A target that is gone is left to opening, which says so."""
    path = Path(target).expanduser()
    if path.is_block_device():
        retention_test.check_same_drive(run_id, kind, recorded, identity.device_identity(path, commands))
    elif path.exists():
        retention_test.check_same_drive(run_id, kind, recorded, identity.file_identity(files.real_path(path)))
    if not wait.over and (early := retention_test.early_warning(run_id, wait, datetime.now(UTC))):
        warn(early)


def _stored_age(stored: dict | None, run_id: int) -> Age | None:
    """The age the run's drive was worn to (None: a run without --age, or stored before it)."""
    if stored is None:
        return None
    try:
        return Age.model_validate(stored)
    except ValidationError as exc:
        raise SsdlabError(f"the simulated drive's age stored with run {run_id}: {validation_problems(exc)}") from None


def _recorded_meter(store: Store, run_id: int, spec: str | None) -> PowerMeter | None:
    """The run's power meter again; one that cannot be used now leaves a note, not a failure."""
    if spec is None:
        return None
    try:
        return parse_power_meter(spec)
    except SsdlabError as exc:
        store.add_telemetry_notes(run_id, [f"{exc}: the resumed tests have no energy"])
        return None
