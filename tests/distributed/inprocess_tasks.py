"""Tasks for a LocalCluster of this process (processes=False) that share state with the test
that sends them: imported by name on the worker, not pickled by value (Dask pickles even
in-process tasks, and a lock does not pickle)."""

from __future__ import annotations

import threading

started: list[str] = []
release = threading.Event()


def held_until_released(name: str) -> None:
    started.append(name)
    release.wait(60)
