"""fio's JSON output (fio 3.x: `--output-format=json`, `json+`, and the client's output of
client/server runs) as an ImportedRun: one test, `fio-json`, whose steps are fio's job entries.

What is read, and from where:
- the figures: every entry of `jobs` (`client_stats` from `fio --client`; its "All clients"
  sum is left out) is a step, through backends/fio/parse.py, the parser of fio's JSON that
  ssdlab's own fio runs use: I/Os, bytes, busy time and completion latency per direction,
  the histogram from json+'s bins, else fio's percentiles;
- the workload: each step is the job options fio printed (its `global options`, then its
  `job options`) read as `ssdlab sim fio` reads a job file (simfio/run.py), so a value means
  what it meant to fio. fio's JSON leaves out what it was not given explicitly (its
  defaults: rw=read, bs=4k, iodepth=1), and fio 3.33 also leaves out every option written
  without a value (time_based, norandommap, stonewall, group_reporting). What the step
  cannot know is said in its notes, never made up: a span fio does not print (no size=) is
  stood in for by the bytes the job moved, and said so; options a step cannot hold are
  named; an entry whose figures its options do not describe (group_reporting merges jobs,
  and fio prints the options of the group's last job under its first job's name) is said so;
- the run: fio's version, its report time (`timestamp_ms`, else `timestamp`), the start
  of the jobs (`job_start`, fio 3.35 and later; else the report time less `elapsed`), the
  client's host and port, the files or devices the jobs named (`filename`), and the
  devices of `disk_util`.

Anything else is refused with a message that names the file: text that holds no fio
JSON (or only the start of it), JSON without jobs, a job that ended with an error, numbers
fio never prints (negative, NaN, infinite, beyond 64 bits), fio 2's microsecond fields.
Several reports in one file (`--status-interval`) import the last: fio's final one.
"""

from __future__ import annotations

import errno
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ssdlab.backends.fio import parse
from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.model import DirectionResult, Step, StepResult, Test
from ssdlab.simfio.jobfile import FioJob, Setting
from ssdlab.simfio.options import Kind, canonical, classify
from ssdlab.simfio.run import plan
from ssdlab.store.imports import ImportedRun
from ssdlab.text import read_text_file
from ssdlab.units import format_bytes

FORMAT = "fio-json"
TEST_ID = "fio-json"
SUITE = f"{FORMAT} (imported)"
REPORTS = ("jobs", "client_stats")
ALL_CLIENTS = "All clients"
SCORE = {"name": "none: imported jobs, compared step by step (`ssdlab report`)", "value": None, "unit": ""}
TEST_TITLE = "fio jobs, imported from fio's JSON output"
PRIMARY = "none: the steps are fio's jobs as fio measured them"

# Where a job's span is not known, the step's `size` must still be a size: a drive far
# larger than any, so that no offset or size fio was given is refused for lack of room.
UNKNOWN_DEVICE = 1 << 60
MAX_NUMBER = 1 << 64          # fio prints unsigned 64-bit counters at the most
MAX_OPTIONS = 256             # per job: far more than any fio job has
MAX_LABEL = 200
MAX_PRINTED_NOTES = 10
# What the step models, tried first when a job's options do not all plan together
CORE = ("rw", "bs", "iodepth", "rwmixread", "rwmixwrite", "size", "offset", "io_size", "runtime",
        "time_based", "ioengine", "numjobs", "kb_base")
# Options that only say what fio writes beside its figures: they shape no workload
LOGS = ("write_lat_log", "write_bw_log", "write_iops_log", "write_hist_log", "log_avg_msec",
        "log_max_value", "log_offset", "per_job_logs", "log_prio")
BARE_FLAGS_NOTE = ("fio's JSON lists only the options given with a value: flags written bare "
                   "(time_based, norandommap, stonewall, group_reporting...) are not known")


