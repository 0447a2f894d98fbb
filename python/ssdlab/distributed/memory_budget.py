"""A worker's memory for its simulated drives: as many run at once as its memory holds, never
fewer than one, as on this machine's own cores (side_by_side.plan_requests).

A Dask worker runs as many tasks at once as it has threads, and Dask does not know what a
simulated drive takes (up to side_by_side.memory_need: 2 GiB per TB of capacity). Four
threads each building a 4 TB drive would ask 32 GiB of a host that may have 16. So each
task holds its drive's need from the process's budget while it runs (the memory available
when its first simulated task came: the worker's own is already taken), and a task whose
drive does not fit beside those running waits for one of them to end; one alone always runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property

from ssdlab.side_by_side import Stop, available_bytes

STOP_POLL_S = 0.5  # how soon a task waiting for memory sees its worker asked to stop


class MemoryBudget:
    """Bytes for simulated drives, shared by the threads of one process; `total` reads how
    many (None: unknown, and then nothing waits)."""

    def __init__(self, total: Callable[[], int | None] = available_bytes):
        self._read_total = total
        self._held = 0
        self._running = 0
        self._changed = threading.Condition()

    @cached_property
    def total(self) -> int | None:
        return self._read_total()

    @contextmanager
    def held(self, need: int, stop: Stop) -> Iterator[bool]:
        """`need` bytes held while the block runs, once they fit beside the drives running (or
        none runs): True. False, holding nothing, when `stop` is set first."""
        if not self._acquired(need, stop):
            yield False
            return
        try:
            yield True
        finally:
            with self._changed:
                self._held -= need
                self._running -= 1
                self._changed.notify_all()

    def _acquired(self, need: int, stop: Stop) -> bool:
        with self._changed:
            total = self.total
            while self._running and total is not None and self._held + need > total:
                if stop.is_set():
                    return False
                self._changed.wait(STOP_POLL_S)
            self._held += need
            self._running += 1
            return True


# this process's, for the simulated drives of its tasks (cluster.run_on_worker)
simulated_drives = MemoryBudget()
