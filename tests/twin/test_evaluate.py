"""The fit's record names each candidate's figures by all they depend on: the same values over
another base, in another run's conditions, or after other tests, are another measurement."""

from __future__ import annotations

from types import SimpleNamespace

from ssdlab.presets import load_preset
from ssdlab.twin.base import sized
from ssdlab.twin.evaluate import EvaluationCache, Evaluator
from ssdlab.twin.figures import TEMPERATURE, Figure
from ssdlab.twin.sources import Source

VALUES = {"drive.nand.slc.t_read_us": 30.0}


def source(scale: float = 0.01, warm: bool = False, tests: tuple[str, ...] = ("a", "b")) -> Source:
    figures = (Figure("a", "QD1 °C 1/4", 40.0, TEMPERATURE),) if warm else ()
    return Source(run=SimpleNamespace(scale=scale), tests=tests, host={}, figures=figures, durations={}, scores={})


def key(base: str, sources: list[Source], values=VALUES, index: int = 0, test: str = "b") -> str:
    evaluator = Evaluator(sized(load_preset(base), 10 ** 12), sources, EvaluationCache(None))
    try:
        return evaluator.key(values, index, test)
    finally:
        evaluator.close()


def test_the_same_candidate_has_the_same_key():
    assert key("crucial-p5plus-1tb", [source()]) == key("crucial-p5plus-1tb", [source()])


def test_another_base_values_conditions_or_tests_before_are_another_measurement():
    one = key("crucial-p5plus-1tb", [source()])
    assert key("samsung-980pro-1tb", [source()]) != one
    assert key("crucial-p5plus-1tb", [source()], {"drive.nand.slc.t_read_us": 31.0}) != one
    assert key("crucial-p5plus-1tb", [source(scale=0.02)]) != one
    assert key("crucial-p5plus-1tb", [source(scale=0.02), source()], index=1) == one  # by conditions, not place
    # a warmed test starts as warm as the tests before it left the drive
    warm = key("crucial-p5plus-1tb", [source(warm=True)])
    assert warm != key("crucial-p5plus-1tb", [source(warm=True, tests=("c", "b"))])
    assert key("crucial-p5plus-1tb", [source(tests=("c", "b"))]) == one  # not so a cold one's
