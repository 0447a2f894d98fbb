"""How fast `ssdlab report` renders a full client-suite run, and how large the page is.

    .venv/bin/python benchmarks/report_speed.py [--repeat 5]
    .venv/bin/python benchmarks/report_speed.py --db ssdlab.db --run 3 [--run 4 ...]

Without --db, first runs the client suite on the simulated WD SN850 at scale 1
(about 45 s, not timed) in a temporary directory. Then times the whole
`ssdlab report` command (process start to HTML written) --repeat times and
prints each time, the median and the page size. Targets: a median under 3 s
and a page under 5 MB (10^6 bytes); exits 1 when either is missed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 3.0
TARGET_MB = 5.0


def ssdlab(*args: object) -> None:
    subprocess.run([sys.executable, "-m", "ssdlab", *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="a database holding the runs to report")
    parser.add_argument("--run", action="append", help="run id(s) in --db (default: latest)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default="/var/tmp", help="where the temporary database goes")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ssdlab-bench-", dir=args.dir))
    try:
        db = args.db
        if db is None:
            db = work / "bench.db"
            ssdlab("run", "sim:wd-sn850-1tb", "--suite", "client", "--scale", "1", "--db", db)
        runs = args.run or ["latest"]
        out = work / "report.html"
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            ssdlab("report", *runs, "-o", out, "--db", db)
            times.append(time.perf_counter() - start)
        size_mb = out.stat().st_size / 1e6
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = statistics.median(times)
    print("report times: " + ", ".join(f"{t:.2f} s" for t in times))
    print(f"report of run(s) {', '.join(runs)}: median {median:.2f} s (target < {TARGET_S:g} s), "
          f"{size_mb:.2f} MB (target < {TARGET_MB:g} MB)")
    return 0 if median < TARGET_S and size_mb < TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
