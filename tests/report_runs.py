"""Stored runs for the report and compare tests: real simulator runs of the quick
suite at a tiny scale, synthetic runs written through the Store API with
names and identities that carry HTML, and idle-wake runs of a drive that wakes from the
power state its idle reached."""

from __future__ import annotations

from pathlib import Path

from ssdlab.backends import StepOutcome
from ssdlab.catalogue import Scale, compile_tests, lookup
from ssdlab.execution import SilentReporter, execute
from ssdlab.model import Op, Phase
from ssdlab.store import Store
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.nvme import read_latency_tolerance
from ssdlab.telemetry.probe import Telemetry
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


class WakingDrive:
    """Timed reads of a drive that wakes from the power state its idle reached, with the
    seconds in each state among each fio run's device counters, as the simulator gives them.
    With APST on (the switch not 0) it falls to PS3 after 0.1 s and to PS4 2 s later (Linux's
    table for the SN850), whose wake-ups cost `exits_us`; with APST off it stays in PS0. A read
    takes 80 µs awake, and 0, 1 or 2 µs more in turn: a spread over the repetitions.
    Named fio: idle-wake needs a wall-clock engine until the simulator times reads itself."""

    name = "fio"
    LADDER = ((0, 0.0), (3, 0.1), (4, 2.1))  # state, idle (s) from which the drive is in it

    def __init__(self, switch: Path, exits_us: tuple[int, int] = (2000, 9000)):
        self.switch, self.exits_us = switch, dict(zip((3, 4), exits_us, strict=True))

    def describe(self) -> dict:
        return {"engine": "fio"}

    def run_step(self, step, progress=None) -> StepOutcome:
        return StepOutcome(result(bs=step.bs), ("fio job",))

    def run_timed_reads(self, step, thinktime_s, randseed):
        ladder = self.LADDER if read_latency_tolerance(self.switch) != "0" else self.LADDER[:1]
        reads = step.io_size // step.bs
        seconds = {f"ps{state}_s": 0.0 for state, _ in ladder}
        for k, (state, starts) in enumerate(ladder):
            ends = ladder[k + 1][1] if k + 1 < len(ladder) else float("inf")
            seconds[f"ps{state}_s"] = max(0.0, min(thinktime_s, ends) - starts) * (reads - 1)
        reached = max(state for state, starts in ladder if thinktime_s >= starts) if thinktime_s else 0
        exit_ns = self.exits_us.get(reached, 0) * 1000
        latencies = (80_000, *(80_000 + exit_ns + k % 3 * 1000 for k in range(1, reads)))  # the first follows start-up
        stored = result(bs=step.bs).model_copy(update={"device": seconds})
        return StepOutcome(stored, (f"fio job, thinktime {thinktime_s:g} s",)), latencies


def wake_run(db: Path, name: str, exits_us: tuple[int, int] = (2000, 9000)) -> int:
    """A finished idle-wake run of a WakingDrive, both policies, at scale 0.01 (3 repetitions)."""
    switch = db.parent / f"pm_qos_latency_tolerance_us-{name}"
    switch.write_text("100000\n")
    scale = Scale(0.01)
    with Store(db) as store:
        run_id = store.create_run(name=name, target="/dev/nvme0n1", target_kind="device", suite="power",
                                  suite_toml="", scale=scale.factor,
                                  tests=compile_tests(["idle-wake"], scale, CAPACITY),
                                  identity={"model": "SN850 stand-in"}, host={}, engine={"engine": "fio"},
                                  options={})
        execute(store, run_id, WakingDrive(switch, exits_us), SilentReporter(),
                RunTelemetry(Telemetry(apst_switch=switch)), scale)
    return run_id
