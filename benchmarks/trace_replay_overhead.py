"""A trace replayed through ssdlab's fio backend against raw fio replaying the same iolog
(issue 26: IOPS and p99 latency within 3 %).

    .venv/bin/python benchmarks/trace_replay_overhead.py [--rounds 15] [--seconds 3] [--dir /var/tmp]

A prepared trace of 4 KiB random reads over a 1 GiB file is written as the iolog the backend
replays (backends/fio/trace_replay.py: times shifted 1 µs), sized so a replay takes about
--seconds. Cases: untimed at QD1 and QD4 (replay_no_stall), and timed at QD1 (a read every
250 µs; fio before 3.36 mistimes timed replays at a depth above 1, so none is measured here).
Per round: raw fio (`fio --read_iolog=... --replay_redirect=... --output-format=json`, no
logs, as a user would run it), ssdlab's FioBackend.run_step of the trace step, raw fio
again, so a drift of the shared disk hits both alike.

Figures: IOPS as fio counts them (commands over the replay's time: fio's runtime; ssdlab's
busy plus idle time, first issue to last completion) and fio's p99 completion latency
(ssdlab's from fio's json+ bins of its own run). Printed per figure, with harness_overhead.py's
statistics: the median of each side and their difference (the verdict: within 3 %), a
bootstrap 95 % interval over the rounds, and the noise floor (raw fio against raw fio in a
round). ssdlab's IOPS over busy time, the figure its reports use, is printed beside it.
Exits non-zero when a difference of medians is beyond 3 %.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from harness_overhead import comparison

from ssdlab.backends.fio import FioBackend, trace_replay
from ssdlab.model import Op, Step, TraceReplay
from ssdlab.traces import prepared
from ssdlab.units import GiB, MiB

TOLERANCE = 0.03
BS = 4096
TIMED_GAP_US = 250
CASES = (("untimed QD1", False, 1), ("untimed QD4", False, 4), ("timed QD1", True, 1))


def write_trace(path: Path, count: int, timed: bool, seed: int = 26) -> None:
    rng = np.random.default_rng(seed)
    table = prepared.empty(count)
    table["time_us"] = np.arange(count) * TIMED_GAP_US if timed else 0
    table["offset"] = rng.integers(0, GiB // BS, count) * BS
    table["length"] = BS
    with prepared.PreparedWriter(path) as writer:
        writer.write(table)


def raw_fio(iolog: Path, target: Path, engine: str, iodepth: int, timed: bool) -> tuple[float, float]:
    argv = ["fio", "--name=raw", f"--read_iolog={iolog}", f"--replay_redirect={target}", f"--ioengine={engine}",
            "--direct=1", f"--iodepth={iodepth}", "--output-format=json"]
    if not timed:
        argv.append("--replay_no_stall=1")
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    read = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    return read["iops"], read["clat_ns"]["percentile"]["99.000000"] / 1e3


def harness(backend: FioBackend, step: Step) -> tuple[float, float, float]:
    r = backend.run_step(step).result
    return r.read.ios / (r.busy_s + r.idle_s), r.read.latency.p99_ns / 1e3, r.read.iops


def verdict(figure: str, figures: np.ndarray, unit: str) -> bool:
    """Print one figure's comparison (harness_overhead.py's); whether its difference is within TOLERANCE."""
    line, diff, _noise = comparison(figure, figures, unit)
    print(line)
    return abs(diff) <= TOLERANCE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ssdlab-replay-overhead-", dir=args.dir))
    failed = False
    try:
        target = work / "target.img"
        with open(target, "wb") as f:
            for _ in range(GiB // (64 * MiB)):
                f.write(os.urandom(64 * MiB))
        backend = FioBackend(target, "file", purge=lambda: ())
        engine = backend.ioengine
        print(f"fio {trace_replay.shown(backend.fio_version)}, {engine}, 4 KiB random reads over a 1 GiB file, "
              f"{args.rounds} rounds of raw fio / ssdlab / raw fio")
        for name, timed, iodepth in CASES:
            probe = work / "probe.trc"
            write_trace(probe, 20_000, timed)
            iolog = work / "replay.iolog"
            trace_replay.write_iolog(probe, iolog)
            rate = raw_fio(iolog, target, engine, iodepth, timed)[0]  # also the warm-up
            count = int(args.seconds * (1e6 / TIMED_GAP_US if timed else rate))
            trace = work / f"{name.replace(' ', '-')}.trc"
            write_trace(trace, count, timed)
            trace_replay.write_iolog(trace, iolog)
            step = Step(label=name, rw=Op.RANDREAD, bs=BS, iodepth=iodepth, size=GiB,
                        trace=TraceReplay(path=str(trace), records=count, timed=timed))
            harness(backend, step)  # warm-up
            print(f"{name}: {count} records")
            rounds, busy_iops = [], []
            for round_ in range(1, args.rounds + 1):
                before = raw_fio(iolog, target, engine, iodepth, timed)
                *ours, over_busy = harness(backend, step)
                after = raw_fio(iolog, target, engine, iodepth, timed)
                rounds.append((before, ours, after))
                busy_iops.append(over_busy)
                print(f"  round {round_:2}: raw fio {before[0]:7.0f} IOPS p99 {before[1]:7.1f} us | "
                      f"ssdlab {ours[0]:7.0f} IOPS p99 {ours[1]:7.1f} us ({over_busy:7.0f} IOPS over busy time) | "
                      f"raw fio {after[0]:7.0f} IOPS p99 {after[1]:7.1f} us")
            table = np.array(rounds)  # rounds x (raw, ssdlab, raw) x (IOPS, p99)
            failed |= not verdict("IOPS", table[:, :, 0], "")
            failed |= not verdict("p99", table[:, :, 1], " us")
            print(f"  ssdlab's IOPS over busy time: median {np.median(busy_iops):.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"within {TOLERANCE:.0%}" if not failed else f"DIFFERENCE ABOVE {TOLERANCE:.0%}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
