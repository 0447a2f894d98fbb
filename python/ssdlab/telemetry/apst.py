"""APST off for one measurement, and always back as it was.

The one setting ssdlab changes on a drive is the kernel's live APST switch of its
controller (TELEMETRY.md: pm_qos_latency_tolerance_us, 0 = APST off), and only while
idle-wake measures without APST. Its original value is committed to the store before the
switch is written, and written back at the end, on failure (`finally`) and, when the
process was killed, by the next `ssdlab` start (`restore_pending`). Writing back is
idempotent: it writes the recorded original, whatever the switch holds now.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ssdlab import locks
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.telemetry.nvme import read_latency_tolerance, write_latency_tolerance

APST_OFF = "0"


class ApstUnavailable(SsdlabError):
    """APST cannot be switched here (no switch, or no permission): nothing was changed."""


@contextmanager
def apst_disabled(store: Store, run_id: int, switch: Path) -> Iterator[None]:
    """APST off inside the block; ApstUnavailable, with the drive untouched, when it cannot be."""
    try:
        original = read_latency_tolerance(switch)
    except SsdlabError as exc:
        raise ApstUnavailable(str(exc)) from None
    change = store.record_apst_change(run_id, switch, original)
    try:
        write_latency_tolerance(switch, APST_OFF)
    except SsdlabError as exc:
        store.apst_restored(change)  # the write failed: the switch still holds the original
        raise ApstUnavailable(str(exc)) from None
    try:
        yield
    finally:
        write_latency_tolerance(switch, original)
        store.apst_restored(change)


def restore_pending(store: Store) -> list[str]:
    """Write back every recorded original that no live run owns; one line per switch, saying
    what was done (or why it could not be, to be tried again at the next start)."""
    done = []
    for change, run_id, switch, original in store.unrestored_apst_changes():
        if locks.run_is_held(store.path, run_id):
            continue  # its run is measuring now, and restores it itself
        try:
            write_latency_tolerance(switch, original)
        except SsdlabError as exc:
            done.append(f"APST left off by run {run_id} could not be restored: {exc}; "
                        "ssdlab tries again at its next start")
            continue
        store.apst_restored(change)
        done.append(f"restored APST left off by run {run_id}: wrote {original} to {switch}")
    return done
