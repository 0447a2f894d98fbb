"""A sweep of 32 variants of the simulated WD SN850 (the quick suite at a small scale) three
ways: one variant at a time (--jobs 1), two at once on this machine (--jobs 2), and on a Dask
cluster of two workers on the loopback (--cluster), alternating, each way --rounds times (this
machine's load moves a single wall time by 20 %); the medians' ratios issue 29 asks for, the
CPU each way takes (every process of it), and whether every variant's scores are the same
every way (they must be).

The cluster is started as docs/sweeps.md starts one, outside the timing: `dask scheduler`
with Dask's defaults and two `ssdlab worker --threads 1` (`--workers dask`: one `dask worker
--nworkers 2 --nthreads 1` with its nannies, ssdlab's preload and settings in its environment).

    .venv/bin/python benchmarks/sweep_speed.py [--scale 0.1] [--rounds 3] [--workers ssdlab|dask]

Exits non-zero when a score differs, a variant is not done, two at once take more than 0.6x
the time of one at a time, or the cluster takes more than 10 % longer than the local pool.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil  # Dask's own dependency

from ssdlab.distributed.worker_settings import environment

GRID = ["--set", "cache.max_cell_share=0.3,0.4,0.5,0.6",
        "--set", "nand.tlc.t_prog_us=500,550,600,650,700,750,800,850"]
LOCAL_LIMIT, CLUSTER_OVERHEAD_LIMIT = 0.6, 0.10
DASK = str(Path(sys.executable).parent / "dask")


def sweep(db: Path, scale: str, where: list[str]) -> tuple[float, float, list]:
    """The sweep run: its wall time, the CPU time of its command, and its variants."""
    cpu, start = _children_cpu(), time.monotonic()
    subprocess.run([sys.executable, "-m", "ssdlab", "sweep", "wd-sn850-1tb", *GRID, "--suite", "quick",
                    "--scale", scale, *where, "--db", db], check=True, capture_output=True, text=True)
    wall, cpu = time.monotonic() - start, _children_cpu() - cpu
    shown = subprocess.run([sys.executable, "-m", "ssdlab", "sweeps", "show", "latest", "--json", "--db", db],
                           check=True, capture_output=True, text=True).stdout
    return wall, cpu, json.loads(shown)["variants"]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


class Cluster:
    """A scheduler and two workers on the loopback, each a process of its own (with `dask`
    workers, a nanny process holding both and a process per worker)."""

    def __init__(self, directory: Path, workers: str):
        self.directory, self.workers, self.procs = directory, workers, []

    def __enter__(self) -> Cluster:
        from distributed import Client
        self.directory.mkdir()
        scheduler_file = self.directory / "scheduler.json"
        self._spawn(DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", scheduler_file)
        while not scheduler_file.exists():
            if self.procs[0].poll() is not None:
                raise SystemExit(f"dask scheduler ended at its start ({self.procs[0].returncode})")
            time.sleep(0.1)
        self.address = json.loads(scheduler_file.read_text())["address"]
        if self.workers == "ssdlab":
            for _ in range(2):
                self._spawn(sys.executable, "-m", "ssdlab", "worker", "--scheduler", self.address, "--threads", "1")
        else:
            self._spawn(DASK, "worker", self.address, "--host", "127.0.0.1", "--nworkers", "2", "--nthreads", "1",
                        "--no-dashboard", "--preload", "ssdlab.distributed.preload", env=environment())
        with Client(self.address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        return self

    def _spawn(self, *argv: object, env: dict[str, str] | None = None) -> None:
        self.procs.append(subprocess.Popen([str(a) for a in argv], env={**os.environ, **(env or {})},
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def cpu(self) -> float:
        """The CPU time every process of the cluster has taken so far."""
        processes = [psutil.Process(p.pid) for p in self.procs]
        processes += [c for p in processes for c in p.children(recursive=True)]
        return sum(sum(p.cpu_times()[:2]) for p in processes)

    def __exit__(self, *_: object) -> None:
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            proc.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="0.1")
    parser.add_argument("--rounds", type=int, default=3, help="each way this many times, alternating; medians")
    parser.add_argument("--workers", choices=("ssdlab", "dask"), default="ssdlab",
                        help="the cluster's workers: `ssdlab worker`, or a plain `dask worker` with nannies")
    args = parser.parse_args()

    walls: dict[str, list[float]] = {"one": [], "two": [], "cluster": []}
    cpus: dict[str, list[float]] = {"one": [], "two": [], "cluster": []}
    seen: list[list] = []
    with tempfile.TemporaryDirectory(prefix="ssdlab-sweep-bench-") as tmp:
        for r in range(args.rounds):
            for way, where in (("one", ["--jobs", "1"]), ("two", ["--jobs", "2"])):
                wall, cpu, variants = sweep(Path(tmp) / f"{way}-{r}.db", args.scale, where)
                walls[way].append(wall)
                cpus[way].append(cpu)
                seen.append(variants)
            with Cluster(Path(tmp) / f"cluster-{r}", args.workers) as cluster:  # a fresh one each round
                before = cluster.cpu()
                wall, cpu, variants = sweep(Path(tmp) / f"cluster-{r}.db", args.scale,
                                            ["--cluster", cluster.address])
                cpu += cluster.cpu() - before
            walls["cluster"].append(wall)
            cpus["cluster"].append(cpu)
            seen.append(variants)
            print(f"round {r + 1}: one at a time {walls['one'][-1]:.1f} s, two at once {walls['two'][-1]:.1f} s, "
                  f"two Dask workers {wall:.1f} s", flush=True)
    one, two, on_cluster = (statistics.median(walls[way]) for way in ("one", "two", "cluster"))
    cpu_one, cpu_two, cpu_cluster = (statistics.median(cpus[way]) for way in ("one", "two", "cluster"))
    overhead = on_cluster / two - 1
    print(f"medians of {args.rounds} rounds (wall; CPU of every process):")
    print(f"one at a time:          {one:7.1f} s  {cpu_one:6.1f} CPU-s")
    print(f"two at once (local):    {two:7.1f} s  {cpu_two:6.1f} CPU-s  {two / one:.2f}x of one at a time "
          f"(limit {LOCAL_LIMIT})")
    print(f"two Dask workers:       {on_cluster:7.1f} s  {cpu_cluster:6.1f} CPU-s  {overhead:+.1%} against the "
          f"local pool (limit +{CLUSTER_OVERHEAD_LIMIT:.0%}), workers: {args.workers}")
    same = all(scores(v) == scores(seen[0]) for v in seen)
    done = all(v["status"] == "done" for variants in seen for v in variants) and len(seen[0]) == 32
    print(f"{len(seen[0])} variants, every one done: {done}; the same scores every way and round: {same}")
    return 0 if same and done and two / one <= LOCAL_LIMIT and overhead <= CLUSTER_OVERHEAD_LIMIT else 1


def scores(variants: list) -> list:
    """Each variant's name, state and scores: what must not depend on where it ran."""
    return [(v["name"], v["status"], v["scores"]) for v in variants]


if __name__ == "__main__":
    sys.exit(main())
