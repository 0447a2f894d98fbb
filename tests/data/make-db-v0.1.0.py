"""How tests/data/db-v0.1.0.sqlite was made: a database written by ssdlab 0.1.0.

Kept to document the fixture, not run by the tests; the fixture must stay what
0.1.0 wrote, so it is never regenerated with a later ssdlab. It was run as

    git worktree add /tmp/ssdlab-v010 84c0f44          # the 0.1.0 code
    cp python/ssdlab/_ssdsim.abi3.so /tmp/ssdlab-v010/python/ssdlab/
    .venv/bin/python tests/data/make-db-v0.1.0.py /tmp/ssdlab-v010 tests/data/db-v0.1.0.sqlite

Runs: 1 and 2 are complete quick-suite simulated runs on two presets (for
`compare`); 3 is a client-suite simulated run stopped by Ctrl-C half-way (a
`running` run with finished, running and pending tests); 4 is a fio run on a
file (the fio engine, a file identity, real fio job texts).
"""

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

checkout, out = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
env = {**os.environ, "PYTHONPATH": str(checkout / "python")}


def ssdlab(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ssdlab", *args, "--db", str(out)],
                            cwd=checkout, env=env, stdout=subprocess.DEVNULL)


def steps_of_run(run_id: int) -> int:
    with closing(sqlite3.connect(out)) as db:
        return db.execute("SELECT count(*) FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]


assert not out.exists(), f"{out} exists: remove it first"
assert ssdlab("run", "sim:wd-sn850-1tb", "--suite", "quick", "--scale", "0.01",
              "--name", "quick reference").wait() == 0
assert ssdlab("run", "sim:samsung-980pro-1tb", "--suite", "quick", "--scale", "0.01",
              "--name", "980 pro").wait() == 0
stopped = ssdlab("run", "sim:wd-sn850-1tb", "--suite", "client", "--scale", "0.1",
                 "--name", "stopped half-way")
while steps_of_run(3) < 20:
    time.sleep(0.05)
stopped.send_signal(signal.SIGINT)
assert stopped.wait() == 130
with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
    assert ssdlab("run", f"{scratch}/target.img", "--suite", "quick", "--tests",
                  "rand-read-burst", "--scale", "0.01", "--name", "fio on a file").wait() == 0
with closing(sqlite3.connect(out, isolation_level=None)) as db:
    db.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
    db.execute("VACUUM")
