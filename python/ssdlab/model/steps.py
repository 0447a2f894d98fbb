"""Step: one fio-shaped unit of work, the common input of every backend."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ssdlab.units import format_bytes


class Op(StrEnum):
    """The I/O pattern, with fio's `rw=` names."""

    READ = "read"            # sequential read
    WRITE = "write"          # sequential write
    RANDREAD = "randread"
    RANDWRITE = "randwrite"
    RANDRW = "randrw"        # random mix, read share in `rwmixread`
    RW = "rw"                # sequential mix, read share in `rwmixread`
    TRIM = "trim"            # sequential TRIM (discard) of the span
    RANDTRIM = "randtrim"
    TRIMWRITE = "trimwrite"  # each block trimmed, then written, in order

    @property
    def is_mixed(self) -> bool:
        return self in (Op.RANDRW, Op.RW)

    @property
    def is_random(self) -> bool:
        return self in (Op.RANDREAD, Op.RANDWRITE, Op.RANDRW, Op.RANDTRIM)

    @property
    def writes(self) -> bool:
        return self in (Op.WRITE, Op.RANDWRITE, Op.RANDRW, Op.RW, Op.TRIMWRITE)

    @property
    def trims(self) -> bool:
        return self in (Op.TRIM, Op.RANDTRIM, Op.TRIMWRITE)

    @property
    def reads(self) -> bool:
        return self in (Op.READ, Op.RANDREAD, Op.RANDRW, Op.RW)


class Phase(StrEnum):
    """What a step is for, within its test."""

    PURGE = "purge"                # return the drive to fresh-out-of-box (secure erase / full TRIM)
    PRECONDITION = "precondition"  # write the data the test needs, not scored
    MEASURE = "measure"            # the workload whose results are scored
    AGE = "age"                    # a simulated drive worn to its `age` (no I/O; real drives age by writing)
    OFF = "off"                    # a simulated drive left unpowered (`power_off`): its data's charge leaks


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class AgeUnit(StrEnum):
    PE = "pe"            # native P/E cycles
    PERCENT = "percent"  # of the rated P/E cycles (the health log's Percentage Used)
    TBW = "tbw"          # TB written by the host, a share of the rated TBW


AGE_SUFFIXES = {"pe": AgeUnit.PE, "%": AgeUnit.PERCENT, "tbw": AgeUnit.TBW}
AGE_FORMS = "2000pe (P/E cycles), 80% (of the rated cycles) or 400TBW (TB written by the host)"
# Why only a simulated drive takes an age: said wherever a real target meets one.
REAL_DRIVES_AGE = "a real drive ages by writing (the endurance suite)"


class PowerOff(_Part):
    """A simulated drive left unpowered for `seconds` at `temperature_c` (crates/ssdsim
    wear::retention): its data ages by the Arrhenius factor of that temperature."""

    seconds: float = Field(ge=0, le=3.2e9, description="a century at most")
    temperature_c: float = Field(ge=-40, le=125, description="storage and bake temperatures")


class Age(_Part):
    """How worn a simulated drive is made (crates/ssdsim wear::age): what is beyond its
    life, or needs a rating its preset lacks, the simulator refuses with what it allows."""

    value: float = Field(ge=0, le=1e7)
    unit: AgeUnit
    # NAND bytes per host byte of the writes the age stands for, where they were measured (the
    # endurance test's sample of its workload); None: the rating's own (MAX_WRITE_AMPLIFICATION in wear::age)
    write_amplification: float | None = Field(default=None, ge=1, le=100)

    @classmethod
    def parse(cls, text: str) -> Age:
        """`2000pe`, `80%` or `400TBW` (any case, spaces allowed before the unit)."""
        spec = text.strip().lower()
        for suffix, unit in AGE_SUFFIXES.items():
            number = spec.removesuffix(suffix).strip()
            if number != spec:
                try:
                    value = float(number)
                except ValueError:
                    break
                if 0 <= value <= 1e7:  # NaN and inf fail too
                    return cls(value=value, unit=unit)
                break
        raise ValueError(f"age {text!r}: give {AGE_FORMS}, a number of 0 or more")

    def __str__(self) -> str:
        shown = {AgeUnit.PE: "pe", AgeUnit.PERCENT: "%", AgeUnit.TBW: "TBW"}[self.unit]
        return f"{self.value:g}{shown}"


class SplitSize(_Part):
    """One size of fio's bssplit: bytes, and the share of commands in percent."""

    bs: int = Field(ge=512, le=1 << 30)
    pct: float = Field(ge=0, le=100)


