"""A real drive's run does not record the air around the drive: where it holds the drive's
temperatures, the search estimates that ambient beside the twin's parameters. Here a simulated
run in 22 °C air, shown to the search as a real drive's would be (no host recorded)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import tomlkit

from ssdlab.presets import load_preset
from ssdlab.store import Store
from ssdlab.twin.evaluate import EvaluationCache, Evaluator, candidate_text
from ssdlab.twin.figures import TEMPERATURE
from ssdlab.twin.search import search
from ssdlab.twin.sources import load_sources
from ssdlab.twin.space import AMBIENT_RANGE_C, ambient_key, ambient_parameter
from tests.conftest import run_cli

PRESET = "crucial-p5plus-1tb"


def test_a_real_drives_ambient_comes_back_from_its_temperatures(tmp_path):
    db = tmp_path / "ssdlab.db"
    run_cli("run", f"sim:{PRESET}", "--tests", "seq-write-burst", "--scale", "0.1", "--ambient-c", "22", db=db)
    with Store.open_existing(db) as store:
        (simulated,) = load_sources(store, [1])
    source = replace(simulated, run=simulated.run.model_copy(update={"target_kind": "device"}), host={})
    coolest = min(f.value for f in source.figures if f.unit == TEMPERATURE)
    param = ambient_parameter(0, 1, coolest)
    assert param.base == pytest.approx(coolest - 5) and AMBIENT_RANGE_C[0] <= param.base <= AMBIENT_RANGE_C[1]
    evaluator = Evaluator(tomlkit.parse(load_preset(PRESET).text), [source], EvaluationCache(None), 2)
    try:
        fitted = search(evaluator, [param], [source], held_out=set())
    finally:
        evaluator.close()
    assert param.base < 21  # the search starts below it
    assert fitted.determined(param.key) and fitted.values[param.key] == pytest.approx(22, abs=0.5)
    assert fitted.rms_kelvin < 0.5


def test_an_ambient_is_a_runs_condition_not_a_preset_key():
    text = load_preset(PRESET).text
    assert candidate_text(tomlkit.parse(text), {ambient_key(0): 22.0}) == text
