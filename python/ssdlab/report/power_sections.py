"""The charts of the power suite's scores, beside a section's shape: what a power test
measures is in its score, not in its steps (idle-wake's reads after each idle length are
stored as steps, but their wake-up latency is a difference of medians only the score holds).

    wake      an idle-wake score    -> wake-up latency per idle length, a line per policy,
                                       one chart per run, and the runs overlaid when several
"""

from __future__ import annotations

from typing import Any

from ssdlab.power_tables import wake_policies
from ssdlab.report.charts import Chart, slug, wake_latency
from ssdlab.report.data import TestGroup, TestRun


def power_charts(group: TestGroup, labels: list[str]) -> list[Chart]:
    """The charts of the group's power scores; none for other tests."""
    runs = [(tr, rows) for tr in group.runs if (rows := _wake_rows(tr))]
    charts = [wake_latency(slug(group.id, "wake-latency", f"run-{tr.run.run.id}"),
                           f"{group.id} · {tr.run.label}: wake-up latency per idle length", rows, labels)
              for tr, rows in runs]
    if len(runs) > 1:
        charts.insert(0, wake_latency(slug(group.id, "wake-latency-compared"),
                                      f"{group.id}: wake-up latency per idle length, runs compared",
                                      [row for _, rows in runs for row in rows], labels))
    return charts


def _wake_rows(tr: TestRun) -> list[dict[str, Any]]:
    rows = []
    for policy, figures in wake_policies(tr.record.score or {}):
        basis = figures.get("power_state_is")
        rows += [{"run": tr.run.label, "policy": policy, "idle_s": float(idle_s), "wake_us": row["wake_us"],
                  "max_wake_us": row["max_wake_us"],
                  "power_state": f"PS{row['power_state']} ({basis})" if basis else ""}
                 for idle_s, row in figures["by_idle_s"].items()]
    return rows
