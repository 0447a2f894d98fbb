"""Feed mutated inputs through the real `ssdlab` command line and count what goes wrong.

    .venv/bin/python scripts/fuzz_cli.py [--seed 1] [--inputs 1000] [--jobs 2]
                                         [--timeout 60] [--memory-gib 4] [--out fuzz-failures]
    .venv/bin/python scripts/fuzz_cli.py --replay fuzz-failures/0042-jobfile

Each input is one case: a few files (a suite, a preset, a fio job file, a fill CSV, a
block trace, fio's JSON output) and one to five commands, each run as `python -m ssdlab ...` in the case's own
directory, under a memory limit and a timeout. The inputs are mutations of real
ones (python/ssdlab/suites/*.toml, drives/*.toml, tests/golden/fio/*.fio, job
files, fill curves and a trace per format written here, the real fio outputs of
tests/golden/fio_json imported with `import fio-json` and read back, run names, sizes, scales, run
ids, test lists, the endurance test's volumes, probes and workloads, the trace test's traces
and options, sweeps' keys, values, ranges, variants files and sweep ids): byte flips,
truncation, bytes that are not UTF-8, a byte-order mark, huge, negative, zero, NaN and
infinite numbers, control characters, duplicated, removed and swapped lines (so
duplicated and missing keys). Everything is drawn from --seed before anything runs, so
a seed names the same inputs on every machine, whatever --jobs is.

A command fails the fuzz when its standard error holds a Python traceback or a
Rust panic, when a signal ends it (an abort: SIGABRT, SIGSEGV...), when it runs
past the timeout, when it runs out of memory (MemoryError, or Rust's "memory
allocation ... failed"), or when its message is pydantic's raw text. A non-zero
exit status with a plain message is a success: the input was bad and said so.
The totals are printed, and every failing case is saved to --out with a
case.json that --replay runs again; the exit status is 1 when any case failed.

The memory limit is RLIMIT_AS (address space) for every command except those
that export charts, which get RLIMIT_DATA (memory written): vl-convert's V8
reserves some 64 GiB of address space that it never touches. 4 GiB by default:
a 1 TB preset's mapping table takes 1 GiB, and such a run peaks at 2.4 GiB of
address space.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_PRESET = ROOT / "tests" / "data" / "small-tlc.toml"
FIO_JSON = ROOT / "tests" / "golden" / "fio_json"
SMALL_SIM = f"sim:{SMALL_PRESET}"
FAILURE_KINDS = ("traceback", "panic", "abort", "timeout", "oom", "pydantic")

Argv = list[bytes]


@dataclass
class Case:
    kind: str
    commands: list[Argv]                          # after `python -m ssdlab`, run in order
    files: dict[str, bytes] = field(default_factory=dict)
    needs_runs: bool = False                      # a copy of the database with two runs and a sweep
    # damage done to that copy: (where, as a share of its length; bytes overwritten, 0 to
    # cut it there; seed of the bytes written)
    damage: list[tuple[float, int, int]] = field(default_factory=list)


@dataclass
class Outcome:
    index: int
    case: Case
    statuses: list[int | None]                    # None: timed out
    failures: set[str]
    stderr: str
    seconds: float


# -- mutations --------------------------------------------------------------------------

ODD_NUMBERS = [b"0", b"-1", b"-4096", b"1", b"99999999999999999999999", b"18446744073709551616",
               b"4294967295", b"9223372036854775808", b"1e308", b"-1e308", b"1e-300", b"nan",
               b"inf", b"-inf", b"0.5", b"-0", b"9" * 80, b"0x10", b"1_000"]
CONTROL = [b"\x1b[31m", b"\x1b]0;title\x07", b"\x00", b"\x07", b"\r", b"\x08", b"\xe2\x80\xae",
           b"\xef\xbf\xbe", b"\x7f", b"[bold]", b"[/]", b"\t"]
NOT_UTF8 = [b"\xff", b"\xfe", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\x80", b"\xc0\xaf"]
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def flip_byte(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    at = rng.randrange(len(data))
    return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def insert(rng: random.Random, data: bytes, pieces: list[bytes]) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(pieces) + data[at:]


def add_bom(rng: random.Random, data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def odd_number(rng: random.Random, data: bytes) -> bytes:
    """A number of the input replaced by one at an edge: huge, negative, zero, NaN..."""
    numbers = list(NUMBER.finditer(data))
    if not numbers:
        return insert(rng, data, ODD_NUMBERS)
    m = rng.choice(numbers)
    return data[:m.start()] + rng.choice(ODD_NUMBERS) + data[m.end():]


def line_edit(rng: random.Random, data: bytes) -> bytes:
    """A line duplicated (a key given twice), removed (a key missing) or moved."""
    lines = data.split(b"\n")
    at = rng.randrange(len(lines))
    action = rng.choice(("duplicate", "remove", "swap"))
    if action == "duplicate":
        lines.insert(rng.randrange(len(lines) + 1), lines[at])
    elif action == "remove":
        del lines[at]
    else:
        other = rng.randrange(len(lines))
        lines[at], lines[other] = lines[other], lines[at]
    return b"\n".join(lines)


MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    flip_byte, truncate, add_bom, odd_number, odd_number, line_edit, line_edit,
    lambda rng, data: insert(rng, data, CONTROL),
    lambda rng, data: insert(rng, data, NOT_UTF8),
]


def mutate(rng: random.Random, data: bytes) -> bytes:
    for _ in range(rng.choice((1, 1, 2, 3))):
        data = rng.choice(MUTATIONS)(rng, data)
    return data


def argument(rng: random.Random, seeds: list[bytes]) -> bytes:
    """A mutated command-line value; a NUL cannot be passed in argv, so none is."""
    return mutate(rng, rng.choice(seeds)).replace(b"\x00", b"")


# -- seeds ------------------------------------------------------------------------------

# fio options the simulator does not read, removed from the golden job files for a seed
# that gets past the parser to the values.
FIO_ONLY = re.compile(rb"^(rate_iops|randseed|percentile_list|write_bw_log|log_avg_msec)=.*\n?",
                      re.MULTILINE)
OWN_JOBS = [
    (b"[global]\nbs=4k\nsize=8m\n[seq]\nrw=write\nbs=128k\niodepth=32\n[rand]\nrw=randread\n"
     b"iodepth=4\nio_size=4m\n"),
    b"[mix]\nrw=randrw\nrwmixread=70\nbs=4k\nsize=16m\nio_size=2m\niodepth=8\n",
    b"[think]\nrw=randwrite\nsize=4m\nio_size=1m\nthinktime=200\nthinktime_blocks=16\n",
    b"[timed]\nrw=randread\nsize=10%\nruntime=50ms\ntime_based\niodepth=16\n",
    b"[trim]\nrw=trim\nbs=1m\noffset=1g\nsize=64m\n[after]\nrw=read\noffset=1g\nsize=8m\n",
    b"[wmix]\nreadwrite=rw\nrwmixwrite=30\nblocksize=64k\nsize=32m\nio_limit=8m\n",
    (b"[global]\nsize=16m\nio_size=2m\n[a]\nrw=randrw\nnumjobs=3\nbssplit=4k/60:64k/40\nba=4k\n"
     b"random_distribution=zoned:60/10:40/90\ngroup_reporting\n[b]\nrw=read:-8k\nflow=2\n"),
    b"[v]\nrw=randwrite\nsize=4m\nverify=crc32c\niodepth=8\nioengine=libaio\nwrite_bw_log=v\n",
    b"[ss]\nrw=randread\nsize=16m\nruntime=4\ntime_based\nss=iops_slope:1%\nss_dur=2\nss_ramp=1\n",
    b"[t]\nrw=trimwrite\nsize=8m\nrate_iops=20000\n[z]\nstonewall\nrw=randread\nsize=8m\n"
    b"random_distribution=zipf:1.2\nio_size=1m\n",
]
FILL_CSV = b"gib,mbps\n" + b"".join(
    b"%d,%.1f\n" % (g, 3000.0 if g <= 6 else 900.0 if g <= 24 else 600.0) for g in range(1, 33))
NAMES = [b"baseline", b"\x1b[31mred\x1b[0m", b"[bold]not bold[/]", b"caf\xc3\xa9 \xe2\x80\xae",
         b"a" * 300, b"", b" ", b"\xff\xfe", b"line\nbreak", b"</script>"]
SIZES = [b"1GiB", b"64m", b"4k", b"1.5 TB", b"512", b"0", b"99999999999999999999TB", b"-1G"]
SCALES = [b"0.001", b"0.01", b"1", b"0", b"-1", b"nan", b"inf", b"1e-300", b"2", b"0.0"]
RUN_IDS = [b"1", b"2", b"latest", b"0", b"99999999999999999999999", b"\xd9\xa3", b"\xe2\x91\xa0"]
TEST_LISTS = [b"seq-read-burst", b"seq-read-burst,rand-read-burst", b",", b"a,a",
              b"seq-read-burst,,seq-read-burst", b"nope", b" seq-read-burst , trim "]
DRIVES = [b"wd-sn850-1tb", b"generic-qlc-1tb", str(SMALL_PRESET).encode(), b"nope", b"./x.toml"]
# A second target beside SMALL_SIM (side by side), and how many run at once.
SECOND_TARGETS = [SMALL_SIM.encode(), b"sim:nope", b"sim:", b"d.img", b"/dev/null", b"sim:./x.toml"]
JOBS = [b"1", b"2", b"0", b"-1", b"65", b"99999999999999999999", b"two"]
VOLUMES = [b"1TB", b"100%", b"0.5tb", b"0TB", b"-1TB", b"1e400TB", b"nan%", b"600", b"1001%", b"2e6TB"]
PROBES = [b"1", b"10", b"0", b"-3", b"1001", b"ten", b"99999999999999999999"]
WORKLOADS = [b"seq", b"random", b"jesd219", b"JESD219", b"zipf", b""]
# The trace test's options, each with values to mutate (catalogue/trace.py)
TRACE_OPTIONS = {b"--idle-cap-ms": [b"25", b"0", b"-1", b"nan", b"1e12", b"0.001"],
                 b"--trace-fit": [b"wrap", b"scale", b"fold", b""],
                 b"--trace-block": [b"4096", b"512", b"3000", b"0", b"-4096", b"1048576", b"2097152"],
                 b"--trace-qd": [b"1", b"1023", b"0", b"4097", b"-1"],
                 b"--trace-speed": [b"1", b"2", b"0", b"1e9", b"nan", b"-1", b"0.001"],
                 b"--trace-device": [b"0", b"usr_0", b"", b"\xff"],
                 b"--trace-format": [b"alibaba", b"msr", b"blktrace", b"nope"]}
# One trace per format (docs/traces.md), to mutate: MSR, Alibaba, SYSTOR '17, Tencent, fio
# iolog v3, named columns, and a real blktrace capture (its two per-CPU files; the first
# alone in TRACES).
BLKTRACE = [(ROOT / "tests" / "traces" / "data" / f"loop512.blktrace.{cpu}").read_bytes() for cpu in (0, 1)]
TRACES = [BLKTRACE[0],
          b"128166372003061629,usr,0,Read,3968475136,4096,1135\n128166372003061634,usr,0,Write,8192,65536,40\n",
          b"0,R,126703644672,4096,1577808000000626\n0,W,126703648768,16384,1577808000000700\n",
          b"Timestamp,Response,IOType,LUN,Offset,Size\n1456135200.013118000,0.000806000,R,4,899056122368,131072\n",
          b"1538323200,2008,8,1,1283\n1538323201,16,8,0,77\n",
          b"fio version 3 iolog\n1 /d add\n2 /d open\n120 /d write 61440 4096\n200 /d read 0 4096\n300 /d close\n",
          b"offset,length,time_us,op\n0,4096,1,read\n4096,8192,20,write\n"]


@dataclass(frozen=True)
class Seeds:
    suites: list[bytes]
    presets: list[bytes]
    jobs: list[bytes]
    fio_outputs: list[bytes]

    @classmethod
    def from_repository(cls) -> Seeds:
        golden = [p.read_bytes() for p in sorted((ROOT / "tests" / "golden" / "fio").glob("*.fio"))]
        return cls(
            suites=[p.read_bytes() for p in sorted((ROOT / "python" / "ssdlab" / "suites").glob("*.toml"))],
            presets=[p.read_bytes() for p in sorted((ROOT / "drives").glob("*.toml"))]
            + [SMALL_PRESET.read_bytes()],
            jobs=golden + [FIO_ONLY.sub(b"", g) for g in golden] + OWN_JOBS,
            fio_outputs=[p.read_bytes() for p in sorted(FIO_JSON.rglob("*")) if p.suffix in (".json", ".txt")])


# -- cases --------------------------------------------------------------------------------

def db(*argv: bytes) -> Argv:
    return [*argv, b"--db", b"ssdlab.db"]


def suite_case(rng: random.Random, seeds: Seeds) -> Case:
    return Case("suite", [db(b"run", SMALL_SIM.encode(), b"--suite", b"suite.toml",
                             b"--scale", b"0.001", b"--dry-run")],
                {"suite.toml": mutate(rng, rng.choice(seeds.suites))})


def preset_case(rng: random.Random, seeds: Seeds) -> Case:
    preset = {"drive.toml": mutate(rng, rng.choice(seeds.presets))}
    if rng.random() < 0.5:
        return Case("preset", [[b"drives", b"show", b"./drive.toml"]], preset)
    return Case("preset", [db(b"run", b"sim:./drive.toml", b"--tests", b"seq-write-burst",
                              b"--scale", b"0.001")], preset)


def jobfile_case(rng: random.Random, seeds: Seeds) -> Case:
    return Case("jobfile", [[b"sim", b"fio", b"job.fio", b"--drive", str(SMALL_PRESET).encode()]],
                {"job.fio": mutate(rng, rng.choice(seeds.jobs))})


def csv_case(rng: random.Random, seeds: Seeds) -> Case:
    json_out = [b"--json"] if rng.random() < 0.5 else []
    return Case("csv", [[b"analyze", b"fill", b"fill.csv", *json_out]],
                {"fill.csv": mutate(rng, FILL_CSV)})


def name_case(rng: random.Random, seeds: Seeds) -> Case:
    """A run named by the user, then every command that prints the name."""
    commands = [db(b"run", SMALL_SIM.encode(), b"--tests", b"seq-read-burst", b"--scale", b"0.001",
                   b"--name", argument(rng, NAMES)),
                db(b"runs"), db(b"show", b"latest"), db(b"compare", b"1", b"latest")]
    if rng.random() < 0.15:  # chart export (vl-convert), the slowest command
        commands.append(db(b"report", b"latest", b"-o", b"r.html", b"--svg", b"charts"))
    return Case("name", commands, needs_runs=True)


def option_case(rng: random.Random, seeds: Seeds) -> Case:
    """One command-line value mutated, in the command that reads it."""
    choice = rng.randrange(8)
    if choice == 0:
        argv = db(b"run", b"d.img", b"--size", argument(rng, SIZES), b"--tests", b"seq-read-burst",
                  b"--scale", b"0.001", b"--dry-run")
    elif choice == 1:
        argv = db(b"run", SMALL_SIM.encode(), b"--tests", b"seq-read-burst", b"--scale",
                  argument(rng, SCALES), b"--dry-run")
    elif choice == 2:
        argv = db(b"run", SMALL_SIM.encode(), b"--tests", argument(rng, TEST_LISTS),
                  b"--scale", b"0.001", b"--dry-run")
    elif choice == 3:
        command = rng.choice([[b"show"], [b"export"], [b"resume"], [b"compare", b"1"],
                              [b"report", b"-o", b"r.html"]])
        argv = db(*command, argument(rng, RUN_IDS))
    elif choice == 4:
        argv = [b"runs", b"--db", argument(rng, [b"ssdlab.db", b"new/x.db", b"."])]
    elif choice == 5:
        argv = db(b"run", SMALL_SIM.encode(), argument(rng, SECOND_TARGETS), b"--tests", b"seq-read-burst",
                  b"--scale", b"0.001", b"--jobs", argument(rng, JOBS))
    elif choice == 6:
        argv = [b"sim", b"fio", b"job.fio", b"--drive", argument(rng, DRIVES)]
    else:
        argv = db(b"run", SMALL_SIM.encode(), b"--suite", b"endurance", b"--endurance-volume", argument(rng, VOLUMES),
                  b"--endurance-probes", argument(rng, PROBES), b"--endurance-workload", argument(rng, WORKLOADS),
                  b"--dry-run")
    return Case("option", [argv], {"job.fio": OWN_JOBS[0]}, needs_runs=True)


def trace_case(rng: random.Random, seeds: Seeds) -> Case:
    """A trace in one of the formats, mutated, read by `trace stats`; or a blktrace's
    per-CPU files, each mutated, read as one trace."""
    if rng.random() < 0.1:
        files = {f"t.blktrace.{cpu}": mutate(rng, data) for cpu, data in enumerate(BLKTRACE)}
        return Case("trace", [[b"trace", b"stats", b"t.blktrace.0", b"--json"]], files)
    if rng.random() < 0.3:  # replayed by the trace test, some of its options mutated, on the small drive
        options = [part for option in rng.sample(sorted(TRACE_OPTIONS), rng.randint(0, 3))
                   for part in (option, argument(rng, TRACE_OPTIONS[option]))]
        timing = [b"--no-timing"] if rng.random() < 0.3 else []
        dry = [b"--dry-run"] if rng.random() < 0.5 else []
        argv = db(b"run", SMALL_SIM.encode(), b"--suite", b"trace", b"--trace", b"t.trace", b"--scale", b"0.01",
                  *options, *timing, *dry)
        return Case("trace", [argv], {"t.trace": mutate(rng, rng.choice(TRACES))})
    return Case("trace", [[b"trace", b"stats", b"t.trace", b"--json"]], {"t.trace": mutate(rng, rng.choice(TRACES))})


def import_case(rng: random.Random, seeds: Seeds) -> Case:
    """fio's JSON output, mutated, imported (one file, or two: each stored or refused), then
    read by the commands that read runs, beside the simulated ones."""
    files = {name: mutate(rng, rng.choice(seeds.fio_outputs))
             for name in ([b"out.json", b"second.txt"] if rng.random() < 0.3 else [b"out.json"])}
    named = [b"--name", argument(rng, NAMES)] if rng.random() < 0.3 else []
    drive = [b"--drive", argument(rng, NAMES)] if rng.random() < 0.3 else []
    commands = [db(b"import", b"fio-json", *files, *named, *drive), db(b"runs"), db(b"show", b"latest"),
                db(b"compare", b"1", b"latest"), db(b"export", b"latest", b"--format", b"csv")]
    if rng.random() < 0.1:
        commands.append(db(b"report", b"latest", b"1", b"-o", b"r.html"))
    return Case("import", commands, {name.decode(): data for name, data in files.items()}, needs_runs=True)


# Sweeps of the small drive (docs/sweeps.md): its keys with values, some refused (a misspelt key,
# a table, a value of another type, one the simulator refuses), ranges, and lists of variants.
SWEEP_SETS = [b"cache.max_cell_share=0.3,0.7", b"geometry.dies_per_channel=4,8", b"drive.nand.tlc.t_prog_us=500,700",
              b"cache.idle_fold=true,false", b"ftl.victim_policy=greedy", b"host.link=pcie4x4,pcie3x4",
              b"cache.max_cel_share=0.3", b"geometry=4", b"geometry.dies_per_channel=4.0", b"user_capacity_gb=99"]
SWEEP_RANGES = [b"cache.max_cell_share=0.2..0.8", b"geometry.dies_per_channel=4..8", b"nand.tlc.t_prog_us=400..900",
                b"cache.idle_fold=0..1", b"cache.max_cell_share=0.9..0.1", b"geometry.channels=1..64"]
# Not mutated: a mutation can make a count of a thousand runs ("1_000"), which takes longer than a timeout.
SAMPLE_COUNTS = [b"2", b"3", b"0", b"-1", b"1001", b"two"]
SWEEP_SEEDS = [b"1", b"0", b"-1", b"9223372036854775808", b"x"]
VARIANT_FILES = {"v.toml": b"[[variants]]\ncache.max_cell_share = 0.3\ngeometry.dies_per_channel = 8\n\n"
                           b"[[variants]]\n[variants.cache]\nidle_fold = false\n",
                 "v.csv": b"cache.max_cell_share,geometry.dies_per_channel\n0.3,8\n0.5,4\n"}


def sweep_case(rng: random.Random, seeds: Seeds) -> Case:
    """A sweep of the small drive, a grid, a list or samples, one value of it mutated (or the id
    of a stored sweep, in every command that takes one), then the commands that read sweeps."""
    sweep = [b"sweep", str(SMALL_PRESET).encode(), b"--tests", b"seq-read-burst", b"--scale", b"0.001"]
    files, sweep_id = {}, b"latest"
    choice = rng.randrange(4)
    if choice == 0:
        given = [b"--set", argument(rng, SWEEP_SETS)] + ([b"--set", rng.choice(SWEEP_SETS)] if rng.random() < 0.5
                                                         else [])
    elif choice == 1:
        name = rng.choice(sorted(VARIANT_FILES))
        files[name] = mutate(rng, VARIANT_FILES[name])
        given = [b"--variants", name.encode()]
    elif choice == 2:
        given = [b"--sample", argument(rng, SWEEP_RANGES), b"--samples", rng.choice(SAMPLE_COUNTS),
                 *([b"--seed", argument(rng, SWEEP_SEEDS)] if rng.random() < 0.5 else [])]
    else:
        given, sweep_id = [b"--set", SWEEP_SETS[0]], argument(rng, RUN_IDS)
    jobs = [b"--jobs", argument(rng, JOBS)] if rng.random() < 0.2 else []
    commands = [db(*sweep, *given, *jobs), db(b"sweeps"), db(b"sweeps", b"show", sweep_id, b"--csv", b"t.csv"),
                db(b"sweeps", b"show", sweep_id, b"--json"), db(b"sweep", b"--resume", sweep_id)]
    if rng.random() < 0.15:  # its page, and chart export (vl-convert), the slowest commands
        commands.append(db(b"sweeps", b"report", sweep_id, b"-o", b"r.html", b"--svg", b"charts"))
    return Case("sweep", commands, files, needs_runs=True)


def recover_case(rng: random.Random, seeds: Seeds) -> Case:
    """The runs database damaged (bytes overwritten, or cut short), recovered, and the copy
    read by the commands that read runs and sweeps."""
    damage = [(rng.random(), rng.choice([0, 1, 16, 100, 4096, 65536]), rng.randrange(1 << 30))
              for _ in range(rng.randint(1, 3))]
    commands = [[b"db", b"recover", b"ssdlab.db", b"-o", b"new.db"],  # it takes no --db: DAMAGED is its argument
                [b"runs", b"--db", b"new.db"], [b"show", b"latest", b"--db", b"new.db"],
                [b"sweeps", b"show", b"1", b"--db", b"new.db"]]
    return Case("recover", commands, needs_runs=True, damage=damage)


# `trace make` (docs/traces.md): a built-in trace or nonsense, in a format or nonsense, at
# the smallest scale (so that no value a mutation can reach makes a trace longer than a few
# seconds to write) or a scale refused, with one option mutated, then read by `trace stats`.
TRACE_NAMES = [b"light-like", b"heavy-like", b"destroyer-like", b"nope", b"", b"LIGHT-LIKE"]
TRACE_FORMATS = [b"csv", b"fio-v3", b"msr", b"alibaba", b"systor", b"prepared", b"tencent", b"fio-v2",
                 b"blktrace", b"nope"]
MAKE_SCALES = [b"0.000001", b"0.000001", b"0.000001", b"1e-7", b"0", b"-1", b"nan", b"inf", b"11", b"x"]
MAKE_OPTIONS = [(b"--seed", [b"0", b"7", b"-1", b"18446744073709551616", b"x"]),
                (b"--device-size", [b"1TB", b"64GiB", b"1", b"0", b"-1G", b"1e3"]),
                (b"--device", [b"0", b"/dev/sdb", b"a,b", b"a b", b" ", b"\xff"]),
                (b"--read", [b"1GB", b"100GB", b"0", b"-5GB", b"2TB", b"nan"]),
                (b"--written", [b"1GB", b"0", b"876GB", b"1e9"]),
                (b"--read-share", [b"0.5", b"0", b"1", b"0.99", b"nan", b"2"]),
                (b"--sequential-share", [b"0.6", b"0", b"1", b"-0.1"]),
                (b"--sizes", [b"4k:60,8k:40", b"4k:100", b"3k:100", b"4k:60", b"4k:60,4k:40", b"2m:100", b":,"]),
                (b"--sequential-size", [b"128k", b"4k", b"8m", b"16m", b"1"]),
                (b"--run-length", [b"32m", b"4k", b"1", b"1t"]),
                (b"--mean-qd", [b"5.5", b"1", b"32", b"33", b"0", b"nan"]),
                (b"--qd1-share", [b"0.73", b"0", b"0.99", b"1"]),
                (b"--zipf", [b"0.99", b"1", b"0", b"5", b"6", b"-1"]),
                (b"--zones", [b"60/10,30/20,10/70", b"100/100", b"50/50", b"60/10,40", b"/", b"101/100,-1/0"]),
                (b"--footprint", [b"48GB", b"64MiB", b"1", b"2PB"]),
                (b"--idle-share", [b"0.8", b"0", b"0.99", b"1"]),
                (b"--burst-requests", [b"512", b"2", b"1", b"1000000000"]),
                (b"--duration", [b"7200", b"1", b"0", b"1e8", b"inf"])]
_WRITTEN: list[bytes] = []


def written_traces() -> list[bytes]:
    """A few records of light-like as ssdlab's writers write them, in every text format."""
    if not _WRITTEN:
        from ssdlab.traces.synthetic import BUILTIN, Generator
        from ssdlab.traces.writers import TEXT_WRITERS, write_trace
        with tempfile.TemporaryDirectory() as work:
            for name in TEXT_WRITERS:
                path = Path(work) / name
                write_trace(Generator(BUILTIN["light-like"], 2e-6, 1).chunks(), path, name)
                _WRITTEN.append(path.read_bytes())
    return _WRITTEN