class Zone(_Part):
    """One zone of a zoned distribution: its share of commands (%), and its extent, a share
    of the span (%, zoned) or bytes (zoned_abs), zones following one another from the span's start."""

    access_pct: float = Field(ge=0, le=100)
    extent: float = Field(ge=0)


class Uniform(_Part):
    kind: Literal["uniform"] = "uniform"


class Zipf(_Part):
    kind: Literal["zipf"] = "zipf"
    theta: float = Field(gt=0, le=100)


class Pareto(_Part):
    kind: Literal["pareto"] = "pareto"
    h: float = Field(gt=0, lt=1)


class Normal(_Part):
    kind: Literal["normal"] = "normal"
    dev_pct: float = Field(ge=0, le=100)


class Zoned(_Part):
    kind: Literal["zoned"] = "zoned"
    zones: tuple[Zone, ...] = Field(min_length=1, max_length=256)


class ZonedAbs(_Part):
    kind: Literal["zoned_abs"] = "zoned_abs"
    zones: tuple[Zone, ...] = Field(min_length=1, max_length=256)


# Where random commands fall in the span, with fio's random_distribution names
# (crates/ssdsim/src/run/spread.rs draws them as fio 3.33 does).
Distribution = Annotated[Uniform | Zipf | Pareto | Normal | Zoned | ZonedAbs, Field(discriminator="kind")]


class Flow(_Part):
    """fio's flow: jobs of one id issue in proportion to their weights."""

    id: int = Field(ge=0, le=2**32 - 1)
    weight: int = Field(ge=1, le=1_000_000)


class SteadyState(_Part):
    """fio's steadystate (crates/ssdsim/src/run/steady.rs): the job ends once the last
    `dur_s` per-second samples of its IOPS (or bandwidth) are within `limit` of their mean,
    or their slope is below it (`slope`); `pct`: the limit is a percentage of the mean."""

    iops: bool
    slope: bool
    limit: float = Field(ge=0, le=1e18)
    pct: bool
    dur_s: int = Field(ge=1, le=86_400)
    ramp_s: float = Field(default=0.0, ge=0, le=1e6)


class TraceReplay(_Part):
    """A prepared trace (traces/prepared.py) whose records are the step's commands, in
    their order. Timed: each issued at its time from the step's start (open loop; the
    step's iodepth is the most outstanding at once, as a host's queue is); untimed: as fast
    as the drive takes them, iodepth at a time (closed loop, fio's replay_no_stall)."""

    path: str = Field(min_length=1, max_length=4096, description="the prepared trace file")
    records: int = Field(ge=1, le=1 << 40)
    timed: bool = True


# What a time-based step may move: no limit in practice (2^62 bytes is 146 years at
# 1 TB/s), and the largest byte count the simulator takes (UNLIMITED_BYTES in
# crates/ssdsim/src/step.rs).
UNLIMITED_BYTES = 1 << 62


