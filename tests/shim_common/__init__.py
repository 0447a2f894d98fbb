"""What the LD_PRELOAD shims (tests/nvme_shim, tests/ata_shim), their tests and the scripts that
record through them share: building a shim, finding the real programs, the generated part of a
README. The C side they share is interpose.h, next to this file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent


def compile_shim(source: Path, out_dir: Path | str) -> Path:
    """Compile the shim `source` (a .c that includes interpose.h) with gcc into out_dir; returns the
    path of the .so, named after the source.

    Raises FileNotFoundError when gcc is missing, CalledProcessError when it fails.
    """
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise FileNotFoundError("gcc")
    out = Path(out_dir) / source.with_suffix(".so").name
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O2", "-Wall", "-I", str(HERE), "-o", str(out), str(source), "-ldl"],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def preload_env(prefix: str, device: str, pages_dir: Path | str, so_path: Path | str) -> dict[str, str]:
    """LD_PRELOAD and the shim's variables <prefix>DEVICE and <prefix>DIR."""
    return {
        "LD_PRELOAD": str(Path(so_path).resolve()),
        f"{prefix}DEVICE": device,
        f"{prefix}DIR": str(Path(pages_dir).resolve()),
    }


def find_program(name: str) -> str | None:
    """`name` on PATH, else in /usr/sbin or /sbin; None if in neither."""
    found = shutil.which(name)
    if found:
        return found
    for d in ("/usr/sbin", "/sbin"):  # sbin may be off a non-root PATH
        if os.access(f"{d}/{name}", os.X_OK):
            return f"{d}/{name}"
    return None


def rewrite_generated(readme: Path, begin: str, end: str, body: str, title: str) -> None:
    """Put `body` between the lines `begin` and `end` of readme, leaving the rest as it is. The
    markers are appended if missing; a missing readme is made with heading `title`."""
    block = f"{begin}\n{body}\n{end}"
    text = readme.read_text() if readme.exists() else f"# {title}\n\n{begin}\n{end}\n"
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    readme.write_text(re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S))
