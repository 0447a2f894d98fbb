"""The SNIA PTS client suite's steady-state tests at scale 1 on a simulated drive: wall and CPU
time, each loop's rounds, and the machine reference beside them (issue 28: within 30 minutes
on a day whose reference reads as on 2026-11-23).

    .venv/bin/python benchmarks/pts_suite.py [--target sim:wd-sn850-1tb] [--scale 1] [--limit 1800]

Prints the machine reference first (the speed benchmark's: ns per random update of a 1 GiB
table), then each test's status, score and rounds, then the run's wall time and the CPU time
of its process. Exits non-zero when a test is not done or the run takes --limit seconds or
more, scaled by the reference against REFERENCE_NS (the reading of 2026-11-23's machine).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssdlab.analysis.pts_scores import steadiness

ROOT = Path(__file__).resolve().parents[1]
TESTS = "pts-iops,pts-throughput,pts-latency"
REFERENCE_NS = 11.5  # the speed benchmark's machine reference on a day as fast as 2026-11-23 (11-15 ns)


def machine_reference_ns() -> float:
    """The speed benchmark's own reference of this machine, now."""
    subprocess.run(["cargo", "bench", "-p", "ssdsim", "--bench", "speed", "--no-run", "-q"], cwd=ROOT,
                   check=True, capture_output=True)
    bench = sorted((ROOT / "target/release/deps").glob("speed-*"), key=lambda p: p.stat().st_mtime)
    exe = next(p for p in reversed(bench) if p.is_file() and p.suffix == "")
    said = subprocess.run([exe, "--child", "machine", "wd-sn850-1tb"], cwd=ROOT / "crates/ssdsim", check=True,
                          capture_output=True, text=True).stdout
    print(said.strip())
    return float(said.split("machine: ")[1].split(" ns")[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sim:wd-sn850-1tb")
    parser.add_argument("--scale", default="1")
    parser.add_argument("--limit", type=float, default=1800.0, help="seconds on a machine at REFERENCE_NS")
    args = parser.parse_args()
    reference = machine_reference_ns()
    with tempfile.TemporaryDirectory(prefix="ssdlab-pts-") as work:
        db = Path(work) / "bench.db"
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "ssdlab", "run", args.target, "--suite", "pts", "--tests", TESTS,
                        "--scale", args.scale, "--db", db], check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - start
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        doc = json.loads(subprocess.run([sys.executable, "-m", "ssdlab", "show", "latest", "--db", db, "--json"],
                                        check=True, capture_output=True, text=True).stdout)
    for test in doc["tests"]:
        score = test["primary_score"] or {}
        rounds = ", ".join(f"{lp['name']}: {steadiness(lp['steady'])}" for lp in score.get("loops", []))
        print(f"{test['id']:16s} {test['status']:6s} {score.get('value', 0):12.1f} {score.get('unit', '')}  ({rounds})")
    limit = args.limit * reference / REFERENCE_NS
    done = sum(t["status"] == "done" for t in doc["tests"])
    print(f"pts ({TESTS}), scale {args.scale}, {args.target}: {wall / 60:.1f} min wall, "
          f"{(cpu.ru_utime + cpu.ru_stime) / 60:.1f} min CPU; limit {limit / 60:.1f} min at {reference:g} ns "
          f"({args.limit / 60:.0f} min at {REFERENCE_NS:g} ns); {done}/{len(doc['tests'])} tests done")
    return 0 if done == len(doc["tests"]) and wall < limit else 1


if __name__ == "__main__":
    sys.exit(main())
