"""The built wheel, installed with pip in a fresh virtual environment outside the
checkout, is a working ssdlab: its presets, its suites, a simulated run, its version.

Everything runs from a temporary directory with a clean environment, so nothing of
the checkout (its drives/, python/, the development venv) can stand in for what the
wheel lacks.
"""

import fcntl
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.paths import REPOSITORY

MATURIN = Path(sys.executable).with_name("maturin")

# About 12 s with a warm pip cache and an up-to-date target/, 25 s when the extension is
# rebuilt; longer on a cold pip cache, which downloads the dependencies (numpy, vl-convert...).
pytestmark = pytest.mark.slow


def run(argv: list, cwd: Path, timeout: float = 600) -> str:
    """A command with the checkout kept out of its environment; its stdout."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    proc = subprocess.run([str(arg) for arg in argv], check=False, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def build_wheel(out_dir: Path) -> Path:
    # For the interpreter and the Cargo profile the development venv was built with (`make
    # test` says which), so cargo's target/ (shared with `maturin develop`) is reused and only
    # the wheel is new. One build at a time in that target/: under xdist every worker that
    # runs a test of this module builds its wheel.
    profile = os.environ.get("SSDLAB_CARGO_PROFILE", "release")
    lock = REPOSITORY / "target" / "test_install.lock"
    lock.parent.mkdir(exist_ok=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file is closed
        run([MATURIN, "build", "--profile", profile, "--interpreter", sys.executable, "-o", out_dir],
            cwd=REPOSITORY)
    (wheel,) = out_dir.glob("ssdlab-*.whl")
    return wheel


def install_in_fresh_venv(wheel: Path, venv: Path, cwd: Path) -> Path:
    """A new venv holding only the wheel and its dependencies (from the package index)."""
    # Without its own pip: the development venv's pip installs into it, which saves
    # seconds of ensurepip and installs exactly the same.
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=cwd)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
         "--disable-pip-version-check", wheel], cwd=cwd)
    return venv / "bin" / "ssdlab"


@pytest.fixture(scope="session")
def installed(tmp_path_factory, worker_id) -> tuple[Path, Path]:
    """(the installed `ssdlab` command, a working directory outside the checkout). One venv
    for the whole pytest run: the first xdist worker to need it makes it in the run's own
    directory, the others wait for it and use it."""
    if not MATURIN.exists():
        pytest.skip(f"maturin is not installed beside {sys.executable} (`make setup` installs it)")
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # the run's directory, above each worker's
    assert not shared.resolve().is_relative_to(REPOSITORY)
    root = shared / "install"
    with (shared / "install.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file is closed
        if not (root / "ready").exists():
            root.mkdir(exist_ok=True)
            wheel = build_wheel(root / "dist")
            install_in_fresh_venv(wheel, root / "venv", root)
            (root / "ready").touch()
    return root / "venv" / "bin" / "ssdlab", tmp_path_factory.mktemp("work")


def test_package_is_imported_from_the_venv(installed):
    ssdlab, work = installed
    venv = ssdlab.parent.parent
    script = "import ssdlab, importlib.metadata as m; print(ssdlab.__file__); print(m.version('ssdlab'))"
    module_file, version = run([venv / "bin" / "python", "-c", script], cwd=work).split()
    assert Path(module_file).is_relative_to(venv)
    cargo = tomllib.loads((REPOSITORY / "Cargo.toml").read_text())
    assert version == cargo["workspace"]["package"]["version"]


def test_presets_and_suites_ship_in_the_wheel(installed):
    ssdlab, work = installed
    drives = {row["name"]: row for row in json.loads(run([ssdlab, "drives", "--json"], cwd=work))}
    assert {"wd-sn850-1tb", "wd-black-2018-1tb", "samsung-980pro-1tb"} <= set(drives)
    assert all(Path(row["path"]).is_relative_to(ssdlab.parent.parent) for row in drives.values())
    suites = run([ssdlab, "suites"], cwd=work)
    assert all(name in suites for name in ("quick", "client", "enterprise", "lab"))


def test_a_simulated_run_from_another_directory(installed):
    ssdlab, work = installed
    db = work / "x.db"
    run([ssdlab, "run", "sim:wd-sn850-1tb", "--suite", "quick", "--scale", "0.01", "--db", db], cwd=work)
    shown = run([ssdlab, "show", "latest", "--db", db], cwd=work)
    assert "WD Black SN850 1 TB" in shown
    assert shown.count("done") >= 4
