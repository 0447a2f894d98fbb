"""A stored run as one JSON-ready document: what `show --json` and `export` print."""

from __future__ import annotations

from typing import Any

from ssdlab.store import StepRecord, Store


def step_document(record: StepRecord, full: bool) -> dict[str, Any]:
    doc = {"index": record.idx, "label": record.step.label, "phase": record.step.phase.value,
           "params": record.step.model_dump(mode="json", exclude={"label", "phase"}),
           "result": record.result.summary(),
           "per_second": [p.model_dump() for p in record.result.per_second],
           "per_gib": [p.model_dump() for p in record.result.per_gib]}
    if full:
        doc["result_full"] = record.result.model_dump(mode="json")
        doc["commands"] = list(record.commands)
    return doc


def run_document(store: Store, run_id: int, full: bool = False) -> dict[str, Any]:
    """`full` adds latency histograms and the exact fio jobs (for export)."""
    run = store.run(run_id)
    extras = store.run_extras(run_id)
    tests = []
    for rec in store.tests(run_id):
        tests.append({
            "id": rec.test.id, "title": rec.test.title, "status": rec.status.value,
            "primary_score": rec.score, "started_at": rec.started_at,
            "finished_at": rec.finished_at, "error": rec.error,
            "steps": [step_document(s, full) for s in store.steps(run_id, rec.seq)],
        })
    return {"run": run.model_dump(mode="json"), "engine": extras["engine"], "tests": tests}
