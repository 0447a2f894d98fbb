"""Test, Suite and Run: what is executed, in which order, on what."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ssdlab.model.steps import Step


class Test(BaseModel):
    """A catalogue test compiled for one scale and one target capacity."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    title: str
    primary_score: str = Field(description="what the score means, as METHODOLOGY.md names it")
    steps: tuple[Step, ...] = Field(description="run in order; a power test measures more after them, "
                                                "and may have none (catalogue/power.py)")
    settings: dict[str, Any] = Field(default_factory=dict, description="what the run's options set in the test "
                                                                       "beyond its steps (the endurance test's plan)")


class Suite(BaseModel):
    """An ordered list of catalogue test ids, kept as TOML."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    description: str
    tests: tuple[str, ...] = Field(min_length=1)

    @field_validator("tests")
    @classmethod
    def _unique(cls, tests: tuple[str, ...]) -> tuple[str, ...]:
        dupes = {t for t in tests if tests.count(t) > 1}
        if dupes:
            raise ValueError(f"tests listed twice: {', '.join(sorted(dupes))}")
        return tests


class RunStatus(StrEnum):
    RUNNING = "running"      # its process is working on it
    DONE = "done"
    FAILED = "failed"        # a test failed; resume retries from it
    # Shown, never stored: stored as running, but no process holds it (killed, crashed,
    # power lost); `ssdlab resume` continues it.
    INTERRUPTED = "interrupted"
    # Shown, never stored: stored as running, no process holds it, and its retention test
    # waits for the drive to be read back (a Wait); `ssdlab resume` after the date continues it.
    WAITING = "waiting"


class TestStatus(StrEnum):
    __test__ = False  # not a pytest test class
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"  # the target cannot give what the test needs; the store says why
    WAITING = "waiting"  # shown, never stored: a retention test stopped at its wait, not read back yet


class Run(BaseModel):
    """One suite on one target, as stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int
    name: str | None
    target: str
    target_kind: str = Field(pattern=r"^(device|file|sim)$")
    suite: str
    scale: float = Field(gt=0, le=1)
    status: RunStatus
    created_at: str
    finished_at: str | None = None
    identity: dict[str, Any] = Field(default_factory=dict)
    host: dict[str, Any] = Field(default_factory=dict)
    ssdlab_version: str | None = Field(default=None, description="the ssdlab that made the run")
    waiting_until: str | None = Field(default=None, description="a waiting run: when its wait ends, ISO 8601 UTC")


class Wait(BaseModel):
    """A retention test's wait on a real drive (catalogue/retention.py): the run stopped after the
    test's write phase, the drive kept as the user stated until `until`; `ssdlab resume` reads it
    back. The wait is over once its off step (`idx`) is stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(ge=0, description="the test")
    idx: int = Field(ge=0, description="its off step")
    seed: int = Field(ge=0, description="fio's randseed of the pattern written")
    since: str = Field(description="when the run stopped, ISO 8601 UTC")
    until: str = Field(description="when the user was to come back, ISO 8601 UTC")
    over: bool = Field(default=False, description="its off step is stored: the drive was read back")
