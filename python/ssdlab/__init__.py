"""ssdlab: an SSD test lab in a box.

Units, everywhere in the code and the data:
- sizes, spans, offsets: bytes (int). Shown as KiB/MiB/GiB = 2^10/2^20/2^30.
- throughput: MB/s = 10^6 bytes per second, as published reviews use.
- time: seconds (float) for durations; latencies in nanoseconds (int) inside
  results, shown in microseconds or milliseconds.
"""

__version__ = "0.1.0"
