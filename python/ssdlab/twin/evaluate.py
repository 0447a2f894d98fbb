"""A candidate twin measured as the drive was: its preset run with each source run's tests,
scale and host, through the sweep machinery's runner (side by side on this machine's cores, or
on a Dask cluster's workers), in a database of its own that lives as long as the fit; each
test's figures kept in a file beside the twin (`EvaluationCache`), so that a fit stopped part
way and started again measures nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import tomlkit

from ssdlab.catalogue import Scale
from ssdlab.distributed.local import LocalRunner
from ssdlab.distributed.runner import RunJob, RunnerFor
from ssdlab.errors import SsdlabError
from ssdlab.execution import SilentReporter
from ssdlab.session import RunRequest
from ssdlab.store import Store
from ssdlab.suites import builtin_names as builtin_suites
from ssdlab.twin.figures import run_figures
from ssdlab.twin.sources import Source
from ssdlab.twin.space import ambient_key, source_of_ambient

Values = dict[str, float]  # preset key (from `drive.`) to value
Measured = dict[tuple[int, str, str], float]  # (source, test, figure name) to its value (figures.py)


def candidate_text(doc: tomlkit.TOMLDocument, values: Values) -> str:
    """The base document with `values` set."""
    changed = tomlkit.parse(tomlkit.dumps(doc))
    for key, value in values.items():
        if source_of_ambient(key) is not None:
            continue  # a run's condition
        table, leaf = table_of(changed, key)
        table[leaf] = value
    return tomlkit.dumps(changed)


def table_of(doc: Any, key: str) -> tuple[Any, str]:
    """The table that holds dotted `key` in `doc`, and the key's last part."""
    *path, leaf = key.split(".")
    table = doc
    for part in path:
        table = table[part]
    return table, leaf


class EvaluationCache:
    """Figures measured so far, by candidate, source run and test, kept in a JSON file (None:
    in memory). A test's figures are its own: each test of a run starts from a purged drive."""

    VERSION = 4  # 3: temperatures among the figures; 4: keys name the base and each run's conditions

    def __init__(self, path: Path | None):
        self.path = path
        self._found: dict[str, list[list[Any]]] = {}
        if path is not None and path.exists():
            try:
                doc = json.loads(path.read_text())
                version, self._found = doc.get("version"), doc["evaluations"]
            except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
                raise SsdlabError(f"{path} is not a fit's record ({exc}): remove it to start the fit anew") from None
            if version != self.VERSION:
                raise SsdlabError(f"{path} was written by another version of `ssdlab fit`: remove it to start the "
                                  "fit anew")

    def get(self, key: str) -> dict[str, float] | None:
        rows = self._found.get(key)
        return None if rows is None else {str(n): float(v) for n, v in rows}

    def put(self, found: dict[str, dict[str, float]]) -> None:
        for key, figures in found.items():
            self._found[key] = [[n, v] for n, v in sorted(figures.items())]
        if self.path is not None:
            partial = self.path.with_name(self.path.name + ".partial")
            partial.write_text(json.dumps({"version": self.VERSION, "evaluations": self._found}))
            partial.replace(self.path)  # whole, or as it was

    def __len__(self) -> int:
        return len(self._found)


