"""A fake NVMe controller for the real nvme-cli and smartctl binaries (see nvme_shim.c).

    so = build_shim(tmp_path)
    pages = DRIVES["sn850"].write(tmp_path / "sn850")
    env = {**os.environ, **shim_env("/dev/nvme0", pages, so)}
    subprocess.run(["nvme", "smart-log", "/dev/nvme0", "-o", "json"], env=env, ...)

Nothing opens a real device: only the path given as `device` is faked, and only in processes
started with the returned environment.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.shim_common import compile_shim, find_program, preload_env

from .pages import DRIVES, Drive, IdCtrl, IdNs, PowerState, SmartLog, apst_table, sanitize_log, self_test_log

SOURCE = Path(__file__).with_name("nvme_shim.c")

__all__ = [
    "DRIVES",
    "SOURCE",
    "Drive",
    "IdCtrl",
    "IdNs",
    "PowerState",
    "SmartLog",
    "apst_table",
    "build_shim",
    "nvme_on_path",
    "sanitize_log",
    "self_test_log",
    "shim_env",
]


def build_shim(tmp_dir: Path | str) -> Path:
    """Compile nvme_shim.c with gcc into tmp_dir; returns the path of the .so.

    Raises FileNotFoundError when gcc is missing, CalledProcessError when it fails.
    """
    return compile_shim(SOURCE, tmp_dir)


def shim_env(device: str, pages_dir: Path | str, so_path: Path | str) -> dict[str, str]:
    """The environment variables that make `device` answer from the pages in pages_dir."""
    return preload_env("NVME_SHIM_", device, pages_dir, so_path)


def nvme_on_path(bin_dir: Path, pages_dir: Path | str, so_path: Path | str, device: str = "/dev/nvme0",
                 formats: bool = False) -> Path:
    """An `nvme` in bin_dir (made) that runs the real nvme-cli with the shim answering for
    `device`, and appends each call's arguments to pages_dir/calls; returns bin_dir, to put
    first on PATH. `formats`: `nvme format` says it formatted, without nvme-cli (the shim
    fakes the controller node, and a format goes to a namespace). FileNotFoundError when
    nvme-cli is not installed."""
    nvme = find_program("nvme")
    if nvme is None:
        raise FileNotFoundError("nvme")
    bin_dir.mkdir(parents=True, exist_ok=True)
    env = " ".join(f"{name}={shlex.quote(value)}" for name, value in shim_env(device, pages_dir, so_path).items())
    calls = shlex.quote(str(Path(pages_dir, "calls")))
    script = bin_dir / "nvme"
    formatted = 'if [ "$1" = format ]; then echo "Success formatting namespace:1"; exit 0; fi\n' if formats else ""
    script.write_text(f'#!/bin/sh\necho "nvme $*" >> {calls}\n{formatted}{env} exec {shlex.quote(nvme)} "$@"\n')
    script.chmod(0o755)
    return bin_dir
