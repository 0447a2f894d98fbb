"""How fast the simulator replays a prepared trace, and that its memory stays flat in the
trace's length (issue 26: at least 1 M records per CPU-second, flat on 10^8 records).

    .venv/bin/python benchmarks/trace_replay_speed.py [--records 1e6 1e7] [--preset wd-sn850-1tb]
                                                      [--dir /var/tmp] [--untimed]

For each count, a prepared trace (traces/prepared.py) is written with numpy: a client-like
mix (half reads; 4 KiB to 128 KiB; a zipf-skewed 64 GiB footprint on the drive; bursts of
1-32 requests 5 µs apart, 2 ms between bursts on average), then replayed in a child process
on a fresh simulated drive that was first filled sequentially (its tables populated, as a used
drive's are). Prints, per count: records per CPU-second of the replay alone (the child's CPU
time over the step, the fill excluded), the drive time the replay took, and the child's peak
RSS before and after the replay (flat: the same whatever the count). The trace's preparation
from a text format is measured by benchmarks/trace_read_speed.py (the readers bound it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ssdlab.traces import prepared

GiB = 1 << 30
FOOTPRINT = 64 * GiB


def write_trace(path: Path, records: int, seed: int = 26) -> None:
    rng = np.random.default_rng(seed)
    with prepared.PreparedWriter(path) as writer:
        now = 0
        for start in range(0, records, prepared.CHUNK):
            n = min(prepared.CHUNK, records - start)
            chunk = prepared.empty(n)
            bursts = rng.random(n) < 1 / 16  # a new burst about every 16 requests
            gaps = np.where(bursts, rng.exponential(2000, n), 5).astype(np.int64)
            times = now + np.cumsum(gaps)
            now = int(times[-1])
            chunk["time_us"] = times
            blocks = FOOTPRINT // 4096
            chunk["offset"] = (rng.zipf(1.2, n) * 7919 % blocks) * 4096
            chunk["length"] = 4096 << rng.integers(0, 6, n)
            chunk["op"] = rng.integers(0, 2, n)
            writer.write(chunk)


def child(preset: str, path: str, records: int, timed: bool) -> None:
    from ssdlab import _ssdsim
    from ssdlab.model import Op, Phase, Step, TraceReplay
    from ssdlab.presets import load_preset

    drive = _ssdsim.Drive(load_preset(preset).text)
    span = drive.user_bytes // (128 * 1024) * (128 * 1024)
    drive.run_step(Step(label="fill", phase=Phase.PRECONDITION, rw=Op.WRITE, bs=128 * 1024, iodepth=32,
                        size=span).model_dump_json())
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    step = Step(label="trace", rw=Op.RANDRW, rwmixread=50, bs=4096, iodepth=1023 if timed else 32, size=span,
                trace=TraceReplay(path=path, records=records, timed=timed))
    cpu = time.process_time()
    raw = drive.run_step(step.model_dump_json())
    cpu = time.process_time() - cpu
    print(json.dumps({"cpu_s": cpu, "drive_s": raw["busy_s"] + raw["idle_s"], "busy_s": raw["busy_s"],
                      "rss_before_mib": rss_before / 1024,
                      "rss_after_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--preset", default="wd-sn850-1tb")
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--untimed", action="store_true")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.preset, args.child[0], int(args.child[1]), args.child[2] == "timed")
        return
    print(f"preset {args.preset}, {'untimed QD32' if args.untimed else 'timed, QD up to 1023'}")
    with tempfile.TemporaryDirectory(dir=args.dir) as work:
        for count in map(int, args.records):
            path = Path(work) / f"{count}.trace"
            write_trace(path, count)
            out = subprocess.run([sys.executable, __file__, "--preset", args.preset, "--child", str(path), str(count),
                                  "untimed" if args.untimed else "timed"], check=True, capture_output=True, text=True,
                                 env=os.environ)
            figures = json.loads(out.stdout)
            print(f"{count:>12,} records: {count / figures['cpu_s'] / 1e6:.2f} M records per CPU-second "
                  f"({figures['cpu_s']:.1f} CPU-s for {figures['drive_s']:.1f} s of drive time, busy "
                  f"{figures['busy_s']:.1f} s); peak RSS {figures['rss_before_mib']:.0f} MiB after the fill, "
                  f"{figures['rss_after_mib']:.0f} MiB after the replay", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
