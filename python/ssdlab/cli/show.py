"""`ssdlab show RUN_ID`: one run, its tests, scores and steps."""


from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption, RunIdArgument
from ssdlab.cli.output import console, print_json, shown
from ssdlab.documents import run_document
from ssdlab.store import Store
from ssdlab.units import format_bytes


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
    console.print(f"[bold]run {run['id']}[/] {shown(run['name'] or '')}  {shown(run['target'])}  "
                  f"suite {shown(run['suite'])}  scale {run['scale']:g}  \\[{run['status']}]")
    described = ", ".join(f"{k}={shown(v)}" for k, v in ident.items() if v not in (None, ""))
    console.print(f"target: {described}")
    console.print("engine: " + ", ".join(f"{k}={shown(v)}" for k, v in doc["engine"].items()))
    scores = Table("test", "status", "score", "primary score")
    for t in doc["tests"]:
        s = t["primary_score"]
        scores.add_row(t["id"], t["status"], f"{s['value']:.1f} {s['unit']}" if s else "",
                       s["name"] if s else shown(t["error"] or "", multiline=True))
    console.print(scores)
    for t in doc["tests"]:
        measured = [st for st in t["steps"] if st["phase"] == "measure"]
        if not measured:
            continue
        shapes = {(st["params"]["rw"], st["params"]["bs"]) for st in measured}
        rw, bs = next(iter(shapes))
        title = f"{t['id']}: {rw} {format_bytes(bs)}" if len(shapes) == 1 else t["id"]
        table = Table("step", "IOPS", "MB/s", "mean µs", "p99 µs", "p99.99 µs", "max µs",
                      title=title, title_justify="left")
        for st in measured:
            r = st["result"]
            lat = [d["lat_us"] for k, d in r.items() if k in ("read", "write", "trim")]
            state = st["params"].get("fill_state")
            label = st["label"] + (f" [{state}]" if state and state not in st["label"] else "")
            table.add_row(shown(label), f"{r['iops']:.0f}", f"{r['mbps']:.1f}",
                          *("/".join(f"{x[key]:.0f}" for x in lat)
                            for key in ("mean", "p99", "p99.99", "max")))
        console.print(table)
