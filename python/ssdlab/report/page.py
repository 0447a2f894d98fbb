"""The HTML page: self-contained (Vega, Vega-Lite, vega-embed and every chart's
data inline), so it opens with no network. Text from devices and users is
escaped by jinja2's autoescape in HTML, and by `_json_in_script` inside the
<script> that carries the chart specs."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import jinja2
import vl_convert
from markupsafe import Markup

from ssdlab.report.conditions import run_conditions
from ssdlab.report.data import ReportData
from ssdlab.report.sections import Section, anchor
from ssdlab.report.summary import format_relative, format_spread, format_value, score_rows
from ssdlab.report.sweep_sections import SweepView

_SCRIPT_END = re.compile(r"</(script)", re.IGNORECASE)
_env = jinja2.Environment(loader=jinja2.PackageLoader("ssdlab.report"), autoescape=True,
                          trim_blocks=True, lstrip_blocks=True)


def render(data: ReportData, sections: list[Section]) -> str:
    return _page("report.html.j2", sections, runs=data.runs, rows=score_rows(data), alarms=data.alarms,
                 conditions=[run_conditions(r) for r in data.runs], format_value=format_value,
                 format_relative=format_relative, format_spread=format_spread)


def render_sweep(view: SweepView) -> str:
    """A sweep's page (sweep_sections.py), in the runs' page's frame and style."""
    return _page("sweep.html.j2", list(view.sections), view=view)


def _page(template: str, sections: list[Section], **context: object) -> str:
    """`template` (which extends base.html.j2) with the sections' charts embedded."""
    charts = {c.element_id: c.spec for s in sections for c in s.charts}
    return _env.get_template(template).render(
        sections=sections, anchor=anchor, generated=datetime.now(UTC).isoformat(timespec="seconds"),
        vega_js=_js_in_script(vega_javascript()), specs_json=_json_in_script(charts), **context)


def chart_count(sections: list[Section]) -> int:
    return sum(len(s.charts) for s in sections)


def vega_javascript() -> str:
    """vega, vega-lite and vega-embed as one script. vl-convert takes about 2 s to
    bundle them, so the bundle is cached per vl-convert version; an unwritable
    cache only costs that time."""
    cache = (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ssdlab"
             / f"vega-bundle-{version('vl-convert-python')}.js")
    try:
        return cache.read_text(encoding="utf-8")
    except OSError:
        pass
    bundle = vl_convert.javascript_bundle()
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.part")  # another report may read it
        partial.write_text(bundle, encoding="utf-8")
        partial.replace(cache)
    except OSError:
        pass
    return bundle


def _js_in_script(js: str) -> Markup:
    # Only "</script" ends a script element early. It can only stand in a JS string,
    # regular expression or comment, where "<\/script" means the same.
    return Markup(_SCRIPT_END.sub(r"<\\/\1", js))


def _json_in_script(value: object) -> Markup:
    # Escaping every "<", ">" and "&" keeps any string (a run name such as
    # "</script><script>...") inside the JSON text; JSON.parse restores them.
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)