def make_case(rng: random.Random, seeds: Seeds) -> Case:
    """`trace make` with mutated options, its output read by `trace stats`; or a trace as
    the writers write it, in any text format, mutated, read by `trace stats`."""
    stats = [b"trace", b"stats", b"out", b"--json"]
    if rng.random() < 0.5:
        return Case("make", [stats], {"out": mutate(rng, rng.choice(written_traces()))})
    option, values = rng.choice(MAKE_OPTIONS)
    coarse = [b"--coarse"] if rng.random() < 0.3 else []
    make = [b"trace", b"make", argument(rng, TRACE_NAMES) if rng.random() < 0.2 else rng.choice(TRACE_NAMES[:3]),
            b"-o", b"out", b"--format", argument(rng, TRACE_FORMATS) if rng.random() < 0.2
            else rng.choice(TRACE_FORMATS), b"--scale", rng.choice(MAKE_SCALES), *coarse, option,
            argument(rng, values) if rng.random() < 0.5 else rng.choice(values)]
    return Case("make", [make, stats])


# A fleet (docs/sweeps.md): certificates with a mutated host or validity, and fleet targets,
# worker drives and cluster addresses mutated; every address is beyond the loopback, so each
# command is refused (or makes certificates) before anything is connected to.
FLEET_HOSTS = [b"10.0.0.5", b"node-1.lab", b"fd00::7", b"-x", b"a b", b"\xff", b"localhost"]
FLEET_DAYS = [b"365", b"1", b"3650", b"0", b"3651", b"-1", b"x"]
FLEET_TARGETS = [b"lab-3:/dev/nvme1n1", b"10.0.0.7:/dev/sdb", b"[fd00::7]:/dev/sdb", b"lab-3:/tmp/x", b"lab 3:/dev/x"]
BEYOND = [b"tcp://10.1.2.3:8786", b"tls://10.1.2.3:8786", b"tcp://node-1.lab:8786", b"udp://10.1.2.3:1", b"10.1.2.3"]
WORKER_DRIVES = [b"S6B0NL0T123456", b"/dev/null", b"/dev/nvme9n9", b"", b"/etc/passwd"]


