"""`ssdlab tests`: the catalogue."""

from rich.table import Table

from ssdlab.catalogue import CATALOGUE, Scale
from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, print_json

REFERENCE_CAPACITY = 1 << 40  # to show a whole-drive test's steps at scale 1


def tests_command(json_out: JsonOption = False) -> None:
    """List the tests ssdlab can run, with their steps at scale 1."""
    compiled = [d.compile(Scale(1.0), REFERENCE_CAPACITY) for d in CATALOGUE.values()]
    if json_out:
        print_json([{"id": t.id, "title": t.title, "primary_score": t.primary_score,
                     "steps": [s.model_dump(mode="json") for s in t.steps]} for t in compiled])
        return
    table = Table("id", "title", "steps", "primary score")
    for t in compiled:
        table.add_row(t.id, t.title, str(len(t.steps)), t.primary_score)
    console.print(table)
