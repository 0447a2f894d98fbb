"""The search for a twin's parameters: bounded nonlinear least squares (scipy.optimize's
trust-region reflective method) over the log of each parameter, on the log ratio of each rate
the twin gives to the one the drive gave, and on the difference of each temperature, a kelvin
counting as a 1 % error of a rate (a drive's rates repeat to a few percent, its temperatures to
a kelvin or two: KELVIN).

Residuals. Every figure of every fitted test counts, each test's rates weighed by one over the
square root of their number, and its temperatures alike, so that an 11-step sweep and a single
burst weigh alike. A figure the twin does not give (a step it could not run) counts as a
tenfold error.

Jacobian. Forward differences of STEP in log space (about 10 %), all parameters of one
iteration measured at once, side by side (the simulation is deterministic but made of
discrete events: a step much smaller than that would measure rounding, not slope). The first
Jacobian measures every test at every step; after it, a parameter's step measures only the
tests it moved by more than SPARSE there (a read time does not move the fill, the cache's cap
no random read): the other tests' figures are taken as unmoved. That keeps the costly tests
(the whole-drive fill) to the parameters that shape them.

How well the data determine a parameter, from the last Jacobian: the largest change of any
fitted rate when it alone moves by 10 % (`moves`), of any fitted temperature (`warms`), and
the rise of the fitted figures' RMS error that move costs at the fit (`rise`, its quadratic
term: at a minimum the linear one is nil). A parameter is told by the runs when its 10 %
moves a rate by DETERMINED or a temperature by DETERMINED_K (a real drive's rates repeat to a
few percent, its temperatures are whole degrees), or when putting it back at the base's
value alone, at the same slopes, would raise the rates' RMS error by BACK or the
temperatures' by BACK_K (`back`, `back_kelvin`): a fixed latency three times the base's tells
in every QD1 figure though 10 % of it moves each little. Else the twin keeps the base's
typical value: a parameter the search moved far along a flat direction is not kept for it.
Where a parameter goes back so, the others are fitted again from there (at most
REFIT_ITERATIONS), so that the twin as written is the one fitted.

Choices (`choices.py`: the dies, the planes, the write buffer, firmware work) are weighed
last: each of their other values measured, the told parameters fitted again around it,
linearised at the fit (`scipy.optimize.lsq_linear` within the bounds, with the last
Jacobian). The value that lowers the rates' RMS error by BACK or the temperatures' by BACK_K
most is taken when fitting the told parameters again around it (REFIT_ITERATIONS, measured)
confirms it; the others are then weighed again from there. A choice whose every other value
costs BACK or BACK_K is told by the runs; else it keeps the base's value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import least_squares, lsq_linear

from ssdlab.twin.choices import Choice
from ssdlab.twin.evaluate import Evaluator, Measured, Values
from ssdlab.twin.figures import RATE, TEMPERATURE, Figure
from ssdlab.twin.sources import Source
from ssdlab.twin.space import Parameter

STEP = 0.1  # forward difference, in log space
TEN_PERCENT = math.log(1.1)
DETERMINED = 0.02  # the largest rate change at 10 %, below which a parameter is taken as undetermined
DETERMINED_K = 1.0  # the same of a temperature (K): a drive reports whole degrees
BACK = 0.005  # the rates' RMS error's rise, back at the base's value, from which a parameter is kept as fitted
BACK_K = 0.5  # the temperatures' (K)
MISSING = math.log(10.0)
SPARSE = 1e-3  # a test whose figures a parameter's step moves by less than this (log ratio) is not re-measured
MAX_ITERATIONS = 12
REFIT_ITERATIONS = 4  # the told parameters fitted again, the others back at the base's values
KELVIN = 0.01  # a temperature's error of 1 K weighs as a rate's of 1 % (a log ratio of 0.01)


@dataclass(frozen=True)
class Fitted:
    """What the search found: each parameter's value and how much the data tell it."""

    values: Values
    moves: dict[str, float]  # key: the largest change of a fitted rate at 10 % (fraction)
    warms: dict[str, float]  # key: the largest change of a fitted temperature at 10 % (K)
    rise: dict[str, float]  # key: the RMS error's rise at +-10 % (fraction; 1 K counting as 1 %)
    rms: float  # RMS of the fitted rates' log errors at the end (a fraction)
    rms_kelvin: float  # RMS of the fitted temperatures' errors at the end (K; nan without any)
    back: dict[str, float]  # key: the rates' RMS error's rise were it alone back at the base's value
    back_kelvin: dict[str, float]  # key: the temperatures' (K)
    kept: frozenset[str] = frozenset()  # the parameters (and choices) the runs do not tell: at the base's value
    # a choice's key: the RMS errors' rises (rates as a fraction, temperatures in K) at each of its other values
    weighed: dict[str, dict[float, tuple[float, float]]] = field(default_factory=dict)

    def determined(self, key: str) -> bool:
        return key not in self.kept

    @property
    def warmed(self) -> bool:
        """Do the fitted runs hold temperatures?"""
        return not math.isnan(self.rms_kelvin)


