"""The harness adds nothing: ssdlab's fio backend against a raw fio run of the same job.

    .venv/bin/python benchmarks/harness_overhead.py [--rounds 30] [--seconds 4] [--dir /var/tmp]
                                                    [--sampler [--hwmon DIR]]

For each job (4 KiB random read at QD1 and QD4 over a 1 GiB file), runs raw
`fio --output-format=json` on the job as a user would write it (ssdlab's job
text without its bandwidth log) and ssdlab's FioBackend.run_step, bracketed:
raw fio, ssdlab, raw fio again, for several rounds, so a drift of the shared
disk (10 % and more between runs) hits both alike. Prints every round, then per
figure the median of each side and their difference (the verdict: within 3 %),
a bootstrap 95 % interval of that difference over the rounds, and the noise
floor: the median difference between the two raw runs of a round. Exits
non-zero when a difference of medians is beyond 3 %.

With --sampler, ssdlab's side runs as a run does with telemetry: the temperature sampler
reads an hwmon chip beside every run (the chip of --hwmon, such as
/sys/class/nvme/nvme0/hwmon2; else a fake chip in the work directory, which measures
the sampler's own cost but not the drive's answer to a real chip's Get Log Page), and the
verdict is 1 %, the issue's bound for the sampler. The sampler's own CPU is also measured
directly (its readings timed in batches, times its rate); where the rounds' noise floor
is above 1 %, as on a shared virtual disk, that direct figure is the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ssdlab.backends.fio import FioBackend
from ssdlab.backends.fio.jobfile import Invocation, job_text
from ssdlab.model import Op, Step
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.probe import Telemetry
from ssdlab.telemetry.sampler import DEFAULT_TEMPERATURE_PERIOD_S, MAX_TEMPERATURE_PERIOD_S
from ssdlab.units import GiB, MiB

TOLERANCE = 0.03
SAMPLER_TOLERANCE = 0.01
SAMPLER_BATCH = 2000  # readings timed together: the process clock ticks far coarser than one
HARNESS_ONLY = ("write_bw_log=", "log_avg_msec=")


def raw_fio(step: Step, path: Path, engine: str, work: Path) -> tuple[float, float]:
    text = job_text(step, path, engine, Invocation.for_burst(step, 0), work / "unused")
    plain = "".join(line + "\n" for line in text.splitlines() if not line.startswith(HARNESS_ONLY))
    job = work / "raw.fio"
    job.write_text(plain)
    out = subprocess.run(["fio", "--output-format=json", str(job)], check=True,
                         capture_output=True, text=True).stdout
    read = json.loads(out)["jobs"][0]["read"]
    return read["iops"], read["clat_ns"]["percentile"]["99.000000"] / 1e3


def difference_of_medians(figures: np.ndarray) -> tuple[float, float, float]:
    """Rows are rounds of (raw fio, ssdlab, raw fio): both medians and ssdlab's relative difference."""
    raw = float(np.median(figures[:, [0, 2]]))
    mine = float(np.median(figures[:, 1]))
    return raw, mine, mine / raw - 1


def bootstrap_interval(figures: np.ndarray, resamples: int = 5000) -> tuple[float, float]:
    """95 % interval of the difference of medians, resampling whole rounds."""
    rng = np.random.default_rng(1)
    picks = rng.integers(0, len(figures), size=(resamples, len(figures)))
    diffs = [difference_of_medians(figures[p])[2] for p in picks]
    return float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))


def comparison(name: str, figures: np.ndarray, unit: str) -> tuple[str, float, float]:
    """One figure's rounds of (raw fio, ssdlab, raw fio) told in a line: both medians, their
    difference with its 95 % interval, and the noise floor (raw fio against raw fio in a
    round); with the difference and the noise floor."""
    raw, mine, diff = difference_of_medians(figures)
    low, high = bootstrap_interval(figures)
    noise = float(np.median(np.abs(figures[:, 2] / figures[:, 0] - 1)))
    line = (f"  {name}: median raw fio {raw:.1f}{unit}, ssdlab {mine:.1f}{unit}: {diff * 100:+.2f} % "
            f"(95 % interval {low * 100:+.2f} to {high * 100:+.2f} %); "
            f"noise floor (raw vs raw in a round) {noise * 100:.2f} %")
    return line, diff, noise


