"""The settings ssdlab changes on a drive for a while, and always puts back.

Two: a controller's live APST switch in sysfs (`ApstSwitch`; idle-wake and idle-power
measure with APST off, telemetry/apst.py) and its volatile write cache, NVMe feature 06h
(`WriteCacheFeature`; the PTS enterprise tests turn it off, write_cache.py). Both change the
same way: `change` reads the original and commits it to the store (table setting_changes)
before it writes the new value; `restore` writes the original back at the end and on
failure (the caller's `finally`); when the process was killed, the next `ssdlab` start does
(`restore_pending`), leaving alone the changes of a run that a live process holds. Writing
back is idempotent: it writes the recorded original, whatever the drive holds now. Neither
change outlives a power cycle: the kernel programs APST anew, and feature 06h is set
without --save. So a change left from before the machine restarted (another kernel boot_id)
is gone already, and is only marked so; and one whose node now holds another drive (its
serial number not the one recorded) is left for when that drive is back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from ssdlab import locks
from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.store import Store
from ssdlab.telemetry.nvme import (
    VOLATILE_WRITE_CACHE,
    NvmeCli,
    read_latency_tolerance,
    write_latency_tolerance,
)

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


class Setting(Protocol):
    kind: ClassVar[str]  # which setting, as stored
    left: ClassVar[str]  # what a killed run left, for the lines of `restore_pending`

    @property
    def place(self) -> str:
        """Where it is, as stored: enough to write it again after a kill."""

    def read(self) -> str: ...

    def drive(self) -> str | None:
        """The serial number of the drive it belongs to; None when it cannot be read."""

    def write(self, value: str) -> str:
        """Writes `value`; returns what was done, in words. SsdlabError when the drive or the
        value refuses."""


@dataclass(frozen=True)
class ApstSwitch:
    """The kernel's live APST switch of a controller (pm_qos_latency_tolerance_us): `auto`,
    `any`, or the tolerated wake-up latency in µs, 0 turning APST off."""

    switch: Path
    kind: ClassVar[str] = "apst"
    left: ClassVar[str] = "APST left off"

    @classmethod
    def at(cls, place: str, commands: Commands) -> ApstSwitch:
        return cls(Path(place))

    @property
    def place(self) -> str:
        return str(self.switch)

    def read(self) -> str:
        return read_latency_tolerance(self.switch)

    def drive(self) -> str | None:
        try:  # the controller's own attribute, beside its power/ directory
            return (self.switch.parent.parent / "serial").read_text().strip() or None
        except OSError:
            return None

    def write(self, value: str) -> str:
        try:
            write_latency_tolerance(self.switch, value)
        except ValueError as exc:  # a stored original that is no latency tolerance
            raise SsdlabError(str(exc)) from None
        return f"wrote {value} to {self.switch}"


@dataclass(frozen=True)
class WriteCacheFeature:
    """NVMe feature 06h of a controller, its WCE bit: "1" the volatile write cache on, "0" off."""

    nvme: NvmeCli
    kind: ClassVar[str] = "write-cache"
    left: ClassVar[str] = "the volatile write cache (NVMe feature 06h) left changed"

    @classmethod
    def at(cls, place: str, commands: Commands) -> WriteCacheFeature:
        return cls(NvmeCli(place, commands))

    @property
    def place(self) -> str:
        return self.nvme.controller

    def read(self) -> str:
        return "1" if self.nvme.get_feature(VOLATILE_WRITE_CACHE).enabled else "0"

    def drive(self) -> str | None:
        try:
            return self.nvme.id_ctrl().serial or None
        except SsdlabError:
            return None

    def write(self, value: str) -> str:
        if value not in ("0", "1"):
            raise SsdlabError(f"{value[:20]!r} is no volatile write cache setting (0 or 1)")
        return self.nvme.set_feature(VOLATILE_WRITE_CACHE, int(value))


class SettingUnavailable(SsdlabError):
    """The setting could not be read or written: nothing was changed. `original`: what it
    holds, when it could be read."""

    def __init__(self, message: str, original: str | None = None) -> None:
        super().__init__(message)
        self.original = original


@dataclass
class Change:
    """A setting changed by `done`. Once `restore` has run, `restored` says how the original
    went back, or `restore_failed` why it could not (the next start tries again)."""

    id: int
    setting: Setting
    original: str
    done: str
    restored: str | None = None
    restore_failed: str | None = None


def change(store: Store, run_id: int, setting: Setting, value: str) -> Change:
    """`setting` set to `value` for run `run_id`, its original in the store first;
    SettingUnavailable, the setting untouched, when it cannot be read or written."""
    try:
        original = setting.read()
    except SsdlabError as exc:
        raise SettingUnavailable(str(exc)) from None
    change_id = store.record_setting_change(run_id, setting.kind, setting.place, original,
                                            drive=setting.drive(), boot_id=boot_id())
    try:
        done = setting.write(value)
    except SsdlabError as exc:
        store.setting_restored(change_id)  # the write failed: the setting still holds the original
        raise SettingUnavailable(str(exc), original) from None
    return Change(change_id, setting, original, done)


def restore(store: Store, change: Change) -> None:
    """The original written back. Never raises for the drive: when it refuses, the change
    stays in the store for the next start, and `change.restore_failed` says why (the
    caller's own error, or its test's result, comes first)."""
    try:
        change.restored = change.setting.write(change.original)
    except SsdlabError as exc:
        change.restore_failed = str(exc)
        return
    store.setting_restored(change.id)


KINDS: dict[str, type[ApstSwitch] | type[WriteCacheFeature]] = {
    setting.kind: setting for setting in (ApstSwitch, WriteCacheFeature)}


def boot_id(path: Path = BOOT_ID) -> str | None:
    """The kernel's id of this boot (another after every restart); None where there is none."""
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def restore_pending(store: Store, commands: Commands | None = None, boot: str | None = None) -> list[str]:
    """Write back every recorded original that no live run owns; one line per change,
    saying what was done (or why it could not be, to be tried again at the next start).
    `boot`: this boot's id (read when not given)."""
    commands = commands or Commands()
    boot = boot or boot_id()
    done = []
    for change_id, run_id, kind, place, original, drive, changed_in in store.unrestored_setting_changes():
        if locks.run_is_held(store.path, run_id):
            continue  # its run is measuring now, and restores it itself
        known = KINDS.get(kind)
        if known is None:  # only another program writes such a row
            done.append(f"run {run_id} left a setting this ssdlab does not know changed ({kind[:40]!r}): "
                        "nothing done")
            continue
        if changed_in is not None and boot is not None and changed_in != boot:
            store.setting_restored(change_id)
            done.append(f"{known.left} by run {run_id} at {place} is gone: the machine has restarted since, "
                        "and the drive came back with its own setting (ssdlab never saves its changes)")
            continue
        setting = known.at(place, commands)
        if drive is not None and (now := setting.drive()) != drive:
            done.append(f"{known.left} by run {run_id} not restored: {place} is not the drive the run changed "
                        f"(serial {drive[:40]}, now {(now or 'unknown')[:40]}); ssdlab restores it when that "
                        "drive is back, and the drive's next power cycle undoes the change anyway")
            continue
        try:
            how = setting.write(original)
        except SsdlabError as exc:
            done.append(f"{known.left} by run {run_id} could not be restored: {exc}; "
                        "ssdlab tries again at its next start")
            continue
        store.setting_restored(change_id)
        done.append(f"restored {known.left} by run {run_id}: {how}")
    return done
