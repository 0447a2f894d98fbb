"""Waiting, in the distributed tests, for what another thread or process is to do: the
deadline is for a failure only, never a measure of speed."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(found: Callable[[], Any], log: Callable[[], str] = lambda: "", timeout: float = 30) -> Any:
    """`found()`'s first true value (an OSError, ValueError or KeyError counts as not yet: a
    file being written); AssertionError with `log()` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if value := found():
                return value
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"not ready after {timeout} s:\n{log()}")