class Step(BaseModel):
    """One workload unit. Sizes in bytes, times in seconds, with fio's meanings:

    - `size` is the span (the LBA range the I/O falls in) starting at `offset`.
    - `runtime` and `io_size` are limits; the step ends at whichever comes first.
      With neither, the span is transferred once (fio's default). `time_based` steps
      run for their whole `runtime`, over the span again and again (fio's
      `time_based`): a state measured for a minute, however fast the drive.
    - Idle: with `burst_bytes`, the I/O is issued in bursts of that many bytes
      (`io_size` in all); after each burst, and after the step when there are no
      bursts, the drive idles so that busy / (busy + idle) = `duty_cycle`. Then
      it idles a further `idle_after` seconds.
    - `per_gib_series` asks for throughput of every GiB written (the whole-drive fill).
    - `rate_iops` caps the I/O rate (fio's `rate_iops`): a light load, not a drive limit.
    - `fill_state` records the state of the drive the step runs in ("10% filled",
      "full, half trimmed"); it changes nothing in the workload.
    """

    # Finite floats only: JSON, in which a step goes to the simulator, has no inf or NaN
    # (pydantic would write null, and an infinite runtime would become no runtime).
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    label: str = Field(description="short name within the test, e.g. 'QD4' or 'read 70%'")
    phase: Phase = Phase.MEASURE
    rw: Op
    bs: int = Field(gt=0, description="block size, bytes")
    iodepth: int = Field(default=1, ge=1, le=4096)
    rwmixread: int | None = Field(default=None, ge=0, le=100, description="read share, percent")
    offset: int = Field(default=0, ge=0, description="bytes")
    size: int = Field(gt=0, description="span, bytes")
    runtime: float | None = Field(default=None, gt=0, description="seconds")
    io_size: int | None = Field(default=None, gt=0, description="bytes")
    time_based: bool = False
    burst_bytes: int | None = Field(default=None, gt=0)
    duty_cycle: float | None = Field(default=None, gt=0, le=1)
    idle_after: float = Field(default=0.0, ge=0, description="seconds")
    per_gib_series: bool = False
    rate_iops: int | None = Field(default=None, gt=0, description="I/Os per second at most")
    fill_state: str | None = Field(default=None, min_length=1, max_length=80,
                                   description="the drive's state during the step, for the record")
    # fio job options beyond the workload's shape (sim fio's; the simulator runs them):
    bssplit: tuple[SplitSize, ...] = Field(default=(), max_length=64,
                                           description="command sizes and their shares; empty: bs")
    blockalign: int | None = Field(default=None, ge=512, le=1 << 30,
                                   description="random offsets are multiples of it (default: smallest size)")
    offset_delta: int = Field(default=0, ge=-(1 << 62), le=1 << 62,
                              description="bytes added to each next sequential offset (rw=read:-8k)")
    distribution: Distribution = Uniform()
    randommap: bool = Field(default=False, description="fio's random map: each block once per pass")
    thinktime: float = Field(default=0.0, ge=0, le=1e6,
                             description="seconds waited after every thinktime_blocks commands")
    thinktime_blocks: int = Field(default=1, ge=1, le=(1 << 31) - 1)
    rate_bytes: int | None = Field(default=None, ge=1, le=1 << 40, description="bytes per second at most")
    ramp: float = Field(default=0.0, ge=0, le=1e6, description="seconds run before the figures start")
    flow: Flow | None = None
    steadystate: SteadyState | None = None
    verify: bool = Field(default=False, description="read back what the step wrote, after its writes")
    log_ios: bool = Field(default=False, description="keep every command, for fio's logs")
    concurrent: tuple[Step, ...] = Field(default=(), max_length=1023,
                                         description="jobs that run at the same time as this one")
    age: Age | None = Field(default=None, description="what an age step wears the drive to")
    power_off: PowerOff | None = Field(default=None, description="how long and how warm an off step leaves the drive")
    trace: TraceReplay | None = Field(default=None, description="a trace whose records are the commands")

    @model_validator(mode="after")
    def _consistent(self) -> Step:
        if self.rw.is_mixed != (self.rwmixread is not None):
            raise ValueError(f"rwmixread is required for rw=randrw/rw and only for them (rw={self.rw})")
        if self.bs % 512:
            raise ValueError(f"bs={self.bs} is not a multiple of 512 bytes")
        for name in ("offset", "size"):
            if getattr(self, name) % 512:
                raise ValueError(f"{name}={getattr(self, name)} is not a multiple of 512 bytes")
        if self.size < self.bs:
            raise ValueError(f"span {self.size} B is smaller than one block of {self.bs} B")
        if self.burst_bytes is not None:
            if self.duty_cycle is None or self.io_size is None:
                raise ValueError("bursts need both a duty cycle and an io_size (their total)")
            if self.io_size % self.burst_bytes or self.burst_bytes % self.bs:
                raise ValueError("io_size must be whole bursts, and a burst whole blocks")
        if self.time_based and (self.runtime is None or self.io_size is not None):
            raise ValueError("a time-based step needs a runtime and no io_size: time alone ends it")
        if self.rate_iops is not None and self.burst_bytes is not None:
            raise ValueError("rate_iops and bursts do not combine: a rate-limited step is its own light load")
        if self.phase in (Phase.PURGE, Phase.AGE, Phase.OFF) and (self.rate_iops is not None
                                                                   or self.fill_state is not None):
            what = {Phase.PURGE: "a purge", Phase.AGE: "an age step", Phase.OFF: "an off step"}[self.phase]
            raise ValueError(f"{what} has no rate and no fill state")
        if (self.phase is Phase.AGE) != (self.age is not None):
            raise ValueError("an age step, and only one, has an age")
        if (self.phase is Phase.OFF) != (self.power_off is not None):
            raise ValueError("an off step, and only one, has a power_off")
        self._consistent_job()
        if self.trace is not None:
            self._consistent_trace()
        return self

    def _consistent_trace(self) -> None:
        """A trace's records are the whole workload: nothing may shape them further."""
        shaping = {"bursts": self.burst_bytes, "rate_iops": self.rate_iops, "rate_bytes": self.rate_bytes,
                   "runtime": self.runtime, "io_size": self.io_size, "time_based": self.time_based,
                   "bssplit": self.bssplit, "thinktime": self.thinktime, "ramp": self.ramp, "flow": self.flow,
                   "steadystate": self.steadystate, "verify": self.verify, "concurrent": self.concurrent,
                   "per_gib_series": self.per_gib_series, "offset_delta": self.offset_delta}
        given = [name for name, value in shaping.items() if value]
        if self.phase is not Phase.MEASURE or given:
            raise ValueError("a trace step is a measured step whose records are its whole workload: "
                             f"it takes no {', '.join(given) or 'other phase'}")

    def _consistent_job(self) -> None:
        """The fio job options' rules (crates/ssdsim/src/step.rs checks them too)."""
        if self.bssplit and abs(sum(s.pct for s in self.bssplit) - 100) > 0.01:
            raise ValueError("bssplit shares must add up to 100 %")
        if any(s.bs % 512 for s in self.bssplit) or (self.blockalign or 0) % 512:
            raise ValueError("bssplit sizes and blockalign must be multiples of 512 bytes")
        if self.offset_delta and (self.rw.is_random or self.offset_delta % 512):
            raise ValueError("offset_delta moves sequential offsets by whole sectors: a random step has none")
        if self.distribution.kind != "uniform" and not self.rw.is_random:
            raise ValueError("a random distribution needs a random rw")
        if self.rate_bytes is not None and self.rate_iops is not None:
            raise ValueError("rate_bytes and rate_iops do not combine: give one")
        if self.verify and not self.rw.writes:
            raise ValueError("verify reads back what the step writes: it needs a writing rw")
        if self.concurrent and (self.burst_bytes is not None or self.per_gib_series or self.phase is Phase.PURGE):
            raise ValueError("a step with concurrent jobs has no bursts and no per-GiB series, and is no purge")
        for job in self.concurrent:
            if (job.phase is not Phase.MEASURE or job.burst_bytes is not None or job.idle_after
                    or job.per_gib_series or job.fill_state is not None or job.concurrent):
                raise ValueError(f"concurrent job {job.label!r} must be a plain measured job (no phase, "
                                 "bursts, idle after it, per-GiB series, fill state or jobs of its own)")

    @property
    def jobs(self) -> tuple[Step, ...]:
        """The step's fio jobs: itself, then those at once with it."""
        return (self, *self.concurrent)

    @property
    def bursts(self) -> int:
        """How many bursts the step is issued in (1 without bursts)."""
        return self.io_size // self.burst_bytes if self.burst_bytes and self.io_size else 1

    @property
    def bytes_limit(self) -> int:
        """The most bytes the step can transfer (UNLIMITED_BYTES: only time ends it): the
        io_size, else the span once in whole blocks (fio rounds a span down to them)."""
        if self.time_based:
            return UNLIMITED_BYTES
        return self.io_size if self.io_size is not None else self.size // self.bs * self.bs

    @classmethod
    def ageing(cls, age: Age, label: str = "age") -> Step:
        """The step that wears a simulated drive to `age`: no I/O, so its pattern and sizes
        are only what every Step must have."""
        return cls(label=label, phase=Phase.AGE, age=age, rw=Op.TRIM, bs=4096, size=4096)

    def describe(self) -> str:
        if self.age is not None:
            return f"age the drive to {self.age}"
        if self.power_off is not None:
            off = self.power_off
            return f"power off for {off.seconds / 3600:g} h at {off.temperature_c:g} °C"
        mix = f" {self.rwmixread}% read" if self.rwmixread is not None else ""
        limits = []
        if self.runtime is not None:
            limits.append(f"{self.runtime:g} s")
        if self.io_size is not None:
            limits.append(format_bytes(self.io_size))
        if self.time_based:
            limits = [f"{self.runtime:g} s, time-based"]
        rate = f" at {self.rate_iops} IOPS" if self.rate_iops is not None else ""
        if self.rate_bytes is not None:
            rate = f" at {format_bytes(self.rate_bytes)}/s"
        sizes = "/".join(format_bytes(s.bs) for s in self.bssplit) if self.bssplit else format_bytes(self.bs)
        spread = f" {self.distribution.kind}" if self.distribution.kind != "uniform" else ""
        state = f" [{self.fill_state}]" if self.fill_state else ""
        others = f"; with {len(self.concurrent)} more job(s) at once" if self.concurrent else ""
        return (
            f"{self.rw}{mix}{spread} bs={sizes} QD{self.iodepth}{rate} "
            f"over {format_bytes(self.size)}" + (f" ({' or '.join(limits)})" if limits else "")
            + state + others
        )
