"""The whole client suite on one target: wall time, and every result non-zero.

    .venv/bin/python benchmarks/client_suite.py [--scale 0.01] [--dir /var/tmp]
    .venv/bin/python benchmarks/client_suite.py --target sim:wd-sn850-1tb --scale 1 --limit 120

Without --target, a file target in a temporary directory under --dir. Prints the
wall time of the whole run, each test's status and primary score, and the number
of measured steps with a zero figure (must be 0). Exits non-zero when a test is
not done, a figure is zero, or the run takes --limit seconds or more (600 by
default: the file target at scale 0.01 must finish in under 10 minutes; the
simulated SN850 at scale 1 in under 2).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="0.01")
    parser.add_argument("--dir", default="/var/tmp", help="a disk-backed directory for the file target")
    parser.add_argument("--target", help="run on this target instead of a temporary file")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds the run must stay under")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ssdlab-bench-", dir=args.dir))
    try:
        db = work / "bench.db"
        start = time.monotonic()
        target = args.target or work / "drive.img"
        subprocess.run([sys.executable, "-m", "ssdlab", "run", target, "--scale", args.scale,
                        "--db", db, "--json"], check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - start
        doc = json.loads(subprocess.run([sys.executable, "-m", "ssdlab", "show", "latest", "--db", db,
                                         "--json"], check=True, capture_output=True, text=True).stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    zero = 0
    for test in doc["tests"]:
        score = test["primary_score"] or {}
        print(f"{test['id']:22s} {test['status']:8s} {score.get('value', 0):10.1f} {score.get('unit', '')}")
        for step in test["steps"]:
            if step["phase"] != "purge" and not (step["result"]["iops"] > 0 and step["result"]["mbps"] > 0):
                zero += 1
    done = sum(t["status"] == "done" for t in doc["tests"])
    print(f"client suite, scale {args.scale}, {args.target or 'file target'}: {wall:.1f} s wall, "
          f"{done}/{len(doc['tests'])} tests done, {zero} zero results")
    return 0 if done == len(doc["tests"]) and zero == 0 and wall < args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