def fleet_case(rng: random.Random, seeds: Seeds) -> Case:
    beyond = rng.choice(BEYOND)  # not mutated: a mutation could reach the loopback, where a connection is tried
    commands = [[b"fleet", b"certs", b"certs", b"--host", argument(rng, FLEET_HOSTS), b"--days",
                 argument(rng, FLEET_DAYS)],
                db(b"run", argument(rng, FLEET_TARGETS), b"--cluster", beyond, b"--tests", b"seq-read-burst"),
                [b"worker", b"--scheduler", beyond, b"--drive", argument(rng, WORKER_DRIVES)]]
    return Case("fleet", [rng.choice(commands)])


# How many inputs of each kind, per 1000.
MIX = [(suite_case, 140), (preset_case, 140), (jobfile_case, 180), (csv_case, 120),
       (name_case, 70), (option_case, 170), (recover_case, 60), (trace_case, 60), (make_case, 30), (import_case, 60),
       (sweep_case, 50), (fleet_case, 10)]


def draw_cases(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    seeds = Seeds.from_repository()
    makers = [maker for maker, weight in MIX for _ in range(weight)]
    return [rng.choice(makers)(rng, seeds) for _ in range(count)]


# -- running ------------------------------------------------------------------------------

def memory_limit(nbytes: int, argv: Argv) -> Callable[[], None]:
    """What runs in the child before ssdlab: its memory limit (see the module docstring)."""
    which = (resource.RLIMIT_DATA if b"--png" in argv or b"--svg" in argv
             else resource.RLIMIT_AS)

    def limit() -> None:
        resource.setrlimit(which, (nbytes, nbytes))
    return limit


def failures_of(status: int | None, stderr: str) -> set[str]:
    found = set()
    if status is None:
        found.add("timeout")
    elif status < 0:
        found.add("abort")
    if "Traceback (most recent call last)" in stderr:
        found.add("traceback")
    if "panicked" in stderr or "PanicException" in stderr:
        found.add("panic")
    if "MemoryError" in stderr or re.search(r"memory allocation of \d+ bytes failed", stderr):
        found.add("oom")
    if "validation error for" in stderr or "errors.pydantic.dev" in stderr:
        found.add("pydantic")  # a message, but pydantic's, not one a user can read
    return found


def run_command(argv: Argv, cwd: Path, timeout: float, memory: int) -> tuple[int | None, str]:
    # A session of its own, so a timeout ends ssdlab and anything it started (fio).
    # preexec_fn is safe here: each pool worker is a process with a single thread.
    proc = subprocess.Popen([sys.executable.encode(), b"-m", b"ssdlab", *argv], cwd=cwd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=memory_limit(memory, argv))  # noqa: PLW1509
    try:
        _, err = proc.communicate(timeout=timeout)
        return proc.returncode, err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return None, err.decode("utf-8", "replace")


def run_case(index: int, case: Case, work: Path, runs_db: Path, timeout: float,
             memory: int) -> Outcome:
    cwd = work / f"{index:04d}"
    cwd.mkdir()
    for name, data in case.files.items():
        (cwd / name).write_bytes(data)
    if case.needs_runs:
        shutil.copy(runs_db, cwd / "ssdlab.db")
        damaged(cwd / "ssdlab.db", case.damage)
    started = time.monotonic()
    statuses, failures, stderr = [], set(), []
    for argv in case.commands:
        status, err = run_command(argv, cwd, timeout, memory)
        statuses.append(status)
        failures |= failures_of(status, err)
        stderr.append(err)
    shutil.rmtree(cwd, ignore_errors=True)
    return Outcome(index, case, statuses, failures, "\n".join(stderr), time.monotonic() - started)


def damaged(path: Path, damage: list[tuple[float, int, int]]) -> None:
    """`path` with each damage done: bytes overwritten at a share of its length, or cut there."""
    for share, length, seed in damage:
        size = path.stat().st_size
        with path.open("r+b") as f:
            if length == 0:
                f.truncate(int(share * size))
            else:
                f.seek(int(share * size))
                f.write(random.Random(seed).randbytes(length))


def make_runs_db(work: Path) -> Path:
    """Two stored runs (the commands that read runs need some), then a sweep of two more (those
    that read sweeps, and `db recover`, which carries them)."""
    path = work / "runs.db"
    for name in ("first", "second"):
        subprocess.run([sys.executable, "-m", "ssdlab", "run", SMALL_SIM, "--tests",
                        "seq-read-burst", "--scale", "0.001", "--name", name, "--db", str(path)],
                       check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "ssdlab", "sweep", str(SMALL_PRESET), "--set",
                    "cache.max_cell_share=0.3,0.7", "--tests", "seq-read-burst", "--scale", "0.001",
                    "--db", str(path)], check=True, capture_output=True)
    return path


