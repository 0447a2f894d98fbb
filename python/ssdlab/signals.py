"""Ctrl-C, SIGTERM and SIGHUP stop a run alike: each raises KeyboardInterrupt wherever the
program is, and is remembered. A signal handler runs inside whatever Python code is
executing, and a library may turn that KeyboardInterrupt into an error of its own
(pydantic's JSON serializer wraps it in a PydanticSerializationError): a run that fails
after a stop was asked is an interrupted run, not a failure."""

from __future__ import annotations

import signal

_stop_asked = False


def install() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop)


def _stop(signum: int, frame: object) -> None:
    global _stop_asked
    _stop_asked = True
    raise KeyboardInterrupt


def stop_asked() -> bool:
    """Has a signal asked this process to stop?"""
    return _stop_asked