class Evaluator:
    """Measures candidates of a twin (values over the base document) on the source runs' tests,
    through a runner of the sweep machinery (this machine's cores, or a Dask cluster's workers)."""

    def __init__(self, doc: tomlkit.TOMLDocument, sources: Sequence[Source], cache: EvaluationCache,
                 jobs: int | None = None, runner_for: RunnerFor = LocalRunner.planned):
        self.doc, self.sources, self.cache, self.jobs, self.runner_for = doc, list(sources), cache, jobs, runner_for
        self.measured_runs = 0
        self._base = hashlib.sha256(tomlkit.dumps(doc).encode()).hexdigest()
        self._conditions = [json.dumps(s.conditions(), default=str, sort_keys=True) for s in self.sources]
        self._dir = tempfile.TemporaryDirectory(prefix="ssdlab-fit-")

    def close(self) -> None:
        self._dir.cleanup()

    def key(self, values: Values, source: int, test: str) -> str:
        """What a candidate's figures of a test depend on, which names them in the record: the
        base document, the values over it, the source run's conditions and, where it holds
        temperatures, the tests before in its order (a fit of other runs, or from another base,
        into the same file measures its own)."""
        s = self.sources[source]
        run = s.tests[:s.tests.index(test) + 1] if s.warmed else (test,)
        named = json.dumps([self._base, sorted(values.items()), self._conditions[source], run])
        return hashlib.sha256(named.encode()).hexdigest()

    def measure(self, asked: Sequence[tuple[Values, Sequence[tuple[int, str]]]]) -> list[Measured]:
        """Each candidate's figures on its tests ((source, test id) pairs), the tests not yet
        measured run side by side: a run per candidate and source, the longest first. Where a
        source holds temperatures, its run has the tests before them too, in its order: a
        test's rates hardly depend on them (each starts from a purged drive), its temperatures
        do (each starts as warm as they left it)."""
        jobs, owners = [], []
        for values, tests in asked:
            missing = [(i, t) for i, t in dict.fromkeys(tests) if self.cache.get(self.key(values, i, t)) is None]
            if not missing:
                continue
            text = candidate_text(self.doc, values)
            for i, source in enumerate(self.sources):
                wanted = tuple(t for s, t in missing if s == i)
                if wanted and source.warmed:  # a test starts as warm as the tests before it left the drive
                    wanted = source.tests[:1 + max(source.tests.index(t) for t in wanted)]
                if wanted and (values, i, wanted) not in owners:
                    owners.append((values, i, wanted))
                    jobs.append(RunJob(self._request(source, text, wanted, len(jobs), values.get(ambient_key(i)))))
        if jobs:
            order = sorted(range(len(jobs)), key=lambda n: -self.sources[owners[n][1]].seconds(owners[n][2]))
            jobs, owners = [jobs[n] for n in order], [owners[n] for n in order]
            runner = self.runner_for(jobs, self.jobs)
            outcomes = runner.run(jobs, lambda request, run_id, tests_: SilentReporter())
            found: dict[str, dict[str, float]] = {}
            with Store.open_existing(jobs[0].request.db, readonly=True) as store:
                for (values, i, wanted), outcome in zip(owners, outcomes):
                    if outcome.error is not None:
                        raise SsdlabError(f"a candidate twin did not run: {outcome.error}")
                    for t in wanted:
                        found[self.key(values, i, t)] = {}
                    for f in run_figures(store, outcome.run_id, wanted):
                        found[self.key(values, i, f.test)][f.name] = f.value
            self.cache.put(found)
            self.measured_runs += len(jobs)
        measured = []
        for values, tests in asked:
            figures: Measured = {}
            for i, t in tests:
                for name, value in (self.cache.get(self.key(values, i, t)) or {}).items():
                    figures[(i, t, name)] = value
            measured.append(figures)
        return measured

    def _request(self, source: Source, text: str, tests: tuple[str, ...], n: int,
                 ambient_c: float | None) -> RunRequest:
        """Source `source`'s tests run on candidate `text`, as the source was measured (in
        `ambient_c` where its run did not record the air around the drive)."""
        conditions = source.conditions()
        if ambient_c is not None:
            conditions["ambient_c"] = ambient_c
        # the suite names the run and lists its tests, which the request lists itself: a
        # built-in one, which a cluster's workers have too
        suite = source.run.suite if source.run.suite in builtin_suites() else "client"
        request = RunRequest(target=f"sim:twin-candidate-{n}", suite=suite, tests=tests,
                             scale=Scale(conditions.pop("scale")), db=Path(self._dir.name) / "candidates.db",
                             preset_text=text)
        return replace(request, **conditions)
