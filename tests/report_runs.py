"""Stored runs for the report and compare tests: real simulator runs of the quick
suite at a tiny scale, and synthetic runs written through the Store API with
names and identities that carry HTML."""

from __future__ import annotations

from pathlib import Path

from ssdlab.catalogue import Scale, lookup
from ssdlab.model import Op, Phase
from ssdlab.store import Store
from tests.conftest import run_cli
from tests.factories import result

HOSTILE_NAME = "</script><script>alert(1)</script>"
HOSTILE_MODEL = '<img src=x onerror="alert(2)">'
CAPACITY = 1 << 36
# 12 GiB of SLC cache at 3000 MB/s, then 20 GiB native at 1000 MB/s.
FILL_CURVE = [(g, 3000.0 if g <= 12 else 1000.0) for g in range(1, 33)]


def sim_runs(db: Path) -> None:
    """Runs 1 and 2: the quick suite on two simulated drives, scale 0.02 (seconds)."""
    run_cli("run", "sim:wd-sn850-1tb", "--suite", "quick", "--scale", "0.02",
            "--name", HOSTILE_NAME, db=db)
    run_cli("run", "sim:generic-qlc-1tb", "--suite", "quick", "--scale", "0.02", db=db)


def _direction(rw: Op) -> str:
    return "trim" if rw is Op.TRIM else "write" if rw.writes and not rw.is_mixed else "read"


def synthetic_run(db: Path, test_ids: list[str], mbps: float = 100.0, name: str | None = None,
                  model: str = HOSTILE_MODEL, energy_j: float | None = None) -> int:
    """A finished run of the given catalogue tests at scale 0.01, every step at `mbps`
    (bs-scaled so block-size sweeps differ) and using `energy_j` joules, a fill with
    FILL_CURVE, with its scores from the catalogue."""
    tests = [lookup(t).compile(Scale(0.01), CAPACITY) for t in test_ids]
    with Store(db) as store:
        run_id = store.create_run(
            name=name, target="/dev/fake0", target_kind="device", suite="custom", suite_toml="",
            scale=0.01, tests=tests, identity={"model": model, "serial": "S123",
                                               "capacity_bytes": CAPACITY},
            host={"kernel": "6.1"}, engine={"engine": "fio", "fio_version": "fio-3.33",
                                            "ioengine": "libaio"}, options={})
        for seq, test in enumerate(tests):
            store.start_test(run_id, seq)
            measured = []
            for idx, step in enumerate(test.steps):
                res = result(mbps=mbps * (1 + step.bs / 2**20), bs=step.bs,
                             direction=_direction(step.rw),
                             per_gib=FILL_CURVE if step.per_gib_series else ()
                             ).model_copy(update={"energy_j": energy_j})
                store.save_step(run_id, seq, idx, step, res, ())
                if step.phase is Phase.MEASURE:
                    measured.append((step, res))
            store.finish_test(run_id, seq, lookup(test.id).score(measured))
    return run_id
