"""`ssdlab tests`: the catalogue."""

from rich.table import Table

from ssdlab.catalogue import CATALOGUE, Scale, TraceReplayTest
from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, print_json

REFERENCE_CAPACITY = 1 << 40  # to show a whole-drive test's steps at scale 1


def tests_command(json_out: JsonOption = False) -> None:
    """List the tests ssdlab can run, with their steps at scale 1 (the trace test's for each
    trace a run gives it)."""
    listed = []
    for d in CATALOGUE.values():
        if isinstance(d, TraceReplayTest):  # its steps are its traces': none before a run names them
            listed.append({"id": d.id, "title": d.title, "primary_score": d.primary_score, "steps": [],
                           "steps_per_trace": list(d.outline())})
            continue
        t = d.compile(Scale(1.0), REFERENCE_CAPACITY)
        listed.append({"id": t.id, "title": t.title, "primary_score": t.primary_score,
                       "steps": [s.model_dump(mode="json") for s in t.steps]})
    if json_out:
        print_json(listed)
        return
    table = Table("id", "title", "steps", "primary score")
    for t in listed:
        steps = f"{len(t['steps_per_trace'])} per trace" if "steps_per_trace" in t else str(len(t["steps"]))
        table.add_row(t["id"], t["title"], steps, t["primary_score"])
    console.print(table)
