"""Loop devices and mounts for the root-only tests; always detached and unmounted,
even when the test fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ssdlab.units import MiB


def run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def require(*programs: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to attach loop devices and mount them")
    for program in ("losetup", *programs):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")


@contextmanager
def loop_device(image: Path, size: int = 64 * MiB, partscan: bool = False,
                sector_size: int | None = None, offset: int = 0,
                sizelimit: int = 0) -> Iterator[Path]:
    """A loop device over `image` (a file, created sparse at `size` unless it exists, or a
    block device), with `sector_size` byte logical blocks when given (the kernel's default
    is 512), mapping `sizelimit` bytes (0: all) from `offset`."""
    require()
    if not image.exists():
        with open(image, "wb") as f:
            f.truncate(size)
    window = [*(["-o", str(offset)] if offset else []),
              *(["--sizelimit", str(sizelimit)] if sizelimit else [])]
    try:
        device = run("losetup", "-f", "--show", *(["-P"] if partscan else []),
                     *(["--sector-size", str(sector_size)] if sector_size else []), *window,
                     str(image))
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot attach a loop device here: {exc.stderr.strip()}")
    try:
        if partscan and shutil.which("partx"):
            # some kernels leave the scan to user space; partx adds what the kernel did not
            subprocess.run(["partx", "-a", device], capture_output=True)
        yield Path(device)
    finally:
        if partscan and shutil.which("partx"):
            subprocess.run(["partx", "-d", device], capture_output=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)


@contextmanager
def mounted(device: Path, mount_point: Path) -> Iterator[Path]:
    mount_point.mkdir(parents=True, exist_ok=True)
    with _undone(["mount", str(device), str(mount_point)], ["umount", str(mount_point)],
                 "cannot mount here"):
        yield mount_point


@contextmanager
def active_swap(path: Path) -> Iterator[Path]:
    """`path` (a device or file) as active swap while inside; skips where swap cannot be."""
    require("mkswap", "swapon")
    run("mkswap", "-q", str(path))
    with _undone(["swapon", str(path)], ["swapoff", str(path)], "cannot turn swap on here"):
        yield path


@contextmanager
def _undone(do: list[str], undo: list[str], refused: str) -> Iterator[None]:
    """`do` while inside, `undo` after, even when the test fails; a skip where this machine
    refuses `do`."""
    try:
        run(*do)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"{refused}: {exc.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(undo, capture_output=True)


def reasons(excinfo) -> list[str]:
    """The listed reasons of an UnsafeTarget refusal."""
    return [line for line in str(excinfo.value).splitlines() if line.startswith("  - ")]


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of a directory with its bytes and mtime: what must stay untouched."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())
            if p.is_file()}
