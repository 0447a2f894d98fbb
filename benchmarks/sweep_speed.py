"""A sweep of 32 variants of the simulated WD SN850 (the quick suite at a small scale) three
ways: one variant at a time (--jobs 1), two at once on this machine (--jobs 2), and on a Dask
cluster of two worker processes on the loopback (--cluster), alternating, each way --rounds
times (this machine's load moves a single wall time by 20 %); the medians' ratios issue 29
asks for, and whether every variant's scores are the same every way (they must be).

    .venv/bin/python benchmarks/sweep_speed.py [--scale 0.1] [--rounds 3]

Exits non-zero when a score differs, a variant is not done, two at once take more than 0.6x
the time of one at a time, or the cluster takes more than 10 % longer than the local pool.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRID = ["--set", "cache.max_cell_share=0.3,0.4,0.5,0.6",
        "--set", "nand.tlc.t_prog_us=500,550,600,650,700,750,800,850"]
LOCAL_LIMIT, CLUSTER_OVERHEAD_LIMIT = 0.6, 0.10


def sweep(db: Path, scale: str, where: list[str]) -> tuple[float, list]:
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "ssdlab", "sweep", "wd-sn850-1tb", *GRID, "--suite", "quick",
                    "--scale", scale, *where, "--db", db], check=True, capture_output=True, text=True)
    wall = time.monotonic() - start
    shown = subprocess.run([sys.executable, "-m", "ssdlab", "sweeps", "show", "latest", "--json", "--db", db],
                           check=True, capture_output=True, text=True).stdout
    return wall, json.loads(shown)["variants"]


def scores(variants: list) -> list:
    """Each variant's name, state and scores: what must not depend on where it ran."""
    return [(v["name"], v["status"], v["scores"]) for v in variants]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="0.1")
    parser.add_argument("--rounds", type=int, default=3, help="each way this many times, alternating; medians")
    args = parser.parse_args()
    from distributed import LocalCluster  # the benchmark's own cluster, on the loopback

    walls: dict[str, list[float]] = {"one": [], "two": [], "cluster": []}
    seen: list[list] = []
    with tempfile.TemporaryDirectory(prefix="ssdlab-sweep-bench-") as tmp:
        for r in range(args.rounds):
            for way, where in (("one", ["--jobs", "1"]), ("two", ["--jobs", "2"])):
                wall, variants = sweep(Path(tmp) / f"{way}-{r}.db", args.scale, where)
                walls[way].append(wall)
                seen.append(variants)
            # a cluster of its own each round, made outside the timing; its workers import
            # ssdlab and the simulator when they start, as `ssdlab worker` does (the local
            # pool's threads run in the command's own process, which has imported them)
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                              dashboard_address=None, preload=["ssdlab.distributed.preload"]) as cluster:
                address = ["--cluster", cluster.scheduler_address]
                wall, variants = sweep(Path(tmp) / f"cluster-{r}.db", args.scale, address)
            walls["cluster"].append(wall)
            seen.append(variants)
            print(f"round {r + 1}: one at a time {walls['one'][-1]:.1f} s, two at once {walls['two'][-1]:.1f} s, "
                  f"two Dask workers {wall:.1f} s", flush=True)
    one, two, on_cluster = (statistics.median(walls[way]) for way in ("one", "two", "cluster"))
    overhead = on_cluster / two - 1
    print(f"medians of {args.rounds} rounds:")
    print(f"one at a time:          {one:7.1f} s")
    print(f"two at once (local):    {two:7.1f} s  {two / one:.2f}x of one at a time (limit {LOCAL_LIMIT})")
    print(f"two Dask workers:       {on_cluster:7.1f} s  {overhead:+.1%} against the local pool "
          f"(limit +{CLUSTER_OVERHEAD_LIMIT:.0%})")
    same = all(scores(v) == scores(seen[0]) for v in seen)
    done = all(v["status"] == "done" for variants in seen for v in variants) and len(seen[0]) == 32
    print(f"{len(seen[0])} variants, every one done: {done}; the same scores every way and round: {same}")
    return 0 if same and done and two / one <= LOCAL_LIMIT and overhead <= CLUSTER_OVERHEAD_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
