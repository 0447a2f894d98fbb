"""A Python that has imported ssdlab's command line once, then forks a child for each `ssdlab`
a test runs (conftest.run_cli): the child is a process of its own, as `python -m ssdlab` is,
without the third of a second of CPU that starting Python and importing ssdlab costs each
time (several hundred starts in a run of the tests).

Run as a script by conftest, with one end of a SOCK_SEQPACKET socket pair: each request is
one message (JSON: the arguments, the working directory, the environment) carrying the
child's stdin, stdout and stderr as file descriptors. The reply is two messages: the child's
pid at once, then its exit code (negative for a signal, as subprocess gives it).

The child does what `python -m ssdlab` would: it runs the package's __main__ with its own
argv, environment and working directory, and leaves through the interpreter's own exit
(atexit, threads joined, streams flushed), a traceback and status 1 included. This process
holds no thread and no open database when it forks."""

from __future__ import annotations

import gc
import json
import os
import runpy
import socket
import sys
import tempfile

MESSAGE_BYTES = 1 << 20


def preload() -> None:
    """Every command's module, the sessions, backends and the report (numpy, altair, the
    simulator): what a command would otherwise import anew in each child."""
    from ssdlab.cli.main import app_for

    app_for([])
    import ssdlab.backends.fio
    import ssdlab.backends.sim
    import ssdlab.report
    import ssdlab.session  # noqa: F401


def serve(sock: socket.socket) -> None:
    while True:
        data, fds, _, _ = socket.recv_fds(sock, MESSAGE_BYTES, 3)
        if not data:  # the tests' process is gone
            return
        request = json.loads(data)
        pid = os.fork()
        if pid == 0:
            sock.close()
            become_the_command(request, fds)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        sock.send(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode())


def become_the_command(request: dict, fds: list[int]) -> None:
    """In the child: its own standard streams, directory, environment and argv, then
    ssdlab's __main__. Whatever it raises leaves this process as it would leave Python."""
    for fd, standard in zip(fds, (0, 1, 2), strict=True):
        os.dup2(fd, standard)
    for fd in fds:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # chosen again from this environment's TMPDIR
    sys.path.insert(0, request["cwd"])  # as `python -m` puts it first
    sys.argv = ["ssdlab", *request["args"]]
    runpy.run_module("ssdlab", run_name="__main__", alter_sys=True)
    sys.exit(0)


if __name__ == "__main__":
    del sys.path[0]  # this script's directory: not on the path of `python -m ssdlab`
    preload()
    # what the children share stays shared: their collector no longer walks (and so copies)
    # the pages of every object imported here
    gc.freeze()
    serve(socket.socket(fileno=int(sys.argv[1])))