def read_fio_json(path: Path, name: str | None = None, drive: str | None = None) -> ImportedRun:
    """The run in `path`; an SsdlabError naming the file when it cannot be imported whole."""
    text = read_text_file(path, "the fio output")
    doc, printed, reports = _final_report(path, text)
    _check_numbers(path, doc)
    if "\\u" in text:  # only a JSON escape makes a lone surrogate
        try:
            doc = _without_surrogates(doc)
        except RecursionError:
            raise SsdlabError(f"{path}: its JSON is nested thousands deep, as fio never prints it: the file was "
                              "edited or damaged") from None
    version = doc.get("fio version")
    if isinstance(version, str) and version.startswith("fio-2."):
        raise SsdlabError(f"{path}: written by {version}, whose JSON has other fields (latencies in µs): "
                          "ssdlab imports fio 3's JSON; run the jobs again with fio 3")
    client = "client_stats" in doc and "jobs" not in doc
    entries = doc.get("client_stats" if client else "jobs")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise SsdlabError(f"{path}: fio's `{'client_stats' if client else 'jobs'}` is not a list of jobs: "
                          "the file was edited or is not fio's output; record fio's output again")
    entries = [e for e in entries if not (client and e.get("jobname") == ALL_CLIENTS)]
    if not entries:
        raise SsdlabError(f"{path}: fio's JSON holds no job: record the output of a fio run that ran jobs")
    global_options = _options(path, doc.get("global options"), "global options")
    reported_at = _report_time(path, doc)
    hosts = _hosts(entries) if client else []
    jobs = [_Entry(path, entry, global_options, reported_at, hosts) for entry in entries]
    _name_uniquely(jobs)
    same = Counter((job.jobname, job.groupid) for job in jobs)
    steps, results = [], []
    for job in jobs:
        step, result = job.step_and_result(merged=same[(job.jobname, job.groupid)] == 1)
        steps.append(step)
        results.append((result, (job.job_text(global_options),)))
    started = min((job.started for job in jobs), default=reported_at)
    notes = [f"fio printed {reports} reports (--status-interval): the last, fio's final one, is imported"
             if reports > 1 else "", BARE_FLAGS_NOTE,
             f"fio's \"{ALL_CLIENTS}\" entry is left out: its figures are the steps' together" if client else ""]
    targets = _targets(jobs)
    warnings = _warnings(printed)
    results = [(r.model_copy(update={"notes": (*warnings, *r.notes)}), c) for r, c in results]
    return ImportedRun(
        name=name if name is not None else _storable(path.name),
        target=_storable(", ".join(targets)) if targets else "files named after the jobs (no filename= in fio's JSON)",
        target_kind="device" if targets and all(_is_device(t) for t in targets) else "file",
        suite=SUITE,
        identity=_drop_empty({"drive": drive, "disks": _disks(doc.get("disk_util"))}),
        host=_host(hosts),
        engine=_drop_empty({"engine": "fio", "fio_version": version if isinstance(version, str) else "unknown",
                            "ioengine": ", ".join(dict.fromkeys(j.ioengine for j in jobs if j.ioengine)),
                            "output": "json+" if any(j.has_bins for j in jobs) else "json",
                            "client": ", ".join(hosts), "imported_from": _storable(str(path.resolve()))}),
        options={"imported": {"format": FORMAT, "file": _storable(str(path.resolve())), "at": _iso(datetime.now(UTC)),
                              "fio_printed": list(printed[:200]), "notes": [n for n in notes if n]}},
        test=Test(id=TEST_ID, title=TEST_TITLE, primary_score=PRIMARY, steps=tuple(steps)),
        results=tuple(results), score=dict(SCORE), started_at=_iso(started), finished_at=_iso(reported_at))


def run_notes(run: ImportedRun) -> list[str]:
    """What the import found about the whole run, for the command to print."""
    return list(run.options["imported"]["notes"])


