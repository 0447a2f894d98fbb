"""Health before and after a test: the difference, write amplification, and the alarms."""

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.health import HealthDelta, health_delta
from tests.telemetry_data import DATA_UNIT, SN850_HEALTH

BEFORE = SN850_HEALTH


def after(**changes):
    return BEFORE.model_copy(update=changes)


def test_a_quiet_test_changes_counters_and_raises_no_alarm():
    written = 64 * 1024**3 // DATA_UNIT * DATA_UNIT
    delta = health_delta(BEFORE, after(host_written_bytes=BEFORE.host_written_bytes + written,
                                       error_log_entries=BEFORE.error_log_entries + 2,
                                       tmt1_transitions=5, tmt1_time_s=242))
    assert delta == HealthDelta(host_written_bytes=written, host_read_bytes=0, media_errors=0, error_log_entries=2,
                                percentage_used=0, available_spare_change_pct=0, tmt1_transitions=1,
                                tmt2_transitions=0, tmt1_time_s=30, tmt2_time_s=0, warning_temp_minutes=0,
                                critical_temp_minutes=0, available_spare_pct=100, spare_threshold_pct=10,
                                critical_warning=0)
    assert delta.write_amplification is None and delta.alarms() == []


def test_write_amplification_when_the_drive_reports_nand_writes():
    before = BEFORE.model_copy(update={"nand_written_bytes": 10**12})
    delta = health_delta(before, before.model_copy(update={
        "host_written_bytes": BEFORE.host_written_bytes + 4 * 10**9, "nand_written_bytes": 10**12 + 10 * 10**9}))
    assert delta.write_amplification == 2.5


def test_fields_either_log_lacks_are_none():
    delta = health_delta(BEFORE.model_copy(update={"media_errors": None}), after(tmt2_time_s=None))
    assert delta.media_errors is None and delta.tmt2_time_s is None and delta.tmt1_time_s == 0


def test_alarms_for_media_errors_critical_warning_and_spare():
    delta = health_delta(BEFORE, after(media_errors=3, critical_warning=0x05, available_spare_pct=8))
    assert delta.alarms() == [
        "3 new media and data integrity errors during the test",
        "the drive raises a critical warning (0x05): the available spare is below its threshold; "
        "reliability is degraded by media errors or an internal error",
        "available spare 8 % is below the drive's threshold of 10 %",
    ]
    assert health_delta(BEFORE, after(media_errors=1)).alarms() == [
        "1 new media and data integrity error during the test"]
    assert "reserved bit 7 is set" in health_delta(BEFORE, after(critical_warning=0x80)).alarms()[0]


def test_a_warning_already_set_before_the_test_is_still_flagged():
    warned = after(critical_warning=0x08)
    assert health_delta(warned, warned).alarms() == [
        "the drive raises a critical warning (0x08): the media has been made read-only"]


@pytest.mark.parametrize("field", ["host_written_bytes", "media_errors", "percentage_used"])
def test_counters_that_go_down_mean_another_drive(field):
    with pytest.raises(SsdlabError, match=f"{field} went down"):
        health_delta(after(**{field: getattr(BEFORE, field) + 1}), BEFORE)
