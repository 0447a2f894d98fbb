"""Consent to erase a device, asked after the safety checks pass.

The user names the device they mean to erase: `--destroy-data SERIAL`, or, on
a terminal, by typing its kernel name. Devices without a serial (loop devices)
take their kernel name, e.g. `loop3`, in its place. The result is a `Cleared`
token, the only way to purge a device (see targets.purge).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ssdlab.errors import UnsafeTarget
from ssdlab.targets import sysfs
from ssdlab.text import printable
from ssdlab.units import format_bytes

_ISSUED_HERE = object()


@dataclass(frozen=True)
class Cleared:
    """Proof that `path` passed the safety checks and its owner agreed to erase it."""

    path: Path
    name: str                       # kernel name, e.g. nvme0n1
    proof: object = field(repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self.proof is not _ISSUED_HERE:
            raise TypeError("a Cleared token comes only from consent.confirm_destroy")


def consent_string(ident: dict[str, Any], name: str) -> str:
    """What --destroy-data must say: the serial, or the kernel name when there is none."""
    return ident.get("serial") or name


def confirm_destroy(path: Path, ident: dict[str, Any], destroy_data: str | None,
                    stdin: TextIO | None = None, stdout: TextIO | None = None) -> Cleared:
    """Call only after safety.check_device passed on `path`."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    name = ident.get("name") or sysfs.kernel_name(path)
    expected = consent_string(ident, name)
    what = _describe(path, ident, name)
    flag = f"--destroy-data {expected}"
    stands_in = "" if ident.get("serial") else f" ({name} has no serial: its kernel name stands in)"
    if destroy_data is not None:
        if destroy_data != expected:
            raise UnsafeTarget(f"--destroy-data {destroy_data} does not match {what}: to erase it, "
                               f"pass `{flag}`{stands_in}. Nothing was written.")
    elif stdin.isatty():
        stdout.write(f"This ERASES ALL DATA on {what}.\nType the device name `{name}` to go on: ")
        stdout.flush()
        answer = stdin.readline().strip()
        if answer != name:
            raise UnsafeTarget(f"you typed {answer!r}, not {name!r}: nothing was erased.")
    else:
        raise UnsafeTarget(f"the tests erase all data on {what}. To agree, add `{flag}`"
                           f"{stands_in}. Nothing was written.")
    return Cleared(path, name, _ISSUED_HERE)


def recorded_consent(ident: dict[str, Any], recorded: dict[str, Any]) -> str | None:
    """On resume: the consent given when the run started, if this is provably the same drive.

    Same serial, model and capacity: the original --destroy-data still holds. No serial
    to compare (loop devices): None, so consent is asked again. A different serial:
    refused, since the run's results would mix two drives.
    """
    serial, before = ident.get("serial"), recorded.get("serial")
    if not serial or not before:
        return None
    same = all(ident.get(k) == recorded.get(k) for k in ("serial", "model", "capacity_bytes"))
    if not same:
        raise UnsafeTarget(
            f"{ident.get('path')} is not the drive this run started on: it was "
            f"{recorded.get('model')} serial {before}, it is now {ident.get('model')} serial "
            f"{serial}. Start a new run on this drive instead of resuming.")
    return serial


def _describe(path: Path, ident: dict[str, Any], name: str) -> str:
    """The device as the prompt shows it; model and serial are the device's own words,
    written safe for the terminal (the prompt is printed directly, not through the CLI)."""
    parts = [printable(p) for p in (ident.get("model"), ident.get("serial") and f"serial {ident['serial']}")
             if p]
    if ident.get("capacity_bytes"):
        parts.append(format_bytes(ident["capacity_bytes"]))
    return f"{path} ({', '.join([name, *parts])})"
