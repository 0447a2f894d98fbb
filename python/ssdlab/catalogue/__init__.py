"""The test catalogue: every test of METHODOLOGY.md, by id, with its exact parameters."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ssdlab.catalogue.aged import AGED_TESTS
from ssdlab.catalogue.client import CLIENT_TESTS
from ssdlab.catalogue.definitions import TestDef
from ssdlab.catalogue.endurance import ENDURANCE_TESTS, Endurance
from ssdlab.catalogue.enterprise import ENTERPRISE_TESTS
from ssdlab.catalogue.estimate import step_seconds
from ssdlab.catalogue.lab import LAB_TESTS
from ssdlab.catalogue.power import POWER_TESTS, PowerTest
from ssdlab.catalogue.pts import PTS_TESTS, PtsTest
from ssdlab.catalogue.retention import RETENTION_TESTS, Retention
from ssdlab.catalogue.scaling import Scale
from ssdlab.catalogue.trace import TRACE_TESTS, TraceReplayTest
from ssdlab.errors import SsdlabError
from ssdlab.model import Phase, PowerOff, Test

Definition = TestDef | PowerTest | Retention | Endurance | TraceReplayTest | PtsTest
CATALOGUE: dict[str, Definition] = {t.id: t for t in (*CLIENT_TESTS, *LAB_TESTS, *ENTERPRISE_TESTS, *POWER_TESTS,
                                                      *AGED_TESTS, *RETENTION_TESTS, *ENDURANCE_TESTS, *TRACE_TESTS,
                                                      *PTS_TESTS)}


def lookup(test_id: str) -> Definition:
    try:
        return CATALOGUE[test_id]
    except KeyError:
        raise SsdlabError(f"unknown test {test_id!r}: `ssdlab tests` lists the "
                          f"{len(CATALOGUE)} tests ssdlab knows") from None


def check_selection(test_ids: tuple[str, ...] | list[str], origin: str) -> None:
    """Refuse a selection of tests that is empty, names a test twice or an unknown test:
    a run of no test would be stored as done, and a test named twice would be
    measured twice under one id."""
    if not test_ids:
        raise SsdlabError(f"{origin} names no test: give test ids from `ssdlab tests`, "
                          "separated by commas")
    if repeated := sorted({t for t in test_ids if test_ids.count(t) > 1}):
        raise SsdlabError(f"{origin} names {', '.join(map(repr, repeated))} more than once: "
                          "give each test once")
    for test_id in test_ids:
        lookup(test_id)


def compile_tests(test_ids: list[str] | tuple[str, ...], scale: Scale, capacity: int,
                  retention: PowerOff | None = None, endurance: dict[str, Any] | None = None,
                  trace: dict[str, Any] | None = None) -> list[Test]:
    """`retention`: the retention test's wait (--retention-days, --retention-c); else JEDEC's.
    `endurance`: the endurance test's fields (endurance.endurance_plan), which it cannot do without;
    `trace`: the trace test's (trace.trace_plan), its traces among them."""
    def configured(d: Definition) -> Definition:
        if retention is not None and isinstance(d, Retention):
            return replace(d, wait=retention)
        if endurance is not None and isinstance(d, Endurance):
            return replace(d, **endurance)
        if trace is not None and isinstance(d, TraceReplayTest):
            return replace(d, **trace)
        return d
    return [configured(lookup(t)).compile(scale, capacity) for t in test_ids]


def estimated_seconds(test: Test, scale: Scale, repeat: int = 1) -> float:
    """How long a compiled test takes, roughly: its steps (a measured one `repeat` times,
    except in a power, retention, endurance or PTS test: repeats.py), and what a power test does beyond them
    (idle-wake's timed reads and their idles, idle-power's idle). A real drive's time off in
    the retention test is not counted: the run stops for it."""
    definition = lookup(test.id)
    power = isinstance(definition, PowerTest)
    beyond = definition.run_seconds(scale) if power else 0.0
    times = 1 if power or isinstance(definition, Retention | Endurance | PtsTest) else repeat
    return sum(step_seconds(s) * (times if s.phase is Phase.MEASURE else 1) for s in test.steps) + beyond


__all__ = ["CATALOGUE", "Definition", "Endurance", "PowerTest", "PtsTest", "Retention", "Scale", "TestDef",
           "TraceReplayTest", "check_selection", "compile_tests", "estimated_seconds", "lookup"]
