"""The retention test's definition (catalogue/retention.py): its steps at a scale, its wait from
the run's options and their bounds, the Arrhenius equivalence, the identity a read-back needs,
and the latency share its score reads from a histogram."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from ssdlab.catalogue import Scale, compile_tests, lookup
from ssdlab.catalogue.retention import (
    DAY_S,
    JEDEC_CLIENT,
    acceleration,
    activation_energy,
    check_not_waited_on,
    check_same_drive,
    duration_words,
    early_warning,
    retention_wait,
)
from ssdlab.errors import SsdlabError
from ssdlab.model import Latency, Op, Phase, PowerOff, Run, RunStatus, Wait
from ssdlab.units import GiB, KiB, MiB
from tests.paths import SMALL_PRESET


def test_the_steps_write_read_wait_and_read_three_times_over_the_scaled_region():
    (test,) = compile_tests(["retention"], Scale(0.001), 64 * GiB)
    assert [(s.phase, s.rw) for s in test.steps] == [
        (Phase.PURGE, Op.TRIM), (Phase.PRECONDITION, Op.WRITE), (Phase.MEASURE, Op.READ), (Phase.OFF, Op.TRIM),
        (Phase.MEASURE, Op.READ), (Phase.MEASURE, Op.READ), (Phase.MEASURE, Op.READ)]
    _, fill, fresh, off, after, idle1, idle2 = test.steps
    assert {s.size for s in (fill, fresh, after, idle1, idle2)} == {GiB}  # the whole-drive floor
    assert {(s.bs, s.iodepth) for s in (fill, fresh, after, idle1, idle2)} == {(128 * KiB, 32)}
    assert off.power_off == JEDEC_CLIENT == PowerOff(seconds=365 * DAY_S, temperature_c=30)
    # 1 h then 24 h of powered idle, scaled without a floor; no idle between the wait and its read
    assert [s.idle_after for s in (fresh, after, idle1, idle2)] == [0, pytest.approx(3.6), pytest.approx(86.4), 0]
    assert [s.label for s in test.steps[2:]] == ["read fresh", "off 365 days at 30 °C", "read after the wait",
                                                 "read after 3.6 s idle", "read after 1.44 min more idle"]
    (whole,) = compile_tests(["retention"], Scale(1), 64 * GiB, PowerOff(seconds=14 * 3600, temperature_c=85))
    assert whole.steps[1].size == 64 * GiB and whole.steps[3].power_off.temperature_c == 85
    assert [s.idle_after for s in whole.steps[4:]] == [3600, 86400, 0]


def test_the_wait_options_default_to_jedecs_client_conditions_one_by_one():
    assert retention_wait(None, None) is None
    assert retention_wait(14 / 24, 85) == PowerOff(seconds=14 * 3600, temperature_c=85)
    assert retention_wait(None, 40) == PowerOff(seconds=365 * DAY_S, temperature_c=40)
    assert retention_wait(0, None) == PowerOff(seconds=0, temperature_c=30)


@pytest.mark.parametrize(("days", "celsius", "says"), [
    (-1, None, "--retention-days must be 0 to 37037 (a century): how long the drive is left powered off, not -1"),
    (math.nan, None, "--retention-days must be 0 to 37037 (a century)"),
    (math.inf, None, "not inf"),
    (40_000, None, "not 40000"),
    (None, 126, "--retention-c must be -40 to 125 °C: where the drive is kept while off (a shelf, an oven), not 126"),
    (None, -41, "not -41"),
    (1, math.nan, "--retention-c must be -40 to 125 °C"),
])
def test_a_wait_beyond_the_off_steps_bounds_is_refused_saying_what_it_allows(days, celsius, says):
    with pytest.raises(SsdlabError) as caught:
        retention_wait(days, celsius)
    assert says in str(caught.value)


def test_the_arrhenius_factor_gives_calibrations_jedec_equivalents():
    # CALIBRATION.md: with 1.1 eV, 1 year at 30 °C is about 500 h at 52 °C, 100 h at 66 °C, 14 h at 85 °C
    year_h = 365 * 24
    assert year_h / acceleration(52, 1.1) == pytest.approx(500, rel=0.05)
    assert year_h / acceleration(66, 1.1) == pytest.approx(100, rel=0.05)
    assert year_h / acceleration(85, 1.1) == pytest.approx(14, rel=0.05)
    assert acceleration(30, 1.1) == 1 and acceleration(20, 1.1) < 1 < acceleration(31, 1.1)
    assert acceleration(85, 0.5) < acceleration(85, 1.1)  # a weaker activation energy: less acceleration


def test_the_activation_energy_is_jedecs_for_a_real_drive_and_the_presets_for_a_simulated_one():
    assert activation_energy(None) == (1.1, "JEDEC practice; a real drive's own is not published")
    text = SMALL_PRESET.read_text().replace("activation_ev = 1.1 ", "activation_ev = 0.7 ")
    assert activation_energy(text) == (0.7, "the preset's [drive.errors] activation_ev")
    without = SMALL_PRESET.read_text().split("[drive.errors]")[0]
    assert activation_energy(without)[1] == "JEDEC practice; the preset has no [drive.errors]: its data does not age"


def test_a_read_back_is_refused_on_another_file_or_drive_and_allowed_on_the_same():
    file = {"path": "/var/tmp/a.img", "st_dev": 2049, "inode": 12, "free_bytes": 5}
    check_same_drive(3, "file", file, {**file, "free_bytes": 9})  # free space changes: the same file
    with pytest.raises(SsdlabError, match=r"^run 3 wrote its retention pattern to the file with path /var/tmp/a.img, "
                                          r"st_dev 2049, inode 12; the target is now the one with .*inode 13: "):
        check_same_drive(3, "file", file, {**file, "inode": 13})
    drive = {"serial": "S1", "model": "M", "capacity_bytes": 1 << 40, "firmware": "1"}
    check_same_drive(3, "device", drive, {**drive, "firmware": "2"})
    with pytest.raises(SsdlabError, match="serial S2"):
        check_same_drive(3, "device", drive, {**drive, "serial": "S2"})


def test_a_resume_before_the_date_says_how_much_earlier_than_planned():
    since = datetime(2026, 1, 1, tzinfo=UTC)
    wait = Wait(seq=0, idx=3, seed=7, since=since.isoformat(), until=(since + timedelta(days=30)).isoformat())
    said = early_warning(4, wait, since + timedelta(days=10))
    assert said == ("run 4 is read back 20 days earlier than planned (its wait ends 2026-01-31 00:00:00 UTC): "
                    "the drive can have been kept as stated 10 days at most, and the equivalent time counts that")
    assert early_warning(4, wait, since + timedelta(days=30)) is None


def test_times_are_said_in_the_unit_that_reads_best():
    assert [duration_words(s) for s in (0.036, 36, 3600, 86_400, 2 * DAY_S, 365 * DAY_S)] == [
        "0.036 s", "36 s", "1 h", "24 h", "2 days", "365 days"]


def test_the_share_of_reads_above_a_latency_counts_the_histogram_bins_above_it():
    latency = Latency.from_histogram([(250_000, 6), (700_000, 3), (1_500_000, 1)], 500_000, 240_000, 1_600_000)
    assert [latency.share_above(us * 1000) for us in (300, 1000, 2000)] == [0.4, 0.1, 0.0]
    assert Latency.from_histogram((), 0, 0, 0).share_above(300_000) == 0.0


def test_the_test_is_in_its_suite_and_runs_on_any_target():
    definition = lookup("retention")
    assert definition.needs() == () and definition.span(Scale(0.01)) == 0
    assert compile_tests(["retention"], Scale(0.5), 512 * MiB)[0].steps[1].size == 512 * MiB


def test_a_new_run_on_a_drive_a_retention_run_waits_on_is_refused_unless_forced():
    def run(run_id, status, serial):
        return Run(id=run_id, name=None, target="/dev/nvme1n1", target_kind="device", suite="retention", scale=1.0,
                   status=status, created_at="2026-11-27T00:00:00+00:00", finished_at=None,
                   identity={"serial": serial, "model": "M", "capacity_bytes": 10}, host={}, ssdlab_version="0.1.0",
                   waiting_until="2027-11-27T00:00:00+00:00" if status is RunStatus.WAITING else None)
    drive = {"serial": "S1", "model": "M", "capacity_bytes": 10}
    runs = [run(1, RunStatus.DONE, "S1"), run(2, RunStatus.WAITING, "S2"), run(3, RunStatus.WAITING, "S1")]
    with pytest.raises(SsdlabError, match=r"run 3 waits to read back its retention pattern from this device \(after "
                                          r"2027-11-27 00:00:00 UTC\)"):
        check_not_waited_on(runs, "device", drive, force=False)
    check_not_waited_on(runs, "device", drive, force=True)
    check_not_waited_on(runs[:2], "device", drive, force=False)  # run 2 waits on another drive
