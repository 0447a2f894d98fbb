"""A preset's variant: keys the preset has, values of their types, set anywhere in its tables,
and a text the simulator builds; anything else refused with a message, never a traceback."""

from __future__ import annotations

import re
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab import _ssdsim
from ssdlab.distributed.overrides import PresetKeys, apply_overrides, variant_name
from ssdlab.errors import SsdlabError
from ssdlab.presets import load_preset

BASE = load_preset("wd-sn850-1tb")
KEYS = PresetKeys.of(BASE)


def value_at(text: str, key: str):
    table = tomllib.loads(text)
    for part in key.split("."):
        table = table[part]
    return table


@pytest.mark.parametrize("key, text, expected", [
    ("drive.geometry.dies_per_channel", "8", 8),                 # an integer
    ("drive.cache.max_cell_share", "0.3", 0.3),                  # a float
    ("drive.user_capacity_gb", "512", 512.0),                     # an integer stands for a float
    ("drive.cache.idle_fold", "false", False),                   # a boolean, as TOML writes it
    ("drive.cache.policy", "static", "static"),                  # a string
    ("drive.errors.fresh_rber", "1e-4", 1e-4),                   # a number as TOML writes it
])
def test_a_value_is_read_as_the_type_of_the_key_it_replaces(key, text, expected):
    value = KEYS.parse(key, text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("key, text, says", [
    ("drive.geometry.dies_per_channel", "2.5", "is an integer: give a whole number such as 4, not '2.5'"),
    ("drive.geometry.dies_per_channel", "true", "is an integer"),
    ("drive.cache.max_cell_share", "lots", "is a number: give one such as 0.767, not 'lots'"),
    ("drive.cache.max_cell_share", "inf", "must be a finite number"),
    ("drive.cache.idle_fold", "1", "is a boolean: give true or false, not '1'"),
    ("drive.cache.max_cell_share", " ", "has an empty value"),
    ("drive.geometry.channels", "9" * 30, "beyond TOML's 64-bit integers"),
    ("drive.cache.policy", "x" * 201, "is 201 characters long: at most 200"),
])
def test_a_value_of_another_type_is_refused_naming_the_key(key, text, says):
    with pytest.raises(SsdlabError, match=re.escape(key)) as refused:
        KEYS.parse(key, text)
    assert says in str(refused.value)


@pytest.mark.parametrize("value, says", [
    (8.0, "is an integer, not a number (8.0)"),
    (True, "is an integer, not a boolean (true or false) (True)"),
    ("8", "is an integer, not a string ('8')"),
    ([1, 2], "is an integer, not an array"),
])
def test_a_typed_value_must_be_of_the_keys_type(value, says):
    with pytest.raises(SsdlabError, match="drive.geometry.dies_per_channel") as refused:
        KEYS.check("drive.geometry.dies_per_channel", value)
    assert says in str(refused.value)


def test_an_unknown_key_is_refused_with_the_nearest_keys_the_preset_has():
    with pytest.raises(SsdlabError) as refused:
        KEYS.resolve("drive.cache.max_cel_share")
    message = str(refused.value)
    assert message.startswith("drive.cache.max_cel_share is not a key of the preset wd-sn850-1tb: the nearest are "
                              "drive.cache.max_cell_share")
    assert "`ssdlab drives show` prints every key" in message


@pytest.mark.parametrize("key, says", [
    ("cache", "cache is a table of the preset wd-sn850-1tb, not a value: give one of its keys, e.g. drive.cache."),
    ("drive.power.states.ps3", "is a table of the preset"),
    ("drive.nand.tlc.read_levels", None),  # an array: refused when a value is given (below)
    ("", "an override needs a key"),
    ("geometry.dies_per_chanel", "the nearest are drive.geometry.dies_per_channel"),
])
def test_a_key_must_name_one_value_of_the_preset(key, says):
    if says is None:
        with pytest.raises(SsdlabError, match="is an array: a sweep sets numbers, booleans and strings"):
            KEYS.parse(KEYS.resolve(key), "1")
        return
    with pytest.raises(SsdlabError) as refused:
        KEYS.resolve(key)
    assert says in str(refused.value)


def test_a_key_may_leave_out_its_leading_drive():
    assert KEYS.resolve("cache.max_cell_share") == KEYS.resolve("drive.cache.max_cell_share") \
        == "drive.cache.max_cell_share"


def test_overrides_reach_nested_and_inline_tables_and_change_nothing_else():
    overrides = {"drive.geometry.dies_per_channel": 8, "drive.nand.tlc.t_prog_us": 700.0,
                 "drive.power.states.ps3.max_w": 0.03, "drive.cache.idle_fold": False}
    text = apply_overrides(BASE, overrides)
    changed, base = tomllib.loads(text), tomllib.loads(BASE.text)
    for key, value in overrides.items():
        assert value_at(text, key) == value
        *path, leaf = key.split(".")
        inner = base
        for part in path:
            inner = inner[part]
        inner[leaf] = value
    assert changed == base  # all else as it was
    assert text.startswith("# wd-sn850-1tb with drive.geometry.dies_per_channel = 8, ")
    _ssdsim.Drive(text)  # a preset the simulator builds


def test_a_variant_is_named_by_its_base_and_short_keys():
    assert variant_name("wd-sn850-1tb", {"drive.cache.max_cell_share": 0.3, "drive.geometry.dies_per_channel": 2,
                                         "drive.cache.idle_fold": True, "drive.cache.policy": "static"}) == \
        "wd-sn850-1tb[cache.max_cell_share=0.3,geometry.dies_per_channel=2,cache.idle_fold=true,cache.policy=static]"


# -- fuzz: whatever a user types, a value of the key's type or a message ------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
known_keys = st.sampled_from(sorted(KEYS.values))
typed_keys = st.one_of(known_keys, known_keys.map(lambda k: k.removeprefix("drive.")),
                       known_keys.map(lambda k: k[:-1]), known_keys.map(lambda k: k + ".x"), st.text(max_size=30))
texts = st.one_of(st.text(max_size=20), st.integers().map(str), st.floats().map(repr),
                  st.sampled_from(["true", "false", "nan", "-inf", "1e999", "0x10", "1_000", " 3 ", "٣", "\udcff"]))


@FUZZ
@given(typed_keys, texts)
def test_any_key_and_text_give_a_value_of_the_keys_type_or_a_message(key, text):
    try:
        full = KEYS.resolve(key)
        value = KEYS.parse(full, text)
    except SsdlabError:
        return
    existing = KEYS.values[full]
    assert type(value) is type(existing)
    assert value_at(apply_overrides(BASE, {full: value}), full) == value


@FUZZ
@given(known_keys, st.one_of(st.integers(), st.floats(), st.booleans(), st.text(max_size=20),
                             st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                                  max_size=2)))
def test_any_typed_value_is_of_the_keys_type_or_a_message(key, given_value):
    try:
        value = KEYS.check(key, given_value)
    except SsdlabError:
        return
    assert type(value) is type(KEYS.values[key])
    assert value_at(apply_overrides(BASE, {key: value}), key) == value
