"""The twin's choices: the parameters weighed at a few values (dies, planes, the write buffer,
firmware work) rather than by slopes. On figures from a formula the search takes the value
that the truth has and keeps what moves nothing; on the simulator an option of parallelism
keeps the drive's capacity and ceilings, so that what tells it apart is the shape; and a twin
of a drive with half the base's dies finds them."""

from __future__ import annotations

import json
import tomllib

import pytest

from ssdlab.distributed.overrides import apply_overrides
from ssdlab.presets import builtin_names, load_preset
from ssdlab.twin.base import sized
from ssdlab.twin.choices import Choice, Follower, choices
from ssdlab.twin.evaluate import candidate_text
from ssdlab.twin.figures import RATE, Figure
from ssdlab.twin.search import search
from ssdlab.twin.sources import Source
from ssdlab.twin.space import Parameter
from tests.conftest import run_cli
from tests.twin.test_search import Formula

# "n" dies, each reading in "a": a single read takes a, a deep queue reads n / a; "m" moves nothing
TRUTH = {"a": 4.0, "n": 4}


def figures(values: dict[str, float], test: str) -> dict[str, float]:
    n = values.get("n", 2)
    return {"QD1": 1000 / values["a"], "QD32": 500 * n / values["a"]}


def test_the_search_takes_the_value_the_runs_tell_and_keeps_what_moves_nothing():
    source = Source(run=None, tests=("reads",), host={}, durations={}, scores={},
                    figures=tuple(Figure("reads", name, v, RATE) for name, v in figures(TRUTH, "reads").items()))
    params = [Parameter("a", "a", base=1.0, low=0.1, high=100.0, integer=False)]
    dies = Choice("n", "dies", 2, (1, 4), (Follower("a", 1.0, 1.0, 0.1, 100.0, False),))
    nothing = Choice("m", "moves nothing", 8, (2, 32))
    fitted = search(Formula(figures), params, [source], held_out=set(), choices=[dies, nothing])
    # at 2 dies no a meets both figures; 4 dies, a read taking twice as long, meets both
    assert fitted.values["n"] == 4 and fitted.determined("n")
    assert fitted.values["a"] == pytest.approx(TRUTH["a"], rel=0.01)
    assert fitted.rms < 0.01
    assert set(fitted.weighed["n"]) == {1, 2}  # the base's too, once another was taken
    assert all(rates > 0.05 for rates, _ in fitted.weighed["n"].values())
    assert fitted.values["m"] == 8 and not fitted.determined("m")
    assert all(abs(rates) < 1e-3 for rates, _ in fitted.weighed["m"].values())


def _raw_bytes(text: str) -> int:
    g = tomllib.loads(text)["drive"]["geometry"]
    return (g["channels"] * g["dies_per_channel"] * g["planes_per_die"] * g["blocks_per_plane"]
            * g["pages_per_block"] * g["page_bytes"])


@pytest.mark.parametrize("name", builtin_names())
def test_every_option_is_a_drive_of_the_same_capacity(name):
    doc = sized(load_preset(name), 10 ** 12)
    base = _raw_bytes(candidate_text(doc, {}))
    found = choices(doc)
    assert {"drive.geometry.dies_per_channel", "drive.geometry.planes_per_die",
            "drive.controller.write_buffer_kib"} <= {c.key for c in found}
    for choice in found:
        assert choice.options and choice.base not in choice.options
        for option in choice.options:
            text = candidate_text(doc, choice.changes(option, {}))
            assert _raw_bytes(text) == pytest.approx(base, rel=0.01), (choice.key, option)


def test_an_option_of_parallelism_keeps_the_ceilings_and_changes_the_shape(tmp_path):
    """Twice the dies, each twice as slow: the same sequential write ceiling; single random
    reads far slower, a deep queue's much less (the same ceiling, reached at a deeper queue)."""
    preset = load_preset("crucial-p5plus-1tb")
    (dies,) = [c for c in choices(sized(preset, 10 ** 12)) if c.key == "drive.geometry.dies_per_channel"]
    doubled = tmp_path / "doubled.toml"
    doubled.write_text(apply_overrides(preset, dies.changes(4, {})))
    rates = {}
    for target in ("crucial-p5plus-1tb", doubled):
        db = tmp_path / f"{len(rates)}.db"
        run_cli("run", f"sim:{target}", "--tests", "seq-write-sustained,rand-read-sustained", "--scale", "0.01", db=db)
        shown = json.loads(run_cli("show", "latest", "--json", db=db).stdout)
        rates[target] = {(t["id"], s["label"]): s["result"]["mbps"] for t in shown["tests"] for s in t["steps"]
                         if s["phase"] == "measure"}
    base, twice = rates["crucial-p5plus-1tb"], rates[doubled]
    assert twice[("seq-write-sustained", "QD32")] == pytest.approx(base[("seq-write-sustained", "QD32")], rel=0.05)
    ratio = {qd: twice[("rand-read-sustained", qd)] / base[("rand-read-sustained", qd)] for qd in ("QD1", "QD32")}
    assert ratio["QD1"] < 0.7 and ratio["QD32"] > ratio["QD1"] + 0.1, ratio


HIDDEN = {"drive.geometry.dies_per_channel": 1, "drive.geometry.blocks_per_plane": 992,
          "drive.ftl.gc_low_superblocks": 6, "drive.ftl.gc_idle_superblocks": 12}  # the P5 Plus: 2, 496, 3, 6
TESTS = "rand-read-burst,rand-read-sustained,seq-read-sustained,seq-write-sustained,rand-write-sustained"


@pytest.mark.slow
def test_a_twin_of_a_drive_with_half_the_dies_finds_them(tmp_path):
    truth = tmp_path / "truth.toml"
    truth.write_text(apply_overrides(load_preset("crucial-p5plus-1tb"), HIDDEN))
    db = tmp_path / "ssdlab.db"
    run_cli("run", f"sim:{truth}", "--tests", TESTS, "--scale", "0.01", db=db)
    twin = tmp_path / "twin.toml"
    report = json.loads(run_cli("fit", "1", "-o", twin, "--base", "crucial-p5plus-1tb", "--json", db=db).stdout)
    found = {c["key"]: c for c in report["choices"]}
    assert found["drive.geometry.dies_per_channel"]["value"] == 1
    assert found["drive.geometry.dies_per_channel"]["determined"]
    assert found["drive.geometry.planes_per_die"]["value"] == 4  # the truth's, and the base's
    assert not found["drive.firmware.checkpoint_mib"]["determined"]  # no test writes 200 MiB of journal
    slc_read = next(p for p in report["parameters"] if p["key"] == "drive.nand.slc.t_read_us")
    assert slc_read["value"] == pytest.approx(28.0, rel=0.05)  # the truth's per-die read, not twice it
    assert report["rms_error"] < 0.01
    written = tomllib.loads(twin.read_text())["drive"]
    assert written["geometry"]["dies_per_channel"] == 1 and written["geometry"]["blocks_per_plane"] == 992
    assert "dies_per_channel = 1 # fitted to run 1 (5 tests): against 2 the RMS error +" in twin.read_text()
    shown = run_cli("fit", "1", "-o", twin, "--base", "crucial-p5plus-1tb", db=db).stdout  # resumed: nothing measured
    assert "weighed as choices" in shown and "0 runs measured" in shown
    assert "drive.firmware.checkpoint_mib" in shown and "(kept: not told)" in shown
