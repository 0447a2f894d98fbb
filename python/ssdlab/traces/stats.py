"""What a trace holds, in one pass over it (memory flat in its length): counts and bytes
per operation, request sizes, time span, idle time, queue depth and devices.

- Sizes fall in power-of-two bins: [4 KiB, 8 KiB) holds every request of 4096 to 8191 bytes.
- Idle: the gaps between consecutive issue times longer than IDLE_GAP_US, 25 ms, the cap
  METHODOLOGY.md section 6 puts on the reviews' replays: their share of the trace's span
  is the time the cap takes out, and the capped span is how long the replay lasts at least.
- Queue depth, by Little's law, where every record has its response time: the sum of the
  response times over the span from the first issue to the last completion (the mean
  number of I/Os outstanding), and over the time at least one is outstanding. A trace
  without response times cannot say: its queue depth is the replaying drive's doing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ssdlab.traces.reader import Trace
from ssdlab.traces.record import MAX_END, Op

IDLE_GAP_US = 25_000
MAX_DEVICES = 1000  # counted by name; more are only counted
PROGRESS_EVERY = 1 << 16  # records
_SIZED = (Op.READ, Op.WRITE, Op.TRIM)


def trace_stats(trace: Trace, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    """The statistics of `trace`, as JSON; `progress` is told the fraction read now and then."""
    counts = dict.fromkeys(Op, 0)
    volume = dict.fromkeys(Op, 0)
    bins = {op: [0] * MAX_END.bit_length() for op in _SIZED}
    devices: dict[str, int] = {}
    other_devices = 0
    earliest = latest = previous = None
    idle = idle_gaps = capped_off = 0
    responses = response_sum = 0
    busy = busy_start = busy_end = 0  # the union of the [issue, completion] intervals, as they come
    last_end = 0
    for number, (time, op, _offset, length, device, response, _line) in enumerate(trace, 1):
        counts[op] += 1
        if length:
            volume[op] += length
            bins[op][length.bit_length() - 1] += 1
        if device is not None:
            if device in devices:
                devices[device] += 1
            elif len(devices) < MAX_DEVICES:
                devices[device] = 1
            else:
                other_devices += 1
        if previous is None:
            earliest = latest = busy_start = busy_end = time
        else:
            gap = time - previous
            if gap > IDLE_GAP_US:
                idle += gap
                idle_gaps += 1
                capped_off += gap - IDLE_GAP_US
            if time > latest:
                latest = time
            elif time < earliest:
                earliest = time
        previous = time
        if response is not None:
            responses += 1
            response_sum += response
            end = time + response
            if end > last_end:
                last_end = end
            if time > busy_end:
                busy += busy_end - busy_start
                busy_start, busy_end = time, end
            elif end > busy_end:
                busy_end = end
        if progress is not None and not number % PROGRESS_EVERY:
            progress(trace.fraction_read())
    records = sum(counts.values())
    span = latest - earliest
    return {
        "file": str(trace.path),
        "format": trace.format.name,
        "format_title": trace.format.title,
        "records": records,
        "ops": {op.value: {"count": counts[op], "bytes": volume[op]} for op in Op},
        "sizes": _histogram(bins),
        "earliest_us": earliest,
        "latest_us": latest,
        "duration_us": span,
        "idle": {"gap_over_us": IDLE_GAP_US, "gaps": idle_gaps, "share": idle / span if span else 0.0,
                 "capped_duration_us": span - capped_off},
        "queue_depth": _queue_depth(records, responses, response_sum, busy + busy_end - busy_start,
                                    last_end - earliest),
        "devices": devices,
        "other_devices": other_devices,
        "coarse_timing": trace.format.coarse_timing,
        "notes": trace.findings.notes(),
    }


def _histogram(bins: dict[Op, list[int]]) -> list[dict[str, int]]:
    return [{"from_bytes": 1 << k, "to_bytes": 2 << k, **{op.value: bins[op][k] for op in _SIZED}}
            for k in range(MAX_END.bit_length()) if any(bins[op][k] for op in _SIZED)]


def _queue_depth(records: int, responses: int, response_sum: int, busy: int, span: int) -> dict[str, Any]:
    if responses < records:
        return {"known": False, "why": "the trace has no response times: its queue depth is the replaying "
                                       "drive's doing"}
    if response_sum == 0:  # a format that must carry a response column, written without one (trace make)
        return {"known": False, "why": "every response time is 0: the trace was not recorded from a drive, "
                                       "its queue depth is the replaying drive's doing"}
    return {"known": True, "mean": response_sum / span if span else None,
            "mean_while_busy": response_sum / busy if busy else None,
            "busy_share": busy / span if span else None}
