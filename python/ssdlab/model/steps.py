"""Step: one fio-shaped unit of work, the common input of every backend."""

from __future__ import annotations

from enum import StrEnum

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

    @property
    def is_mixed(self) -> bool:
        return self in (Op.RANDRW, Op.RW)

    @property
    def is_random(self) -> bool:
        return self in (Op.RANDREAD, Op.RANDWRITE, Op.RANDRW)

    @property
    def writes(self) -> bool:
        return self in (Op.WRITE, Op.RANDWRITE, Op.RANDRW, Op.RW)

    @property
    def reads(self) -> bool:
        return self in (Op.READ, Op.RANDREAD, Op.RANDRW, Op.RW)


class Phase(StrEnum):
    """What a step is for, within its test."""

    PURGE = "purge"                # return the drive to fresh-out-of-box (secure erase / full TRIM)
    PRECONDITION = "precondition"  # write the data the test needs, not scored
    MEASURE = "measure"            # the workload whose results are scored


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
        if self.phase is Phase.PURGE and (self.rate_iops is not None or self.fill_state is not None):
            raise ValueError("a purge has no rate and no fill state")
        return self

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

    def describe(self) -> str:
        mix = f" {self.rwmixread}% read" if self.rwmixread is not None else ""
        limits = []
        if self.runtime is not None:
            limits.append(f"{self.runtime:g} s")
        if self.io_size is not None:
            limits.append(format_bytes(self.io_size))
        if self.time_based:
            limits = [f"{self.runtime:g} s, time-based"]
        rate = f" at {self.rate_iops} IOPS" if self.rate_iops is not None else ""
        state = f" [{self.fill_state}]" if self.fill_state else ""
        return (
            f"{self.rw}{mix} bs={format_bytes(self.bs)} QD{self.iodepth}{rate} "
            f"over {format_bytes(self.size)}" + (f" ({' or '.join(limits)})" if limits else "")
            + state
        )
