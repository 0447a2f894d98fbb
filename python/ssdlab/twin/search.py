"""The search for a twin's parameters: bounded nonlinear least squares (scipy.optimize's
trust-region reflective method) over the log of each parameter, on the log ratio of each
figure the twin gives to the one the drive gave.

Residuals. Every figure of every fitted test counts, each test's figures weighed by one over
the square root of their number, so that an 11-step sweep and a single burst weigh alike.
A figure the twin does not give (a step it could not run) counts as a tenfold error.

Jacobian. Forward differences of STEP in log space (about 10 %), all parameters of one
iteration measured at once, side by side (the simulation is deterministic but made of
discrete events: a step much smaller than that would measure rounding, not slope). The first
Jacobian measures every test at every step; after it, a parameter's step measures only the
tests it moved by more than SPARSE there (a read time does not move the fill, the cache's cap
no random read): the other tests' figures are taken as unmoved. That keeps the costly tests
(the whole-drive fill) to the parameters that shape them.

How well the data determine a parameter, from the last Jacobian: the largest change of any
fitted figure when it alone moves by 10 % (`moves`), and the rise of the fitted figures' RMS
error that move costs at the fit (`rise`, its quadratic term: at a minimum the linear one is
nil). A parameter whose 10 % moves no figure by DETERMINED is not told by the runs (a real
drive's figures repeat to a few percent), and the twin keeps the base's typical value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from ssdlab.twin.evaluate import Evaluator, Measured, Values
from ssdlab.twin.figures import Figure
from ssdlab.twin.sources import Source
from ssdlab.twin.space import Parameter

STEP = 0.1  # forward difference, in log space
TEN_PERCENT = math.log(1.1)
DETERMINED = 0.02  # the largest figure change at 10 %, below which a parameter is taken as undetermined
MISSING = math.log(10.0)
SPARSE = 1e-3  # a test whose figures a parameter's step moves by less than this (log ratio) is not re-measured
MAX_ITERATIONS = 12


@dataclass(frozen=True)
class Fitted:
    """What the search found: each parameter's value and how much the data tell it."""

    values: Values
    moves: dict[str, float]  # key: the largest change of a fitted figure at 10 % (fraction)
    rise: dict[str, float]  # key: the RMS error's rise at +-10 % (fraction)
    rms: float  # RMS of the fitted figures' log errors at the end

    def determined(self, key: str) -> bool:
        return self.moves[key] >= DETERMINED


def fitted_tests(sources: Sequence[Source], held_out: set[str]) -> list[tuple[int, str]]:
    return [(i, t) for i, s in enumerate(sources) for t in s.tests if t not in held_out]


def search(evaluator: Evaluator, params: Sequence[Parameter], sources: Sequence[Source], held_out: set[str],
           told: Callable[[str], None] = lambda _: None) -> Fitted:
    tests = fitted_tests(sources, held_out)
    fitted = set(tests)
    wanted = [(i, f) for i, s in enumerate(sources) for f in s.figures if (i, f.test) in fitted]
    weights = _weights(wanted)
    x0 = np.array([p.to_x(p.base) for p in params])
    lo, hi = np.array([math.log(p.low) for p in params]), np.array([math.log(p.high) for p in params])
    x0 = np.clip(x0, lo, hi)
    best = {"rms": math.inf}

    def values_at(x: np.ndarray) -> Values:
        return {p.key: p.from_x(v) for p, v in zip(params, x)}

    def residuals_of(measured: Measured) -> np.ndarray:
        r = []
        for (i, f), w in zip(wanted, weights):
            got = measured.get((i, f.test, f.name))
            r.append(w * (math.log(got / f.mbps) if got and got > 0 else MISSING))
        return np.array(r)

    def fun(x: np.ndarray) -> np.ndarray:
        (measured,) = evaluator.measure([(values_at(x), tests)])
        r = residuals_of(measured)
        rms = _rms(r, weights)
        if rms < best["rms"]:
            best["rms"] = rms
        told(f"{evaluator.measured_runs} runs measured; best RMS error so far {best['rms']:.1%}")
        return r

    # the tests each parameter's step measures: all, until the first Jacobian says which it moves
    moved_by: list[list[tuple[int, str]]] = [list(tests) for _ in params]
    sparse = {"known": False}
    rows = [[k for k, (i, f) in enumerate(wanted) if (i, f.test) == test] for test in tests]

    def jac(x: np.ndarray) -> np.ndarray:
        steps = [STEP if x[j] + STEP <= hi[j] else -STEP for j in range(len(x))]
        points = [x + steps[j] * np.eye(len(x))[j] for j in range(len(x))]
        m0, *moved = evaluator.measure([(values_at(x), tests)] + [(values_at(p), moved_by[j])
                                                                 for j, p in enumerate(points)])
        r0 = residuals_of(m0)
        columns = []
        for j, m in enumerate(moved):
            measured = set(moved_by[j])
            column = (residuals_of({k: v for k, v in m0.items() if (k[0], k[1]) not in measured} | m) - r0) / steps[j]
            columns.append(column)
            if not sparse["known"]:
                change = np.abs(column * steps[j]) / np.array(weights)
                moved_by[j] = [test for test, k in zip(tests, rows) if k and float(np.max(change[k])) > SPARSE]
        sparse["known"] = True
        return np.column_stack(columns)

    result = least_squares(fun, x0, jac=jac, bounds=(lo, hi), method="trf", x_scale="jac", ftol=1e-3, xtol=1e-3,
                           gtol=1e-4, max_nfev=MAX_ITERATIONS)
    j = jac(result.x)
    rms = _rms(result.fun, weights)
    w = np.array(weights)
    moves = {p.key: float(math.expm1(np.max(np.abs(column / w)) * TEN_PERCENT)) for p, column in zip(params, j.T)}
    square = float(np.sum(result.fun ** 2))
    rise = {p.key: _rms_of(square + float(np.sum((TEN_PERCENT * column) ** 2)), weights) - rms
            for p, column in zip(params, j.T)}
    values = {p.key: (p.from_x(v) if moves[p.key] >= DETERMINED else p.base) for p, v in zip(params, result.x)}
    return Fitted(values, moves, rise, rms)


def errors(measured: Measured, sources: Sequence[Source],
           tests: set[tuple[int, str]]) -> list[tuple[int, Figure, float]]:
    """(source, figure, the twin's relative error) for each figure of `tests`."""
    out = []
    for i, s in enumerate(sources):
        for f in s.figures:
            if (i, f.test) in tests:
                got = measured.get((i, f.test, f.name))
                out.append((i, f, (got / f.mbps - 1) if got else math.nan))
    return out


def _weights(wanted: Sequence[tuple[int, Figure]]) -> list[float]:
    counts: dict[tuple[int, str], int] = {}
    for i, f in wanted:
        counts[(i, f.test)] = counts.get((i, f.test), 0) + 1
    return [1 / math.sqrt(counts[(i, f.test)]) for i, f in wanted]


def _rms(r: np.ndarray, weights: Sequence[float]) -> float:
    """The weighted RMS of the log errors, as a fraction (exp - 1)."""
    return _rms_of(float(np.sum(r ** 2)), weights)


def _rms_of(square: float, weights: Sequence[float]) -> float:
    return float(math.expm1(math.sqrt(square / float(np.sum(np.array(weights) ** 2)))))