# -- failures on disk, and replay -----------------------------------------------------------

def save(outcome: Outcome, out: Path) -> Path:
    where = out / f"{outcome.index:04d}-{outcome.case.kind}"
    where.mkdir(parents=True, exist_ok=True)
    case = outcome.case
    (where / "case.json").write_text(json.dumps({
        "kind": case.kind, "needs_runs": case.needs_runs, "damage": case.damage,
        "commands": [[base64.b64encode(a).decode() for a in argv] for argv in case.commands],
        "files": {name: base64.b64encode(data).decode() for name, data in case.files.items()},
        "statuses": outcome.statuses, "failures": sorted(outcome.failures)}, indent=1))
    (where / "stderr.txt").write_text(outcome.stderr)
    for name, data in case.files.items():
        (where / name).write_bytes(data)
    return where


def load(where: Path) -> Case:
    doc = json.loads((where / "case.json").read_text())
    return Case(doc["kind"], [[base64.b64decode(a) for a in argv] for argv in doc["commands"]],
                {name: base64.b64decode(data) for name, data in doc["files"].items()},
                doc["needs_runs"], [tuple(d) for d in doc.get("damage", [])])


def shown(argv: Argv) -> str:
    return " ".join(repr(a.decode("utf-8", "backslashreplace")) for a in argv)


