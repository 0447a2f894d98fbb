"""The trace test's report (report/trace_sections.py): each trace empty and full side by side,
the drives side by side, its latency distribution, and what fitting did said."""

from __future__ import annotations

from ssdlab import session
from ssdlab.catalogue import Scale
from ssdlab.report.data import gather
from ssdlab.report.sections import sections
from ssdlab.store import Store
from ssdlab.units import GiB
from tests.catalogue.test_trace import alibaba
from tests.paths import SMALL_PRESET


def test_a_trace_report_puts_empty_and_full_and_the_drives_side_by_side(tmp_path):
    trace = alibaba(tmp_path / "app.csv", records=1500, span=GiB)
    db = tmp_path / "runs.db"
    ids = [session.start_run(session.RunRequest(target=f"sim:{SMALL_PRESET}", suite="trace", scale=Scale(0.25),
                                                traces=(str(trace),), db=db, no_timing=untimed), show_progress=False)
           for untimed in (False, True)]
    with Store(db) as store:
        (section,) = sections(gather(store, ids))
    assert section.kind == "trace"
    names = [chart.name for chart in section.charts]
    assert {"trace-trace-data-rate-mbps", "trace-trace-p99", "trace-trace-app-csv-latency"} <= set(names)
    table = next(t for t in section.tables if t.caption == "Trace app.csv: empty and full drive")
    assert [row[:2] for row in table.rows] == [(f"#{ids[0]} sim:{SMALL_PRESET}", "empty"),
                                               (f"#{ids[0]} sim:{SMALL_PRESET}", "full"),
                                               (f"#{ids[1]} sim:{SMALL_PRESET}", "empty"),
                                               (f"#{ids[1]} sim:{SMALL_PRESET}", "full")]
    assert all(row[-2] and row[-1] for row in table.rows)  # energy and power: the preset's model
    assert any("MB/s full against" in f for f in section.findings)
    assert any("gaps over 25 ms capped" in f for f in section.findings)
    latency = next(c for c in section.charts if c.name.endswith("latency"))
    shares = [row["share"] for row in latency.spec["datasets"]["rows"]]
    assert max(shares) == 100 and min(shares) > 0
