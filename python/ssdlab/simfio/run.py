"""Running fio jobs on a simulated drive.

A job becomes a Step carrying all its options (sizes, offsets, distribution, rate, think
time, ramp, flow, verify, logging); `numjobs=N` makes N of them. Jobs run as fio runs
them: those between two `stonewall`s at once on the drive (one Step, the others its
`concurrent` jobs), each with its own queue and figures (crates/ssdsim/src/run). fio's
runtime is a job's elapsed time after its ramp, think time included; `time_based` makes
it the only limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from pydantic import ValidationError

from ssdlab.backends import JobFigures
from ssdlab.backends.sim import SimBackend
from ssdlab.catalogue.definitions import data_present
from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.model import Op, Step, StepResult
from ssdlab.model.steps import (
    UNLIMITED_BYTES,
    Flow,
    Normal,
    Pareto,
    SplitSize,
    SteadyState,
    Uniform,
    Zipf,
    Zone,
    Zoned,
    ZonedAbs,
)
from ssdlab.simfio import patterns
from ssdlab.simfio.jobfile import FioJob
from ssdlab.simfio.logs import FioLogOptions, write_fio_logs
from ssdlab.simfio.options import SYNC_ENGINES
from ssdlab.simfio.values import ValueProblem, fio_bool, fio_int, fio_size, fio_time
from ssdlab.units import format_bytes

FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
                   99.5, 99.9, 99.95, 99.99)
MAX_PERCENTILES = 20         # fio's FIO_IO_U_LIST_MAX_LEN

# The range of each value: what the simulator models, with a wide margin over what
# fio jobs ask for. A value outside is refused with the option's name and its range.
SECTOR = 512                 # the simulator's (and the Step's) unit of blocks and offsets
MAX_IODEPTH = 4096           # the simulator's queue
MAX_RUNTIME_S = 1e6          # the simulator's longest step (crates/ssdsim/src/bounds.rs)
RESOLUTION_S = 1e-6          # its shortest, and fio's time resolution
MAX_THINKTIME_S = 3600.0
MAX_THINKTIME_BLOCKS = (1 << 31) - 1   # fio's own limit (an int)
MAX_JOBS = 1024              # jobs at once (numjobs counted): the simulator's bound
MAX_LOG_AVG_MS = 3_600_000   # an hour per log line, far beyond any job's wish
DEFAULT_ENGINE = "psync"     # fio 3.33's on Linux (os/os.h)
CONTINUE_ON_ERROR = {"none": False, "0": False, "read": True, "write": True, "io": True,
                     "verify": True, "all": True, "1": True}
_PERCENTILE = re.compile(r"^\d{1,3}(\.\d{1,6})?$", re.ASCII)


@dataclass(frozen=True)
class Report:
    """What the job's JSON shows beside its figures, as fio's options set it."""

    jobname: str
    description: str | None
    percentiles: tuple[float, ...]
    clat_percentiles: bool
    lat_percentiles: bool
    slat_percentiles: bool
    continue_on_error: bool   # fio then adds its error counters
    disk_util: bool
    slat_measured: bool       # fio times no submission of a synchronous engine
    iodepth: int              # as the job asks it (fio's latency_depth)


@dataclass(frozen=True)
class JobPlan:
    job: FioJob             # the section it comes from (numjobs copies share it)
    step: Step              # its iodepth the queue fio keeps: 1 with a synchronous engine
    whole_drive: bool       # no size= and no limit: the job goes over the whole drive once
    engine: str
    report: Report
    stonewall: bool         # it waits for the jobs before it: a new run of jobs at once
    new_group: bool         # it starts a new reporting group (stonewall does too)
    group_reporting: bool   # its group is reported as one job
    logs: FioLogOptions | None   # the log files it writes, if any


@dataclass(frozen=True)
class JobRun:
    """A job's simulated outcome, with what fio's JSON needs beyond its figures."""

    result: StepResult               # its figures, after its ramp
    piece_ios: tuple[int, ...]       # I/Os of each stretch that began with an empty queue
    series: tuple[tuple[float, float, float], ...]  # (start s, end s, I/Os completed) in job time
    batch: int                       # the run of jobs at once it was in
    batch_s: float                   # that run's drive time (ramps and idle included)
    batch_device: dict[str, float]   # that run's drive counters (all its jobs, ramps too)
    io_log: np.ndarray               # its commands, when it writes logs (run.py's _log)
    unwritten_read_bytes: int = 0    # of its reads, those of blocks never written (no NAND read)
    steady: dict | None = None       # its steady-state judgement (backends' JobFigures.steady)
    log_truncated: bool = False      # it made more commands than the simulator's log keeps

    @property
    def elapsed_s(self) -> float:
        """The job's time, fio's runtime: its I/O and think time, after its ramp."""
        return self.result.busy_s


class _Options:
    """A job's options, each read in its form and checked against its range; a problem
    is a ValueProblem that names the option as the job file spells it."""

    def __init__(self, job: FioJob, device_bytes: int):
        self._settings = job.settings
        self.device_bytes = device_bytes
        base = self.given("kb_base")  # read first: the sizes depend on it
        self.kb_base = 1024 if base is None else self.parsed(*base, fio_int)
        if self.kb_base not in (1000, 1024):
            raise ValueProblem(f"{base[0]}={base[1]}: must be 1024 or 1000")

    def given(self, name: str) -> tuple[str, str] | None:
        """(name as spelled, value) of option `name`, when written with a value."""
        s = self._settings.get(name)
        return None if s is None or s.value is None else (s.spelled, s.value)

    def flag(self, name: str, default: bool = False) -> bool:
        """A flag is on when written bare or as 1, off as 0; else `default`."""
        s = self._settings.get(name)
        return default if s is None else self.parsed(s.spelled, s.value, fio_bool)

    def size(self, name: str, low: int, high: int) -> int | None:
        return self._read(name, self.bytes, low, high,
                          f"from {format_bytes(low)} to {format_bytes(high)}")

    def bytes(self, text: str) -> int:
        return fio_size(text, self.device_bytes, self.kb_base)

    def integer(self, name: str, low: int, high: int) -> int | None:
        return self._read(name, fio_int, low, high, f"from {low} to {high}")

    def seconds(self, name: str, unit: str, low: float, high: float) -> float | None:
        lowest = "more than 0 s and at most" if low > 0 else "from 0 s to"
        return self._read(name, lambda v: fio_time(v, unit), low, high,
                          f"{lowest} {high:,.0f} s")

    def _read(self, name: str, parse: Callable[[str], Any], low: Any, high: Any,
              allowed: str) -> Any:
        given = self.given(name)
        if given is None:
            return None
        value = self.parsed(*given, parse)
        if not low <= value <= high:
            raise ValueProblem(f"{given[0]}={given[1]}: must be {allowed}")
        return value

    @staticmethod
    def parsed(name: str, text: str | None, parse: Callable[[Any], Any]) -> Any:
        """`parse(text)`, a problem naming the option as `name=text`."""
        try:
            return parse(text)
        except ValueProblem as exc:
            raise ValueProblem(f"{name}={text}: {exc}") from None


def plan_all(jobs: list[FioJob], device_bytes: int, origin: str) -> list[JobPlan]:
    """The jobs as Steps, `numjobs` copies each, every value checked before anything runs;
    a problem refuses them all, naming each job's first."""
    plans, problems = [], []
    for job in jobs:
        try:
            o = _Options(job, device_bytes)
            copies = o.integer("numjobs", 1, MAX_JOBS) or 1
            first = _plan(job, o, len(plans) + 1)
            plans.append(first)
            plans += [replace(first, stonewall=False, new_group=False,
                              logs=first.logs and replace(first.logs, job_number=len(plans) + 1 + n))
                      for n in range(copies - 1)]
        except ValueProblem as exc:
            problems.append(f"job [{job.name}] (line {job.line}): {exc}")
        except ValidationError as exc:  # a combination the Step refuses, each value in range
            problems.append(f"job [{job.name}] (line {job.line}): {validation_problems(exc)}")
    if len(plans) > MAX_JOBS:
        problems.append(f"{len(plans)} jobs in all (numjobs counted); the simulator runs at most {MAX_JOBS}")
    if problems:
        raise SsdlabError(f"{origin}: {'; '.join(problems)}")
    return plans