# -- main -----------------------------------------------------------------------------------

def report(outcomes: list[Outcome], seconds: float, out: Path) -> int:
    commands = sum(len(o.statuses) for o in outcomes)
    statuses = Counter(s for o in outcomes for s in o.statuses)
    by_kind = Counter(o.case.kind for o in outcomes)
    failing = [o for o in outcomes if o.failures]
    print(f"{len(outcomes)} inputs ({', '.join(f'{k} {n}' for k, n in sorted(by_kind.items()))}), "
          f"{commands} commands in {seconds:.0f} s")
    print("exit statuses: " + ", ".join(f"{'timeout' if s is None else s}: {n}"
                                        for s, n in sorted(statuses.items(), key=lambda x: str(x[0]))))
    for kind in FAILURE_KINDS:
        print(f"{kind:>10}: {sum(kind in o.failures for o in outcomes)}")
    slowest = max(outcomes, key=lambda o: o.seconds)
    print(f"slowest input: {slowest.seconds:.1f} s ({slowest.case.kind} #{slowest.index})")
    for outcome in failing:
        where = save(outcome, out)
        print(f"FAIL {', '.join(sorted(outcome.failures))}: {where}")
        for argv in outcome.case.commands:
            print(f"    ssdlab {shown(argv)}")
    return 1 if failing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per command")
    parser.add_argument("--memory-gib", type=float, default=4.0, help="memory limit per command")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"),
                        help="where failing inputs are saved")
    parser.add_argument("--replay", type=Path, help="run one saved failing input again")
    args = parser.parse_args()
    memory = int(args.memory_gib * (1 << 30))
    with tempfile.TemporaryDirectory(prefix="ssdlab-fuzz-") as tmp:
        work = Path(tmp)
        runs_db = make_runs_db(work)
        if args.replay:
            outcome = run_case(0, load(args.replay), work, runs_db, args.timeout, memory)
            print(f"statuses {outcome.statuses}, failures {sorted(outcome.failures) or 'none'}")
            print(outcome.stderr)
            return 1 if outcome.failures else 0
        cases = draw_cases(args.seed, args.inputs)
        started = time.monotonic()
        run = partial(run_case, work=work, runs_db=runs_db, timeout=args.timeout, memory=memory)
        with ProcessPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(run, range(len(cases)), cases))
        return report(outcomes, time.monotonic() - started, args.out)


if __name__ == "__main__":
    sys.exit(main())
