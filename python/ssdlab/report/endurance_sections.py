"""The charts of an endurance score (catalogue/endurance.py): each probe's figures against the
data the host wrote, one chart per kind of figure, the runs overlaid.

    speed        sequential write MB/s (60 s on the full drive) and the fill's mean
    cache        the SLC cache the fill found (GiB)
    reads        QD1 random read latency, mean and 99th percentile (µs)
    health       Percentage Used and Available Spare (%), from the drive's own log
    amplified    write amplification of each interval, where the drive reports NAND writes
"""

from __future__ import annotations

from typing import Any

from ssdlab.report.charts import Chart, against_written, slug
from ssdlab.report.data import TestGroup

# (chart, title, axis, ((figure's name, its key in a probe, or in the probe's health), ...))
CHARTS = (
    ("speed", "write speed", "throughput (MB/s)",
     (("60 s sequential writes", "seq_write_mbps"), ("sustained fill, mean", "sustained_mbps"))),
    ("cache", "SLC cache found by the fill", "SLC cache (GiB)", (("SLC cache", "slc_cache_gib"),)),
    ("reads", "QD1 random read latency", "latency (µs)",
     (("mean", "qd1_read_mean_us"), ("99th percentile", "qd1_read_p99_us"))),
    ("health", "the drive's health log", "percent",
     (("Percentage Used", "health.percentage_used"), ("Available Spare", "health.available_spare_pct"))),
    ("amplified", "write amplification of each interval (NAND / host bytes)", "write amplification",
     (("write amplification", "write_amplification"),)),
)


def _figure(probe: dict[str, Any], key: str) -> Any:
    if key.startswith("health."):
        return (probe.get("health") or {}).get(key.removeprefix("health."))
    return probe.get(key)


def endurance_charts(group: TestGroup, labels: list[str]) -> list[Chart]:
    """The charts of the group's endurance scores; none for other tests, or a kind of figure no
    probe has (a file's health log)."""
    runs = [(tr.run.label, score["probes"]) for tr in group.runs
            if (score := tr.record.score) and "probes" in score]
    charts = []
    for kind, title, axis, figures in CHARTS:
        rows = [{"run": label, "figure": name, "tb": probe["written_tb"], "value": value}
                for label, probes in runs for probe in probes for name, key in figures
                if (value := _figure(probe, key)) is not None]
        if rows:
            charts.append(against_written(slug(group.id, "against-written", kind),
                                          f"{group.id}: {title}, against the data written", rows, axis, labels))
    return charts
