"""A stored run as one JSON-ready document: what `show --json` and `export` print."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ssdlab.errors import SsdlabError
from ssdlab.store import StepRecord, Store
from ssdlab.telemetry.results import TestHealth
from ssdlab.units import format_bytes


def step_document(record: StepRecord, full: bool) -> dict[str, Any]:
    doc = {"index": record.idx, "label": record.step.label, "phase": record.step.phase.value,
           "params": record.step.model_dump(mode="json", exclude={"label", "phase"}),
           "result": record.result.summary(),
           "per_second": [p.model_dump() for p in record.result.per_second],
           "per_gib": [p.model_dump() for p in record.result.per_gib],
           "telemetry": telemetry_document(record)}
    if full:
        doc["result_full"] = record.result.model_dump(mode="json")
        doc["commands"] = list(record.commands)
    return doc


def telemetry_document(record: StepRecord) -> dict[str, Any]:
    """Temperature per second of busy time, the meter's energy (its mean power over the busy
    spans), the throttle events."""
    temperature, energy = record.telemetry.temperature, record.telemetry.energy
    return {"temperature_source": temperature.source if temperature else None,
            "temperature_c": list(temperature.celsius) if temperature else [],
            "energy": {**energy.model_dump(), "mean_w": energy.mean_w} if energy else None,
            "throttles": [e.model_dump() for e in record.throttles]}


def health_document(health: TestHealth | None) -> dict[str, Any] | None:
    """The health logs before and after, their difference, and the alarms they raise."""
    if health is None:
        return None
    try:
        delta = health.delta()
    except SsdlabError:  # not one drive's logs: said by the alarms
        delta = None
    return {"before": health.before.model_dump(mode="json") if health.before else None,
            "after": health.after.model_dump(mode="json") if health.after else None,
            "delta": delta.model_dump(mode="json") if delta else None,
            "alarms": health.alarms()}


def placed_note(test: str | None, step: int | None, note: str) -> str:
    """A telemetry note with where it happened: `seq-read-burst step 2: ...`."""
    where = " ".join(filter(None, (test, None if step is None else f"step {step}")))
    return f"{where}: {note}" if where else note


def run_document(store: Store, run_id: int, full: bool = False) -> dict[str, Any]:
    """`full` adds latency histograms and the exact fio jobs (for export)."""
    run = store.run(run_id)
    extras = store.run_extras(run_id)
    records = store.tests(run_id)
    tests = []
    for rec in records:
        tests.append({
            "id": rec.test.id, "title": rec.test.title, "status": rec.status.value,
            # what the run's options set in the test (a PTS variant, the endurance plan)
            **({"settings": rec.test.settings} if rec.test.settings else {}),
            "primary_score": rec.score, "started_at": rec.started_at,
            "finished_at": rec.finished_at, "error": rec.error,
            "health": health_document(rec.health),
            "steps": [step_document(s, full) for s in store.steps(run_id, rec.seq)],
        })
    test_ids = {rec.seq: rec.test.id for rec in records}
    # each measured step run this many times (`run --repeat`); 1 for a run stored before it
    repeat = int(extras["options"].get("repeat", 1))
    return {"run": {**run.model_dump(mode="json"), "repeat": repeat}, "engine": extras["engine"],
            "alarms": [{"test": t["id"], "alarm": alarm} for t in tests if t["health"]
                       for alarm in t["health"]["alarms"]],
            "telemetry_notes": [{"test": test_ids.get(n.seq), "step": n.idx, "note": n.note}
                                for n in store.telemetry_notes(run_id)],
            "tests": tests}


# The rows of a health table: (label, HealthLog field, how to print a value, whether a
# change means something: not for a bit field).
_HEALTH_FIELDS: tuple[tuple[str, str, Callable[[Any], str], bool], ...] = (
    ("composite temperature (°C)", "temperature_c", str, True),
    ("data written by the host", "host_written_bytes", format_bytes, True),
    ("data read by the host", "host_read_bytes", format_bytes, True),
    ("data written to flash", "nand_written_bytes", format_bytes, True),
    ("media and data integrity errors", "media_errors", str, True),
    ("error log entries", "error_log_entries", str, True),
    ("percentage used (%)", "percentage_used", str, True),
    ("available spare (%)", "available_spare_pct", str, True),
    ("critical warning", "critical_warning", lambda bits: f"0x{bits:02x}", False),
    ("TMT1 (light throttling) transitions", "tmt1_transitions", str, True),
    ("time in TMT1 throttling (s)", "tmt1_time_s", str, True),
    ("TMT2 (heavy throttling) transitions", "tmt2_transitions", str, True),
    ("time in TMT2 throttling (s)", "tmt2_time_s", str, True),
    ("time above WCTEMP (min)", "warning_temp_minutes", str, True),
    ("time above CCTEMP (min)", "critical_temp_minutes", str, True),
)
HEALTH_HEADER = ("", "before", "after", "change")


def health_rows(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """A health document (`health_document`) as a before / after / change table, leaving
    out what neither log reports, and the write amplification where the drive reports its
    flash writes; `show` and the report print it."""
    before, after = doc["before"] or {}, doc["after"] or {}
    rows = []
    for label, key, shown, changes in _HEALTH_FIELDS:
        old, new = before.get(key), after.get(key)
        if old is None and new is None:
            continue
        change = "" if not changes or old is None or new is None else _signed(new - old, shown)
        rows.append((label, "" if old is None else shown(old), "" if new is None else shown(new), change))
    if doc["delta"] and (amplification := doc["delta"]["write_amplification"]) is not None:
        rows.append(("write amplification (flash / host writes)", "", "", f"{amplification:.2f}"))
    return rows


def _signed(change: float, shown: Callable[[Any], str]) -> str:
    return ("+" if change > 0 else "-" if change < 0 else "") + shown(abs(change))
