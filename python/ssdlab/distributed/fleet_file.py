"""A fleet file: the drives of a lab that `ssdlab run --fleet FILE --cluster ADDRESS` runs a
suite on, each on its host, each with its own consent.

    [[drives]]
    host = "lab-3"                    # as its worker reports it (`hostname`), or its address
    device = "/dev/nvme1n1"
    destroy_data = "S6B0NL0T123456"   # consent to erase it: its serial (a loop device: its name)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ssdlab.errors import SsdlabError
from ssdlab.targets.resolve import fleet_target

MAX_DRIVES = 256
MAX_FILE_BYTES = 1 << 20


class _Drive(BaseModel):
    model_config = ConfigDict(extra="forbid")
    host: str = Field(min_length=1, max_length=253)
    device: str = Field(min_length=1, max_length=4096)
    destroy_data: str | None = Field(default=None, min_length=1, max_length=256)


class _Fleet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    drives: list[_Drive] = Field(min_length=1, max_length=MAX_DRIVES)


@dataclass(frozen=True)
class FleetDrive:
    target: str  # HOST:/dev/NAME
    destroy_data: str | None


def read_fleet(path: Path) -> list[FleetDrive]:
    """The drives of fleet file `path`, each a valid HOST:/dev/NAME, none twice."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SsdlabError(f"{path} is larger than a fleet file ({MAX_FILE_BYTES} bytes at most)")
        fleet = _Fleet.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise SsdlabError(f"cannot read the fleet file {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SsdlabError(f"{path} is not a TOML fleet file ({exc}): see docs/sweeps.md") from None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise SsdlabError(f"{path}: {problems} (each [[drives]] has host, device and optionally destroy_data)") \
            from None
    drives = []
    for i, drive in enumerate(fleet.drives, start=1):
        target = f"[{drive.host}]:{drive.device}" if ":" in drive.host else f"{drive.host}:{drive.device}"
        if fleet_target(target) is None:
            raise SsdlabError(f"{path}: drive {i}: {drive.host!r} and {drive.device!r} are not a host name or "
                              "address and a /dev path")
        drives.append(FleetDrive(target, drive.destroy_data))
    if len({d.target for d in drives}) < len(drives):
        raise SsdlabError(f"{path}: a drive is listed twice")
    return drives
