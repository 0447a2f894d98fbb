"""ssdlab: an SSD test lab in a box.

Units, everywhere in the code and the data:
- sizes, spans, offsets: bytes (int). Shown as KiB/MiB/GiB = 2^10/2^20/2^30.
- throughput: MB/s = 10^6 bytes per second, as published reviews use.
- time: seconds (float) for durations; latencies in nanoseconds (int) inside
  results, shown in microseconds or milliseconds.
"""

from importlib.metadata import PackageNotFoundError, version

try:  # one place for the version: Cargo.toml's workspace, through the package metadata
    __version__ = version("ssdlab")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "unknown"