def plan(job: FioJob, device_bytes: int, origin: str) -> JobPlan:
    """One job's plan_all (its first copy)."""
    return plan_all([job], device_bytes, origin)[0]


def _plan(job: FioJob, o: _Options, number: int) -> JobPlan:
    # `or`: fio's default for an option not given (None); no valid value is 0 unless 0 is
    # also the default.
    op, offset_delta = _operation(o)
    sizes = _block_sizes(o, op)
    bs = min(s.bs for s in sizes) if sizes else _block_size(o, op)
    offset = _offset(o, bs)
    room = (o.device_bytes - offset) // bs * bs
    size = None if o.flag("fill_device") else o.size("size", bs, o.device_bytes - offset)
    # fio goes on with a sequential job while its next block starts inside the span; a
    # random one picks among the span's whole blocks
    span = room if size is None else min(room, _blocks(size, bs, up=not op.is_random))
    runtime = o.seconds("runtime", "s", RESOLUTION_S, MAX_RUNTIME_S)
    io_limit = o.size("io_size", bs, UNLIMITED_BYTES)
    time_based = o.flag("time_based")
    if time_based and runtime is None:
        raise ValueProblem("time_based needs a runtime")
    engine = (o.given("ioengine") or ("", DEFAULT_ENGINE))[1]
    iodepth = o.integer("iodepth", 1, MAX_IODEPTH) or 1
    rate_bytes, rate_iops = _rates(o, op)
    writes_verified = op.writes and _verifies(o)
    step = Step(label=job.name, rw=op, bs=bs, iodepth=1 if engine in SYNC_ENGINES else iodepth,
                rwmixread=_read_share(o) if op.is_mixed else None, offset=offset, size=span,
                runtime=runtime, time_based=time_based,
                io_size=None if io_limit is None or time_based
                else min(_blocks(io_limit, bs, up=True), UNLIMITED_BYTES),
                bssplit=sizes, blockalign=_alignment(o, op), offset_delta=offset_delta,
                distribution=_distribution(o, op, span), randommap=not o.flag("norandommap"),
                rate_iops=rate_iops, rate_bytes=rate_bytes,
                thinktime=o.seconds("thinktime", "us", 0.0, MAX_THINKTIME_S) or 0.0,
                thinktime_blocks=o.integer("thinktime_blocks", 1, MAX_THINKTIME_BLOCKS) or 1,
                ramp=o.seconds("ramp_time", "s", 0.0, MAX_RUNTIME_S) or 0.0,
                flow=_flow(o), steadystate=_steadystate(o), verify=writes_verified)
    logs = _logs(job, o, number, engine)
    if logs is not None:
        step = step.model_copy(update={"log_ios": True})
    whole = size is None and runtime is None and io_limit is None
    return JobPlan(job, step, whole, engine, _report(job, o, engine, iodepth),
                   stonewall=o.flag("stonewall"), new_group=o.flag("new_group"),
                   group_reporting=o.flag("group_reporting"), logs=logs)


