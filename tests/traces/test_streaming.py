"""A trace streams: reading ten times the records takes about the same memory, not ten
times as much (a ratio, measured with tracemalloc, never a wall-clock time)."""

import tracemalloc
from collections import deque

from ssdlab.traces import Trace


def msr_file(path, records):
    with path.open("w") as out:
        for i in range(records):
            out.write(f"{128166372003061629 + 1000 * i},usr,{i % 3},{'Read' if i % 2 else 'Write'},"
                      f"{(i * 7919 % 100000) * 4096},{4096 << (i % 5)},{100 + i % 50}\n")
    return path


def peak_bytes(path) -> tuple[int, int]:
    """The peak memory of reading the trace at `path`, and its records."""
    trace = Trace(path)
    tracemalloc.start()
    try:
        deque(trace, maxlen=0)  # every record, each dropped as soon as the next comes
        return tracemalloc.get_traced_memory()[1], trace.findings.records
    finally:
        tracemalloc.stop()


def test_memory_is_flat_in_the_traces_length(tmp_path):
    small, small_records = peak_bytes(msr_file(tmp_path / "small.csv", 20_000))
    large, large_records = peak_bytes(msr_file(tmp_path / "large.csv", 200_000))
    assert (small_records, large_records) == (20_000, 200_000)
    # a list of 200k records would take tens of MB; the reader's buffers take tens of KB
    assert large < 1.5 * small, (small, large)
    assert large < 1 << 20