def step_notes(run: ImportedRun) -> list[tuple[str, str]]:
    """(step label, note) of what each step could not know; fio's own warnings left out."""
    printed = set(run.options["imported"]["fio_printed"])
    return [(step.label, note) for step, (result, _) in zip(run.test.steps, run.results)
            for note in result.notes if note not in printed]


class _Entry:
    """One job entry of fio's report, checked."""

    def __init__(self, path: Path, entry: dict[str, Any], global_options: dict[str, str | None],
                 reported_at: datetime, hosts: list[str]):
        self.path = path
        self.entry = entry
        jobname = entry.get("jobname")
        self.jobname = jobname if isinstance(jobname, str) else str(jobname)
        groupid = entry.get("groupid")
        self.groupid = groupid if isinstance(groupid, (int, str)) else repr(groupid)
        where = f"job {self.jobname[:MAX_LABEL]!r}"
        self.where = where
        self.own = _options(path, entry.get("job options"), f"the options of {where}")
        self.options = {**global_options, **self.own}
        self.label = self.jobname[:MAX_LABEL] or "job"
        if len(hosts) > 1:
            self.label += f" @ {entry.get('hostname')}:{entry.get('port')}"
        code = entry.get("error", 0)
        if code:
            raise SsdlabError(f"{path}: fio's {where} ended with an error: {_error_text(code)}; its figures are "
                              "partial, so the file is not imported: fix the job and run fio again")
        if isinstance(entry.get("mixed"), dict):
            raise SsdlabError(f"{path}: {where} has its reads and writes merged (unified_rw_reporting): "
                              "ssdlab keeps them apart; run the job again without unified_rw_reporting")
        self.directions = self._directions()
        self.has_bins = any(d.latency.histogram for d in self.directions.values())
        started = entry.get("job_start")
        elapsed = entry.get("elapsed")
        if _is_number(started) and started > 0:
            self.started = _time(path, started / 1000, f"the start of {where} (job_start)")
        elif _is_number(elapsed) and 0 <= elapsed <= reported_at.timestamp():
            self.started = _time(path, reported_at.timestamp() - elapsed, f"the start of {where} (elapsed)")
        else:
            self.started = reported_at
        engine = self.options.get("ioengine")
        self.ioengine = engine or ""

    def _directions(self) -> dict[str, DirectionResult]:
        found = {}
        for name in parse.DIRECTIONS:
            data = self.entry.get(name, {})
            if not isinstance(data, dict) or not isinstance(data.get("clat_ns", {}), dict):
                raise SsdlabError(f"{self.path}: the {name} figures of {self.where} are not fio 3's (no clat_ns "
                                  "object): the file was edited, or written by another fio; record it again")
            if data.get("total_ios") and "clat_ns" not in data:
                raise SsdlabError(f"{self.path}: the {name} figures of {self.where} have no clat_ns: not fio 3's "
                                  "JSON (fio 2 wrote latencies in µs as clat); run the jobs again with fio 3")
            try:
                direction = parse.direction(self.entry, name)
            except ValidationError as exc:
                raise SsdlabError(f"{self.path}: the {name} figures of {self.where} are not possible "
                                  f"({validation_problems(exc)}): the file was edited or damaged; "
                                  "record fio's output again") from None
            except (ValueError, TypeError, AttributeError) as exc:
                raise SsdlabError(f"{self.path}: the {name} figures of {self.where} are not fio's numbers "
                                  f"({exc}): the file was edited or damaged; record fio's output again") from None
            if direction is not None:
                found[name] = direction
        return found

    def step_and_result(self, merged: bool) -> tuple[Step, StepResult]:
        step, notes = _workload(self.label, self.options, self.moved_bytes)
        copies = _copies(self.options)
        if merged and copies > 1:
            step, more = _with_copies(step, copies)
            notes += more
        expected = {name for name, issued in (("read", step.rw.reads or step.verify), ("write", step.rw.writes),
                                              ("trim", step.rw.trims)) if issued}
        if unexpected := sorted(set(self.directions) - expected):
            notes.append(f"its options (rw={step.rw}) do not describe its figures ({', '.join(unexpected)} too): "
                         "with group_reporting fio prints a group of jobs as one, named after its first job, "
                         "with the options of its last; the workload is not known")
        if any(d.latency.count == 0 for d in self.directions.values()):
            notes.append("fio printed no completion-latency percentiles for it (clat_percentiles=0 or a "
                         "percentile_list without 50, 99, 99.9 and 99.99): its latencies are not known")
        busy = max((d.busy_s for d in self.directions.values()), default=0.0)
        result = StepResult(started_at=_iso(self.started), busy_s=busy, idle_s=0.0,
                            engine=self.ioengine or "fio's default", notes=tuple(notes), **self.directions)
        return step, result

    @property
    def moved_bytes(self) -> int:
        return sum(d.bytes for d in self.directions.values())

    def job_text(self, global_options: dict[str, str | None]) -> str:
        """The job as a fio job file, as far as fio's JSON gives it."""
        def section(title: str, options: dict[str, str | None]) -> str:
            return f"[{title}]\n" + "".join(f"{k}\n" if v is None else f"{k}={v}\n" for k, v in options.items())
        head = section("global", global_options) + "\n" if global_options else ""
        return head + section(self.jobname, self.own)


