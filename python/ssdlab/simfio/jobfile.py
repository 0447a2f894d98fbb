"""fio job files: sections of `key=value` lines; [global] gives defaults to the jobs
after it; jobs run one after the other (as with stonewall), in file order.

As fio reads them: `;` and `#` start a comment anywhere on a line, option names are
fio's (an alias becomes the name it stands for), and a later value replaces an earlier
one. Every option the simulator cannot take is refused at once, each with its line.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.errors import SsdlabError
from ssdlab.simfio.options import UNDERSTOOD, Kind, canonical, classify

# UNDERSTOOD is re-exported: the parser fuzz tests build their jobs from it
__all__ = ["UNDERSTOOD", "FioJob", "Setting", "ignored_note", "parse_job_file"]


@dataclass(frozen=True)
class Setting:
    value: str | None   # None for a flag written without a value
    line: int
    spelled: str        # the name as the job file writes it, for messages


@dataclass(frozen=True)
class FioJob:
    name: str                    # the section's name
    defaults: dict[str, Setting]  # from the [global] sections before it, by fio's option name
    own: dict[str, Setting]      # its own section's
    line: int                    # where the section starts, for messages

    @property
    def settings(self) -> dict[str, Setting]:
        return {**self.defaults, **self.own}

    @property
    def options(self) -> dict[str, str | None]:
        return {name: s.value for name, s in self.settings.items()}


def parse_job_file(text: str, origin: str) -> list[FioJob]:
    defaults: dict[str, Setting] = {}
    jobs: list[FioJob] = []
    section: str | None = None
    current: dict[str, Setting] = {}
    start = 0
    refused: dict[str, str] = {}   # "name=value (line N)": why

    def close() -> None:
        if section == "global":
            defaults.update(current)
        elif section is not None:
            jobs.append(FioJob(section, dict(defaults), current, start))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            close()
            section, current, start = line[1:-1].strip(), {}, number
            continue
        if section is None:
            raise SsdlabError(f"{origin}:{number}: an option before any [job] section: {line!r}")
        key, has_value, value = line.partition("=")
        setting = Setting(value.strip() if has_value else None, number, key.strip())
        name = canonical(setting.spelled.lower())
        kind, why = classify(name, setting.value)
        if kind is Kind.REFUSED:
            refused[f"{_written(setting)} (line {number})"] = why
        current[name] = setting
    close()
    if refused:
        raise SsdlabError(f"{origin}: the simulator cannot run "
                          + "; ".join(f"{what}: {why}" for what, why in refused.items())
                          + " (docs/sim-fio.md lists what it takes)")
    if not jobs:
        raise SsdlabError(f"{origin} has no job: add a section such as [randread] with rw=randread")
    return jobs


def ignored_note(jobs: list[FioJob]) -> str | None:
    """The options of `jobs` that change nothing on a simulated drive, grouped by why;
    None when there are none."""
    by_reason: dict[str, dict[str, None]] = {}
    for job in jobs:
        for name, setting in job.settings.items():
            kind, why = classify(name, setting.value)
            if kind is Kind.IGNORED:
                by_reason.setdefault(why, {})[_written(setting)] = None
    if not by_reason:
        return None
    return ("these options change nothing on a simulated drive and are ignored: "
            + "; ".join(f"{', '.join(names)} ({why})" for why, names in by_reason.items()))


def _written(setting: Setting) -> str:
    return setting.spelled if setting.value is None else f"{setting.spelled}={setting.value}"
