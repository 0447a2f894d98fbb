"""Issue 30's target: a twin of the simulated Crucial P5 Plus fitted to its client-suite run
on this machine's cores, predicting its lab suite's fill-state figures, which the fit leaves
out. The drive's runs are made first (not timed); then `ssdlab fit` from the nearest other
built-in preset (its own choice), timed, with the fill-state tests held out. Prints the fit's
wall time and runs measured, each test's median error, the thermal parameters and the choices
(dies, planes, write buffer, firmware work) found, and the median error of the held-out
figures (each fill state's rate).

    .venv/bin/python benchmarks/twin_fit.py [--scale 1] [--db FILE] [--base PRESET]

--db keeps the drive's runs (and the fit's record beside the twin) between invocations: a
second invocation reuses the runs and resumes the fit. Exits non-zero when the fit takes
30 minutes or more, or the held-out figures' median error passes 15 %.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DRIVE = "sim:crucial-p5plus-1tb"
HELD_OUT = ("seq-write-states", "rand-write-states")
TIME_LIMIT_S, HELD_OUT_LIMIT = 30 * 60, 0.15


def cli(*args: object) -> str:
    return subprocess.run([sys.executable, "-m", "ssdlab", *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


def drive_runs(db: Path, scale: str) -> list[int]:
    """The client run and the lab fill-state run of the drive: those in `db`, else made."""
    runs = json.loads(cli("runs", "--json", "--db", db)) if db.exists() else []
    found = {r["suite"]: r["id"] for r in runs if r["status"] == "done" and str(r["scale"]) == str(float(scale))}
    for suite, tests in (("client", ()), ("lab", HELD_OUT)):
        if suite not in found:
            start = time.monotonic()
            cli("run", DRIVE, "--suite", suite, "--scale", scale, *(("--tests", ",".join(tests)) if tests else ()),
                "--db", db)
            print(f"the drive's {suite} run at scale {scale}: {time.monotonic() - start:.0f} s", flush=True)
            found[suite] = json.loads(cli("show", "latest", "--json", "--db", db))["run"]["id"]
    return [found["client"], found["lab"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--db", type=Path, help="keep the drive's runs here (default: a temporary directory)")
    parser.add_argument("--base", help="the twin's base preset (default: the fit's own choice)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssdlab-twin-bench-") as tmp:
        db = args.db or Path(tmp) / "ssdlab.db"
        runs = drive_runs(db, args.scale)
        twin = db.with_name(f"p5plus-twin-{args.scale}.toml")
        start = time.monotonic()
        report = json.loads(cli("fit", *runs, "-o", twin, "--hold-out", ",".join(HELD_OUT), "--json", "--db", db,
                                *(("--base", args.base) if args.base else ())))
        wall = time.monotonic() - start
    print(f"fit from {report['base']}: {wall:.0f} s, {report['evaluations']} runs measured, "
          f"fitted rates' RMS error {report['rms_error']:.1%}, temperatures' {report['rms_kelvin']:.2f} K")
    for t in report["tests"]:
        use = "held out" if t["held_out"] else "fitted"
        shown = (lambda e, sign="": f"{e:{sign}.2f} K") if t["unit"] == "°C" else (lambda e, sign="": f"{e:{sign}.1%}")
        print(f"  run {t['run']} {t['test']:22} {use:8} {t['figures']:3} {t['unit']:4} figures, median |error| "
              f"{shown(t['median_error'])}, largest {shown(t['largest_error'], '+')}")
    for p in report["parameters"]:
        if "thermal" in p["key"]:
            print(f"  {p['key']}: {p['value']:g} (base {p['base']:g}; 10 % moves a temperature {p['warms']:.2f} K; "
                  f"{'fitted' if p['determined'] else 'kept'})")
    for c in report["choices"]:
        others = ", ".join(f"{w['value']:g} {w['rates']:+.1%} {w['kelvin']:+.2f} K" for w in c["weighed"])
        print(f"  {c['key']}: {c['value']:g} (base {c['base']:g}; {'told' if c['determined'] else 'kept'}; "
              f"the others: {others})")
    held = [abs(e) for t in report["tests"] if t["held_out"] and t["unit"] == "MB/s" for e in t["errors"].values()]
    warm = [abs(e) for t in report["tests"] if t["held_out"] and t["unit"] == "°C" for e in t["errors"].values()]
    median = statistics.median(held)
    print(f"the cache: {report['cache']}")
    print(f"held-out fill-state figures ({len(held)}): median |error| {median:.1%} (limit {HELD_OUT_LIMIT:.0%}); "
          f"their temperatures ({len(warm)}): median |error| {statistics.median(warm) if warm else math.nan:.2f} K; "
          f"fit {wall / 60:.1f} min (limit {TIME_LIMIT_S / 60:.0f})")
    return 0 if wall < TIME_LIMIT_S and median <= HELD_OUT_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