def _final_report(path: Path, text: str) -> tuple[dict[str, Any], tuple[str, ...], int]:
    """fio's last report in the text, the other lines, and how many reports there were."""
    try:
        doc, printed = parse.split_output(text, REPORTS)
        reports = 1
        while True:
            try:
                later, rest = parse.split_output("\n".join(printed), REPORTS)
            except parse.NoJson:
                return doc, printed, reports
            doc, printed, reports = later, rest, reports + 1
    except parse.NoJson:
        raise SsdlabError(_no_report(path, text)) from None
    except (ValueError, RecursionError):  # a number of thousands of digits, arrays nested thousands deep
        raise SsdlabError(f"{path}: its JSON holds what fio never prints (a number of thousands of digits, "
                          "or lists nested thousands deep): the file was edited or damaged") from None


def _no_report(path: Path, text: str) -> str:
    if '"fio version"' in text or text.lstrip().startswith("{"):
        return (f"{path}: fio's JSON in it is incomplete or damaged (a truncated file?) or has no jobs: "
                "record fio's output again, whole, with --output-format=json")
    head = next((line.strip() for line in text.splitlines() if line.strip()), "")[:80]
    return (f"{path}: no fio JSON output in it" + (f" (it begins {head!r})" if head else " (it is empty)")
            + ": give the file fio wrote with --output-format=json or json+")


def _check_numbers(path: Path, doc: dict[str, Any]) -> None:
    """fio prints finite numbers of at most 64 bits: anything else was not written by fio."""
    for at, number in _numbers(doc):
        if isinstance(number, float) and not math.isfinite(number):
            raise SsdlabError(f"{path}: fio's JSON has {number} at {at}, which fio never prints: the file was "
                              "edited or damaged; record fio's output again")
        if abs(number) > MAX_NUMBER:
            raise SsdlabError(f"{path}: fio's JSON has a number at {at} larger than any fio prints: the file was "
                              "edited or damaged; record fio's output again")


def _numbers(doc: dict[str, Any]) -> Iterator[tuple[str, float]]:
    """(where, number) of every number in `doc`, where as a JSON path: jobs[0].read.runtime."""
    stack: list[tuple[Any, str]] = [(v, str(k)) for k, v in doc.items()]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            stack += [(v, f"{at}.{k}") for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, f"{at}[{k}]") for k, v in enumerate(item)]
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            yield at, item


