"""A candidate twin measured as the drive was: its preset run with each source run's suite,
tests, scale and host, side by side on this machine's cores (the sweep machinery's runner,
distributed/local.py), in a database of its own that lives as long as the fit; the figures
each run gives, kept in a file beside the twin (`EvaluationCache`) so that a fit stopped
part way and started again measures nothing twice.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import tomlkit

from ssdlab.catalogue import Scale
from ssdlab.distributed.local import LocalRunner
from ssdlab.distributed.runner import RunJob
from ssdlab.errors import SsdlabError
from ssdlab.execution import SilentReporter
from ssdlab.session import RunRequest
from ssdlab.store import Store
from ssdlab.twin.figures import run_figures
from ssdlab.twin.sources import Source

Values = dict[str, float]  # preset key (from `drive.`) to value
Measured = dict[tuple[int, str, str], float]  # (source, test, figure name) to MB/s


def candidate_text(doc: tomlkit.TOMLDocument, values: Values) -> str:
    """The base document with `values` set."""
    changed = tomlkit.parse(tomlkit.dumps(doc))
    for key, value in values.items():
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
    """Figures measured so far, by candidate and tests, kept in a JSON file (None: in memory)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._found: dict[str, list[list[Any]]] = {}
        if path is not None and path.exists():
            try:
                self._found = json.loads(path.read_text())["evaluations"]
            except (ValueError, KeyError, TypeError, OSError) as exc:
                raise SsdlabError(f"{path} is not a fit's record ({exc}): remove it to start the fit anew") from None

    @staticmethod
    def key(values: Values, tests: Sequence[tuple[int, str]]) -> str:
        return json.dumps([sorted(values.items()), sorted(tests)])

    def get(self, key: str) -> Measured | None:
        rows = self._found.get(key)
        return None if rows is None else {(int(s), t, n): float(v) for s, t, n, v in rows}

    def put(self, key: str, measured: Measured) -> None:
        self._found[key] = [[s, t, n, v] for (s, t, n), v in sorted(measured.items())]
        if self.path is not None:
            partial = self.path.with_name(self.path.name + ".partial")
            partial.write_text(json.dumps({"evaluations": self._found}))
            partial.replace(self.path)  # whole, or as it was

    def __len__(self) -> int:
        return len(self._found)


class Evaluator:
    """Measures candidates of a twin (values over the base document) on the source runs' tests."""

    def __init__(self, doc: tomlkit.TOMLDocument, sources: Sequence[Source], cache: EvaluationCache,
                 jobs: int | None = None):
        self.doc, self.sources, self.cache, self.jobs = doc, list(sources), cache, jobs
        self.measured_runs = 0
        self._dir = tempfile.TemporaryDirectory(prefix="ssdlab-fit-")
        self._suites = [self._suite_file(i, s) for i, s in enumerate(self.sources)]

    def close(self) -> None:
        self._dir.cleanup()

    def measure(self, candidates: Sequence[Values], tests: Sequence[tuple[int, str]]) -> list[Measured]:
        """Each candidate's figures on `tests` ((source, test id) pairs), measured side by side."""
        keys = [EvaluationCache.key(values, tests) for values in candidates]
        missing = {k: values for k, values in zip(keys, candidates) if self.cache.get(k) is None}
        jobs, owners = [], []
        for k, values in missing.items():
            text = candidate_text(self.doc, values)
            for i, source in enumerate(self.sources):
                wanted = tuple(t for s, t in tests if s == i)
                if wanted:
                    jobs.append(RunJob(self._request(i, source, text, wanted, len(jobs))))
                    owners.append((k, i, wanted))
        if jobs:
            runner = LocalRunner.planned(jobs, self.jobs)
            outcomes = runner.run(jobs, lambda request, run_id, tests_: SilentReporter())
            found: dict[str, Measured] = {k: {} for k in missing}
            with Store.open_existing(jobs[0].request.db, readonly=True) as store:
                for (k, i, wanted), outcome in zip(owners, outcomes):
                    if outcome.error is not None:
                        raise SsdlabError(f"a candidate twin did not run: {outcome.error}")
                    for f in run_figures(store, outcome.run_id, wanted):
                        found[k][(i, f.test, f.name)] = f.mbps
            for k, measured in found.items():
                self.cache.put(k, measured)
            self.measured_runs += len(jobs)
        return [self.cache.get(k) or {} for k in keys]

    def _request(self, i: int, source: Source, text: str, tests: tuple[str, ...], n: int) -> RunRequest:
        conditions = source.conditions()
        request = RunRequest(target=f"sim:twin-candidate-{n}", suite=str(self._suites[i]), tests=tests,
                             scale=Scale(conditions.pop("scale")), db=Path(self._dir.name) / "candidates.db",
                             preset_text=text)
        return replace(request, **conditions)

    def _suite_file(self, i: int, source: Source) -> Path:
        path = Path(self._dir.name) / f"suite-{i}.toml"
        path.write_text(source.suite_toml)
        return path
