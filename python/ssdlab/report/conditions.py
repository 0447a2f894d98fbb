"""The conditions a report must record for each run (METHODOLOGY.md): the target's
identity, the host, the engine (fio version and ioengine, or the simulator, its
preset and the preset's sha256), suite, scale and when it ran; and what telemetry could
not read, and why."""

from __future__ import annotations

from typing import Any

from ssdlab.report.data import RunData
from ssdlab.report.sections import Table
from ssdlab.units import format_bytes


def run_conditions(data: RunData) -> Table:
    run = data.run
    rows = [("target", run.target), ("target kind", run.target_kind), ("suite", run.suite),
            ("scale", f"{run.scale:g}"), ("measured steps run", f"{data.repeat} time(s) each"),
            ("status", run.status.value),
            ("started (UTC)", run.created_at), ("finished (UTC)", run.finished_at or ""),
            ("ssdlab version", run.ssdlab_version or "")]
    for prefix, values in (("target", run.identity), ("host", run.host), ("engine", data.engine)):
        rows += [(f"{prefix} {key}", _value(key, value)) for key, value in values.items()
                 if value not in (None, "")]
    rows += [("telemetry note", note) for note in data.telemetry_notes]
    return Table(data.label, ("condition", "value"), tuple(rows))


def _value(key: str, value: Any) -> str:
    if key.endswith("_bytes") and isinstance(value, (int, float)):
        return f"{format_bytes(value)} ({value:,} bytes)"
    return str(value)
