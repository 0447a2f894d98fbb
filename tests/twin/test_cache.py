"""The SLC cache's size read from a whole-drive fill into a twin: the share that gives the
measured size is the share the drive was made with (the small test drive, filled whole)."""

from __future__ import annotations

import json

import pytest
import tomlkit

from ssdlab.presets import load_preset
from ssdlab.store import Store
from ssdlab.twin.cache import apply_cache, measured_cache
from ssdlab.twin.sources import load_sources
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET

TRUE_SHARE = 0.767  # the small test drive's max_cell_share


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    db = tmp_path_factory.mktemp("cache") / "ssdlab.db"
    run_cli("run", f"sim:{SMALL_PRESET}", "--tests", "whole-drive-fill", "--scale", "1", db=db)
    return db


def test_the_cache_a_fill_measured_gives_back_the_drives_share(filled):
    with Store.open_existing(filled, readonly=True) as store:
        run_id, gib = measured_cache(load_sources(store, [1]))
    score = json.loads(run_cli("show", "1", "--json", db=filled).stdout)["tests"][0]["primary_score"]
    assert run_id == 1 and gib == score["slc_cache_gib"] and gib > 1
    doc = tomlkit.parse(SMALL_PRESET.read_text())
    doc["drive"]["cache"]["max_cell_share"] = 0.3  # a base that is wrong about it
    key, line = apply_cache(doc, run_id, gib)
    assert key == "drive.cache.max_cell_share" and f"about {gib:.0f} GiB" in line
    assert doc["drive"]["cache"]["max_cell_share"] == pytest.approx(TRUE_SHARE, rel=0.10)
    assert "read from run 1: its whole-drive fill's SLC cache" in tomlkit.dumps(doc)


def test_a_fill_that_never_left_the_cache_tells_no_size(tmp_path):
    db = tmp_path / "ssdlab.db"
    run_cli("run", "sim:crucial-p5plus-1tb", "--tests", "whole-drive-fill", "--scale", "0.01", db=db)
    with Store.open_existing(db, readonly=True) as store:
        assert measured_cache(load_sources(store, [1])) is None


def test_a_static_cache_is_given_its_size_in_gb():
    doc = tomlkit.parse(load_preset("wd-black-2018-1tb").text)
    key, _ = apply_cache(doc, 7, 30.0)
    assert key == "drive.cache.static_gb" and doc["drive"]["cache"]["static_gb"] == pytest.approx(32.21, rel=1e-3)

