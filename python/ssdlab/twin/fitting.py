"""A fit from end to end: the sources, the base, the search, the twin measured on every test
(those held out too), the preset written and the report of what the fit found."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ssdlab.distributed.local import LocalRunner
from ssdlab.distributed.runner import RunnerFor
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.twin.base import choose_base, drive_bytes, drive_link, sized
from ssdlab.twin.cache import apply_cache, measured_cache
from ssdlab.twin.choices import choices
from ssdlab.twin.declared import apply_declared, declared
from ssdlab.twin.evaluate import EvaluationCache, Evaluator, candidate_text
from ssdlab.twin.figures import TEMPERATURE
from ssdlab.twin.search import errors, fitted_tests, search, twin_rms
from ssdlab.twin.sources import Source, load_sources
from ssdlab.twin.space import SIMULATOR_COOLING, ambient_parameter, parameters
from ssdlab.twin.writer import twin_text


def fit(store: Store, run_ids: Sequence[int], output: Path, base_name: str | None, held_out: set[str],
        jobs: int | None = None, told: Callable[[str], None] | None = None,
        runner_for: RunnerFor = LocalRunner.planned) -> dict[str, Any]:
    """Fit a twin to runs `run_ids`, write it to `output` (its record of measurements beside
    it), and return the fit's report."""
    sources = load_sources(store, run_ids)
    measured_tests = {t for s in sources for t in s.tests}
    if unknown := held_out - measured_tests:
        raise SsdlabError(f"--hold-out {', '.join(sorted(unknown))}: not among the runs' finished tests "
                          f"({', '.join(sorted(measured_tests))})")
    tests = fitted_tests(sources, held_out)
    if not tests:
        raise SsdlabError("--hold-out leaves no test to fit: hold out fewer")
    base = choose_base(sources, base_name)
    link = drive_link(sources)
    doc = sized(base, drive_bytes(sources), None if link is None else link[0])
    found_declared = declared(sources)
    read = [] if found_declared is None else apply_declared(doc, *found_declared)
    found_cache = measured_cache(sources)
    cache_key, cache_read = (None, "no whole-drive fill that went past the cache: the base's cache size kept") \
        if found_cache is None else apply_cache(doc, *found_cache)
    params = parameters(candidate_text(doc, {}), warmed_coolings(sources)) + [
        ambient_parameter(i, s.run.id, min(f.value for f in s.figures if f.unit == TEMPERATURE))
        for i, s in enumerate(sources) if s.warmed and s.run.target_kind != "sim"]
    discrete = choices(doc)
    cache = EvaluationCache(output.with_name(output.name + ".fit.json"))
    evaluator = Evaluator(doc, sources, cache, jobs, runner_for)
    try:
        found = search(evaluator, params, sources, held_out, told or (lambda _: None), discrete)
        every = [(i, t) for i, s in enumerate(sources) for t in s.tests]
        (twin,) = evaluator.measure([(found.values, every)])
    finally:
        evaluator.close()
    text = twin_text(doc, base, sources, params, discrete, found, tests, None if link is None else link[1],
                     store.path, {cache_key} if cache_key else set())
    partial = output.with_name(output.name + ".partial")
    partial.write_text(text)
    partial.replace(output)
    rms, rms_kelvin = twin_rms(twin, sources, tests)
    per_test: dict[tuple[int, str, str], dict[str, float]] = {}
    for i, figure, error in errors(twin, sources, set(every)):
        per_test.setdefault((i, figure.test, figure.unit), {})[figure.name] = error
    return {
        "drive": sources[0].run.identity.get("model") or sources[0].run.target,
        "runs": [s.run.id for s in sources], "base": base.name, "output": str(output),
        "rms_error": rms, "rms_kelvin": rms_kelvin, "evaluations": evaluator.measured_runs,
        "declared": read if found_declared else ["no power-states test among the runs: the base's table and "
                                                 "thresholds kept"],
        "cache": cache_read,
        "parameters": [{"key": p.key, "what": p.what, "value": found.values[p.key], "base": p.base, "low": p.low,
                        "high": p.high, "moves": found.moves[p.key], "warms": found.warms[p.key],
                        "rise": found.rise[p.key],
                        "determined": found.determined(p.key)} for p in params],
        "choices": [{"key": c.key, "what": c.what, "value": found.values[c.key], "base": c.base,
                     "weighed": [{"value": option, "rates": rates, "kelvin": kelvin}
                                 for option, (rates, kelvin) in sorted(found.weighed[c.key].items())],
                     "determined": found.determined(c.key)} for c in discrete],
        "tests": [{"run": sources[i].run.id, "test": test, "unit": unit, "figures": len(errs),
                   "held_out": test in held_out, "median_error": _median_abs(list(errs.values())),
                   "largest_error": max(errs.values(), key=_size), "errors": errs}
                  for (i, test, unit), errs in per_test.items()],
    }


def warmed_coolings(sources: Sequence[Source]) -> set[str]:
    """The coolings of the runs that hold the drive's temperatures (the simulator's own where a
    run names none): whose thermal resistance the search estimates."""
    return {str(s.host.get("cooling") or SIMULATOR_COOLING) for s in sources if s.warmed}


def _median_abs(errs: list[float]) -> float:
    finite = [abs(e) for e in errs if not math.isnan(e)]
    return statistics.median(finite) if finite else math.nan


def _size(e: float) -> float:
    return math.inf if math.isnan(e) else abs(e)
