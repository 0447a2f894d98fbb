"""The trace test (METHODOLOGY.md section 6): real workloads, each trace replayed once on an
empty drive and once on a full one, as the reviews replay theirs.

For each trace, in order: a purge, the replay on the empty drive, a sequential fill of the whole
drive (128 KiB at QD32, the region --scale leaves), the replay on the full drive. Choices:

- The traces are `--trace FILE` (repeatable), in any format traces/ reads (`--trace-format` when
  detection cannot tell), or the built-in synthetic traces (traces/synthetic.py) by name, all
  three when no --trace is given, generated at the run's --scale; each is prepared once for the
  target (traces/fitting.py, kept by traces/cache.py): `--trace-device` keeps one disk of a
  trace of several, `--trace-fit wrap` (default) or `scale` brings offsets past the target
  into it, `--trace-block` is the target's logical block (4 KiB by default: a 512-byte request
  grows to one), gaps between issue times are capped at `--idle-cap-ms` (25 ms, the reviews';
  0: none) and `--trace-speed` divides times.
- Timed replay (the default) issues each record at its time, at most `--trace-qd` outstanding
  (DEFAULT_TIMED_QD, the Linux NVMe driver's queue): the queue depth is the drive's doing.
  `--no-timing` issues them as fast as the drive takes them, `--trace-qd` at a time (32).
- Scored per trace and state: the data rate over busy time (time with at least one command
  outstanding), IOPS, mean, 99th and 99.99th percentile latency of all commands, of reads and
  of writes, and the energy and mean power over the replay where a power model or meter knows
  them. The primary score is the geometric mean of the data rates of every replay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ssdlab.analysis import scores
from ssdlab.catalogue.definitions import WholeDriveProcedure, data_present, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.model import Op, Step, StepResult, Test, TraceReplay
from ssdlab.model.results import Latency
from ssdlab.traces.fit import Fit, Prepared

# The Linux NVMe driver's default I/O queue (io_queue_depth = 1024) less the slot a full ring
# keeps empty: the most commands a host has outstanding on one queue.
DEFAULT_TIMED_QD = 1023
DEFAULT_UNTIMED_QD = 32  # the depth of the suites' sustained steps
MAX_TRACES = 20
STATES = ("empty", "full")
LABEL_SEPARATOR = ": "  # a replay's label: its trace's title, then the drive's state


def trace_of(step: Step) -> str:
    """The title of the trace a replay step replays (its label up to its state)."""
    return step.label.rsplit(LABEL_SEPARATOR, 1)[0]


@dataclass(frozen=True)
class TraceReplayTest(WholeDriveProcedure):
    __test__ = False  # not a pytest test class
    id: str
    title: str
    primary_score: str
    # (file or built-in name, format or None: detected); none: the built-in traces
    traces: tuple[tuple[str, str | None], ...] = ()
    fit: Fit = field(default_factory=Fit)
    timed: bool = True
    iodepth: int = DEFAULT_TIMED_QD

    def compile(self, scale: Scale, capacity: int) -> Test:
        from ssdlab.traces import cache, synthetic  # numpy's: only when a trace test is planned

        region = scale.whole_drive(capacity) // self.fit.block * self.fit.block
        steps: list[Step] = []
        described: list[dict[str, Any]] = []
        for source, format_name in self.traces or tuple((name, None) for name in synthetic.BUILTIN):
            path = Path(source).expanduser()
            if path.is_file():
                made, title = cache.prepared_trace(path, format_name, self.fit, region), path.name
            elif source in synthetic.BUILTIN:
                made, title = cache.prepared_builtin(source, scale.factor, self.fit, region), source
            else:
                raise SsdlabError(f"--trace {source}: no such file, and no built-in trace of that name: give a "
                                  f"trace file, or one of {', '.join(synthetic.BUILTIN)} (`ssdlab trace list`)")
            steps += [purge(capacity), self._replay(title, "empty", made, region), data_present(region),
                      self._replay(title, "full", made, region)]
            described.append({"title": title, "source": made.source, "records": made.records, "ops": made.ops,
                              "bytes": made.bytes, "duration_s": made.duration_us / 1e6,
                              "original_duration_s": made.original_duration_us / 1e6, "notes": made.notes})
        return Test(id=self.id, title=self.title, primary_score=self.primary_score, steps=tuple(steps),
                    settings={"traces": described, "fit": self.fit.describe(), "timed": self.timed,
                              "iodepth": self.iodepth})

    @staticmethod
    def outline() -> tuple[str, ...]:
        """The steps of each trace, in words."""
        return ("purge", "TRACE: empty drive (the replay)", "write the whole drive (128 KiB sequential, QD32)",
                "TRACE: full drive (the replay)")

    def _replay(self, title: str, state: str, made: Prepared, region: int) -> Step:
        reads, writes = made.ops["read"], made.ops["write"]
        if reads and writes:
            shape: dict[str, Any] = {"rw": Op.RANDRW, "rwmixread": round(100 * reads / (reads + writes))}
        else:
            shape = {"rw": Op.RANDWRITE if writes else Op.RANDREAD}
        return Step(label=f"{title}{LABEL_SEPARATOR}{state} drive", bs=self.fit.block, iodepth=self.iodepth,
                    size=region, fill_state=state,
                    trace=TraceReplay(path=made.path, records=made.records, timed=self.timed), **shape)

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        replays: dict[str, dict[str, Any]] = {}
        for step, result in measured:
            title = trace_of(step)
            replays.setdefault(title, {"trace": title})[step.fill_state or "?"] = replay_figures(result)
        rates = [figures["data_rate_mbps"] for replay in replays.values() for state in STATES
                 if (figures := replay.get(state)) and figures["data_rate_mbps"] > 0]
        value = math.exp(sum(map(math.log, rates)) / len(rates)) if rates else None
        return {"name": self.primary_score, "value": None if value is None else round(value, 2), "unit": "MB/s",
                "traces": list(replays.values())}


def replay_figures(result: StepResult) -> dict[str, Any]:
    """What a replay gives: its data rate over busy time, IOPS, latencies of all commands, of
    reads and of writes, and its energy over the whole replay (idle gaps too) where known."""
    directions = {name: d for name, d in result.directions.items() if name != "trim"}
    every = Latency.merge(d.latency for d in result.directions.values())
    energy = _energy(result)
    seconds = result.busy_s + result.idle_s
    return {
        "data_rate_mbps": round(result.mbps, 2), "iops": round(result.iops, 1), "busy_s": round(result.busy_s, 3),
        "idle_s": round(result.idle_s, 3), "ios": result.ios,
        "read_bytes": result.read.bytes if result.read else 0, "write_bytes": result.write.bytes if result.write else 0,
        "latency_us": {"all": _latency_us(every), **{name: _latency_us(d.latency) for name, d in directions.items()}},
        "energy_j": None if energy is None else round(energy, 3),
        "mean_power_w": None if energy is None or seconds <= 0 else round(energy / seconds, 3),
    }


def _latency_us(latency: Latency) -> dict[str, float]:
    return {"mean": round(latency.mean_ns / 1e3, 2), "p99": latency.p99_ns / 1e3, "p99.99": latency.p99_99_ns / 1e3,
            "max": latency.max_ns / 1e3}


def _energy(result: StepResult) -> float | None:
    """Joules over the replay: its busy time's, and a simulated drive's idle time's (a power
    meter's covers the I/O window, which holds the idle gaps of a trace)."""
    if result.energy_j is None:
        return None
    return result.energy_j + (result.device or {}).get("idle_energy_j", 0.0)


