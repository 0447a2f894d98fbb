"""TARGET as the user wrote it -> Target: a block device, a file, or `sim:PRESET`."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import Target, TargetKind, sysfs
from ssdlab.targets.files import file_target
from ssdlab.targets.sysfs import SYSFS

SIM_PREFIX = "sim:"


def resolve(spec: str, size: int | None, force: bool, commands: Commands,
            reuse: bool = False) -> Target:
    """`size` and `force` apply to file targets (create at `size`; overwrite a foreign
    file only with `force`); `reuse` (resume) requires an existing file.
    `commands` is unused for now; callers pass it so every target step has the same seam."""
    if spec.startswith(SIM_PREFIX):
        if not spec[len(SIM_PREFIX):]:
            raise SsdlabError("`sim:` needs a preset name, e.g. sim:client-tlc-1tb.")
        return Target(spec, TargetKind.SIM, None, 0)
    path = Path(spec).expanduser()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return file_target(spec, path, size, force, reuse)
    except OSError as exc:
        raise SsdlabError(f"cannot read {path}: {exc.strerror}.") from exc
    if stat.S_ISBLK(mode):
        return _device_target(spec, path)
    if stat.S_ISREG(mode):
        return file_target(spec, path, size, force, reuse)
    if stat.S_ISDIR(mode):
        raise SsdlabError(f"{path} is a directory: give a file inside it, e.g. "
                          f"`{path / 'ssdlab.img'} --size 64GiB`, or a block device.")
    if stat.S_ISCHR(mode):
        hint = (f" (for an NVMe controller, use a namespace such as {path}n1)"
                if re.fullmatch(r"nvme\d+", path.name) else "")
        raise SsdlabError(f"{path} is a character device, not a block device: give a block "
                          f"device such as /dev/nvme0n1{hint}, or a file path.")
    raise SsdlabError(f"{path} is neither a regular file nor a block device: choose a file "
                      "path or a block device such as /dev/nvme0n1.")


def device_capacity(path: Path, sys_root: Path = SYSFS) -> int:
    size = sysfs.size_bytes(sysfs.kernel_name(path, sys_root), sys_root)
    if not size:
        raise SsdlabError(f"{path} reports no capacity (an empty card reader, a detached loop "
                          "device?): choose a device with media in it.")
    return size


def _device_target(spec: str, path: Path) -> Target:
    try:
        os.close(os.open(path, os.O_RDONLY))  # read-only: nothing is touched yet
    except OSError as exc:
        hint = (" Run as root, or add your user to the `disk` group."
                if exc.errno in (errno.EPERM, errno.EACCES) and os.geteuid() != 0 else "")
        raise SsdlabError(f"cannot open {path}: {exc.strerror}.{hint}") from exc
    name = sysfs.kernel_name(path)
    return Target(spec, TargetKind.DEVICE, path, device_capacity(path),
                  sysfs.int_attr(name, "queue/logical_block_size") or 512)
