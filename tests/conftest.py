import compileall
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ssdlab

# O_DIRECT needs a disk-backed filesystem; /tmp may be tmpfs on some machines.
SCRATCH_ROOT = Path(os.environ.get("SSDLAB_TEST_SCRATCH", "/var/tmp"))


def pytest_configure(config):
    """ssdlab's bytecode, written before the tests start (by xdist's controller, not each
    worker): where PYTHONDONTWRITEBYTECODE is set, every `python -m ssdlab` the tests start
    would otherwise compile the modules it imports again, a sixth of a second of CPU each."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(ssdlab.__file__).parent, quiet=2)


@pytest.fixture(scope="session", autouse=True)
def private_tmpdir(tmp_path_factory):
    """The temporary files of every ssdlab the tests start (fio's job files, prepared traces) go below pytest's
    own temporary directory, of which pytest keeps the last three: a run killed with SIGKILL
    leaves its files there, not in /tmp."""
    path = tmp_path_factory.mktemp("tmpdir")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(path))
        patch.setenv("SSDLAB_TRACE_CACHE", str(path / "traces"))  # prepared traces (traces/cache.py)
        patch.setattr(tempfile, "tempdir", None)  # tempfile caches the directory it chose
        yield path


@pytest.fixture
def scratch(tmp_path_factory):
    """A directory on a filesystem that supports O_DIRECT, removed afterwards."""
    import shutil
    path = Path(tempfile.mkdtemp(prefix="ssdlab-test-", dir=SCRATCH_ROOT))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_cli(*args, db=None, check=True, timeout=600, **kwargs):
    """`python -m ssdlab ARGS` as a user would run it; returns the CompletedProcess."""
    argv = [sys.executable, "-m", "ssdlab", *map(str, args)]
    if db is not None:
        argv += ["--db", str(db)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def table_column(text: str, header: str) -> list[str]:
    """The cells of one column of a table rich printed (piped: whole rows, one a line), top to bottom."""
    lines = text.splitlines()
    heads = next(line for line in lines if line.startswith("┃")).strip("┃").split("┃")
    index = [h.strip() for h in heads].index(header)
    return [line.strip("│").split("│")[index].strip() for line in lines if line.startswith("│")]
