"""What fitting a trace to a target asks (`Fit`) and what it made (`Prepared`): the
choices of traces/fitting.py, without its numpy, for the catalogue and the store."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ssdlab.units import format_bytes


class Fit(BaseModel):
    """How a trace is fitted to its target."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    device: str | None = Field(default=None, min_length=1, max_length=256,
                               description="keep only this disk's records (traces of several)")
    offsets: Literal["wrap", "scale"] = Field(default="wrap", description="how offsets past the target come in")
    block: int = Field(default=4096, ge=512, le=1 << 20, description="the target's logical block, bytes")
    idle_cap_us: int | None = Field(default=25_000, ge=0, le=3_600_000_000,
                                    description="longest gap between issue times, µs; None: uncapped")
    speed: float = Field(default=1.0, ge=1e-3, le=1e3, description="time scale: 2 replays twice as fast")

    def describe(self) -> str:
        cap = "uncapped gaps" if self.idle_cap_us is None else f"gaps capped at {self.idle_cap_us / 1000:g} ms"
        parts = [f"offsets {'wrapped' if self.offsets == 'wrap' else 'scaled'} into the target", cap,
                 f"aligned to {format_bytes(self.block)}"]
        if self.speed != 1:
            parts.append(f"{self.speed:g}x the trace's speed")
        if self.device is not None:
            parts.append(f"device {self.device} only")
        return ", ".join(parts)


class Prepared(BaseModel):
    """A prepared trace and what fitting did to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    source: str  # the trace file and its format
    fit: Fit
    target_bytes: int
    records: int
    ops: dict[str, int]  # records per operation
    bytes: dict[str, int]  # bytes per operation, as replayed
    duration_us: int  # issue time of the last record, as replayed
    original_duration_us: int
    extent: int  # the largest end of any record before fitting
    notes: list[str]

    @staticmethod
    def beside(trace: Path) -> Path:
        """Where a prepared trace's description is kept: beside it, as its .json."""
        return trace.with_suffix(".json")

    @classmethod
    def of(cls, trace: Path) -> Prepared | None:
        """The description kept beside the prepared trace at `trace`; None when there is none
        to read (a cache emptied by hand)."""
        try:
            return cls.model_validate_json(cls.beside(trace).read_text())
        except (OSError, ValueError):
            return None
