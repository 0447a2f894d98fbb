"""fio's JSON (json+) -> the model's DirectionResults.

fio may print warnings or error lines around its JSON on the same stream;
`split_output` keeps the JSON object and returns the rest as notes. A direction's
latency comes from json+'s histogram; plain json has only fio's percentiles, which
are kept (without a histogram) when there are no bins.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Collection
from typing import Any

from ssdlab.errors import BackendFailed
from ssdlab.model import DirectionResult, Latency

DIRECTIONS = ("read", "write", "trim")


class NoJson(BackendFailed):
    """fio's output holds no JSON result at all."""


class JobError(BackendFailed):
    """fio ran the job and reported an errno for it (`code`)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def split_output(text: str, keys: Collection[str] = ("jobs",)) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The JSON document in fio's output (the first object that has one of `keys`: fio's
    client prints `client_stats`), and every other non-empty line."""
    decoder = json.JSONDecoder()
    start = 0
    while (brace := text.find("{", start)) != -1:
        if brace == 0 or text[brace - 1] == "\n":
            try:
                doc, end = decoder.raw_decode(text, brace)
            except json.JSONDecodeError:
                start = brace + 1
                continue
            if isinstance(doc, dict) and any(key in doc for key in keys):
                rest = text[:brace] + text[end:]
                return doc, tuple(line.strip() for line in rest.splitlines() if line.strip())
        start = brace + 1
    head = " | ".join(text.strip().splitlines()[:5]) or "nothing"
    raise NoJson(f"fio printed no JSON result (it said: {head}); run the stored job "
                        "file by hand with `fio JOBFILE` to see why")


def job_of(doc: dict[str, Any], tolerate: Collection[int] = ()) -> dict[str, Any]:
    """The one job of fio's report; JobError when it ended with an errno, unless it is one of
    `tolerate` (a verify pass's bad and unreadable blocks are its findings)."""
    jobs = doc.get("jobs") or []
    if len(jobs) != 1:
        raise BackendFailed(f"fio reported {len(jobs)} jobs where ssdlab ran one")
    job = jobs[0]
    if job.get("error") and int(job["error"]) not in tolerate:
        raise JobError(job_error_message(int(job["error"])), int(job["error"]))
    return job


def report_time_s(doc: dict[str, Any]) -> float | None:
    """When fio wrote its report (seconds since the epoch): a few ms after its I/O ended."""
    stamp = doc.get("timestamp_ms")
    return stamp / 1000 if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None


def job_error_message(code: int) -> str:
    name = errno.errorcode.get(code, str(code))
    advice = {
        errno.EINVAL: "the target may not support O_DIRECT (tmpfs, some network filesystems): "
                      "put the target file on a disk-backed filesystem",
        errno.ENOSPC: "the filesystem is full: free space or use a smaller --size",
        errno.EACCES: "permission denied: run as root or give your user access to the target",
        errno.EPERM: "operation not permitted: run as root or check the device is not write-protected",
        errno.EIO: "the device reported an I/O error: check `dmesg` and the drive's health",
        errno.EROFS: "the target is read-only",
    }.get(code, "see fio's documentation for this error")
    return f"fio stopped with error {name} ({os.strerror(code)}): {advice}"


def direction(job: dict[str, Any], name: str) -> DirectionResult | None:
    """Totals of one direction; None when it did no I/O."""
    data = job.get(name) or {}
    ios = int(data.get("total_ios", 0))
    if ios == 0:
        return None
    clat = data.get("clat_ns") or {}
    mean, low, high = float(clat.get("mean", 0.0)), int(clat.get("min", 0)), int(clat.get("max", 0))
    if not clat.get("bins") and (known := _percentiles(clat.get("percentile") or {}, low, high)):
        latency = Latency(count=int(clat.get("N", ios)), mean_ns=mean, min_ns=low, max_ns=high, **known)
    else:
        bins = ((int(value), int(count)) for value, count in (clat.get("bins") or {}).items())
        latency = Latency.from_histogram(bins, mean, low, high)
    return DirectionResult(ios=ios, bytes=int(data.get("io_bytes", 0)),
                           busy_s=float(data.get("runtime", 0)) / 1000.0, latency=latency)


# fio's percentile keys ("99.900000") of the Latency fields
_PERCENTILE_FIELDS = {50.0: "p50_ns", 99.0: "p99_ns", 99.9: "p99_9_ns", 99.99: "p99_99_ns"}


def _percentiles(printed: dict[str, Any], low: int, high: int) -> dict[str, int]:
    """The Latency's percentiles from fio's list, within min and max as from_histogram
    clamps them; empty when the list lacks one of them (percentile_list)."""
    values = {float(key): value for key, value in printed.items()}
    if not all(q in values for q in _PERCENTILE_FIELDS):
        return {}
    return {field: min(max(int(values[q]), low), high) for q, field in _PERCENTILE_FIELDS.items()}


def directions(job: dict[str, Any]) -> dict[str, DirectionResult]:
    return {name: d for name in DIRECTIONS if (d := direction(job, name)) is not None}
