"""Purge: back to fresh-out-of-box, so every test starts from the same state.

A device is purged only with a `Cleared` token, which only consent.confirm_destroy
issues (after the safety checks), so the order safety -> consent -> purge is in the
types. An NVMe namespace is sanitized where the drive can and nothing else would be
erased (sanitize.py), else formatted with a user data erase; any device is else
discarded, else zeroed. Each function returns a `Purge` for the run's record: the
method that purged, the exact commands that ran (failed attempts included) and why a
better method was passed over or failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import Target, TargetKind, files, sanitize, sysfs
from ssdlab.targets.consent import Cleared

FORMAT = "NVMe format with user data erase"
DISCARD = "a discard of every block"
ZEROES = "zeroes written over every block"
RECREATE = "the file made anew"


@dataclass(frozen=True)
class Purge:
    """How a target was purged: by `method`, with `commands`, every command that ran, in
    order (the last one purged); `notes` say why a better method was passed over or failed."""

    method: str
    commands: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def said(self) -> tuple[str, ...]:
        """The purge step's notes."""
        return (*self.notes, f"purged by {self.method}")


def purge_device(cleared: Cleared, commands: Commands, sleep: Callable[[float], None] = time.sleep,
                 sys_root: Path = sysfs.SYSFS) -> Purge:
    """NVMe: a sanitize, else a user-data-erase format (--ses=1). Otherwise, or when the
    drive refuses those: discard every block; where discard is unsupported (some loop
    devices, USB bridges), write zeroes instead. The caller holds the device
    (locks.hold_device). `sleep`: between reads of the sanitize log."""
    device = str(cleared.path)
    commands.require("blkdiscard")
    ran: list[str] = []
    notes: list[str] = []
    failures: list[str] = []
    attempts: list[tuple[str, list[str]]] = []
    if sysfs.is_nvme_namespace(cleared.name) and commands.which("nvme"):
        sanitized = sanitize.sanitize(cleared, commands, sleep, sys_root)
        ran += sanitized.commands
        if sanitized.method is not None:
            return Purge(sanitized.method, tuple(ran), (sanitized.note,))
        notes.append(sanitized.note)
        if sanitized.commands:  # tried, and failed
            failures.append(sanitized.note)
        attempts.append((FORMAT, ["nvme", "format", device, "--ses=1", "--force"]))
    blkdiscard = ["blkdiscard", *_claim_override(commands)]
    attempts += [(DISCARD, [*blkdiscard, device]), (ZEROES, [*blkdiscard, "--zeroout", device])]
    for method, argv in attempts:
        done = commands.run(argv)
        ran.append(" ".join(argv))
        if done.returncode == 0:
            return Purge(method, tuple(ran), tuple(notes))
        failed = f"`{' '.join(argv)}`: {done.stderr.strip() or f'exit {done.returncode}'}"
        failures.append(failed)
        notes.append(f"failed: {failed}")
    raise SsdlabError(f"could not purge {device}:\n  " + "\n  ".join(failures))


def _claim_override(commands: Commands) -> list[str]:
    """blkdiscard 2.36+ opens the device exclusively (O_EXCL), which this process's own
    claim on it (locks.hold_device, held for the whole run since before the safety
    checks) refuses; its --force skips only that open mode. Older versions have no
    --force and do not open exclusively."""
    done = commands.run(["blkdiscard", "--help"])
    return ["--force"] if "--force" in done.stdout else []


def purge_file(target: Target) -> Purge:
    if target.kind is not TargetKind.FILE or target.path is None:
        raise ValueError(f"purge_file needs a file target, not {target.kind}")
    return Purge(RECREATE, files.recreate(target.path, target.capacity))
