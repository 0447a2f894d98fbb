"""The twin's search on figures from a formula, where each parameter shapes one test only:
it finds the truth, and after its first Jacobian a parameter's step measures only the test
it moves."""

from __future__ import annotations

import pytest

from ssdlab.twin.figures import Figure
from ssdlab.twin.search import search
from ssdlab.twin.sources import Source
from ssdlab.twin.space import Parameter

TRUTH = {"a": 2.0, "b": 4.0}


def figures(values: dict[str, float], test: str) -> dict[str, float]:
    if test == "reads":
        return {"QD1": 1000 / values["a"], "QD32": 5000 / values["a"] ** 0.8}
    return {"QD1": 2000 / values["b"], "fill 0-5 %": 3000 / values["b"] ** 0.5}


class Formula:
    """An evaluator whose figures come from `figures`; it keeps every request."""

    def __init__(self):
        self.asked: list[list[tuple[dict[str, float], list[tuple[int, str]]]]] = []
        self.measured_runs = 0

    def measure(self, asked):
        self.asked.append([(dict(values), list(tests)) for values, tests in asked])
        self.measured_runs += sum(len(tests) for _, tests in asked)
        return [{(i, t, name): v for i, t in tests for name, v in figures(values, t).items()}
                for values, tests in asked]


@pytest.fixture
def found():
    source = Source(run=None, tests=("reads", "writes"), host={}, durations={}, scores={},
                    figures=tuple(Figure(t, name, v) for t in ("reads", "writes")
                                  for name, v in figures(TRUTH, t).items()))
    params = [Parameter(key, key, base=1.0, low=0.1, high=10.0, integer=False) for key in TRUTH]
    evaluator = Formula()
    return search(evaluator, params, [source], held_out=set()), evaluator


def test_the_search_finds_the_truth_and_says_each_parameter_is_determined(found):
    fitted, _ = found
    for key, true in TRUTH.items():
        assert fitted.values[key] == pytest.approx(true, rel=0.01)
        assert fitted.determined(key) and fitted.moves[key] > 0.05
    assert fitted.rms < 0.01


def test_after_the_first_jacobian_a_step_measures_only_the_test_it_moves(found):
    _, evaluator = found
    jacobians = [asked for asked in evaluator.asked if len(asked) == 1 + len(TRUTH)]
    assert len(jacobians) >= 2
    every = [(0, "reads"), (0, "writes")]
    assert [tests for _, tests in jacobians[0]] == [every, every, every]
    for later in jacobians[1:]:
        assert [tests for _, tests in later] == [every, [(0, "reads")], [(0, "writes")]]