def _operation(o: _Options) -> tuple[Op, int]:
    """rw= and its suffix: the operation, and the bytes added to each next sequential offset."""
    name, text = o.given("rw") or ("rw", "read")
    rw, seq_add, every = o.parsed(name, text, lambda t: patterns.rw_suffix(t, o.kb_base, o.device_bytes))
    if rw not in set(Op):
        raise ValueProblem(f"{name}={text}: {rw} is not simulated yet (the simulator runs "
                           f"{', '.join(Op)})")
    op = Op(rw)
    if op.is_random and every != 1:
        raise ValueProblem(f"{name}={text}: a new random offset only every {every} I/Os (with "
                           "sequential ones between) is not simulated yet")
    return op, seq_add


def _used(op: Op) -> tuple[str, ...]:
    """The directions a job of `op` issues."""
    if op is Op.TRIMWRITE:
        return ("write", "trim")
    if op.is_mixed:
        return ("read", "write")
    return ("trim",) if op.trims else ("write",) if op.writes else ("read",)


def _one_for_all(o: _Options, name: str, op: Op, per_direction: dict[str, Any]) -> Any:
    """The value of a per-direction option for the directions `op` uses: the simulator
    takes one for all of them."""
    values = [per_direction[d] for d in _used(op)]
    if any(v != values[0] for v in values):
        spelled, text = o.given(name) or (name, "")
        raise ValueProblem(f"{spelled}={text}: different values for reads, writes and trims in one job "
                           "are not simulated yet")
    return values[0]


