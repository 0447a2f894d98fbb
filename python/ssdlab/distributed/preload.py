"""What a worker's first task would import, imported when the worker starts: the task
(cluster.run_on_worker), the run it makes (session) and the simulator (backends/sim.py and
its extension). `ssdlab worker` imports it itself; a plain `dask worker` is given it as
`--preload ssdlab.distributed.preload`. Without it each fresh worker spends about half a
second of its first run importing (BENCHMARKS.md, issue 29)."""

import ssdlab.backends.sim
import ssdlab.distributed.cluster
import ssdlab.session  # noqa: F401
