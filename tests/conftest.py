import compileall
import os
import tempfile
from pathlib import Path

import pytest

import ssdlab
from tests.forked_cli import run_ssdlab

# O_DIRECT needs a disk-backed filesystem; /tmp may be tmpfs on some machines.
SCRATCH_ROOT = Path(os.environ.get("SSDLAB_TEST_SCRATCH", "/var/tmp"))


def pytest_configure(config):
    """ssdlab's bytecode, written before the tests start (by xdist's controller, not each
    worker): where PYTHONDONTWRITEBYTECODE is set, every `python -m ssdlab` the tests start
    would otherwise compile the modules it imports again, a sixth of a second of CPU each."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(ssdlab.__file__).parent, quiet=2)


def pytest_collection_modifyitems(config, items):
    """The slow tests first, each module's tests still together and in order: xdist's workers
    then end on short tests, not one of them on a minute-long run while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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


def run_cli(*args, db=None, check=True, timeout=600, cwd=None, **popen):
    """`python -m ssdlab ARGS` as a user would run it, a process of its own (forked_cli.py;
    started by subprocess itself when given other `popen` arguments); returns the
    CompletedProcess."""
    args = [*map(str, args), *(["--db", str(db)] if db is not None else [])]
    proc = run_ssdlab(args, cwd, timeout, **popen)
    if check and proc.returncode != 0:
        raise AssertionError(f"{proc.args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def table_column(text: str, header: str) -> list[str]:
    """The cells of one column of a table rich printed (piped: whole rows, one a line), top to bottom."""
    lines = text.splitlines()
    heads = next(line for line in lines if line.startswith("┃")).strip("┃").split("┃")
    index = [h.strip() for h in heads].index(header)
    return [line.strip("│").split("│")[index].strip() for line in lines if line.startswith("│")]