def _block_sizes(o: _Options, op: Op) -> tuple[SplitSize, ...]:
    """bssplit=, as fio draws it (patterns.bssplit): the sizes of the directions `op` uses."""
    given = o.given("bssplit")
    if given is None:
        return ()
    split = _one_for_all(o, "bssplit", op, o.parsed(*given, lambda t: patterns.bssplit(
        t, o.kb_base, o.device_bytes)))
    return tuple(SplitSize(bs=bs, pct=pct) for bs, pct in split)


def _alignment(o: _Options, op: Op) -> int | None:
    given = o.given("ba")
    if given is None:
        return None
    return _one_for_all(o, "ba", op, o.parsed(*given, lambda t: patterns.blockalign(
        t, o.kb_base, o.device_bytes)))


def _distribution(o: _Options, op: Op, span: int) -> Any:
    given = o.given("random_distribution")
    if given is None:
        return Uniform()
    d = o.parsed(*given, lambda t: patterns.random_distribution(t, o.kb_base, span))
    if d["kind"] != "uniform" and not op.is_random:
        return Uniform()   # fio draws sequential offsets whatever the distribution says
    if d.get("center") is not None:
        raise ValueProblem(f"{given[0]}={given[1]}: a center for the distribution is not simulated yet")
    if d["kind"] in ("zoned", "zoned_abs"):
        zones = tuple(Zone(access_pct=a, extent=e) for a, e in d["zones"])
        return (Zoned if d["kind"] == "zoned" else ZonedAbs)(zones=zones)
    return {"uniform": Uniform, "zipf": Zipf, "pareto": Pareto, "normal": Normal}[d["kind"]](
        **{k: v for k, v in d.items() if k not in ("kind", "center")})


def _rates(o: _Options, op: Op) -> tuple[int | None, int | None]:
    """(rate in bytes/s, rate_iops) of the job, one for all its directions."""
    found = []
    for name, parse in (("rate", lambda t: patterns.rate(t, o.kb_base, o.device_bytes)),
                        ("rate_iops", lambda t: patterns.rate_iops(t, o.kb_base))):
        given = o.given(name)
        found.append(None if given is None else _one_for_all(o, name, op, o.parsed(*given, parse)))
    if all(found):
        raise ValueProblem("rate and rate_iops together are not simulated yet: give one")
    return found[0], found[1]


def _verifies(o: _Options) -> bool:
    """verify= other than none (and do_verify not off): fio reads back what the job writes."""
    given = o.given("verify")
    return given is not None and given[1].lower() not in ("0", "none") and o.flag("do_verify", True)


SS_KINDS = ("iops", "iops_slope", "bw", "bw_slope")
SS_DEFAULT = "iops_slope:0.01%"      # fio 3.33's steadystate= default (options.c)
MAX_SS_DUR_S = 86_400
_SS_LIMIT = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(%?)$", re.ASCII)


