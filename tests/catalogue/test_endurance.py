"""The endurance test's plan: volumes, workloads and probes from the options, the steps each
compiles to (a real drive's chunks, a simulated drive's sample and age), and the wear of an
interval set by an age step agreeing with the same interval written for real."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ssdlab import session
from ssdlab.backends.sim import SimBackend
from ssdlab.catalogue import Scale, compile_tests, lookup
from ssdlab.catalogue.endurance import JESD219_SIZES, TB, Volume, Workload, endurance_plan
from ssdlab.errors import BackendFailed, SsdlabError
from ssdlab.model import Op, Phase
from ssdlab.presets import load_preset
from ssdlab.store import Store
from ssdlab.telemetry.records import HealthLog
from ssdlab.units import GiB, MiB
from tests.factories import result
from tests.paths import SMALL_PRESET

PRESET_TEXT = SMALL_PRESET.read_text()  # rates 600 TBW


@pytest.mark.parametrize(("text", "value", "percent"), [
    ("600TB", 600.0, False), (" 1.5 tb ", 1.5, False), ("100%", 100.0, True), ("2.5e1%", 25.0, True)])
def test_a_volume_is_tb_written_or_a_share_of_the_rated_tbw(text, value, percent):
    assert Volume.parse(text) == Volume(value, percent)


@pytest.mark.parametrize("text", ["", "600", "600GB", "0TB", "-1TB", "nanTB", "infTB", "2e6TB", "1001%", "1e400TB",
                                  "5%%", "TB"])
def test_a_volume_out_of_bounds_or_without_its_unit_is_refused_with_the_forms_it_takes(text):
    with pytest.raises(SsdlabError, match=r"give TB written \(600TB.*or a share of the drive's rated TBW \(100%"):
        Volume.parse(text)


def test_the_plan_defaults_to_the_rated_tbw_in_ten_intervals_of_the_jesd219_mix():
    plan = endurance_plan(None, None, None, PRESET_TEXT, simulated=True)
    assert plan == {"volume_bytes": 600 * TB, "workload": Workload.JESD219, "probes": 10, "sampled": True}
    assert endurance_plan("50%", "seq", 4, PRESET_TEXT, True)["volume_bytes"] == 300 * TB


def test_a_real_drive_states_its_volume_in_tb():
    with pytest.raises(SsdlabError, match=r"give --endurance-volume, the drive's rated TBW from its datasheet"):
        endurance_plan(None, "seq", None, None, simulated=False)
    with pytest.raises(SsdlabError, match=r"100% is a share of the rated TBW, which this drive does not state"):
        endurance_plan("100%", None, None, None, simulated=False)
    assert endurance_plan("2TB", "random", 3, None, False) == {
        "volume_bytes": 2 * TB, "workload": Workload.RANDOM, "probes": 3, "sampled": False}


@pytest.mark.parametrize(("workload", "probes", "says"), [
    ("zipf", None, r"--endurance-workload 'zipf': give one of seq, random, jesd219"),
    (None, 0, r"--endurance-probes 0: give 1 to 1000"), (None, 1001, r"give 1 to 1000")])
def test_a_workload_or_probe_count_it_does_not_know_is_refused(workload, probes, says):
    with pytest.raises(SsdlabError, match=says):
        endurance_plan("1TB", workload, probes, None, False)


def compiled(volume_bytes: int, workload: Workload, probes: int, sampled: bool, capacity: int = 16 * GiB,
             scale: Scale | None = None):
    plan = {"volume_bytes": volume_bytes, "workload": workload, "probes": probes, "sampled": sampled}
    (test,) = compile_tests(["endurance"], scale or Scale(1.0), capacity, endurance=plan)
    return test


def test_a_real_drive_writes_each_interval_in_chunks_of_one_drive_and_probes_after_each():
    test = compiled(40 * GiB, Workload.SEQUENTIAL, 2, sampled=False)
    labels = [s.label for s in test.steps]
    probe = ["trim", "sustained write", "sequential write", "QD1 random read"]
    assert labels == ["purge", *(f"probe 0: {p}" for p in probe),
                      *(f"interval 1/2: seq {i}/2" for i in (1, 2)), *(f"probe 1: {p}" for p in probe),
                      *(f"interval 2/2: seq {i}/2" for i in (1, 2)), *(f"probe 2: {p}" for p in probe)]
    chunks = [s for s in test.steps if s.label.startswith("interval")]
    assert [s.io_size for s in chunks] == [16 * GiB, 4 * GiB] * 2 and {s.size for s in chunks} == {16 * GiB}
    trim, fill, seq, reads = test.steps[1:5]
    assert (trim.rw, trim.bs, trim.idle_after) == (Op.TRIM, 64 * MiB, 60.0)
    assert fill.per_gib_series and fill.size == 16 * GiB and fill.phase is Phase.MEASURE
    assert (seq.runtime, seq.time_based, reads.rw, reads.iodepth, reads.bs) == (60.0, True, Op.RANDREAD, 1, 4096)
    assert test.settings == {"volume_bytes": 40 * GiB, "workload": "seq", "probes": 2, "sampled": False}
    assert lookup("endurance").configured(test) == replace(lookup("endurance"), volume_bytes=40 * GiB,
                                                           workload=Workload.SEQUENTIAL, probes=2)


def test_a_simulated_drive_samples_one_drive_of_each_interval_and_ages_by_the_rest():
    test = compiled(100 * GiB, Workload.JESD219, 1, sampled=True)
    sample_1, sample_2, age = test.steps[5:8]
    assert (sample_1.io_size, sample_2.io_size) == (8 * GiB, 8 * GiB)
    assert age.phase is Phase.AGE and age.age.value * TB == pytest.approx(84 * GiB)
    # the JESD219 mix: its sizes and zones as CALIBRATION.md gives them
    assert [(s.bs, s.pct) for s in sample_1.bssplit] == list(JESD219_SIZES)
    assert sum(s.pct for s in sample_1.bssplit) == 100 and sample_1.rw is Op.RANDWRITE
    assert [(z.access_pct, z.extent) for z in sample_1.distribution.zones] == [(50, 5), (30, 15), (20, 80)]
    # an interval no larger than the drive is written for real, on the simulator too
    assert not any(s.phase is Phase.AGE for s in compiled(16 * GiB, Workload.RANDOM, 1, sampled=True).steps)


def test_scale_shrinks_the_volume_and_the_probes():
    test = compiled(1000 * GiB, Workload.RANDOM, 2, sampled=False, capacity=512 * GiB, scale=Scale(0.01))
    chunks = [s for s in test.steps if s.label.startswith("interval")]
    assert sum(s.io_size for s in chunks) == pytest.approx(10 * GiB, rel=1e-3)
    probe = [s for s in test.steps if s.label.startswith("probe 1")]
    assert probe[1].size == round(512 * GiB * 0.01) // MiB * MiB and probe[2].runtime == 1.0
    assert probe[0].idle_after == pytest.approx(0.6)


def endurance_on_the_simulator(tmp_path, sampled: bool) -> tuple[dict, dict]:
    """The score of four whole passes written sequentially in one interval on the small drive in
    blocks a quarter as large (96 superblocks), and the drive's counters after the last probe.
    Whole passes: a last partial one written for real (4 passes and 4.7 GB) leaves this small
    drive's cache open through the probe's writes after its fill, folding, 13 % slower; an age
    step, which ends no pass part-way, does not (what a sample cannot know)."""
    preset = tmp_path / "finer.toml"
    preset.write_text(PRESET_TEXT.replace("blocks_per_plane = 24 ", "blocks_per_plane = 96 ")
                      .replace("pages_per_block = 1152 ", "pages_per_block = 288 "))
    backend = SimBackend(load_preset(str(preset)))
    passes = 4 * (backend.capacity // MiB * MiB)
    plan = {"volume_bytes": passes, "workload": Workload.SEQUENTIAL, "probes": 1, "sampled": sampled}
    tests = compile_tests(["endurance"], Scale(1.0), backend.capacity, endurance=plan)
    with Store(tmp_path / f"sampled-{sampled}.db") as store:
        run_id = store.create_run(name=None, target="sim:small", target_kind="sim", suite="endurance",
                                  suite_toml="name='endurance'", scale=1.0, tests=tests, identity={}, host={},
                                  engine=backend.describe(), options={})
        session._execute(store, run_id, backend, tests, False, session._simulated_telemetry("sim:small", backend),
                         Scale(1.0))
        (record,) = store.tests(run_id)
        return record.score, store.steps(run_id, record.seq)[-1].result.device


def test_an_interval_aged_at_the_samples_rate_agrees_with_the_interval_written(tmp_path):
    (aged, aged_after), (written, written_after) = (endurance_on_the_simulator(tmp_path, s) for s in (True, False))
    assert any(p.get("slc_cache_gib") for p in aged["probes"])
    for key in ("written_bytes",):
        assert aged[key] == pytest.approx(written[key], rel=0.1)
    for a, w in zip(aged["probes"], written["probes"], strict=True):
        assert a["health"]["nand_written_bytes"] == pytest.approx(w["health"]["nand_written_bytes"], rel=0.1)
        # the next probe finds the drive alike: its cache, its speeds, its reads
        for figure in ("slc_cache_gib", "sustained_mbps", "seq_write_mbps", "qd1_read_mean_us"):
            assert a[figure] == pytest.approx(w[figure], rel=0.1), figure
    assert aged_after["mean_pe_cycles"] == pytest.approx(written_after["mean_pe_cycles"], rel=0.1)
    assert aged_after["mean_pe_cycles"] > 4


class RefusingDrive:
    """A real drive's run as the endurance test sees it: fio fails the `fails_at`-th step (an
    I/O error), and the health log then says what the drive says."""

    def __init__(self, fails_at: int, warning: int):
        self.done, self.healths, self.fails_at, self.warning = [], [], fails_at, warning

    def run_step(self, step, read_health=False):
        if len(self.done) == self.fails_at:
            raise BackendFailed("fio: io_u error on file /dev/nvme1n1: Input/output error: write offset=0")
        self.done.append((step, result()))
        self.healths.append(None)

    def health(self):
        return HealthLog(critical_warning=self.warning, host_written_bytes=10**12)


def test_a_real_drive_that_refuses_writes_read_only_ends_the_test_and_any_other_failure_fails_it():
    test = compiled(40 * GiB, Workload.SEQUENTIAL, 2, sampled=False)
    definition = lookup("endurance").configured(test)
    first_chunk = [s.label for s in test.steps].index("interval 1/2: seq 1/2")
    found = definition.run(RefusingDrive(first_chunk, warning=0b1000), test.steps)
    assert found["read_only"]["step"] == "interval 1/2: seq 1/2" and "Input/output error" in found["read_only"]["error"]
    with pytest.raises(BackendFailed, match="Input/output error"):
        definition.run(RefusingDrive(first_chunk, warning=0b0100), test.steps)  # degraded, not read-only
    with pytest.raises(BackendFailed):
        definition.run(RefusingDrive(4, warning=0b1000), test.steps)  # a read that fails is no read-only finding
