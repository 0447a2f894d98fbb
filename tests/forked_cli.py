"""`python -m ssdlab ARGS` for the tests, each a process of its own forked from one that
imported ssdlab already (cli_zygote.py); subprocess's results, timeout and text included.

One zygote per process of the tests, started at its first use. A command whose environment
differs from the zygote's in what Python or rich read only at start (the locale, PYTHON*,
the terminal's) runs as a real `python -m ssdlab` instead, as does one asked while another
is running (from a thread)."""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.cli_zygote import MESSAGE_BYTES

ZYGOTE = Path(__file__).with_name("cli_zygote.py")
READ_AT_START = ("LANG", "LC_", "PYTHON", "COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR")


class Zygote:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = dict(os.environ)
        self.process = subprocess.Popen([sys.executable, str(ZYGOTE), str(theirs.fileno())],
                                        pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        theirs.close()
        self.socket = ours
        self.busy = threading.Lock()

    def serves(self, env: dict[str, str]) -> bool:
        return self.process.poll() is None and all(
            env.get(key) == self.env.get(key) for key in env.keys() | self.env.keys() if key.startswith(READ_AT_START))

    def run(self, args: list[str], cwd: str, timeout: float) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) of `ssdlab ARGS` run in cwd with this process's environment."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        request = {"args": args, "cwd": cwd, "env": dict(os.environ)}
        try:
            socket.send_fds(self.socket, [json.dumps(request).encode()], [stdin, out_w, err_w])
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
        pid = self._reply()["pid"]
        try:
            out, err = _read_to_end(out_r, err_r, time.monotonic() + timeout)
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            self._reply()
            raise subprocess.TimeoutExpired(args, timeout) from None
        return self._reply()["code"], out, err

    def _reply(self) -> dict:
        data = self.socket.recv(MESSAGE_BYTES)
        if not data:
            raise RuntimeError(f"the ssdlab zygote ended (status {self.process.wait()})")
        return json.loads(data)

    def close(self) -> None:
        self.socket.close()
        self.process.wait()


def _read_to_end(out_fd: int, err_fd: int, deadline: float) -> tuple[str, str]:
    """Both pipes read until every writer closed them (the command and what it started), as
    subprocess.run does; the text decoded with newlines made universal, as text=True does."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired("ssdlab", left)
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
        finally:
            os.close(out_fd)
            os.close(err_fd)
    return _text(b"".join(chunks[out_fd])), _text(b"".join(chunks[err_fd]))


def _text(data: bytes) -> str:
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


_zygote: Zygote | None = None


def run_ssdlab(args: list[str], cwd: str | None, timeout: float, **popen) -> subprocess.CompletedProcess:
    """As subprocess.run([python, -m, ssdlab, *args], capture_output=True, text=True, ...)."""
    global _zygote
    argv = [sys.executable, "-m", "ssdlab", *args]
    if popen:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, **popen)
    if _zygote is None or _zygote.process.poll() is not None:
        _zygote = Zygote()
        atexit.register(_zygote.close)
    if _zygote.serves(dict(os.environ)) and _zygote.busy.acquire(blocking=False):
        try:
            code, out, err = _zygote.run(args, os.path.abspath(cwd or os.getcwd()), timeout)
        finally:
            _zygote.busy.release()
        return subprocess.CompletedProcess(argv, code, out, err)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