def fitted_tests(sources: Sequence[Source], held_out: set[str]) -> list[tuple[int, str]]:
    return [(i, t) for i, s in enumerate(sources) for t in s.tests if t not in held_out]


def search(evaluator: Evaluator, params: Sequence[Parameter], sources: Sequence[Source], held_out: set[str],
           told: Callable[[str], None] = lambda _: None, choices: Sequence[Choice] = ()) -> Fitted:
    """The twin's values: the parameters fitted, those the runs do not tell back at the base's
    and the others fitted again, then each of `choices` weighed (the module's docstring)."""
    return _Search(evaluator, params, sources, held_out, told).run(choices)


class _Search:
    def __init__(self, evaluator: Evaluator, params: Sequence[Parameter], sources: Sequence[Source],
                 held_out: set[str], told: Callable[[str], None]):
        self.evaluator, self.params, self.told = evaluator, list(params), told
        self.tests = fitted_tests(sources, held_out)
        self.wanted, self.weights = _wanted(sources, self.tests)
        self.lo = np.array([math.log(p.low) for p in params])
        self.hi = np.array([math.log(p.high) for p in params])
        self.x0 = np.clip(np.array([p.to_x(p.base) for p in params]), self.lo, self.hi)
        self.every = list(range(len(params)))
        self.keys = {p.key for p in params}
        self.chosen: Values = {}  # the choices' values away from the base's (and what follows them)
        self.best = math.inf
        # the tests each parameter's step measures: all, until the first Jacobian says which it moves
        self.moved_by: list[list[tuple[int, str]]] = [list(self.tests) for _ in params]
        self.sparse_known = False
        self.rows = [[k for k, (i, f) in enumerate(self.wanted) if (i, f.test) == test] for test in self.tests]

    def run(self, choices: Sequence[Choice]) -> Fitted:
        x = self.solve(self.x0, self.every, MAX_ITERATIONS)
        judged, j, r = self.judge(x)
        kept = [k for k, p in enumerate(self.params) if not told_by_runs(judged, p.key)]
        if any(x[k] != self.x0[k] for k in kept):
            # the twin as it will be written, its untold values back at the base's: the others
            # fitted again from there
            x[kept] = self.x0[kept]
            free = [k for k in self.every if k not in kept]
            if free:
                x = self.solve(x, free, REFIT_ITERATIONS)
                judged, j, r = self.judge(x)
            else:
                r = self.fun(x)
        x, judged, weighed = self.weigh(choices, x, kept, judged, j, r)
        untold = {key for key, costs in weighed.items() if key not in self.chosen and not _told_apart(costs.values())}
        values = {p.key: p.base if k in kept and x[k] == self.x0[k] else p.from_x(x[k])
                  for k, p in enumerate(self.params)}
        values |= {c.key: c.base for c in choices} | self.chosen
        kept_keys = frozenset(self.params[k].key for k in kept) | untold
        return replace(judged, values=values, kept=kept_keys, weighed=weighed)

    def weigh(self, choices: Sequence[Choice], x: np.ndarray, kept: Sequence[int], judged: Fitted, j: np.ndarray,
              r: np.ndarray) -> tuple[np.ndarray, Fitted, dict[str, dict[float, tuple[float, float]]]]:
        """Each choice's options weighed at `x` (Jacobian `j`, residuals `r`): measured, the told
        parameters fitted again around each, linearised (bounded linear least squares). The option
        that lowers the rates' RMS error by BACK or the temperatures' by BACK_K most is taken
        when fitting the told parameters again around it confirms it; then the others are
        weighed again from there. Returns the point, its judgement, and the RMS errors (rates,
        temperatures) each option would give, as rises over the twin's."""
        free = [k for k in self.every if k not in kept]
        at = {c.key: c.base for c in choices}
        found: dict[str, dict[float, tuple[float, float]]] = {c.key: {} for c in choices}
        while waiting := [c for c in choices if c.key not in self.chosen]:
            options = [(c, o) for c in waiting for o in c.options]
            self.told(f"weighing {len(options)} options of {len(waiting)} choices")
            starts = [self.option_start(c, o, x, free) for c, o in options]
            measured = self.evaluator.measure([(self.values_at(xa) | chosen, self.tests) for xa, chosen in starts])
            # the twin as it is, fitted again around itself alike: an option gains nothing from that refit alone
            _, current = self.refitted_linearly(x, r, j, free)
            here = _rms_apart(current, self.wanted, self.weights)
            best = None
            for (c, o), (xa, chosen), m in zip(options, starts, measured):
                xa, predicted = self.refitted_linearly(xa, self.residuals_of(m), j, free)
                found[c.key][o] = _rms_apart(predicted, self.wanted, self.weights)
                square = float(np.sum(predicted ** 2))
                if _lower(found[c.key][o], here) and square < float(np.sum(current ** 2)) \
                        and (best is None or square < best[0]):
                    best = (square, c, o, xa, chosen)
            if best is None:
                break
            _, c, o, start, chosen = best
            before = dict(self.chosen)
            self.chosen = chosen
            refitted = self.solve(start, free, REFIT_ITERATIONS) if free else start
            judged_there, j_there, r_there = self.judge(refitted)
            if float(np.sum(r_there ** 2)) >= float(np.sum(r ** 2)):
                found[c.key][o] = _rms_apart(r_there, self.wanted, self.weights)  # not confirmed
                self.chosen = before
                break
            found[c.key].pop(o)
            found[c.key][at[c.key]] = here
            at[c.key] = o
            x, judged, j, r = refitted, judged_there, j_there, r_there
        twin = _rms_apart(self.refitted_linearly(x, r, j, free)[1], self.wanted, self.weights)
        rises = {key: {o: (rms[0] - twin[0], rms[1] - twin[1]) for o, rms in options.items()}
                 for key, options in found.items()}
        return x, judged, rises

    def refitted_linearly(self, x: np.ndarray, r: np.ndarray, j: np.ndarray, free: Sequence[int]
                          ) -> tuple[np.ndarray, np.ndarray]:
        """The parameters `free` fitted again from `x` (residuals `r` there) at the slopes `j`,
        within their bounds: the point, and the residuals predicted there."""
        if not free:
            return x, r
        step = lsq_linear(j[:, free], -r, bounds=(self.lo[free] - x[free], self.hi[free] - x[free])).x
        moved = x.copy()
        moved[free] += step
        return moved, r + j[:, free] @ step

    def option_start(self, choice: Choice, option: float, x: np.ndarray, free: Sequence[int]
                     ) -> tuple[np.ndarray, Values]:
        """Where `option` of `choice` starts from `x`: its followers among the parameters the runs
        tell moved (an untold one is a typical value of one die, not a ceiling to keep), and the
        values it sets beyond the parameters (with the choices taken already)."""
        changes = choice.changes(option, self.values_at(x))
        start = x.copy()
        for k in free:
            if self.params[k].key in changes:
                start[k] = min(max(self.params[k].to_x(changes[self.params[k].key]), self.lo[k]), self.hi[k])
        return start, self.chosen | {key: v for key, v in changes.items() if key not in self.keys}

    def values_at(self, x: np.ndarray) -> Values:
        return {p.key: p.from_x(v) for p, v in zip(self.params, x)} | self.chosen

    def residuals_of(self, measured: Measured) -> np.ndarray:
        return _residuals(measured, self.wanted, self.weights)

    def fun(self, x: np.ndarray) -> np.ndarray:
        (measured,) = self.evaluator.measure([(self.values_at(x), self.tests)])
        r = self.residuals_of(measured)
        self.best = min(self.best, _rms(r, self.weights))
        self.told(f"{self.evaluator.measured_runs} runs measured; best RMS error so far {self.best:.1%}")
        return r

    def jac(self, x: np.ndarray, free: Sequence[int]) -> np.ndarray:
        """The columns of the parameters `free`, measured at once."""
        steps = {j: STEP if x[j] + STEP <= self.hi[j] else -STEP for j in free}
        m0, *moved = self.evaluator.measure([(self.values_at(x), self.tests)] + [
            (self.values_at(x + steps[j] * np.eye(len(x))[j]), self.moved_by[j]) for j in free])
        r0 = self.residuals_of(m0)
        columns = []
        for j, m in zip(free, moved):
            measured = set(self.moved_by[j])
            column = (self.residuals_of({k: v for k, v in m0.items() if (k[0], k[1]) not in measured} | m) - r0
                      ) / steps[j]
            columns.append(column)
            if not self.sparse_known:
                change = np.abs(column * steps[j]) / np.array(self.weights)
                self.moved_by[j] = [test for test, k in zip(self.tests, self.rows)
                                    if k and float(np.max(change[k])) > SPARSE]
        self.sparse_known = True
        return np.column_stack(columns)

    def solve(self, start: np.ndarray, free: list[int], iterations: int) -> np.ndarray:
        """The least-squares point over the parameters `free`, the others held where `start` has them."""
        def whole(z: np.ndarray) -> np.ndarray:
            x = start.copy()
            x[free] = z
            return x
        result = least_squares(lambda z: self.fun(whole(z)), start[free], jac=lambda z: self.jac(whole(z), free),
                               bounds=(self.lo[free], self.hi[free]), method="trf", x_scale="jac", ftol=1e-3,
                               xtol=1e-3, gtol=1e-4, max_nfev=iterations)
        return whole(result.x)

    def judge(self, x: np.ndarray) -> tuple[Fitted, np.ndarray, np.ndarray]:
        """How well the runs tell each parameter at `x`, with the Jacobian and residuals there."""
        j = self.jac(x, self.every)
        r = self.fun(x)
        return _judged(self.params, x, j, r, self.wanted, self.weights), j, r

