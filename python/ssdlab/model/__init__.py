"""The model: immutable, validated values shared by every part of ssdlab.

A suite names tests; a test compiles to steps; a backend turns each step into
a step result; a run is one suite on one target. Units are in the field names
(`_ns`, `_s`, `mbps`) or documented on the field: bytes for sizes, MB/s = 10^6
bytes/s for throughput.
"""

from ssdlab.model.results import (
    BadBlock,
    DirectionResult,
    GibPoint,
    Latency,
    SecondPoint,
    StepResult,
    Verification,
)
from ssdlab.model.runs import Run, RunStatus, Suite, Test, TestStatus, Wait
from ssdlab.model.steps import Age, Op, Phase, PowerOff, Step, TraceReplay

__all__ = [
    "Age", "BadBlock", "DirectionResult", "GibPoint", "Latency", "Op", "Phase", "PowerOff", "Run", "RunStatus",
    "SecondPoint", "Step", "StepResult", "Suite", "Test", "TestStatus", "TraceReplay", "Verification", "Wait",
]
