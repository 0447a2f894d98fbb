"""Everything that can go wrong with a database, said once, with what to do about it.

The store's modules raise SQLite's errors and the few problems below as they find
them; `translating_errors` wraps every public method of the Store so that each one
leaves the store as an SsdlabError naming the database and the way out.
"""

from __future__ import annotations

import functools
import inspect
import shlex
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ssdlab.errors import SsdlabError

BUSY_TIMEOUT_S = 60.0  # how long a writer waits for another process's transaction


class StoreProblem(Exception):
    """A problem with a database found by the store; its argument is the detail."""


class NotOurs(StoreProblem):
    """The file is another program's (or no database at all): never written to."""


class Damaged(StoreProblem):
    """Parts of the database cannot be read: a damaged page or record."""


class NoDatabase(StoreProblem):
    """There is no database where a command expected one."""


def database_error(exc: Exception, path: Path, run_id: int | None = None) -> SsdlabError:
    """The user's message for `exc`, met while using the database at `path` (for run
    `run_id`, when a run was being written)."""
    if isinstance(exc, NotOurs):
        return SsdlabError(f"{path} is not an ssdlab database ({exc}): ssdlab leaves it as it "
                           "is. Choose another --db (or SSDLAB_DB)")
    if isinstance(exc, NoDatabase):
        return SsdlabError(f"there is no ssdlab database at {path}: start a run first, or give "
                           "--db")
    if isinstance(exc, Damaged):
        return _damaged(path, str(exc))
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF  # the primary result code
    detail = str(exc)
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return _damaged(path, detail)
    if code == sqlite3.SQLITE_FULL:
        return _disk_full(path, run_id)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return SsdlabError(f"the database {path} stayed busy for more than {BUSY_TIMEOUT_S:g} s "
                           "(another process is writing to it): try again when it has finished")
    if code == sqlite3.SQLITE_READONLY:
        return SsdlabError(f"cannot write to the database {path} ({detail}): make it and its "
                           "directory writable, or give another --db")
    if code == sqlite3.SQLITE_CANTOPEN:
        return SsdlabError(f"cannot open the database {path} ({detail}): check that it and its "
                           "directory exist and are readable, or give another --db")
    if code == sqlite3.SQLITE_IOERR:
        return SsdlabError(f"reading or writing the database {path} failed ({detail}): the disk "
                           "may be failing or gone; check `dmesg`, then try again or give "
                           "another --db")
    return SsdlabError(f"the database {path} failed: {detail}; try again, or give another --db")


def _damaged(path: Path, detail: str) -> SsdlabError:
    quoted = shlex.quote(str(path))
    return SsdlabError(
        f"the database {path} is damaged ({detail}): ssdlab will not write to it. Copy what can "
        f"still be read of it into a new database with `ssdlab db recover {quoted} -o RECOVERED.db` "
        "and use RECOVERED.db, or use another --db")


def _disk_full(path: Path, run_id: int | None) -> SsdlabError:
    where = f"the disk holding {path} is full"
    if run_id is None:
        return SsdlabError(f"{where}: nothing was written. Free some space on it and try again, "
                           "or give another --db")
    return SsdlabError(
        f"{where}: what was being saved is lost, but every finished test and step of run "
        f"{run_id} is stored. Free some space on it, then `ssdlab resume {run_id}` continues "
        "from the first unfinished test")


C = TypeVar("C", bound=type)


def translating_errors(cls: C) -> C:
    """Wrap `__init__` and every public method of `cls` so that an error of the database
    leaves it as an SsdlabError; the instance must have `path` set before it can fail."""
    for name, member in list(vars(cls).items()):
        if inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, _translating(member))
    return cls


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def translated(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, StoreProblem) as exc:
            run_id = inspect.signature(method).bind(self, *args, **kwargs).arguments.get("run_id")
            raise database_error(exc, self.path, run_id) from exc
    return translated
