"""ssdlab: an SSD test lab in a box.

Units, everywhere in the code and the data:
- sizes, spans, offsets: bytes (int). Shown as KiB/MiB/GiB = 2^10/2^20/2^30.
- throughput: MB/s = 10^6 bytes per second, as published reviews use.
- time: seconds (float) for durations; latencies in nanoseconds (int) inside
  results, shown in microseconds or milliseconds.
"""


def __getattr__(name: str) -> str:
    """`ssdlab.__version__`, read when first asked for (a run's record, sim fio's output):
    importlib.metadata would cost every start of the CLI 40 ms."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:  # one place for the version: Cargo.toml's workspace, through the package metadata
        found = version("ssdlab")
    except PackageNotFoundError:  # run from a source tree that was never installed
        found = "unknown"
    globals()["__version__"] = found
    return found