def harness(backend: FioBackend, step: Step, telemetry: RunTelemetry | None) -> tuple[float, float]:
    if telemetry is None:
        r = backend.run_step(step).result
    else:
        with telemetry.watching_step():
            outcome = backend.run_step(step)
        r, beside = telemetry.step_result(outcome.result)
        assert beside.temperature is not None, telemetry.take_notes()
    return r.read.iops, r.read.latency.p99_ns / 1e3


def fake_chip(work: Path) -> Path:
    chip = work / "hwmon0"
    chip.mkdir()
    (chip / "name").write_text("nvme\n")
    (chip / "temp1_input").write_text("41850\n")
    return chip


def sampler_cost(probed: Telemetry, tolerance: float) -> float:
    """The sampler's own CPU, measured directly (a bound the end-to-end rounds cannot give
    below their noise floor): the process CPU time of its readings, the median of batches,
    times the readings per second, as a share of one CPU."""
    period_s = DEFAULT_TEMPERATURE_PERIOD_S if probed.hwmon_chip else MAX_TEMPERATURE_PERIOD_S
    batches = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(SAMPLER_BATCH):
            probed.temperature_c()
        batches.append((time.process_time() - start) / SAMPLER_BATCH)
    per_reading_s = float(np.median(batches))
    share = per_reading_s / period_s
    print(f"sampler: {per_reading_s * 1e6:.1f} us of CPU per reading ({probed.temperature_source}), "
          f"one every {period_s:g} s: {share * 100:.4f} % of one CPU "
          f"({'within' if share <= tolerance else 'ABOVE'} {tolerance:.0%})")
    return share


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--sampler", action="store_true", help="sample temperature beside ssdlab's runs")
    parser.add_argument("--hwmon", type=Path, help="with --sampler: the nvme hwmon chip to read")
    args = parser.parse_args()
    tolerance = SAMPLER_TOLERANCE if args.sampler else TOLERANCE
    work = Path(tempfile.mkdtemp(prefix="ssdlab-overhead-", dir=args.dir))
    try:
        target = work / "target.img"
        with open(target, "wb") as f:
            for _ in range(GiB // (64 * MiB)):
                f.write(os.urandom(64 * MiB))
        telemetry = RunTelemetry(Telemetry(hwmon_chip=args.hwmon or fake_chip(work))) if args.sampler else None
        backend = FioBackend(target, "file", purge=lambda: (), sleep=telemetry.idle if telemetry else time.sleep,
                             io_window=telemetry.io_window if telemetry else None)
        engine = backend.ioengine
        failed = False
        if telemetry is not None:
            failed |= sampler_cost(telemetry.probed, SAMPLER_TOLERANCE) > SAMPLER_TOLERANCE
        for qd in (1, 4):
            step = Step(label=f"QD{qd}", rw=Op.RANDREAD, bs=4096, iodepth=qd, size=GiB,
                        runtime=args.seconds, io_size=64 * GiB)
            rounds = []
            print(f"4 KiB random read QD{qd}, {args.seconds:g} s per run, {engine}"
                  + (", temperature sampled" if telemetry else ""))
            raw_fio(step, target, engine, work)  # warm-up: the first runs on a new file are slower
            harness(backend, step, telemetry)
            for round_ in range(1, args.rounds + 1):
                before = raw_fio(step, target, engine, work)
                ours = harness(backend, step, telemetry)
                after = raw_fio(step, target, engine, work)
                rounds.append((before, ours, after))
                print(f"  round {round_:2}: raw fio {before[0]:7.0f} IOPS p99 {before[1]:6.1f} us | "
                      f"ssdlab {ours[0]:7.0f} IOPS p99 {ours[1]:6.1f} us | "
                      f"raw fio {after[0]:7.0f} IOPS p99 {after[1]:6.1f} us")
            for name, i, unit in (("IOPS", 0, ""), ("p99", 1, " us")):
                figures = np.array([[before[i], ours[i], after[i]] for before, ours, after in rounds])
                line, diff, noise = comparison(name, figures, unit)
                # a bound below the disk's own wander cannot be judged from these rounds
                resolvable = noise <= tolerance or not args.sampler
                failed |= resolvable and abs(diff) > tolerance
                print(line
                      + ("" if resolvable else f": cannot resolve {tolerance:.0%} here, the sampler's own cost "
                                               "above is the verdict"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"within {tolerance:.0%}" if not failed else f"DIFFERENCE ABOVE {tolerance:.0%}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
