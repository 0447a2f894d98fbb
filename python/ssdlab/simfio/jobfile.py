"""fio job files: sections of `key=value` lines; [global] gives defaults to the jobs
after it; jobs run one after the other (as with stonewall), in file order."""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.errors import SsdlabError

# What the simulator understands; ioengine, direct, filename, group_reporting,
# stonewall and name are accepted and have no effect on a simulated drive.
UNDERSTOOD = {"rw", "readwrite", "bs", "blocksize", "iodepth", "size", "offset", "io_size",
              "io_limit", "runtime", "time_based", "rwmixread", "rwmixwrite", "thinktime",
              "thinktime_blocks"}
IGNORED = {"ioengine", "direct", "filename", "group_reporting", "stonewall", "wait_for_previous",
           "name"}


@dataclass(frozen=True)
class FioJob:
    name: str
    options: dict[str, str | None]   # None for a flag written without a value
    line: int                        # where the section starts, for messages


def parse_job_file(text: str, origin: str) -> list[FioJob]:
    defaults: dict[str, str | None] = {}
    jobs: list[FioJob] = []
    section: str | None = None
    current: dict[str, str | None] = {}
    start = 0

    def close() -> None:
        if section is not None and section != "global":
            jobs.append(FioJob(section, {**defaults, **current}, start))
        elif section == "global":
            defaults.update(current)

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
        key, _, value = line.partition("=")
        key = key.strip().lower()
        if key not in UNDERSTOOD | IGNORED:
            raise SsdlabError(f"{origin}:{number}: the simulator does not support the fio option "
                              f"`{key}`; it understands {', '.join(sorted(UNDERSTOOD))} "
                              f"(and accepts {', '.join(sorted(IGNORED))})")
        current[key] = value.strip() if _ else None
    close()
    if not jobs:
        raise SsdlabError(f"{origin} has no job: add a section such as [randread] with rw=randread")
    return jobs
