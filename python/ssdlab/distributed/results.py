"""A sweep's results as one table: a row per variant (its overrides, its run and the run's
state) and a column per test's primary score. `ssdlab sweeps show` prints it and writes it
as CSV or JSON; the report's charts of each score against each swept key read it too."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from ssdlab.distributed.overrides import Value, short_key, shown_value
from ssdlab.store import Store
from ssdlab.store.sweeps import SweepRecord

NOT_RUN = "not run"  # the state of a variant whose run has not been made


@dataclass(frozen=True)
class ScoreColumn:
    test: str
    name: str  # what the score means, as the test names it
    unit: str


@dataclass(frozen=True)
class VariantRow:
    name: str
    overrides: dict[str, Value]
    run_id: int | None
    status: str  # its run's (done, failed, interrupted...), or NOT_RUN
    scores: dict[str, float | None]  # test id -> the primary score's value; None: none (yet)


@dataclass(frozen=True)
class SweepTable:
    sweep: SweepRecord
    keys: list[str]  # every key a variant overrides, in the order they first appear
    tests: list[ScoreColumn]  # in the suite's order
    rows: list[VariantRow]

    def csv(self) -> str:
        """A header (variant, run_id, status, the swept keys, each test with its score's unit), a row per variant."""
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["variant", "run_id", "status", *map(short_key, self.keys),
                         *(f"{c.test} ({c.unit})" for c in self.tests)])
        for row in self.rows:
            writer.writerow([row.name, "" if row.run_id is None else row.run_id, row.status,
                             *("" if k not in row.overrides else shown_value(row.overrides[k]) for k in self.keys),
                             *("" if row.scores.get(c.test) is None else repr(row.scores[c.test]) for c in self.tests)])
        return buffer.getvalue()

    def document(self) -> dict[str, Any]:
        """As `--json` prints it."""
        sweep = self.sweep
        return {"sweep": {"id": sweep.id, "base": sweep.base, "suite": sweep.suite, "spec": sweep.spec,
                          "scale": sweep.options["scale"], "tests": sweep.options["tests"],
                          "created_at": sweep.created_at},
                "keys": self.keys,
                "scores": [{"test": c.test, "name": c.name, "unit": c.unit} for c in self.tests],
                "variants": [{"name": r.name, "overrides": r.overrides, "run_id": r.run_id, "status": r.status,
                              "scores": r.scores} for r in self.rows]}


def sweep_table(store: Store, sweep_id: int) -> SweepTable:
    sweep = store.sweep(sweep_id)
    rows, columns, keys = [], {}, {}
    for variant in store.sweep_variants(sweep_id):
        keys |= dict.fromkeys(variant.overrides)
        if variant.run_id is None:
            rows.append(VariantRow(variant.name, variant.overrides, None, NOT_RUN, {}))
            continue
        scores = {}
        for record in store.tests(variant.run_id):
            score = record.score or {}
            scores[record.test.id] = score.get("value")
            if record.test.id not in columns or (not columns[record.test.id].unit and score):
                columns[record.test.id] = ScoreColumn(record.test.id, score.get("name", record.test.primary_score),
                                                      score.get("unit", ""))
        rows.append(VariantRow(variant.name, variant.overrides, variant.run_id,
                               store.run(variant.run_id).status.value, scores))
    return SweepTable(sweep, list(keys), list(columns.values()), rows)
