"""The one user-facing error type.

Anything the user can fix (bad input, a missing program, an unsafe target)
is raised as `SsdlabError` with a message that says what to do. The CLI turns
it into that message and an exit status; tracebacks are for bugs only.
"""

from pydantic import ValidationError


class SsdlabError(Exception):
    """An error the user can act on. `str(err)` is the whole message."""

    exit_code = 2


class UnsafeTarget(SsdlabError):
    """A destructive step was refused because a safety check failed."""

    exit_code = 3


class BackendFailed(SsdlabError):
    """The I/O engine (fio, the simulator) failed while running a step."""

    exit_code = 4


class Interrupted(SsdlabError):
    """The user stopped a run (Ctrl-C); it can be resumed."""

    exit_code = 130


def validation_problems(exc: ValidationError) -> str:
    """pydantic's complaints as one plain line, `field: problem; ...` (without its
    "validation error for" banner and documentation links, which say nothing to a user)."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {_problem(e)}"
                     for e in exc.errors())


def _problem(error: dict) -> str:
    # A validator's own ValueError arrives as "Value error, <its message>".
    cause = error.get("ctx", {}).get("error")
    return str(cause) if isinstance(cause, ValueError) else error["msg"]
