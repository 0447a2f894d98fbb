"""A fake NVMe controller for the real nvme-cli and smartctl binaries (see nvme_shim.c).

    so = build_shim(tmp_path)
    pages = DRIVES["sn850"].write(tmp_path / "sn850")
    env = {**os.environ, **shim_env("/dev/nvme0", pages, so)}
    subprocess.run(["nvme", "smart-log", "/dev/nvme0", "-o", "json"], env=env, ...)

Nothing opens a real device: only the path given as `device` is faked, and only in processes
started with the returned environment.
"""

from __future__ import annotations

from pathlib import Path

from tests.shim_common import compile_shim, preload_env

from .pages import DRIVES, Drive, IdCtrl, IdNs, PowerState, SmartLog, apst_table, self_test_log

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
