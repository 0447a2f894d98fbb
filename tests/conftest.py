import os
import subprocess
import sys
from pathlib import Path

import pytest

# O_DIRECT needs a disk-backed filesystem; /tmp may be tmpfs on some machines.
SCRATCH_ROOT = Path(os.environ.get("SSDLAB_TEST_SCRATCH", "/var/tmp"))


@pytest.fixture
def scratch(tmp_path_factory):
    """A directory on a filesystem that supports O_DIRECT, removed afterwards."""
    import shutil
    import tempfile
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
