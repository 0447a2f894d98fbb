"""Simulated drives side by side: one `ssdlab run` of several presets, one at a time
(--jobs 1) and then on every core, alternating; wall times, the speed-up, and whether
every step's result is the same both ways (it must be).

    .venv/bin/python benchmarks/side_by_side.py [--scale 0.25] [--rounds 2] [PRESET ...]

Prints each round's wall times and the medians; exits non-zero when any result differs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PRESETS = ["wd-sn850-1tb", "samsung-980-1tb", "crucial-p1-1tb", "generic-qlc-1tb"]


def run(targets: list[str], scale: str, jobs: int, db: Path) -> tuple[float, list]:
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ssdlab", "run", *targets, "--scale", scale, "--jobs", str(jobs),
                          "--db", db, "--json"], check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - start
    results = [[[{k: v for k, v in step["result"].items() if k != "started_at"} for step in test["steps"]]
                for test in doc["tests"]] for doc in json.loads(out)]
    return wall, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", default=PRESETS)
    parser.add_argument("--scale", default="0.25")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    targets = [f"sim:{p}" for p in args.presets]
    cores = len(os.sched_getaffinity(0))
    work = Path(tempfile.mkdtemp(prefix="ssdlab-bench-"))
    walls: dict[int, list[float]] = {1: [], cores: []}
    same = True
    try:
        for r in range(args.rounds):
            results = {}
            for jobs in walls:
                wall, results[jobs] = run(targets, args.scale, jobs, work / f"{r}-{jobs}.db")
                walls[jobs].append(wall)
                print(f"round {r + 1}: --jobs {jobs}: {wall:.1f} s wall")
            same = same and results[1] == results[cores]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    alone, together = statistics.median(walls[1]), statistics.median(walls[cores])
    print(f"client suite, scale {args.scale}, {len(targets)} drives: one at a time {alone:.1f} s, "
          f"{cores} at once {together:.1f} s (medians of {args.rounds}): {alone / together:.2f}x; "
          f"results {'identical' if same else 'DIFFER'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
