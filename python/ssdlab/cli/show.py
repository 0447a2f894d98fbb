"""`ssdlab show RUN_ID`: one run, its tests, scores and steps, and the drive's condition:
alarms first, telemetry notes, then per test the power suite's tables, its steps, its health
before and after and its throttle events. A skipped test shows why in place of its score."""


from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption, RunIdArgument
from ssdlab.cli.output import console, print_alarm, print_json, shown
from ssdlab.documents import HEALTH_HEADER, health_rows, placed_note, run_document
from ssdlab.power_tables import power_tables
from ssdlab.store import Store
from ssdlab.units import format_bytes, shown_date

THROTTLE_HEADER = ("step", "start (s)", "length (s)", "MB/s before", "MB/s during", "°C at start", "peak °C",
                   "threshold")


def show_command(run_id: RunIdArgument,
                 db: DbOption = None, json_out: JsonOption = False) -> None:
    """Show a run: its conditions, every test's score and every measured step."""
    with Store.open_existing(db, readonly=True) as store:
        doc = run_document(store, store.resolve_run_id(run_id))
    if json_out:
        print_json(doc)
        return
    run = doc["run"]
    ident = run["identity"]
    repeat = f"  repeat {run['repeat']}" if run.get("repeat", 1) > 1 else ""
    console.print(f"[bold]run {run['id']}[/] {shown(run['name'] or '')}  {shown(run['target'])}  "
                  f"suite {shown(run['suite'])}  scale {run['scale']:g}{repeat}  \\[{run['status']}]")
    if run["waiting_until"]:
        console.print(f"waiting until {shown_date(run['waiting_until'])} for the retention read-back: keep the "
                      f"drive as stated, then `ssdlab resume {run['id']}`", highlight=False)
    for alarm in doc["alarms"]:
        print_alarm(console, alarm["test"], alarm["alarm"])
    described = ", ".join(f"{k}={shown(v)}" for k, v in ident.items() if v not in (None, ""))
    console.print(f"target: {described}")
    if hostname := run["host"].get("hostname"):  # the machine that made the run (the JSON has its facts)
        console.print(f"host: {shown(hostname)}", highlight=False)
    console.print("engine: " + ", ".join(f"{k}={shown(v)}" for k, v in doc["engine"].items()))
    for note in doc["telemetry_notes"]:
        console.print(f"[yellow]telemetry:[/] {shown(placed_note(note['test'], note['step'], note['note']))}",
                      highlight=False)
    scores = Table("test", "status", "score", "primary score")
    for t in doc["tests"]:
        s = t["primary_score"]
        scores.add_row(t["id"], t["status"], score_text(s) if s else "",
                       s["name"] if s else shown(t["error"] or "", multiline=True))
    console.print(scores)
    for t in doc["tests"]:
        _power(t)
        _steps(t)
        _health(t)
        _throttles(t)


def score_text(s: dict) -> str:
    """'105.9 MB/s', and with `run --repeat` the runs' spread: '105.9 MB/s (105.8-106.0, 3 runs)'."""
    text = f"{s['value']:.1f} {s['unit']}" if s.get("value") is not None else ""
    if spread := s.get("spread"):
        text += f" ({spread['min']:.1f}-{spread['max']:.1f}, {spread['runs']} runs)"
    return text


def _steps(t: dict) -> None:
    measured = [st for st in t["steps"] if st["phase"] == "measure"]
    if not measured:
        return
    shapes = {(st["params"]["rw"], st["params"]["bs"]) for st in measured}
    rw, bs = next(iter(shapes))
    title = f"{t['id']}: {rw} {format_bytes(bs)}" if len(shapes) == 1 else t["id"]
    heat = any(st["telemetry"]["temperature_c"] for st in measured)
    power = any("watts" in st["result"] for st in measured)
    table = Table("step", "IOPS", "MB/s", "mean µs", "p99 µs", "p99.99 µs", "max µs",
                  *(["peak °C"] if heat else []), *(["W"] if power else []), title=title, title_justify="left")
    for st in measured:
        r = st["result"]
        lat = [d["lat_us"] for k, d in r.items() if k in ("read", "write", "trim")]
        state = st["params"].get("fill_state")
        label = st["label"] + (f" [{state}]" if state and state not in st["label"] else "")
        known = [c for c in st["telemetry"]["temperature_c"] if c is not None]
        table.add_row(shown(label), f"{r['iops']:.0f}", f"{r['mbps']:.1f}",
                      *("/".join(f"{x[key]:.0f}" for x in lat) for key in ("mean", "p99", "p99.99", "max")),
                      *([f"{max(known):.1f}" if known else ""] if heat else []),
                      *([f"{r['watts']:.2f}" if "watts" in r else ""] if power else []))
    console.print(table)


def _power(t: dict) -> None:
    for caption, header, rows in power_tables(t["id"], t["primary_score"]):
        table = Table(*header, title=f"{t['id']}: {caption}", title_justify="left")
        for row in rows:
            table.add_row(*map(shown, row))
        console.print(table)


def _health(t: dict) -> None:
    if t["health"] is None or not (rows := health_rows(t["health"])):
        return
    table = Table(*HEALTH_HEADER, title=f"{t['id']}: drive health before and after", title_justify="left")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _throttles(t: dict) -> None:
    events = [(st, e) for st in t["steps"] for e in st["telemetry"]["throttles"]]
    if not events:
        return
    table = Table(*THROTTLE_HEADER, title=f"{t['id']}: throttle events", title_justify="left")
    for st, e in events:
        table.add_row(shown(st["label"]), str(e["start_s"]), str(e["length_s"]), f"{e['mbps_before']:.1f}",
                      f"{e['mbps_during']:.1f}", _celsius(e["start_temperature_c"]),
                      _celsius(e["peak_temperature_c"]), e["threshold"])
    console.print(table)


def _celsius(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"
