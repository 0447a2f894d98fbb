"""Purge: back to fresh-out-of-box, so every test starts from the same state.

A device is purged only with a `Cleared` token, which only consent.confirm_destroy
issues (after the safety checks), so the order safety -> consent -> purge is in the
types. Each function returns the exact commands that ran, failed attempts included,
for the run's record.
"""

from __future__ import annotations

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import Target, TargetKind, files, sysfs
from ssdlab.targets.consent import Cleared


def purge_device(cleared: Cleared, commands: Commands) -> tuple[str, ...]:
    """NVMe: a user-data-erase format (--ses=1). Otherwise, or when the drive refuses
    it: discard every block; where discard is unsupported (some loop devices, USB
    bridges), write zeroes instead. The caller holds the device (locks.hold_device)."""
    device = str(cleared.path)
    attempts = []
    if sysfs.is_nvme_namespace(cleared.name) and commands.which("nvme"):
        attempts.append(["nvme", "format", device, "--ses=1", "--force"])
    commands.require("blkdiscard")
    blkdiscard = ["blkdiscard", *_claim_override(commands)]
    attempts += [[*blkdiscard, device], [*blkdiscard, "--zeroout", device]]
    ran: list[str] = []
    failures: list[str] = []
    for argv in attempts:
        done = commands.run(argv)
        ran.append(" ".join(argv))
        if done.returncode == 0:
            return tuple(ran)
        failures.append(f"`{' '.join(argv)}`: {done.stderr.strip() or f'exit {done.returncode}'}")
    raise SsdlabError(f"could not purge {device}:\n  " + "\n  ".join(failures))


def _claim_override(commands: Commands) -> list[str]:
    """blkdiscard 2.36+ opens the device exclusively (O_EXCL), which this process's own
    claim on it (locks.hold_device, held for the whole run since before the safety
    checks) refuses; its --force skips only that open mode. Older versions have no
    --force and do not open exclusively."""
    done = commands.run(["blkdiscard", "--help"])
    return ["--force"] if "--force" in done.stdout else []


def purge_file(target: Target) -> tuple[str, ...]:
    if target.kind is not TargetKind.FILE or target.path is None:
        raise ValueError(f"purge_file needs a file target, not {target.kind}")
    return files.recreate(target.path, target.capacity)
