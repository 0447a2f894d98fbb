"""External programs (fio, nvme-cli, smartctl, lsblk, blkid, ...) behind one small seam.

Everything that runs another program goes through `Commands.run`, so tests can
replay recorded outputs (`ReplayCommands`) and real runs use the real programs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from ssdlab.errors import SsdlabError

INSTALL_HINTS = {
    "fio": "install it with `apt-get install fio` (Debian/Ubuntu) or `dnf install fio` (Fedora)",
    "nvme": "install nvme-cli with `apt-get install nvme-cli`",
    "smartctl": "install smartmontools with `apt-get install smartmontools`",
    "blkdiscard": "install util-linux",
    "lsblk": "install util-linux",
    "blkid": "install util-linux",
    "wipefs": "install util-linux",
}


def c_locale() -> dict[str, str]:
    """This process's environment with the C locale: every program ssdlab reads runs in it.
    In the user's locale some print numbers with digit groups or decimal commas (nvme-cli
    2.3, Debian 12's, prints `178.037.231` under de_DE), which no parser should guess at."""
    return {**os.environ, "LC_ALL": "C"}


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


class Commands:
    """Runs real programs."""

    def which(self, program: str) -> str | None:
        return shutil.which(program)

    def require(self, program: str) -> str:
        path = self.which(program)
        if path is None:
            hint = INSTALL_HINTS.get(program, "install it and make sure it is on PATH")
            raise SsdlabError(f"{program} is not installed: {hint}.")
        return path

    def run(self, argv: Sequence[str], timeout: float | None = None) -> Completed:
        try:
            proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                                  errors="replace", env=c_locale())
        except FileNotFoundError:
            self.require(argv[0])
            raise
        except subprocess.TimeoutExpired as exc:
            raise SsdlabError(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from exc
        return Completed(tuple(argv), proc.returncode, proc.stdout, proc.stderr)


@dataclass
class ReplayCommands(Commands):
    """Answers from recorded outputs, keyed by the argv joined with spaces; for tests."""

    outputs: dict[str, Completed] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def which(self, program: str) -> str | None:
        return f"/usr/bin/{program}" if any(k.split()[0] == program for k in self.outputs) else None

    def run(self, argv: Sequence[str], timeout: float | None = None) -> Completed:
        self.calls.append(tuple(argv))
        key = " ".join(argv)
        if key not in self.outputs:
            return Completed(tuple(argv), 127, "", f"{argv[0]}: not recorded")
        return self.outputs[key]
