"""A sweep's tables (migration 8), part of the Store: the sweep, and its variants with the run
each one made. A sweep and all its variants are committed together, before any run, so a
sweep is never half stored; each variant gets its run's id as soon as the run exists.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import SsdlabError
from ssdlab.store import records
from ssdlab.store.failures import translating_errors
from ssdlab.store.records import OVERRIDES, SWEEP_OPTIONS, SWEEP_SPEC
from ssdlab.store.sql import write_transaction


@dataclass(frozen=True)
class SweepRecord:
    id: int
    base: str  # the base preset as given
    base_toml: str
    suite: str
    spec: dict[str, Any]
    options: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class VariantRecord:
    idx: int
    name: str
    overrides: dict[str, Any]
    run_id: int | None  # None until its run is made


@translating_errors
class SweepTables:
    """The Store's methods for sweeps (the Store mixes them in: its connection and path)."""

    path: Path
    _conn: sqlite3.Connection

    def create_sweep(self, *, base: str, base_toml: str, suite: str, spec: dict[str, Any],
                     options: dict[str, Any], variants: list[tuple[str, dict[str, Any]]]) -> int:
        """The sweep and its variants, (name, overrides) in order, in one transaction."""
        from ssdlab.store import now  # the store's clock (the package imports this module)
        with write_transaction(self._conn) as db:
            sweep_id = db.execute(
                "INSERT INTO sweeps (base, base_toml, suite, spec, options, created_at) VALUES (?,?,?,?,?,?)",
                (base, base_toml, suite, records.dump(SWEEP_SPEC, spec), records.dump(SWEEP_OPTIONS, options),
                 now())).lastrowid
            db.executemany("INSERT INTO sweep_variants (sweep_id, idx, name, overrides) VALUES (?,?,?,?)",
                           [(sweep_id, idx, name, records.dump(OVERRIDES, {"overrides": overrides}))
                            for idx, (name, overrides) in enumerate(variants)])
        return sweep_id

    def sweep(self, sweep_id: int) -> SweepRecord:
        row = self._conn.execute("SELECT id, base, base_toml, suite, spec, options, created_at FROM sweeps"
                                 " WHERE id = ?", (sweep_id,)).fetchone()
        if row is None:
            raise SsdlabError(f"there is no sweep {sweep_id} in {self.path}: `ssdlab sweeps` lists them")
        return _sweep(row)

    def sweeps(self) -> list[SweepRecord]:
        return [_sweep(row) for row in self._conn.execute(
            "SELECT id, base, base_toml, suite, spec, options, created_at FROM sweeps ORDER BY id")]

    def sweep_variants(self, sweep_id: int) -> list[VariantRecord]:
        rows = self._conn.execute("SELECT idx, name, overrides, run_id FROM sweep_variants WHERE sweep_id = ?"
                                  " ORDER BY idx", (sweep_id,)).fetchall()
        return [VariantRecord(idx, name, records.load(OVERRIDES, overrides)["overrides"], run_id)
                for idx, name, overrides, run_id in rows]

    def set_variant_run(self, sweep_id: int, idx: int, run_id: int) -> None:
        with write_transaction(self._conn) as db:
            db.execute("UPDATE sweep_variants SET run_id = ? WHERE sweep_id = ? AND idx = ?", (run_id, sweep_id, idx))

    def resolve_sweep_id(self, text: str) -> int:
        """A sweep id as the user wrote it: a number, or `latest`."""
        if text == "latest":
            found = self._conn.execute("SELECT max(id) FROM sweeps").fetchone()[0]
            if found is None:
                raise SsdlabError(f"there are no sweeps in {self.path} yet: start one with `ssdlab sweep`")
            return found
        if not (text.isascii() and text.isdigit() and int(text) < 2**63):
            raise SsdlabError(f"{text!r} is not a sweep id: give a number from `ssdlab sweeps`, or `latest`")
        return int(text)


def _sweep(row: tuple) -> SweepRecord:
    sweep_id, base, base_toml, suite, spec, options, created_at = row
    return SweepRecord(sweep_id, base, base_toml, suite, records.load(SWEEP_SPEC, spec),
                       records.load(SWEEP_OPTIONS, options), created_at)
