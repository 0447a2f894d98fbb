"""`ssdlab suites`: the built-in suites."""

from rich.table import Table

from ssdlab.cli.options import JsonOption
from ssdlab.cli.output import console, print_json
from ssdlab.suites import builtin_names, load_suite


def suites_command(json_out: JsonOption = False) -> None:
    """List the built-in suites and their tests."""
    suites = [load_suite(name)[0] for name in builtin_names()]
    if json_out:
        print_json([s.model_dump(mode="json") for s in suites])
        return
    table = Table("name", "tests", "description")
    for s in suites:
        table.add_row(s.name, ", ".join(s.tests), s.description)
    console.print(table)