def _options(path: Path, given: Any, what: str) -> dict[str, str | None]:
    """fio's printed options, by fio's name (aliases resolved); "" is a flag given bare."""
    if given is None:
        return {}
    if not isinstance(given, dict) or len(given) > MAX_OPTIONS:
        raise SsdlabError(f"{path}: {what} are not fio's (not a list of up to {MAX_OPTIONS} options): the file "
                          "was edited or damaged; record fio's output again")
    found: dict[str, str | None] = {}
    for key, value in given.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise SsdlabError(f"{path}: {what}: the value of {key!r} is not text as fio prints it: the file was "
                              "edited or damaged; record fio's output again")
        text = str(value).strip()
        found[str(key)] = text or None
    return found


def _workload(label: str, options: dict[str, str | None], moved: int) -> tuple[Step, list[str]]:
    """The step that fio's options describe, and what it cannot say of them."""
    settings = {canonical(k.lower()): Setting(v, 0, k) for k, v in options.items()
                if canonical(k.lower()) not in LOGS}
    notes: list[str] = []
    held = {k: s for k, s in settings.items() if classify(k, s.value)[0] is not Kind.REFUSED}
    left = [k for k in settings if k not in held]
    shares = [k for k in ("size", "offset", "io_size") if k in held and "%" in (held[k].value or "")]
    for k in shares:
        del held[k]
    step, dropped = _plannable(label, held)
    left += dropped
    if shares:
        notes.append(f"{', '.join(_written(settings[k]) for k in shares)}: a share of a size fio's JSON does not "
                     "give; not in the step")
    if left:
        notes.append("the step does not hold these options of the job (its figures are fio's, with them): "
                     + ", ".join(_written(settings[k]) for k in left))
    if "rw" in left:
        notes.append(f"its I/O pattern is not one ssdlab knows: the step's rw={step.rw} is fio's default, "
                     "not the job's")
    if "size" not in held or "size" in dropped:
        step, note = _stand_in_span(step, moved, settings.get("filesize"))
        notes.append(note)
    return step, notes


def _plannable(label: str, settings: dict[str, Setting]) -> tuple[Step, list[str]]:
    """The job planned with as many of its options as plan together: dropped one by one
    (the least essential first) until it plans, then each given back that still plans."""
    def planned(kept: dict[str, Setting]) -> Step | None:
        try:
            return plan(FioJob(label, {}, kept, 0), UNKNOWN_DEVICE, label).step
        except (SsdlabError, ValueError, OverflowError):  # a refusal (plan's own, or a value it chokes on)
            return None

    kept = dict(settings)
    order = [k for k in reversed(kept) if k not in CORE] + [k for k in reversed(CORE) if k in kept]
    dropped: list[str] = []
    step = planned(kept)
    while step is None and order:
        dropped.append(order.pop(0))
        del kept[dropped[-1]]
        step = planned(kept)
    if step is None:  # nothing given plans: fio's defaults do
        step = planned({})
    for k in list(dropped):
        if (again := planned({**kept, k: settings[k]})) is not None:
            kept[k] = settings[k]
            dropped.remove(k)
            step = again
    assert step is not None  # fio's defaults always plan
    return step, dropped


