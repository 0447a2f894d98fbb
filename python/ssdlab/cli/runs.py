"""`ssdlab runs`: every stored run."""

from rich.table import Table

from ssdlab.cli.options import DbOption, JsonOption
from ssdlab.cli.output import console, print_json, shown
from ssdlab.model import Run, TestStatus
from ssdlab.store import Store
from ssdlab.units import shown_date


def runs_command(db: DbOption = None, json_out: JsonOption = False) -> None:
    """List stored runs."""
    with Store.open_existing(db, readonly=True) as store:
        rows = []
        for run in store.runs():
            tests = store.tests(run.id)
            done = sum(t.status in (TestStatus.DONE, TestStatus.SKIPPED) for t in tests)
            rows.append((run, done, len(tests)))
    if json_out:
        print_json([{**run.model_dump(mode="json", exclude={"identity", "host"}), "host": _hostname(run),
                     "tests_done": done, "tests": total} for run, done, total in rows])
        return
    table = Table("id", "name", "target", "host", "suite", "scale", "status", "tests", "created")
    for run, done, total in rows:
        until = f" until {shown_date(run.waiting_until)}" if run.waiting_until else ""
        table.add_row(str(run.id), shown(run.name or ""), shown(run.target), shown(_hostname(run) or ""),
                      shown(run.suite), f"{run.scale:g}", run.status.value + until, f"{done}/{total}",
                      run.created_at[:19])
    console.print(table)


def _hostname(run: Run) -> str | None:
    """The machine that made the run; None for a run stored before runs recorded it."""
    name = run.host.get("hostname")
    return name if isinstance(name, str) and name else None
