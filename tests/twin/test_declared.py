"""A drive's declared power states and thermal thresholds, read from its power-states test
into its twin: here a simulated WD SN850's, into a twin based on the Samsung 980."""

from __future__ import annotations

import tomllib

import pytest
import tomlkit

from ssdlab import _ssdsim
from ssdlab.presets import load_preset
from ssdlab.store import Store
from ssdlab.twin.base import sized
from ssdlab.twin.declared import apply_declared, declared
from ssdlab.twin.sources import load_sources
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def read(tmp_path_factory):
    db = tmp_path_factory.mktemp("declared") / "ssdlab.db"
    run_cli("run", "sim:wd-sn850-1tb", "--tests", "power-states", db=db)
    with Store.open_existing(db, readonly=True) as store:
        return declared(load_sources(store, [1]))


def test_the_declared_table_and_thresholds_replace_the_bases(read):
    doc = sized(load_preset("samsung-980-1tb"), 10**12)
    assert apply_declared(doc, *read) == ["drive.thermal.wctemp_c", "drive.thermal.cctemp_c", "drive.thermal.tmt1_c",
                                          "drive.thermal.tmt2_c", "drive.power.states"]
    twin = tomllib.loads(tomlkit.dumps(doc))["drive"]
    sn850 = tomllib.loads(load_preset("wd-sn850-1tb").text)["drive"]
    assert twin["power"]["states"] == sn850["power"]["states"]
    assert {k: twin["thermal"][k] for k in ("wctemp_c", "cctemp_c", "tmt1_c", "tmt2_c")} == \
        {k: sn850["thermal"][k] for k in ("wctemp_c", "cctemp_c", "tmt1_c", "tmt2_c")}
    assert "# read from run 1: the drive's power-states test" in tomlkit.dumps(doc)
    _ssdsim.Drive(tomlkit.dumps(doc))  # a preset the simulator takes


def test_a_table_the_simulator_refuses_is_not_read_and_the_twin_says_why(read):
    run_id, score = read
    one_operational = {**score, "states": [{**ps, "operational": ps["index"] == 0} for ps in score["states"]]}
    doc = sized(load_preset("samsung-980-1tb"), 10**12)
    before = tomlkit.dumps(doc)
    (why,) = apply_declared(doc, run_id, one_operational)
    assert why.startswith("not read: the simulator refuses the drive's declared table")
    assert tomlkit.dumps(doc) == before
