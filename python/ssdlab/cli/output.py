"""Printing for the CLI: JSON for machines, rich tables for people.

Rich reads `[...]` in printed strings as markup, and a terminal obeys the escape
sequences in them, so every string that comes from a user or a device (run
names, targets, paths, drive models, error messages) is printed through `shown`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from ssdlab.text import printable

# Piped into a file or another program, a table's rows and a message's words are data:
# never cut or wrapped at rich's default of 80 columns, nor at a COLUMNS that the
# environment exports for some other program (pytest exports 80).
UNLIMITED_WIDTH = 1_000_000


def _console(stderr: bool) -> Console:
    piped = not (sys.stderr if stderr else sys.stdout).isatty()
    return Console(stderr=stderr, width=UNLIMITED_WIDTH if piped else None)


console = _console(stderr=False)
err_console = _console(stderr=True)


def shown(value: object, multiline: bool = False) -> str:
    """A user's or a device's string, ready for rich: printed literally and harmlessly
    (`multiline` keeps line breaks, as `printable` says)."""
    return escape(printable(str(value), multiline))


def print_alarm(to: Console, test_id: str, alarm: str) -> None:
    """A health alarm (a new media error, a critical warning...), as loud as a terminal allows."""
    to.print(f"[bold white on red] ALARM [/] [bold red]{shown(test_id)}: {shown(alarm)}[/]", highlight=False)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
