"""The harness adds nothing: ssdlab's fio backend against a raw fio run of the same job.

    .venv/bin/python benchmarks/harness_overhead.py [--rounds 10] [--seconds 3] [--dir /var/tmp]

For each job (4 KiB random read at QD1 and QD4 over a 1 GiB file), runs raw
`fio --output-format=json` on the job as a user would write it (ssdlab's job
text without its bandwidth log) and ssdlab's FioBackend.run_step, alternately
(which goes first alternates too), for several rounds. Prints every round's IOPS and p99 latency, the medians and
their relative difference, and exits non-zero when a median differs by more
than 3 %.
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
from pathlib import Path

from ssdlab.backends.fio import FioBackend
from ssdlab.backends.fio.jobfile import Invocation, job_text
from ssdlab.model import Op, Step
from ssdlab.units import GiB, MiB

TOLERANCE = 0.03
HARNESS_ONLY = ("write_bw_log=", "log_avg_msec=")


def raw_fio(step: Step, path: Path, engine: str, work: Path) -> tuple[float, float]:
    text = job_text(step, path, engine, Invocation.for_burst(step, 0), work / "unused")
    plain = "".join(line + "\n" for line in text.splitlines() if not line.startswith(HARNESS_ONLY))
    job = work / "raw.fio"
    job.write_text(plain)
    out = subprocess.run(["fio", "--output-format=json", str(job)], check=True,
                         capture_output=True, text=True).stdout
    read = json.loads(out)["jobs"][0]["read"]
    return read["iops"], read["clat_ns"]["percentile"]["99.000000"] / 1e3


def harness(backend: FioBackend, step: Step) -> tuple[float, float]:
    r = backend.run_step(step).result
    return r.read.iops, r.read.latency.p99_ns / 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ssdlab-overhead-", dir=args.dir))
    try:
        target = work / "target.img"
        with open(target, "wb") as f:
            for _ in range(GiB // (64 * MiB)):
                f.write(os.urandom(64 * MiB))
        backend = FioBackend(target, "file", purge=lambda: ())
        engine = backend.ioengine
        failed = False
        for qd in (1, 4):
            step = Step(label=f"QD{qd}", rw=Op.RANDREAD, bs=4096, iodepth=qd, size=GiB,
                        runtime=args.seconds, io_size=64 * GiB)
            raw, ours = [], []
            print(f"4 KiB random read QD{qd}, {args.seconds:g} s per run, {engine}")
            raw_fio(step, target, engine, work)  # warm-up: the first runs on a new file are slower
            harness(backend, step)
            for round_ in range(1, args.rounds + 1):
                # alternate which goes first, so a drift of the disk hits both alike
                if round_ % 2:
                    raw.append(raw_fio(step, target, engine, work))
                    ours.append(harness(backend, step))
                else:
                    ours.append(harness(backend, step))
                    raw.append(raw_fio(step, target, engine, work))
                print(f"  round {round_}: raw fio {raw[-1][0]:9.0f} IOPS p99 {raw[-1][1]:7.1f} us | "
                      f"ssdlab {ours[-1][0]:9.0f} IOPS p99 {ours[-1][1]:7.1f} us")
            for name, index, unit in (("IOPS", 0, ""), ("p99", 1, " us")):
                a = statistics.median(r[index] for r in raw)
                b = statistics.median(r[index] for r in ours)
                diff = (b - a) / a
                failed |= abs(diff) > TOLERANCE
                print(f"  median {name}: raw fio {a:.1f}{unit}, ssdlab {b:.1f}{unit}, "
                      f"difference {diff * 100:+.2f} %")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("within 3 %" if not failed else "DIFFERENCE ABOVE 3 %")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
