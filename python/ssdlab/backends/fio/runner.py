"""Running fio: the process, its version, the ioengine probe, and how it can fail.

fio is started in the foreground process group (Ctrl-C reaches it too) and is
told by the kernel to die with ssdlab (PR_SET_PDEATHSIG), so a killed run never
leaves fio writing to a target that a resumed run is about to use. fio runs its
job as a thread (`--thread`): a forked job process would not inherit the death
signal and would go on writing after a SIGKILL of ssdlab. Threads change nothing
in the I/O fio issues.
"""

from __future__ import annotations

import ctypes
import re
import signal
import subprocess
from collections.abc import Callable, Collection
from contextlib import ExitStack
from pathlib import Path

from ssdlab.backends.fio import parse
from ssdlab.errors import BackendFailed
from ssdlab.external import Commands, c_locale

PR_SET_PDEATHSIG = 1
POLL_S = 0.25


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: fio merely outlives a killed ssdlab
        pass


def fio_version(commands: Commands) -> str:
    commands.require("fio")
    done = commands.run(["fio", "--version"], timeout=30)
    return done.stdout.strip() or "unknown"


def parse_version(text: str) -> tuple[int, int] | None:
    """fio's (major, minor) from `fio --version` ("fio-3.33"); None when it names none."""
    found = re.search(r"fio-(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def run_job(job_file: Path, commands: Commands, on_tick: Callable[[], None] | None = None,
            messages: Path | None = None, tolerate: Collection[int] = ()) -> str:
    """Run fio on a job file with json+ output; return its standard output, and its standard
    error unless `messages` names a file to write that to instead, for the caller to read line
    by line (a verify pass prints lines for every bad block: a failing drive's are gigabytes).
    A job that ended with an errno of `tolerate` succeeded (a verify pass's bad blocks).

    `on_tick` is called every POLL_S while fio runs (for progress)."""
    fio = commands.require("fio")
    argv = [fio, "--thread", "--output-format=json+", str(job_file)]
    with ExitStack() as files:
        stderr_to = subprocess.PIPE if messages is None else files.enter_context(messages.open("w"))
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr_to, text=True,
                                    errors="replace", preexec_fn=_die_with_parent, env=c_locale())
        except OSError as exc:
            raise BackendFailed(f"cannot start fio: {exc.strerror}") from None
        try:
            stdout, stderr = _communicate(proc, on_tick)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if messages is not None:
        stderr = _tail(messages) if proc.returncode else ""
    output = stdout if messages is not None else stdout + ("\n" + stderr if stderr.strip() else "")
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode).name
        raise BackendFailed(f"fio was killed by {sig} before it finished: if you did not stop it, "
                            "look for the out-of-memory killer in `dmesg`; `ssdlab resume` "
                            "continues the run")
    if proc.returncode != 0:
        tail = " | ".join(stderr.strip().splitlines()[-5:]) or "no message"
        try:  # a job error in the JSON says more than the exit status
            job = parse.job_of(parse.split_output(stdout)[0], tolerate)
        except parse.NoJson:
            pass
        except parse.JobError as exc:
            raise parse.JobError(f"{exc} (fio said: {tail})", exc.code) from None
        except BackendFailed as exc:
            raise BackendFailed(f"{exc} (fio said: {tail})") from None
        else:
            if job.get("error"):  # tolerated: the caller reads it as a finding
                return output
        raise BackendFailed(f"fio failed (exit status {proc.returncode}): {tail}")
    return output


def _tail(path: Path, nbytes: int = 8192) -> str:
    """The end of a file of fio's messages, for an error message."""
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, 2) - nbytes))
        return f.read().decode(errors="replace")


def _communicate(proc: subprocess.Popen, on_tick: Callable[[], None] | None) -> tuple[str, str]:
    if on_tick is None:
        return proc.communicate()
    while True:
        try:
            return proc.communicate(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            on_tick()


def probe_ioengine(path: Path, commands: Commands) -> str:
    """io_uring where it works (kernel support, not disabled by sysctl or seccomp), else
    libaio. The probe only reads a few blocks of the target: nothing is written."""
    for engine in ("io_uring", "libaio"):
        argv = ["fio", "--name=probe", f"--filename={path}", f"--ioengine={engine}", "--direct=1",
                "--rw=read", "--bs=4k", "--size=64k", "--io_size=16k", "--output-format=json"]
        done = commands.run(argv, timeout=60)
        if done.returncode == 0 and '"error" : 0' in done.stdout:
            return engine
    raise BackendFailed(f"fio cannot read {path} with io_uring or libaio and O_DIRECT "
                        f"({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no message'}): "
                        "put a file target on a disk-backed filesystem, or check the device")

