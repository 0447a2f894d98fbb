"""How fast each trace reader streams records, and that its memory stays flat.

    .venv/bin/python benchmarks/trace_read_speed.py [--records 1000000] [--dir /var/tmp]

Writes one synthetic MSR-like workload (random 4 KiB to 1 MiB reads and writes on three
volumes, 1 ms apart on average, with response times) in each format in turn, in a
temporary directory, and reads it back: prints records per CPU-second of reading alone
and of `ssdlab trace stats`' pass, and the process's peak RSS after each (a running
maximum: it stays flat when every reader streams). Also the MSR file gzip-compressed.
The issue's goal for replay is 1 M records per CPU-second; a pure-Python reader is not
expected to reach it (DESIGN.md: bulk parsing is the way there).
"""

from __future__ import annotations

import argparse
import gzip
import random
import resource
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from ssdlab.traces import Trace
from ssdlab.traces.stats import trace_stats

FILETIME_1970 = 116444736000000000  # FILETIME ticks at the Unix epoch
Event = tuple[int, bool, int, int, int, int]  # time µs, is a read, offset, length, volume, response µs


def workload(records: int) -> Iterator[Event]:
    draw = random.Random(26)
    now = 1_600_000_000_000_000
    for _ in range(records):
        now += int(draw.expovariate(1 / 1000))
        length = 4096 << draw.randrange(9)
        yield now, draw.random() < 0.5, draw.randrange(1 << 24) * 4096, length, draw.randrange(3), \
            draw.randrange(50, 5000)


def _fio_v3(e: Event) -> str:
    return f"{e[0]} /dev/vol{e[4]} {'read' if e[1] else 'write'} {e[2]} {e[3]}\n"


def _fio_v2(e: Event) -> str:
    return f"/dev/vol{e[4]} {'read' if e[1] else 'write'} {e[2]} {e[3]}\n"


# Each format: its first lines, and a line of one event.
FORMATS: dict[str, tuple[str, Callable[[Event], str]]] = {
    "msr": ("", lambda e: f"{e[0] * 10 + FILETIME_1970},usr,{e[4]},{'Read' if e[1] else 'Write'},{e[2]},{e[3]},"
                          f"{e[5] * 10}\n"),
    "alibaba": ("", lambda e: f"{e[4]},{'R' if e[1] else 'W'},{e[2]},{e[3]},{e[0]}\n"),
    "systor": ("Timestamp,Response,IOType,LUN,Offset,Size\n",
               lambda e: f"{e[0] // 10**6}.{e[0] % 10**6:06d}000,0.{e[5]:06d}000,{'R' if e[1] else 'W'},{e[4]},"
                         f"{e[2]},{e[3]}\n"),
    "tencent": ("", lambda e: f"{e[0] // 10**6},{e[2] // 512},{e[3] // 512},{0 if e[1] else 1},{e[4]}\n"),
    "csv": ("time_us,op,offset,length,device,response_us\n",
            lambda e: f"{e[0]},{'read' if e[1] else 'write'},{e[2]},{e[3]},vol{e[4]},{e[5]}\n"),
    "fio-v2": ("fio version 2 iolog\n" + "".join(f"/dev/vol{v} add\n" for v in range(3)), _fio_v2),
    "fio-v3": ("fio version 3 iolog\n" + "".join(f"0 /dev/vol{v} add\n" for v in range(3)), _fio_v3),
}


def write(path: Path, name: str, records: int, compress: bool = False) -> Path:
    head, line = FORMATS[name]
    with (gzip.open(path, "wt", compresslevel=1) if compress else path.open("w")) as out:
        out.write(head)
        out.writelines(map(line, workload(records)))
    return path


def cpu_seconds(work: Callable[..., object], *args: object) -> float:
    start = time.process_time()
    work(*args)
    return time.process_time() - start


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--dir", default=None, help="where the temporary trace files go")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ssdlab-traces-", dir=args.dir))
    print(f"{args.records} records per trace; peak RSS before reading: {peak_rss_mib():.0f} MiB")
    print(f"{'format':<12} {'read rec/CPU-s':>15} {'stats rec/CPU-s':>16} {'file MB':>8} {'peak RSS MiB':>13}")
    try:
        for name, compress in [*((name, False) for name in FORMATS), ("msr", True)]:
            path = write(work / name, name, args.records, compress)
            trace = Trace(path)
            read = cpu_seconds(deque, trace, 0)  # every record, each dropped as the next comes
            stats = cpu_seconds(trace_stats, trace)
            label = f"{name}{' (gzip)' if compress else ''}"
            print(f"{label:<12} {args.records / read:>15,.0f} {args.records / stats:>16,.0f} "
                  f"{path.stat().st_size / 1e6:>8.0f} {peak_rss_mib():>13.0f}", flush=True)
            path.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