def told_by_runs(fitted: Fitted, key: str) -> bool:
    """Do the runs tell the parameter `key` (the module's docstring)?"""
    return (fitted.moves[key] >= DETERMINED or fitted.warms[key] >= DETERMINED_K or fitted.back[key] >= BACK
            or fitted.back_kelvin[key] >= BACK_K)


def _lower(rms: tuple[float, float], than: tuple[float, float]) -> bool:
    """Is `rms` (rates, temperatures) lower than `than` by BACK in rates or BACK_K in temperatures?"""
    return rms[0] <= than[0] - BACK or rms[1] <= than[1] - BACK_K  # nan (no temperatures) is never lower


def _told_apart(rises: Collection[tuple[float, float]]) -> bool:
    """Does every other value of a choice raise the rates' RMS error by BACK or the temperatures' by BACK_K?"""
    return all(rates >= BACK or kelvin >= BACK_K for rates, kelvin in rises)


def _judged(params: Sequence[Parameter], x: np.ndarray, j: np.ndarray, r: np.ndarray,
            wanted: Sequence[tuple[int, Figure]], weights: Sequence[float]) -> Fitted:
    """How well the runs tell each parameter at `x` (Jacobian `j`, residuals `r`); no values yet."""
    rms = _rms(r, weights)
    w = np.array(weights)
    rates, heat = _by_unit(wanted)
    moves = {p.key: float(math.expm1(np.max(np.abs(column[rates] / w[rates]), initial=0.0) * TEN_PERCENT))
             for p, column in zip(params, j.T)}
    warms = {p.key: float(np.max(np.abs(column[heat] / w[heat]), initial=0.0) * TEN_PERCENT / KELVIN)
             for p, column in zip(params, j.T)}
    square = float(np.sum(r ** 2))
    rise = {p.key: _rms_of(square + float(np.sum((TEN_PERCENT * column) ** 2)), weights) - rms
            for p, column in zip(params, j.T)}
    here = _rms_apart(r, wanted, weights)
    back = {p.key: np.array(_rms_apart(r + column * (p.to_x(p.base) - v), wanted, weights)) - here
            for p, v, column in zip(params, x, j.T)}  # linearised at the fit
    return Fitted({}, moves, warms, rise, *here, {key: float(b[0]) for key, b in back.items()},
                  {key: float(b[1]) for key, b in back.items()})


