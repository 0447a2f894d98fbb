"""The twin's search on figures from a formula, where each parameter shapes one test only (a
rate or a temperature): it finds the truth, and after its first Jacobian a parameter's step
measures only the test it moves."""

from __future__ import annotations

import pytest

from ssdlab.twin.figures import RATE, TEMPERATURE, Figure
from ssdlab.twin.search import search
from ssdlab.twin.sources import Source
from ssdlab.twin.space import Parameter

TRUTH = {"a": 2.0, "b": 4.0, "c": 3.0}  # c: a thermal resistance, which moves only temperatures


def figures(values: dict[str, float], test: str) -> dict[str, float]:
    if test == "reads":
        return {"QD1": 1000 / values["a"], "QD32": 5000 / values["a"] ** 0.8}
    return {"QD1": 2000 / values["b"], "fill 0-5 %": 3000 / values["b"] ** 0.5,
            "write °C 1/4": 35 + 2 * values["c"], "write °C 4/4": 35 + 6 * values["c"]}


def unit(name: str) -> str:
    return TEMPERATURE if "°C" in name else RATE


class Formula:
    """An evaluator whose figures come from `formula` (this module's `figures` unless given);
    it keeps every request."""

    def __init__(self, formula=None):
        self.formula = formula or figures
        self.asked: list[list[tuple[dict[str, float], list[tuple[int, str]]]]] = []
        self.measured_runs = 0

    def measure(self, asked):
        self.asked.append([(dict(values), list(tests)) for values, tests in asked])
        self.measured_runs += sum(len(tests) for _, tests in asked)
        return [{(i, t, name): v for i, t in tests for name, v in self.formula(values, t).items()}
                for values, tests in asked]


@pytest.fixture
def found():
    source = Source(run=None, tests=("reads", "writes"), host={}, durations={}, scores={},
                    figures=tuple(Figure(t, name, v, unit(name)) for t in ("reads", "writes")
                                  for name, v in figures(TRUTH, t).items()))
    params = [Parameter(key, key, base=1.0, low=0.1, high=10.0, integer=False) for key in TRUTH]
    evaluator = Formula()
    return search(evaluator, params, [source], held_out=set()), evaluator


def test_the_search_finds_the_truth_and_says_each_parameter_is_determined(found):
    fitted, _ = found
    for key, true in TRUTH.items():
        assert fitted.values[key] == pytest.approx(true, rel=0.01)
        assert fitted.determined(key)
    assert fitted.moves["a"] > 0.05 and fitted.moves["b"] > 0.05 and fitted.moves["c"] == 0  # c moves no rate
    assert fitted.warms["c"] == pytest.approx(0.1 * 3 * 6, rel=0.1) and fitted.warms["a"] == 0  # 10 % of c: 1.8 K
    assert fitted.rms < 0.01 and fitted.rms_kelvin < 0.1


def test_after_the_first_jacobian_a_step_measures_only_the_test_it_moves(found):
    _, evaluator = found
    jacobians = [asked for asked in evaluator.asked if len(asked) == 1 + len(TRUTH)]
    assert len(jacobians) >= 2
    every = [(0, "reads"), (0, "writes")]
    assert [tests for _, tests in jacobians[0]] == [every] * (1 + len(TRUTH))
    for later in jacobians[1:]:
        assert [tests for _, tests in later] == [every, [(0, "reads")], [(0, "writes")], [(0, "writes")]]
