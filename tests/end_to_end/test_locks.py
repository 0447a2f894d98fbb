"""One process per target and per run: a second run on a busy target and a resume of a
live run are refused, naming the holder; a run whose process died shows as interrupted
and resumes; fio never outlives a killed ssdlab."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from ssdlab import locks
from ssdlab.errors import UnsafeTarget
from ssdlab.external import Commands
from ssdlab.targets import files
from ssdlab.targets.consent import confirm_destroy
from ssdlab.targets.purge import purge_device
from ssdlab.units import GiB, MiB
from tests.conftest import run_cli
from tests.loop_devices import loop_device, mounted, require

SIM_RUN = ["run", "sim:wd-sn850-1tb", "--suite", "quick", "--scale", "0.2", "--json"]
FILE_TEST = ["--scale", "0.01", "--tests", "seq-read-sustained", "--json"]


def ssdlab(*args, db: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ssdlab", *map(str, args), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for(condition, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the process ended before {what}: {proc.stderr.read()}")
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.05)


def hold_in_child(path: Path) -> subprocess.Popen:
    """Another process holding `path` as a run would."""
    code = ("import sys, time; from pathlib import Path; from ssdlab import locks; "
            "locks.hold_file(Path(sys.argv[1])); print('held', flush=True); time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "held"
    return child


def holds_run(proc: subprocess.Popen, db: Path, run_id: int = 1) -> bool:
    """Whether `proc` itself holds the run's lock: /proc/locks names files by inode, and a
    process of an earlier test may still hold a lock on an inode that was reused since."""
    return proc.pid in locks.holders(locks.run_lock_path(db, run_id))


def runs_it(proc: subprocess.Popen, db: Path, run_id: int = 1) -> bool:
    """Whether `proc` holds the run and the run is stored: the lock is taken just before the
    run's row is committed, and an interrupt in between leaves no run to resume."""
    if not holds_run(proc, db, run_id):
        return False
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return con.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None


def said(stderr: str) -> str:
    """The message as one line (the terminal printer may wrap it)."""
    return " ".join(stderr.split())


def run_status(db: Path, run_id: int = 1) -> str:
    runs = json.loads(run_cli("runs", "--json", db=db).stdout)
    return next(r["status"] for r in runs if r["id"] == run_id)


def processes_with_open(path: Path) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) == str(path) for fd in (proc / "fd").iterdir()):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_a_file_another_process_holds_is_refused_naming_it_and_left_untouched(scratch):
    target = scratch / "drive.img"
    files.create(target, GiB)
    before = target.stat()
    child = hold_in_child(target)
    try:
        proc = run_cli("run", target, *FILE_TEST, db=scratch / "x.db", check=False)
        assert proc.returncode == UnsafeTarget.exit_code, proc.stderr
        assert f"in use by another run (process {child.pid} (python" in said(proc.stderr)
        assert "Traceback" not in proc.stderr
        after = target.stat()
        assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
            before.st_ino, before.st_size, before.st_mtime_ns)
    finally:
        child.kill()
        child.wait()
    with locks.hold_file(target):  # the kernel released it with the process
        pass


@pytest.mark.waits
def test_a_second_run_on_a_busy_file_is_refused_and_the_first_finishes(scratch):
    target = scratch / "drive.img"
    first = ssdlab("run", target, *FILE_TEST, db=scratch / "first.db")
    # the file held, not only the run: the first run holds its run before it makes its file
    wait_for(lambda: holds_run(first, scratch / "first.db") and first.pid in locks.holders(target), first,
             "the first run")
    second = run_cli("run", target, *FILE_TEST, db=scratch / "second.db", check=False)
    assert second.returncode == UnsafeTarget.exit_code, second.stderr
    assert f"in use by another run (process {first.pid} " in said(second.stderr)
    assert first.wait(timeout=300) == 0, first.stderr.read()
    assert run_status(scratch / "first.db") == "done"


def test_resuming_a_live_run_is_refused_and_a_killed_run_is_interrupted_then_resumes(tmp_path):
    db = tmp_path / "runs.db"
    proc = ssdlab(*SIM_RUN, db=db)
    wait_for(lambda: holds_run(proc, db), proc, "the run")
    refused = run_cli("resume", "1", db=db, check=False)
    assert refused.returncode == 2, refused.stderr
    assert f"run 1 is running in process {proc.pid} (" in said(refused.stderr)
    assert run_status(db) == "running"

    proc.kill()
    proc.wait()
    assert run_status(db) == "interrupted"
    run_cli("resume", "1", db=db)
    assert run_status(db) == "done"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_says_how_to_resume_and_resumes(tmp_path, signum):
    db = tmp_path / "runs.db"
    proc = ssdlab(*SIM_RUN, db=db)
    wait_for(lambda: runs_it(proc, db), proc, "the run")
    proc.send_signal(signum)
    assert proc.wait(timeout=120) != 0
    stderr = proc.stderr.read()
    assert "ssdlab resume 1" in said(stderr) and "Traceback" not in stderr
    assert run_status(db) == "interrupted"
    run_cli("resume", "1", db=db)
    assert run_status(db) == "done"


def test_fio_dies_with_a_killed_ssdlab(scratch):
    """ssdlab runs fio as its backend does (runner.run_job); a 30 s job must not outlive it."""
    target = scratch / "drive.img"
    files.create(target, 64 * MiB)
    job = scratch / "job.fio"
    job.write_text(f"[read]\nfilename={target}\nrw=randread\nbs=4k\ndirect=1\n"
                   "time_based=1\nruntime=30\n")
    code = ("import sys; from pathlib import Path; from ssdlab.backends.fio import runner; "
            "from ssdlab.external import Commands; runner.run_job(Path(sys.argv[1]), Commands())")
    proc = subprocess.Popen([sys.executable, "-c", code, str(job)], stderr=subprocess.PIPE,
                            text=True)
    wait_for(lambda: processes_with_open(target), proc, "fio")
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 3  # the death signal is immediate; an orphan runs 30 s
    while processes_with_open(target):
        assert time.monotonic() < deadline, f"still reading: {processes_with_open(target)}"
        time.sleep(0.05)


@pytest.mark.root
def test_a_held_device_is_ours_alone_until_released(tmp_path):
    require("mkfs.ext4", "blkdiscard")
    with loop_device(tmp_path / "disk.img") as device:
        with locks.hold_device(device):
            code = ("import sys; from pathlib import Path; from ssdlab import locks; "
                    "locks.hold_device(Path(sys.argv[1]))")
            other = subprocess.run([sys.executable, "-c", code, str(device)],
                                   capture_output=True, text=True)
            assert other.returncode != 0
            assert f"in use by another run (process {os.getpid()} (" in other.stderr
            # the kernel's claim: nothing can make a filesystem on it (or mount it) meanwhile
            assert run_quietly("mkfs.ext4", "-q", str(device)).returncode != 0
            ident = {"name": device.name, "serial": None}
            ran = purge_device(confirm_destroy(device, ident, device.name), Commands())
            assert ran.commands == (f"blkdiscard --force {device}",)  # util-linux 2.36+ here
        with locks.hold_device(device):  # released with the hold
            pass
        assert run_quietly("mkfs.ext4", "-q", str(device)).returncode == 0
        with pytest.raises(locks.DeviceClaimed, match="the kernel says it is in use"):
            with mounted(device, tmp_path / "mnt"):
                locks.hold_device(device)


def run_quietly(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True)
