"""Prepared traces kept between runs: a trace is parsed and fitted once per file, fit and
target size, however many drives, states and runs replay it.

Where: $SSDLAB_TRACE_CACHE, else $XDG_CACHE_HOME/ssdlab/traces (~/.cache/ssdlab/traces). Each
prepared trace is KEY.trace (prepared.py) beside KEY.json (its fit.Prepared), the key a hash
of what made it: the trace file's path, size and modification time and its format (a built-in
trace's figures, scale and seed), the fit and the target's size. Both are written under
temporary names and renamed, so a run that stops while preparing leaves nothing half written
that a later run could take.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.traces import prepared, synthetic
from ssdlab.traces.fit import Fit, Prepared
from ssdlab.traces.fitting import prepare, prepare_records
from ssdlab.traces.reader import Trace

VERSION = 1  # of the preparation: a change that alters prepared records bumps it


def directory() -> Path:
    if explicit := os.environ.get("SSDLAB_TRACE_CACHE"):
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ssdlab" / "traces"


def prepared_trace(path: Path, format_name: str | None, fit: Fit, target_bytes: int,
                   progress: Callable[[float], None] | None = None) -> Prepared:
    """The trace at `path` fitted to a target of `target_bytes`: from the cache, or prepared now."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise SsdlabError(f"trace {path}: {exc.strerror or exc}: give a trace file that exists") from None
    identity = {"file": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
                "format": format_name}
    return _cached(identity, fit, target_bytes,
                   lambda out: prepare(Trace(path, format_name), fit, target_bytes, out, progress))


def prepared_builtin(name: str, scale: float, fit: Fit, target_bytes: int) -> Prepared:
    """The built-in synthetic trace `name` (traces/synthetic.py) at `scale`, fitted to a target of
    `target_bytes`: from the cache, or generated now (its default seed: the same trace each time)."""
    spec = synthetic.builtin(name)
    generator = synthetic.Generator(spec, scale)
    identity = {"builtin": spec.model_dump(mode="json"), "scale": generator.scale, "seed": generator.seed,
                "numpy": np.__version__}  # the same seed draws the same trace with the same numpy
    source = f"{name}, synthetic, scale {generator.scale:g}, seed {generator.seed}"
    return _cached(identity, fit, target_bytes,
                   lambda out: prepare_records(generator.chunks(), source, fit, target_bytes, out))


def _cached(identity: dict, fit: Fit, target_bytes: int, make: Callable[[Path], Prepared]) -> Prepared:
    """The prepared trace of `identity`, `fit` and `target_bytes` kept earlier, or `make`'s, kept now."""
    made_of = {"version": VERSION, **identity, "fit": fit.model_dump(mode="json"), "target_bytes": target_bytes}
    key = hashlib.sha256(json.dumps(made_of, sort_keys=True).encode()).hexdigest()[:32]
    home = directory()
    data = home / f"{key}.trace"
    meta = Prepared.beside(data)
    if found := _kept(data):
        return found
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SsdlabError(f"cannot keep prepared traces in {home}: {exc.strerror or exc}; "
                          "set SSDLAB_TRACE_CACHE to a writable directory") from None
    partial = data.with_name(f"{data.name}.{os.getpid()}.part")
    meta_partial = meta.with_name(f"{meta.name}.{os.getpid()}.part")
    try:
        made = make(partial).model_copy(update={"path": str(data)})
        meta_partial.write_text(made.model_dump_json())
        partial.replace(data)
        meta_partial.replace(meta)
    finally:
        partial.unlink(missing_ok=True)
        meta_partial.unlink(missing_ok=True)
    return made


def _kept(data: Path) -> Prepared | None:
    """A prepared trace kept earlier, if both its files are there and agree."""
    found = Prepared.of(data)
    try:
        return found if found is not None and prepared.records(data) == found.records else None
    except (OSError, SsdlabError):
        return None