def _steadystate(o: _Options) -> SteadyState | None:
    """fio's steadystate=KIND:LIMIT[%] with ss_dur (whole seconds, 0: off) and ss_ramp."""
    dur = o.seconds("steadystate_duration", "s", 0.0, MAX_SS_DUR_S)
    if not dur:
        return None
    name, text = o.given("steadystate") or ("steadystate", SS_DEFAULT)
    kind, _, limit = text.partition(":")
    m = _SS_LIMIT.match(limit.strip())
    if kind not in SS_KINDS or not m:
        raise ValueProblem(f"{name}={text}: write one of {', '.join(SS_KINDS)}, a colon and a limit, "
                           "e.g. iops_slope:0.1% or bw:1048576")
    if int(dur) < 1:
        raise ValueProblem("steadystate_duration: at least 1 s (fio counts it in whole seconds)")
    return SteadyState(iops=kind.startswith("iops"), slope=kind.endswith("_slope"),
                       limit=float(m.group(1)), pct=bool(m.group(2)), dur_s=int(dur),
                       ramp_s=o.seconds("steadystate_ramp_time", "s", 0.0, MAX_RUNTIME_S) or 0.0)


def _flow(o: _Options) -> Flow | None:
    given = o.given("flow")
    if given is None:
        return None
    weight = o.parsed(*given, patterns.flow)
    flow_id = o.given("flow_id")
    return Flow(id=o.parsed(*flow_id, patterns.flow_id) if flow_id else 0, weight=weight) if weight else None


def _logs(job: FioJob, o: _Options, number: int, engine: str) -> FioLogOptions | None:
    """The logs fio writes for the job (write_lat_log, write_bw_log, write_iops_log)."""
    names = {option: (s.value or "") if (s := job.settings.get(option)) else None
             for option in ("write_lat_log", "write_bw_log", "write_iops_log")}
    if all(v is None for v in names.values()):
        return None
    return FioLogOptions(
        job_name=_job_name(job), job_number=number,
        lat_log=names["write_lat_log"], bw_log=names["write_bw_log"], iops_log=names["write_iops_log"],
        log_avg_msec=o.integer("log_avg_msec", 0, MAX_LOG_AVG_MS) or 0,
        log_max_value=o.flag("log_max_value"), log_offset=o.flag("log_offset"),
        per_job_logs=o.flag("per_job_logs", True), log_prio=o.flag("log_prio"),
        slat_measured=engine not in SYNC_ENGINES,
        bw_avg_msec=o.integer("bwavgtime", 1, MAX_LOG_AVG_MS),
        iops_avg_msec=o.integer("iopsavgtime", 1, MAX_LOG_AVG_MS))


def _block_size(o: _Options, op: Op) -> int:
    """fio's bs=READ,WRITE,TRIM: a size not followed by a comma goes on to the directions
    after it, an empty one is the default (4k). The simulator runs one size per job."""
    name, text = o.given("bs") or ("bs", "4k")
    fields = text.split(",")
    if len(fields) > 3:
        raise ValueProblem(f"{name}={text}: at most three sizes (reads, writes, trims)")

    def size(field: str) -> int:
        return o.bytes(field) if field.strip() else 4096

    sizes = o.parsed(name, text, lambda _: [size(fields[min(d, len(fields) - 1)]) for d in range(3)])
    used = {0, 1} if op.is_mixed else {2} if op is Op.TRIM else {1} if op.writes else {0}
    values = {sizes[d] for d in used}
    if len(values) > 1:
        raise ValueProblem(f"{name}={text}: different read and write block sizes in one job are "
                           "not simulated yet")
    bs = values.pop()
    if problem := patterns.block_size_problem(bs):
        raise ValueProblem(f"{name}={text}: {problem}")
    return bs


