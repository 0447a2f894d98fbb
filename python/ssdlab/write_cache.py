"""The volatile write cache a test asks for (its settings' `write_cache`, "on" or "off": the
PTS variants), held for the test, and what was done, for its result (`said`).

A simulated drive's host sets it (NVMe feature 06h, backends/sim.py) and sets it back after.
A real NVMe drive's is set through drive_settings.py, with `nvme set-feature CTRL -f 0x06`
and never --save: its original committed to the store first, written back after the test,
on failure, and after a kill at the next `ssdlab` start. Only a drive that has such a cache
(Identify Controller VWC bit 0) is asked. Whatever fails, the test goes on with the drive's
own setting, and its result says what failed: a day of PTS is not lost to a feature.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ssdlab import drive_settings
from ssdlab.backends import Backend
from ssdlab.backends.sim import SimBackend
from ssdlab.drive_settings import SettingUnavailable, WriteCacheFeature
from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.telemetry.nvme import NvmeCli

KEPT = "the drive kept its own setting"


def word(on: bool) -> str:
    return "on" if on else "off"


class WriteCache:
    """`wanted`: None when the test asks nothing. `nvme`: the drive's nvme-cli, None when
    the target has none (a file, a SATA drive, nvme-cli missing)."""

    def __init__(self, wanted: bool | None, backend: Backend, store: Store, run_id: int,
                 nvme: NvmeCli | None) -> None:
        self.wanted, self.backend, self.store, self.run_id, self.nvme = wanted, backend, store, run_id, nvme
        self._done: dict[str, Any] = {}

    @classmethod
    def asked(cls, setting: str | None, backend: Backend, store: Store, run_id: int,
              nvme: NvmeCli | None) -> WriteCache:
        return cls(None if setting is None else setting == "on", backend, store, run_id, nvme)

    @contextmanager
    def held(self) -> Iterator[None]:
        if self.wanted is None:
            yield
        elif isinstance(self.backend, SimBackend):
            with self.backend.write_cache(self.wanted):
                yield
            self._done = {"set": True, "how": f"the simulated drive's host turned it {word(self.wanted)}"}
        else:
            with self._on_real_drive():
                yield

    def said(self) -> dict[str, Any]:
        """For the test's result, once `held` is over: the setting asked; `set`, whether the
        test ran with the cache as asked; on a real drive `original`, what the drive had
        ("on", "off", or None when unknown or it has no cache); `how`, what was done or
        what failed."""
        return {"asked": word(bool(self.wanted)), **self._done}

    @contextmanager
    def _on_real_drive(self) -> Iterator[None]:
        change = self._change()
        if change is None:  # nothing set: `_done` says why
            yield
            return
        try:
            yield
        finally:
            drive_settings.restore(self.store, change)
        back = (f"restored to {change.original} after the test" if change.restore_failed is None else
                f"restoring {change.original} after the test failed ({change.restore_failed}): "
                "ssdlab tries again at its next start")
        self._done = {"set": True, "original": word(change.original == "1"), "how": f"{change.done}; {back}"}

    def _change(self) -> drive_settings.Change | None:
        """The drive's cache set as asked; None, with `_done` saying why, when it is not."""
        wanted = bool(self.wanted)
        if self.nvme is None:
            self._kept(None, "no NVMe drive here that nvme-cli answers for (a file, a SATA drive, or "
                             f"nvme-cli missing: the run's telemetry notes say which): nothing set, {KEPT}")
            return None
        try:
            present = self.nvme.capabilities().volatile_write_cache
        except SsdlabError as exc:
            self._kept(None, f"{exc}: nothing set, {KEPT}")
            return None
        if not present:
            self._done = {"set": not wanted, "original": None,
                          "how": "the drive has no volatile write cache (Identify VWC bit 0 clear): nothing set"
                                 + ("; it cannot be on" if wanted else "; its writes are as with one off")}
            return None
        try:
            return drive_settings.change(self.store, self.run_id, WriteCacheFeature(self.nvme),
                                         "1" if wanted else "0")
        except SettingUnavailable as exc:
            original = None if exc.original is None else exc.original == "1"
            kept = KEPT if original is None else f"{KEPT} ({word(original)})"
            self._kept(original, f"{exc}: nothing set, {kept}")
            return None

    def _kept(self, original: bool | None, how: str) -> None:
        """The drive ran the test with its own setting, `original` where known."""
        self._done = {"set": original == self.wanted, "original": None if original is None else word(original),
                      "how": how}
