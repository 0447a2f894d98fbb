"""nvme-cli's answers from a simulated drive: the telemetry code written for real drives
reads a simulated one through the same NvmeCli, unchanged.

The simulator keeps the drive's own health log, Identify Controller data and features
(crates/ssdsim/src/health) and prints them as nvme-cli 2.6+ does; `SimulatedNvme` stands
where the program would run. It answers the read-only queries NvmeCli makes (and `nvme
version`, as 2.6) and refuses every other command, so nothing can write to the drive
through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ssdlab import _ssdsim
from ssdlab.errors import SsdlabError
from ssdlab.external import Commands, Completed

# The controller NvmeCli names in its commands; a simulated drive has one.
CONTROLLER = "/dev/nvme0"
MAX_FID = 0xFF  # a feature identifier is one byte
VERSION = "nvme version 2.6 (simulated drive)\n"  # the nvme-cli whose JSON the simulator prints


class SimulatedNvme(Commands):
    """`nvme id-ctrl|smart-log CONTROLLER -o json`, `nvme endurance-log CONTROLLER
    --group-id=1 -o json` and `nvme get-feature CONTROLLER -f FID -H`, answered by `drive`
    (an `_ssdsim.Drive`)."""

    def __init__(self, drive: _ssdsim.Drive) -> None:
        self.drive = drive

    def which(self, program: str) -> str | None:
        return "simulated nvme-cli" if program == "nvme" else None

    def run(self, argv: Sequence[str], timeout: float | None = None) -> Completed:
        argv = tuple(argv)
        match argv:
            case ("nvme", "version"):
                return Completed(argv, 0, VERSION, "")
            case ("nvme", "id-ctrl", str(), "-o", "json"):
                return Completed(argv, 0, self.drive.id_ctrl_json(), "")
            case ("nvme", "smart-log", str(), "-o", "json"):
                return Completed(argv, 0, self.drive.smart_log_json(), "")
            case ("nvme", "endurance-log", str(), "--group-id=1", "-o", "json"):
                return Completed(argv, 0, self.drive.endurance_log_json(), "")
            case ("nvme", "get-feature", str(), "-f", fid, "-H"):
                return self._feature(argv, fid)
        raise SsdlabError(f"a simulated drive answers only nvme-cli's version, id-ctrl, smart-log, "
                          f"endurance-log and get-feature queries, not `{' '.join(argv)[:200]}`")

    def _feature(self, argv: tuple[str, ...], fid_text: str) -> Completed:
        try:
            fid = int(fid_text, 0)
        except ValueError:
            fid = -1
        if not 0 <= fid <= MAX_FID:  # nvme-cli's own refusal, before any command reaches a drive
            return Completed(argv, 1, "", f"Invalid feature id: {fid_text[:40]!r}")
        try:
            return Completed(argv, 0, self.drive.get_feature(fid), "")
        except _ssdsim.FeatureError as exc:
            return Completed(argv, 1, "", str(exc))
