"""How fast `ssdlab trace make` generates a built-in synthetic trace, and that its memory
stays flat.

    .venv/bin/python benchmarks/trace_make_speed.py [--trace destroyer-like] [--scale 0.1]
                                                    [--text-scale 0.01] [--dir /var/tmp]

Generates the trace at --scale (destroyer-like at 0.1: some 9.6 M records) three ways:
counted only (the generator's chunks), written as a prepared trace, and, at --text-scale,
written as CSV with named columns (text formatting is the slow part); prints records per
CPU-second and the process's peak RSS after each (a running maximum: it stays flat when
generation streams).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ssdlab.traces.synthetic import BUILTIN, Generator
from ssdlab.traces.writers import write_trace


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def counted(generator: Generator) -> int:
    return sum(len(chunk) for chunk in generator.chunks())


def timed(work: Callable[[], int]) -> tuple[int, float]:
    start = time.process_time()
    records = work()
    return records, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="destroyer-like", choices=sorted(BUILTIN))
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--text-scale", type=float, default=0.01)
    parser.add_argument("--dir", default=None, help="where the temporary files go")
    args = parser.parse_args()
    spec = BUILTIN[args.trace]
    work = Path(tempfile.mkdtemp(prefix="ssdlab-make-", dir=args.dir))
    print(f"{args.trace}; peak RSS before: {peak_rss_mib():.0f} MiB")
    print(f"{'how':<28} {'records':>11} {'rec/CPU-s':>12} {'file MB':>8} {'peak RSS MiB':>13}")
    try:
        for how, scale, fmt in [("generated, counted", args.scale, None),
                                ("written, prepared", args.scale, "prepared"),
                                ("written, csv", args.text_scale, "csv")]:
            path = work / f"trace.{fmt}"
            generator = Generator(spec, scale, 0)
            if fmt is None:
                records, seconds = timed(lambda g=generator: counted(g))
            else:
                records, seconds = timed(lambda g=generator, p=path, f=fmt: write_trace(g.chunks(), p, f))
            size = path.stat().st_size / 1e6 if path.exists() else 0
            print(f"{how + f' (scale {scale:g})':<28} {records:>11,} {records / seconds:>12,.0f} {size:>8.0f} "
                  f"{peak_rss_mib():>13.0f}", flush=True)
            path.unlink(missing_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
