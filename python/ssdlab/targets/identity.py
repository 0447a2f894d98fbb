"""What a run records about its target and host.

Best effort: a piece that cannot be read is None, never an exception, since a
missing serial must not stop a benchmark. Sources in order of trust: nvme-cli
(NVMe only), sysfs, then lsblk (which knows SATA serials and transports from udev).
"""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path
from typing import Any

from ssdlab.external import Commands
from ssdlab.targets import mounts, sysfs
from ssdlab.targets.sysfs import SYSFS

_LSBLK_FIELDS = {"model": "model", "serial": "serial", "rev": "firmware", "tran": "transport"}


def device_identity(path: Path, commands: Commands, sys_root: Path = SYSFS) -> dict[str, Any]:
    name = sysfs.kernel_name(path, sys_root)
    disk = sysfs.whole_disk(name, sys_root)
    rotational = sysfs.attr(name, "queue/rotational", sys_root)
    ident: dict[str, Any] = {
        "path": str(path),
        "name": name,
        "model": _text(sysfs.attr(disk, "device/model", sys_root)),
        # NVMe and SCSI keep the serial on the controller; virtio on the disk itself
        "serial": _text(sysfs.attr(disk, "device/serial", sys_root))
        or _text(sysfs.attr(disk, "serial", sys_root)),
        "firmware": _text(sysfs.attr(disk, "device/firmware_rev", sys_root))
        or _text(sysfs.attr(disk, "device/rev", sys_root)),
        "capacity_bytes": sysfs.size_bytes(name, sys_root),
        "logical_block_size": sysfs.int_attr(name, "queue/logical_block_size", sys_root),
        "physical_block_size": sysfs.int_attr(name, "queue/physical_block_size", sys_root),
        "rotational": None if rotational is None else rotational == "1",
        "transport": _bus(disk, sys_root),
        "lba_format": None,
        "pcie_link": _pcie_link(disk, sys_root),
    }
    if sysfs.is_nvme_namespace(disk) and commands.which("nvme"):
        ident.update({k: v for k, v in _nvme(f"/dev/{disk}", commands).items() if v is not None})
    if any(ident[f] is None for f in _LSBLK_FIELDS.values()) and commands.which("lsblk"):
        for field, value in _lsblk(f"/dev/{disk}", commands).items():
            if ident[field] is None:
                ident[field] = value
    return ident


def _pcie_link(disk: str, sys_root: Path) -> dict[str, Any] | None:
    """The PCIe link the drive's controller trained to (its PCI function's current speed, GT/s,
    and width, lanes), as the kernel reports it; None for a drive not on PCIe."""
    speed = sysfs.attr(disk, "device/device/current_link_speed", sys_root)  # "16.0 GT/s PCIe"
    width = sysfs.int_attr(disk, "device/device/current_link_width", sys_root)
    found = re.match(r"(\d+(?:\.\d+)?) GT/s", speed or "")
    if found is None or not width:
        return None
    return {"gts": float(found.group(1)), "width": width}


def file_identity(path: Path, mountinfo: Path = mounts.MOUNTINFO) -> dict[str, Any]:
    real = Path(os.path.realpath(path))
    try:
        mount = mounts.mount_of(real, mounts.read_mounts(mountinfo))
    except OSError:
        mount = None
    try:
        vfs = os.statvfs(real if real.exists() else real.parent)
        free = vfs.f_bavail * vfs.f_frsize
    except OSError:
        free = None
    try:  # which file it is: another moved or copied to its path is not the data written
        st = real.stat()
        inode, st_dev = st.st_ino, st.st_dev
    except OSError:
        inode = st_dev = None
    return {
        "path": str(real),
        "filesystem": mount.fstype if mount else None,
        "mount_point": mount.mount_point if mount else None,
        "backing_device": mount.source if mount and mount.source.startswith("/dev/") else None,
        "free_bytes": free,
        "inode": inode,
        "st_dev": st_dev,
    }


def host_identity(commands: Commands, root: Path = Path("/")) -> dict[str, Any]:
    cpuinfo = _read(root / "proc/cpuinfo")
    meminfo = re.search(r"^MemTotal:\s+(\d+) kB", _read(root / "proc/meminfo"), re.M)
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', _read(root / "etc/os-release"), re.M)
    uname = commands.run(["uname", "-r"])
    return {
        "cpu_model": _first(r"^(?:model name|Model|Hardware)\s*:\s*(.+)$", cpuinfo),
        "logical_cores": len(re.findall(r"^processor\s*:", cpuinfo, re.M)) or None,
        "kernel": _text(uname.stdout) if uname.returncode == 0 else None,
        "os": pretty.group(1) if pretty else None,
        "memory_bytes": int(meminfo.group(1)) * 1024 if meminfo else None,
        # which machine made the run (runs may be made on other machines): `ssdlab runs` shows it
        "hostname": _hostname(),
    }


def _hostname() -> str | None:
    try:
        return _text(socket.gethostname())
    except OSError:
        return None


def _nvme(device: str, commands: Commands) -> dict[str, Any]:
    ctrl = _json(commands, ["nvme", "id-ctrl", device, "-o", "json"])
    ns = _json(commands, ["nvme", "id-ns", device, "-o", "json"])
    found: dict[str, Any] = {"model": _text(ctrl.get("mn")), "serial": _text(ctrl.get("sn")),
                             "firmware": _text(ctrl.get("fr"))}
    try:
        flbas = int(ns["flbas"])
        # FLBAS: bits 0-3 are the format index, bits 5-6 extend it past 16 formats
        index = (flbas & 0xF) | ((flbas >> 5) & 0x3) << 4
        lbaf = ns["lbafs"][index]
        found["lba_format"] = {"index": index, "data_size": 1 << int(lbaf["ds"]),
                               "metadata_size": int(lbaf["ms"])}
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return found


def _lsblk(device: str, commands: Commands) -> dict[str, Any]:
    done = _json(commands, ["lsblk", "-J", "-d", "-o", "NAME,MODEL,SERIAL,REV,TRAN", device])
    rows = done.get("blockdevices") or [{}]
    return {field: _text(rows[0].get(key)) for key, field in _LSBLK_FIELDS.items()}


def _bus(disk: str, sys_root: Path) -> str | None:
    """nvme, virtio, loop...; None for SCSI, which may be SATA, SAS or USB (lsblk tells)."""
    if sysfs.is_nvme_namespace(disk):
        return "nvme"
    if (sysfs.block_dir(disk, sys_root) / "loop").is_dir():
        return "loop"
    bus = sysfs.block_dir(disk, sys_root) / "device" / "subsystem"
    name = bus.resolve().name if bus.exists() else None
    return None if name in (None, "scsi") else name


def _json(commands: Commands, argv: list[str]) -> dict[str, Any]:
    done = commands.run(argv)
    if done.returncode != 0:
        return {}
    try:
        value = json.loads(done.stdout)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    """Strip the padding of identify strings (NVMe pads with spaces); empty means unknown."""
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _first(pattern: str, text: str) -> str | None:
    match = re.search(pattern, text, re.M)
    return match.group(1).strip() if match else None