def trace_plan(files: tuple[str, ...], format_name: str | None, device: str | None, fit_offsets: str | None,
               block: int | None, idle_cap_ms: float | None, speed: float | None, no_timing: bool,
               iodepth: int | None) -> dict[str, Any]:
    """The trace test's fields from the run's options, refused out of bounds."""
    if len(files) > MAX_TRACES:
        raise SsdlabError(f"{len(files)} traces: give at most {MAX_TRACES} --trace options per run")
    if idle_cap_ms is not None and not 0 <= idle_cap_ms <= 3_600_000:  # NaN fails too
        raise SsdlabError(f"--idle-cap-ms {idle_cap_ms:g}: give 0 (no cap) to 3600000 ms (an hour)")
    cap_us = 25_000 if idle_cap_ms is None else round(idle_cap_ms * 1000) or None
    given = {"offsets": fit_offsets, "block": block, "speed": speed, "device": device}
    try:
        fit = Fit(idle_cap_us=cap_us, **{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        raise SsdlabError(f"--trace-fit, --trace-block, --trace-speed or --trace-device: {validation_problems(exc)}") \
            from None
    if fit.block & (fit.block - 1):
        raise SsdlabError(f"--trace-block {fit.block}: give the target's logical block size, a power of two "
                          "from 512 to 1048576 bytes")
    depth = iodepth if iodepth is not None else (DEFAULT_UNTIMED_QD if no_timing else DEFAULT_TIMED_QD)
    if not 1 <= depth <= 4096:
        raise SsdlabError(f"--trace-qd {depth}: give 1 to 4096 commands outstanding at most")
    return {"traces": tuple((f, format_name) for f in files), "fit": fit, "timed": not no_timing, "iodepth": depth}


TRACE_TESTS = (
    TraceReplayTest(id="trace", title="Trace replay: real workloads on an empty and on a full drive, idle gaps "
                                      "capped at 25 ms",
                    primary_score="data rate over busy time, geometric mean of every replay"),
)
