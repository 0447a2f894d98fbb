"""`ssdlab export RUN_ID --format json|csv|pts-csv`: a run's data for other tools."""

import csv
import io
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ssdlab.analysis.pts_scores import MATRIX_HEADER, matrix_rows
from ssdlab.cli.options import DbOption, RunIdArgument
from ssdlab.documents import run_document
from ssdlab.errors import SsdlabError
from ssdlab.store import Store

LATENCY_KEYS = ("mean", "p50", "p99", "p99.9", "p99.99", "max")
PARAM_KEYS = ("rw", "bs", "iodepth", "rwmixread", "offset", "size", "runtime", "io_size",
              "burst_bytes", "duty_cycle", "idle_after", "rate_iops", "fill_state")


class Format(StrEnum):
    JSON = "json"
    CSV = "csv"
    PTS_CSV = "pts-csv"


def csv_rows(doc: dict) -> list[dict]:
    """One row per step; latency columns per direction in microseconds; the step's energy,
    peak temperature and throttle events, and its test's health alarms."""
    rows = []
    for t in doc["tests"]:
        alarms = "; ".join(t["health"]["alarms"]) if t["health"] else ""
        for st in t["steps"]:
            r, telemetry = st["result"], st["telemetry"]
            known = [c for c in telemetry["temperature_c"] if c is not None]
            row = {"run_id": doc["run"]["id"], "test": t["id"], "test_status": t["status"],
                   "step": st["index"], "label": st["label"], "phase": st["phase"],
                   **{k: st["params"].get(k) for k in PARAM_KEYS},
                   "busy_s": r["busy_s"], "idle_s": r["idle_s"], "iops": r["iops"], "mbps": r["mbps"],
                   "energy_j": r.get("energy_j"), "watts": r.get("watts"),
                   "peak_temperature_c": max(known, default=None), "throttle_events": len(telemetry["throttles"]),
                   "test_alarms": alarms}
            for direction in ("read", "write", "trim"):
                d = r.get(direction, {})
                row[f"{direction}_iops"] = d.get("iops")
                row[f"{direction}_mbps"] = d.get("mbps")
                for key in LATENCY_KEYS:
                    row[f"{direction}_lat_{key}_us"] = d.get("lat_us", {}).get(key)
            rows.append(row)
    return rows


def _csv(header: tuple[str, ...] | list[str], rows: list) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def export_command(
    run_id: RunIdArgument,
    fmt: Annotated[Format, typer.Option(
        "--format", help="json (everything), csv (a row per step) or pts-csv (the PTS tests' "
                         "measurement-window matrices, a row per cell)")] = Format.JSON,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="file to write (default: standard output)")] = None,
    db: DbOption = None,
) -> None:
    """Export a run: JSON with every result, histogram, fio job and telemetry, or CSV with a row per step."""
    with Store.open_existing(db, readonly=True) as store:
        doc = run_document(store, store.resolve_run_id(run_id), full=True)
    if fmt is Format.JSON:
        text = json.dumps(doc, indent=1) + "\n"
    elif fmt is Format.PTS_CSV:
        text = _csv(MATRIX_HEADER, [row for t in doc["tests"] if t["primary_score"]
                                    for row in matrix_rows(doc["run"]["id"], t["id"], t["primary_score"])])
        if text.count("\n") == 1:
            raise SsdlabError(f"run {doc['run']['id']} has no PTS test with results: `--format csv` exports "
                              "every step")
    else:
        rows = csv_rows(doc)
        keys = list(rows[0]) if rows else ["run_id"]
        text = _csv(keys, [[row[k] for k in keys] for row in rows])
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text)
    except OSError as exc:
        raise SsdlabError(f"cannot write {output}: {exc.strerror}") from None
