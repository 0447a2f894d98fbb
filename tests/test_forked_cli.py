"""The tests' `ssdlab`, forked from a process that imported it already (forked_cli.py), gives
what `python -m ssdlab` gives: the same output, exit status and traceback-free messages."""

import os
import subprocess
import sys

import pytest

from tests.forked_cli import run_ssdlab
from tests.paths import SMALL_PRESET


@pytest.mark.parametrize("args", [
    ["--help"],
    ["suites"],
    ["run", f"sim:{SMALL_PRESET}", "--tests", "seq-read-burst", "--dry-run"],
    ["run", "sim:no-such-drive", "--dry-run"],  # refused: status 2, one line
    ["show", "latest", "--db", "no-such-dir/x.db"],  # relative to the working directory
    ["no-such-command"],  # typer's own usage error
])
def test_a_forked_command_gives_what_python_m_ssdlab_gives(args, tmp_path):
    forked = run_ssdlab(args, str(tmp_path), timeout=60)
    started = subprocess.run([sys.executable, "-m", "ssdlab", *args], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (started.returncode, started.stdout, started.stderr)


def test_a_command_past_its_timeout_is_killed(tmp_path):
    """`trace` reading a FIFO no one writes waits for ever: the timeout ends it, as subprocess's does."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(subprocess.TimeoutExpired):
        run_ssdlab(["trace", "stats", str(fifo)], str(tmp_path), timeout=1)
    assert run_ssdlab(["--help"], str(tmp_path), timeout=60).returncode == 0  # the next one runs