def _stand_in_span(step: Step, moved: int, filesize: Setting | None) -> tuple[Step, str]:
    """The step with its span stood in for by the bytes the job moved, in whole blocks."""
    span = max(-(-moved // step.bs) * step.bs, step.bs)
    try:
        stood = Step.model_validate({**step.model_dump(), "size": span})
    except ValidationError:
        stood = step
    given = f" (filesize={filesize.value} is not one span)" if filesize else ""
    return stood, (f"its span is not known: fio's JSON gives no size={given}; the step's size, "
                   f"{format_bytes(stood.size)}, is the bytes it moved, a stand-in")


def _copies(options: dict[str, str | None]) -> int:
    value = options.get("numjobs") or "1"
    return int(value) if value.isascii() and value.isdigit() and 0 < len(value) <= 4 else 1


def _with_copies(step: Step, copies: int) -> tuple[Step, list[str]]:
    """numjobs=N reported as one entry (group_reporting): N jobs at once, their figures together."""
    concurrent = [{**step.model_dump(), "label": f"{step.label} {n}", "concurrent": ()}
                  for n in range(2, min(copies, 1024) + 1)]
    try:
        return Step.model_validate({**step.model_dump(), "concurrent": concurrent}), [
            f"numjobs={copies} reported as one (group_reporting): {copies} such jobs at once, their figures together"]
    except ValidationError:
        return step, [f"numjobs={copies} reported as one (group_reporting): the figures are {copies} jobs' "
                      "together; the step holds one"]


def _name_uniquely(jobs: list[_Entry]) -> None:
    seen: Counter[str] = Counter()
    for job in jobs:
        seen[job.label] += 1
        if seen[job.label] > 1:
            job.label = f"{job.label} #{seen[job.label]}"


def _report_time(path: Path, doc: dict[str, Any]) -> datetime:
    stamp = doc.get("timestamp_ms")
    seconds = stamp / 1000 if _is_number(stamp) else doc.get("timestamp")
    if not _is_number(seconds):
        raise SsdlabError(f"{path}: fio's JSON has no timestamp: not fio's whole output; record it again")
    if seconds <= 0:
        raise SsdlabError(f"{path}: fio's timestamp {seconds} is not a time fio can have written; "
                          "the file was edited or damaged")
    return _time(path, seconds, "fio's timestamp")


def _time(path: Path, seconds: float, what: str) -> datetime:
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (ValueError, OverflowError, OSError):
        raise SsdlabError(f"{path}: {what}, {seconds}, is not a date: the file was edited or damaged") from None


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _error_text(code: Any) -> str:
    if isinstance(code, int) and not isinstance(code, bool) and 0 < code < 4096:
        name = errno.errorcode.get(code)
        return f"{name} ({os.strerror(code)})" if name else f"error {code}"
    return f"error {code!r}"


def _hosts(entries: Iterable[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(f"{e.get('hostname')}:{e.get('port')}" for e in entries if e.get("hostname")))


def _host(hosts: list[str]) -> dict[str, Any]:
    if len(hosts) == 1:
        hostname, _, port = hosts[0].rpartition(":")
        return {"hostname": hostname, "port": port}
    return {"hostnames": ", ".join(hosts)} if hosts else {}


def _targets(jobs: list[_Entry]) -> list[str]:
    return list(dict.fromkeys(f for job in jobs if (f := job.options.get("filename"))))


def _is_device(target: str) -> bool:
    """A block device: /dev/... (each of fio's colon-separated names), or Windows' \\\\.\\ names."""
    return target.startswith("\\\\.\\") or all(part.startswith("/dev/") for part in target.split(":") if part)


def _disks(disk_util: Any) -> str:
    if not isinstance(disk_util, list):
        return ""
    return ", ".join(dict.fromkeys(str(d.get("name")) for d in disk_util if isinstance(d, dict) and d.get("name")))


def _warnings(printed: tuple[str, ...]) -> tuple[str, ...]:
    """fio's warnings and errors among the lines it printed beside its JSON."""
    found = [line for line in printed if line.startswith(("fio:", "note:", "warning:"))]
    return tuple(dict.fromkeys(found))[:MAX_PRINTED_NOTES]


def _written(setting: Setting) -> str:
    return setting.spelled if setting.value is None else f"{setting.spelled}={setting.value}"


def _storable(text: str) -> str:
    """`text` as UTF-8 can hold it (SQLite, a report's HTML, a CSV on standard output): the
    bytes of a file name that are not UTF-8, which Python hands over as lone surrogates,
    decoded again, and any other lone surrogate (a JSON escape such as \\ud800) as \\x escapes."""
    if _encodes(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")


def _without_surrogates(value: Any) -> Any:
    """fio's JSON with every string `_storable`: JSON may escape lone surrogates, fio never does."""
    if isinstance(value, str):
        return _storable(value)
    if isinstance(value, dict):
        return {_storable(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _drop_empty(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in (None, "")}

