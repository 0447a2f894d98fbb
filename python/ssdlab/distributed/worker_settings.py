"""Dask's settings on ssdlab's workers: Dask's own diagnostics turned down.

By default each Dask worker samples its threads' stacks every 10 ms (the statistical
profiler behind the dashboard's profile page) and checks every 20 ms that its event loop is
responsive: about 150 wakeups of its event loop a second, each a fraction of a millisecond
of CPU. A worker of ssdlab's runs one long task per thread, where neither earns its cost: the
profiler is off, and the loop is checked every second (Dask still warns of a loop blocked for
seconds). On this project's 2-core machine, where the workers share the cores with the
simulations, that took a 32-variant sweep on two workers from 44.7 to 43.1 CPU-s, and from
7.1 % to 2.6 % longer than on the local pool (BENCHMARKS.md, issue 29).

`ssdlab worker` sets these itself. A plain `dask worker` takes them from its environment
(`environment()`, docs/sweeps.md): its `--preload` comes after the check's interval is read.
"""

from __future__ import annotations

WORKER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
}


def environment() -> dict[str, str]:
    """The settings as the environment variables Dask reads them from."""
    return {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value) for key, value in WORKER.items()}
