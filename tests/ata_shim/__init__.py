"""A fake SATA SSD behind a SCSI-to-ATA translation layer, for the real smartctl (see ata_shim.c).

    so = build_shim(tmp_path)
    pages = DRIVES["wd-red-sa500-4t"].write(tmp_path / "wd")
    env = {**os.environ, **shim_env("/dev/sdz", pages, so), "LC_ALL": "C"}
    subprocess.run(["smartctl", "-j", "-a", "/dev/sdz"], env=env, ...)

Nothing opens a real device: only the path given as `device` is faked, and only in processes
started with the returned environment. The path must not be a real disk of the machine (smartctl
looks in /sys/block for a USB bridge before it opens the node).
"""

from __future__ import annotations

from pathlib import Path

from tests.shim_common import compile_shim, preload_env

from .pages import DRIVES, Attr, Drive, SelfTest, temperature_raw

SOURCE = Path(__file__).with_name("ata_shim.c")

__all__ = ["DRIVES", "SOURCE", "Attr", "Drive", "SelfTest", "build_shim", "shim_env", "temperature_raw"]


def build_shim(tmp_dir: Path | str) -> Path:
    """Compile ata_shim.c with gcc into tmp_dir; returns the path of the .so.

    Raises FileNotFoundError when gcc is missing, CalledProcessError when it fails.
    """
    return compile_shim(SOURCE, tmp_dir)


def shim_env(device: str, pages_dir: Path | str, so_path: Path | str) -> dict[str, str]:
    """The environment variables that make `device` answer from the pages in pages_dir."""
    return preload_env("ATA_SHIM_", device, pages_dir, so_path)
