"""What a test did to a drive: the difference of its health logs before and after, and
the alarms a report must flag loudly (METHODOLOGY.md section 4, `health`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.records import HealthLog, critical_warnings

# Counters that only grow: a drop means the two logs are not one drive's before and after.
_GROWING = ("host_written_bytes", "host_read_bytes", "nand_written_bytes", "media_errors", "error_log_entries",
            "percentage_used", "tmt1_transitions", "tmt2_transitions", "tmt1_time_s", "tmt2_time_s",
            "warning_temp_minutes", "critical_temp_minutes")


class HealthDelta(BaseModel):
    """Changes over a test (None where either log lacks the field), and the drive's
    spare and critical warning after it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host_written_bytes: int | None = Field(default=None, ge=0)
    host_read_bytes: int | None = Field(default=None, ge=0)
    nand_written_bytes: int | None = Field(default=None, ge=0)
    write_amplification: float | None = Field(default=None, ge=0, description="NAND over host writes")
    media_errors: int | None = Field(default=None, ge=0, description="new during the test")
    error_log_entries: int | None = Field(default=None, ge=0)
    percentage_used: int | None = Field(default=None, ge=0)
    available_spare_change_pct: int | None = None
    tmt1_transitions: int | None = Field(default=None, ge=0)
    tmt2_transitions: int | None = Field(default=None, ge=0)
    tmt1_time_s: int | None = Field(default=None, ge=0)
    tmt2_time_s: int | None = Field(default=None, ge=0)
    warning_temp_minutes: int | None = Field(default=None, ge=0)
    critical_temp_minutes: int | None = Field(default=None, ge=0)
    available_spare_pct: int | None = Field(default=None, ge=0, le=100, description="after the test")
    spare_threshold_pct: int | None = Field(default=None, ge=0, le=100)
    critical_warning: int | None = Field(default=None, ge=0, le=255, description="after the test")

    def alarms(self) -> list[str]:
        """Sentences for what must be flagged: a new media error, a critical warning,
        spare below threshold. New error-log entries are not an alarm: nvme-cli's own
        unsupported queries add them."""
        found = []
        if self.media_errors:
            plural = "s" if self.media_errors > 1 else ""
            found.append(f"{self.media_errors} new media and data integrity error{plural} during the test")
        if self.critical_warning:
            what = "; ".join(meaning for _, meaning in critical_warnings(self.critical_warning))
            found.append(f"the drive raises a critical warning (0x{self.critical_warning:02x}): {what}")
        if (self.available_spare_pct is not None and self.spare_threshold_pct is not None
                and self.available_spare_pct < self.spare_threshold_pct):
            found.append(f"available spare {self.available_spare_pct} % is below the drive's threshold "
                         f"of {self.spare_threshold_pct} %")
        return found


def health_delta(before: HealthLog, after: HealthLog) -> HealthDelta:
    changes: dict[str, int | None] = {}
    for field in _GROWING:
        old, new = getattr(before, field), getattr(after, field)
        if old is not None and new is not None and new < old:
            raise SsdlabError(f"the health logs are not one drive's before and after: {field} went down "
                              f"from {old} to {new}")
        changes[field] = None if old is None or new is None else new - old
    host, nand = changes["host_written_bytes"], changes["nand_written_bytes"]
    spare_before, spare_after = before.available_spare_pct, after.available_spare_pct
    return HealthDelta(**changes,
                       write_amplification=nand / host if nand is not None and host else None,
                       available_spare_change_pct=None if spare_before is None or spare_after is None
                       else spare_after - spare_before,
                       available_spare_pct=spare_after, spare_threshold_pct=after.spare_threshold_pct,
                       critical_warning=after.critical_warning)