def _offset(o: _Options, bs: int) -> int:
    """fio takes an offset in bytes as written, and aligns a percentage up to the block size."""
    offset = o.size("offset", 0, o.device_bytes - bs) or 0
    name, text = o.given("offset") or ("offset", "0")
    if text.strip().endswith("%"):
        return min(_blocks(offset, bs, up=True), (o.device_bytes - bs) // bs * bs)
    if offset % SECTOR:
        raise ValueProblem(f"{name}={text}: must be a multiple of {SECTOR} bytes, the simulated "
                           "drive's sector (fio with direct=1 refuses it too)")
    return offset


def _blocks(n: int, bs: int, up: bool) -> int:
    """`n` bytes in whole blocks, rounded up or down."""
    return -(-n // bs) * bs if up else n // bs * bs


def _read_share(o: _Options) -> int:
    """rwmixread, else 100 - rwmixwrite, else half and half (fio's default)."""
    read = o.integer("rwmixread", 0, 100)
    if read is not None:
        return read
    write = o.integer("rwmixwrite", 0, 100)
    return 50 if write is None else 100 - write


def _job_name(job: FioJob) -> str:
    """fio's name of a job: its own name=, else its section's (a [global] name= is not a job's)."""
    own = job.own.get("name")
    return own.value if own is not None and own.value else job.name


def _report(job: FioJob, o: _Options, engine: str, iodepth: int) -> Report:
    name, on_error = o.given("continue_on_error") or ("continue_on_error", "none")
    if on_error.lower() not in CONTINUE_ON_ERROR:
        raise ValueProblem(f"{name}={on_error}: not one of {', '.join(CONTINUE_ON_ERROR)}")
    description = o.given("description")
    return Report(
        jobname=_job_name(job), description=description and description[1],
        percentiles=_percentiles(o), clat_percentiles=o.flag("clat_percentiles", True),
        lat_percentiles=o.flag("lat_percentiles"), slat_percentiles=o.flag("slat_percentiles"),
        continue_on_error=CONTINUE_ON_ERROR[on_error.lower()], disk_util=o.flag("disk_util", True),
        slat_measured=engine not in SYNC_ENGINES, iodepth=iodepth)


def _percentiles(o: _Options) -> tuple[float, ...]:
    """percentile_list=Q:Q:...: fio sorts it and takes up to 20, each above 0 and at most 100."""
    given = o.given("percentile_list")
    if given is None:
        return FIO_PERCENTILES
    name, text = given
    fields = text.split(":")
    if len(fields) > MAX_PERCENTILES or not all(_PERCENTILE.match(f.strip()) for f in fields):
        raise ValueProblem(f"{name}={text}: write up to {MAX_PERCENTILES} percentiles separated "
                           "by colons, e.g. 50:99:99.9")
    values = sorted(float(f) for f in fields)
    if not 0 < values[0] <= values[-1] <= 100:
        raise ValueProblem(f"{name}={text}: each percentile must be above 0 and at most 100")
    return tuple(values)


def whole_drive_note(p: JobPlan) -> str:
    """Said before a job that has no limit runs: on a large drive it takes a while."""
    return (f"job [{p.step.label}] has no size=, io_size= or runtime=, so it simulates the "
            f"whole drive's capacity: {p.step.rw} of {format_bytes(p.step.size)} "
            f"({p.step.size:,} bytes); add size= for a shorter job")


def queue_note(p: JobPlan) -> str | None:
    """fio's own note when a synchronous engine caps the queue a job asks for."""
    if p.report.iodepth == p.step.iodepth:
        return None
    return (f"job [{p.step.label}]: ioengine={p.engine} is synchronous, so the queue depth is "
            f"capped at 1 (iodepth={p.report.iodepth} has no effect, as with fio; libaio or "
            "io_uring keep that many I/Os in flight)")


def batches(plans: list[JobPlan]) -> list[list[JobPlan]]:
    """The runs of jobs at once: a job with stonewall starts a new one, as fio waits there."""
    out: list[list[JobPlan]] = []
    for p in plans:
        if p.stonewall or not out:
            out.append([])
        out[-1].append(p)
    return out


def run_batch(backend: SimBackend, plans: list[JobPlan], index: int) -> list[JobRun]:
    """`plans` at once on the drive, as one Step; each job's own figures."""
    first, *others = (p.step for p in plans)
    step = Step.model_validate(first.model_dump() | {"concurrent": [o.model_dump() for o in others]})
    outcome = backend.run_step(step)
    total = outcome.result
    figures = outcome.jobs or (JobFigures(first.label, total, NO_LOG, False),)
    device = dict(total.device or {})
    read_bytes = sum(f.result.read.bytes for f in figures if f.result.read)
    unwritten = int(device.get("unwritten_read_bytes", 0))
    runs = []
    for p, f in zip(plans, figures, strict=True):
        r = f.result
        share = r.read.bytes / read_bytes if r.read and read_bytes else 0.0
        runs.append(JobRun(r, _pieces(p.step, r), _series(r), index, total.busy_s + total.idle_s,
                           device, f.io_log, round(unwritten * share), f.steady, f.log_truncated))
    return runs


NO_LOG = np.empty((0, 5), dtype=np.uint64)


def _pieces(step: Step, r: StepResult) -> tuple[int, ...]:
    """I/Os of each stretch of the job that began with an empty queue: each think period's
    (fio drains the queue before it thinks), the writes and the verify's reads."""
    if step.thinktime:
        whole, rest = divmod(r.ios, step.thinktime_blocks)
        return (step.thinktime_blocks,) * whole + ((rest,) if rest else ())
    if step.verify and r.read and r.write:
        return (r.write.ios, r.read.ios)
    return (r.ios,)


def write_logs(plans: list[JobPlan], runs: list[JobRun]) -> list[str]:
    """The log files the jobs ask for, written as fio writes them; notes on logs cut short."""
    notes = []
    for p, run in zip(plans, runs, strict=True):
        if p.logs is None:
            continue
        end_ns = round(p.step.runtime * 1e9) if p.step.time_based and p.step.runtime else None
        write_fio_logs(p.logs, run.io_log, end_ns=end_ns)
        if run.log_truncated:
            notes.append(f"job [{p.step.label}]: its logs hold its first {len(run.io_log):,} I/Os of "
                         f"{run.result.ios:,}, the most the simulator keeps per job")
    return notes


def unwritten_note(name: str, run: JobRun) -> str | None:
    """Said after a job whose reads found blocks never written: a fresh drive answers them
    without reading its NAND, as real drives answer deallocated blocks, so those reads
    measure the controller, not the flash."""
    read = run.result.read
    if read is None or not read.bytes or not run.unwritten_read_bytes:
        return None
    share = min(100.0, run.unwritten_read_bytes / read.bytes * 100)  # read-ahead may look past the job
    return (f"job [{name}]: {share:.0f} % of its reads were of blocks never written, which the drive "
            "answers without reading its NAND (as real drives answer deallocated blocks): those figures "
            "are the controller's, not the flash's; --prefill writes the jobs' ranges first, as fio lays "
            "out a file before reading it")


def prefill_steps(plans: list[JobPlan]) -> list[Step]:
    """A sequential 128 KiB QD32 write of every range a job reads, each byte once, in order."""
    spans = sorted((p.step.offset, p.step.offset + p.step.size) for p in plans if p.step.rw.reads)
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [Step.model_validate(data_present(end - start).model_dump() | {"offset": start, "label": "prefill"})
            for start, end in merged]


def _series(r: StepResult) -> tuple[tuple[float, float, float], ...]:
    """The job's per-second series as intervals of its time: (start, end, I/Os)."""
    out, begin = [], 0.0
    for point in r.per_second:
        out.append((begin, point.t_s, point.iops * (point.t_s - begin)))
        begin = point.t_s
    return tuple(out)
