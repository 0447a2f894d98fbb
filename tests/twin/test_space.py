"""The twin's search space: the simulator's own bounds (bounds.rs through
`_ssdsim.preset_bounds`), a window around the base's values inside them."""

from __future__ import annotations

import pytest

from ssdlab import _ssdsim
from ssdlab.distributed.overrides import apply_overrides
from ssdlab.presets import builtin_names, load_preset
from ssdlab.twin.space import PARAMETERS, WINDOW, Parameter, parameters


@pytest.mark.parametrize("name", builtin_names())
def test_every_parameter_searches_inside_the_simulators_bounds(name):
    text = load_preset(name).text
    bounds = {b["key"]: b for b in _ssdsim.preset_bounds(text)}
    found = parameters(text)
    assert len(found) >= len(PARAMETERS) - 2  # a static cache has no cap; every other is there
    for p in found:
        b = bounds[p.key]
        assert b["min"] <= p.low < p.high <= b["max"], p
        assert p.low <= max(p.base, p.low) <= p.high and p.high <= max(p.base, p.low) * WINDOW * 1.0001


def test_a_value_beyond_its_bound_is_refused_by_the_simulator_naming_it():
    preset = load_preset("crucial-p5plus-1tb")
    (bound,) = [b for b in _ssdsim.preset_bounds(preset.text) if b["key"] == "drive.nand.tlc.t_prog_us"]
    assert bound["value"] == 560.0 and bound["unit"] == "µs" and not bound["integer"]
    _ssdsim.Drive(apply_overrides(preset, {"drive.nand.tlc.t_prog_us": bound["max"]}))
    with pytest.raises(_ssdsim.PresetError, match="t_prog_us"):
        _ssdsim.Drive(apply_overrides(preset, {"drive.nand.tlc.t_prog_us": bound["max"] * 2}))


def test_a_preset_that_is_not_valid_is_refused():
    with pytest.raises(_ssdsim.PresetError):
        _ssdsim.preset_bounds("[drive]\nname = 3\n")


def test_an_integer_field_is_given_an_integer_the_simulator_takes():
    preset = load_preset("crucial-p5plus-1tb")
    (bound,) = [b for b in _ssdsim.preset_bounds(preset.text) if b["key"] == "drive.controller.write_buffer_kib"]
    buffer = Parameter(bound["key"], "write buffer", bound["value"], 400.0, 40000.0, bound["integer"])
    value = buffer.from_x(buffer.to_x(4506.6))
    assert value == 4507 and isinstance(value, int)
    _ssdsim.Drive(apply_overrides(preset, {bound["key"]: value}))
