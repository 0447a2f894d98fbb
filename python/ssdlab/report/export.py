"""Every chart of a report as a file, for articles: SVG (vector) or PNG (2x pixels),
named after what the chart shows (`whole-drive-fill-fill-run-3-....png`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import vl_convert

from ssdlab.errors import SsdlabError
from ssdlab.report.charts import Chart

PNG_SCALE = 2  # sharp on high-density screens and in print


def export_charts(charts: Iterable[Chart], directory: Path, fmt: str) -> list[Path]:
    """Write one `<chart name>.<fmt>` per chart; fmt is "svg" or "png"."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for chart in charts:
            path = directory / f"{chart.name}.{fmt}"
            if fmt == "svg":
                path.write_text(vl_convert.vegalite_to_svg(chart.spec), encoding="utf-8")
            else:
                path.write_bytes(vl_convert.vegalite_to_png(chart.spec, scale=PNG_SCALE))
            paths.append(path)
    except OSError as exc:
        raise SsdlabError(f"cannot write the {fmt.upper()} charts to {directory}: "
                          f"{exc.strerror}; give another directory with --{fmt}") from None
    return paths
