"""What every `ssdlab` invocation does first: write back the drive settings that a killed
run left changed (drive_settings.py: APST off, the volatile write cache), in the database
the command names (--db, else the default), and say so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ssdlab.cli.output import err_console, shown
from ssdlab.drive_settings import restore_pending
from ssdlab.errors import SsdlabError
from ssdlab.store import Store


def database_named(argv: Sequence[str]) -> Path | None:
    """The --db of the command line, before typer has parsed it; None for the default."""
    for i, arg in enumerate(argv):
        if arg == "--db" and i + 1 < len(argv):
            return Path(argv[i + 1])
        if arg.startswith("--db="):
            return Path(arg[len("--db="):])
    return None


def restore_settings_left_changed(argv: Sequence[str]) -> None:
    """Read-only first, so that a command that only reads writes nothing when there is
    nothing to restore; a missing or unusable database is the command's own business."""
    db = database_named(argv)
    try:
        with Store.open_existing(db, readonly=True) as store:
            if not store.unrestored_setting_changes():
                return
    except SsdlabError:
        return
    try:
        with Store.open_existing(db, readonly=False) as store:
            lines = restore_pending(store)
    except SsdlabError as exc:
        lines = [f"a drive setting left changed by a killed run could not be restored: {exc}"]
    for line in lines:
        err_console.print(f"[bold yellow]drive setting:[/] {shown(line)}", highlight=False)
