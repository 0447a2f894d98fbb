"""APST off for one measurement, and always back as it was.

idle-wake and idle-power measure with the kernel's live APST switch of the controller
(TELEMETRY.md: pm_qos_latency_tolerance_us, 0 = APST off) at 0, and only while they
measure. drive_settings.py changes it: the original committed to the store before the
switch is written, and written back at the end, on failure and, when the process was
killed, by the next `ssdlab` start.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ssdlab import drive_settings
from ssdlab.drive_settings import ApstSwitch, SettingUnavailable
from ssdlab.errors import SsdlabError
from ssdlab.store import Store

APST_OFF = "0"


class ApstUnavailable(SsdlabError):
    """APST cannot be switched here (no switch, or no permission): nothing was changed."""


@contextmanager
def apst_disabled(store: Store, run_id: int, switch: Path) -> Iterator[None]:
    """APST off inside the block; ApstUnavailable, with the drive untouched, when it cannot
    be; an SsdlabError after the block when the switch could not be written back."""
    try:
        change = drive_settings.change(store, run_id, ApstSwitch(switch), APST_OFF)
    except SettingUnavailable as exc:
        raise ApstUnavailable(str(exc)) from None
    try:
        yield
    finally:
        drive_settings.restore(store, change)
    if change.restore_failed:  # reached only when the block itself went well
        raise SsdlabError(f"APST could not be switched back on: {change.restore_failed}; "
                          "ssdlab tries again at its next start")