def twin_rms(measured: Measured, sources: Sequence[Source], tests: Sequence[tuple[int, str]]) -> tuple[float, float]:
    """The RMS errors of the twin as written (its undetermined values back at the base's) on
    `tests`: its rates' (a fraction), its temperatures' (K; nan without any)."""
    wanted, weights = _wanted(sources, tests)
    return _rms_apart(_residuals(measured, wanted, weights), wanted, weights)


def _wanted(sources: Sequence[Source], tests: Sequence[tuple[int, str]]) -> tuple[list[tuple[int, Figure]],
                                                                                  list[float]]:
    """The figures of `tests` ((source, test) pairs), each with its source, and their weights."""
    fitted = set(tests)
    wanted = [(i, f) for i, s in enumerate(sources) for f in s.figures if (i, f.test) in fitted]
    return wanted, _weights(wanted)


def _residuals(measured: Measured, wanted: Sequence[tuple[int, Figure]], weights: Sequence[float]) -> np.ndarray:
    return np.array([w * residual(f, measured.get((i, f.test, f.name))) for (i, f), w in zip(wanted, weights)])


def _by_unit(wanted: Sequence[tuple[int, Figure]]) -> tuple[list[int], list[int]]:
    """The positions of the rates among `wanted`, and of the temperatures."""
    return ([k for k, (_, f) in enumerate(wanted) if f.unit == RATE],
            [k for k, (_, f) in enumerate(wanted) if f.unit == TEMPERATURE])


def _rms_apart(r: np.ndarray, wanted: Sequence[tuple[int, Figure]], weights: Sequence[float]) -> tuple[float, float]:
    """The RMS of the rates' residuals (a fraction) and of the temperatures' (K; nan without any)."""
    rates, heat = _by_unit(wanted)
    return (_rms(r[rates], [weights[k] for k in rates]),
            _rms(r[heat], [weights[k] for k in heat], KELVIN) if heat else math.nan)


def residual(figure: Figure, got: float | None) -> float:
    """The twin's `got` against the drive's figure: a rate's log ratio, a temperature's
    difference in units of KELVIN; MISSING where the twin gave none."""
    if figure.unit == TEMPERATURE:
        return MISSING if got is None else (got - figure.value) * KELVIN
    return math.log(got / figure.value) if got and got > 0 else MISSING


def errors(measured: Measured, sources: Sequence[Source],
           tests: set[tuple[int, str]]) -> list[tuple[int, Figure, float]]:
    """(source, figure, the twin's error) for each figure of `tests`: relative for a rate, in
    kelvins for a temperature."""
    out = []
    for i, s in enumerate(sources):
        for f in s.figures:
            if (i, f.test) in tests:
                got = measured.get((i, f.test, f.name))
                if got is None:
                    out.append((i, f, math.nan))
                else:
                    out.append((i, f, got - f.value if f.unit == TEMPERATURE else got / f.value - 1))
    return out


def _weights(wanted: Sequence[tuple[int, Figure]]) -> list[float]:
    counts: dict[tuple[int, str, str], int] = {}
    for i, f in wanted:
        counts[(i, f.test, f.unit)] = counts.get((i, f.test, f.unit), 0) + 1
    return [1 / math.sqrt(counts[(i, f.test, f.unit)]) for i, f in wanted]


def _rms(r: np.ndarray, weights: Sequence[float], kelvin: float | None = None) -> float:
    """The weighted RMS of the residuals: of log errors as a fraction (exp - 1), or with
    `kelvin` (the residual of 1 K) in kelvins."""
    if kelvin is not None:
        return math.sqrt(float(np.sum(r ** 2)) / float(np.sum(np.array(weights) ** 2))) / kelvin
    return _rms_of(float(np.sum(r ** 2)), weights)


def _rms_of(square: float, weights: Sequence[float]) -> float:
    return float(math.expm1(math.sqrt(square / float(np.sum(np.array(weights) ** 2)))))

