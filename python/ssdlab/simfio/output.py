"""Simulated jobs in fio 3.33's JSON (`--output-format=json+`): every key fio prints for
a job, in its units (runtime in ms, bw in KiB/s, latencies in ns, histogram bins), with
its arithmetic (runtime rounded up to whole ms, bandwidth in whole bytes and KiB per s).

What a simulation does not have is fio's neutral value: no submission cost (slat 0, on
engines for which fio times it), no host CPU (usr_cpu, sys_cpu, ctx, faults 0), no
errors, nothing left to run (eta 0). disk_util has one entry, the simulated drive.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from ssdlab import __version__
from ssdlab.model import DirectionResult, Latency, StepResult
from ssdlab.model.results import clamped_percentile, merged_directions
from ssdlab.model.steps import SteadyState
from ssdlab.simfio.jobfile import Setting
from ssdlab.simfio.run import JobPlan, JobRun, Report
from ssdlab.simfio.stats import (
    Samples,
    depth_levels,
    direction_samples,
    latency_ranges,
    latency_stddev,
    percentages,
    window_ios,
)

DIRECTIONS = ("read", "write", "trim")
# fio's labels of stats.DEPTH_LEVELS, stats.LATENCY_BOUNDS and stats.LATENCY_MS_BOUNDS
DEPTH_LABELS = ("1", "2", "4", "8", "16", "32", ">=64")
LATENCY_LABELS = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")
LATENCY_MS_LABELS = (*LATENCY_LABELS, "2000", ">=2000")
# iodepth_submit and iodepth_complete: I/Os per submission and per reaping, up to each
BATCH_LABELS = ("0", "4", "8", "16", "32", "64", ">=64")
NO_LATENCY = Latency.from_histogram((), 0, 0, 0)


def fio_json(jobs: list[tuple[JobPlan, JobRun]], drive: str) -> dict[str, Any]:
    now = time.time()
    # fio's elapsed is the whole run's, the same for every job
    elapsed = math.ceil(sum(_batch_seconds(jobs).values()))
    out: dict[str, Any] = {
        "fio version": f"ssdlab-sim-{__version__}",
        "timestamp": int(now), "timestamp_ms": int(now * 1000),
        "time": time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)),
    }
    # the [global] sections' options (fio's "global options"), those of any after the last
    # job left out: they set nothing
    defaults = _listed(jobs[-1][0].job.defaults)
    if defaults:
        out["global options"] = defaults
    out["jobs"] = [_job_json(groupid, p, run, elapsed) for groupid, p, run in _reported(jobs)]
    if any(p.report.disk_util for p, _ in jobs):
        out["disk_util"] = [_disk_util(drive, jobs)]
    return _six_places(out)


def _batch_seconds(jobs: list[tuple[JobPlan, JobRun]]) -> dict[int, float]:
    """The drive time of each run of jobs at once."""
    return {run.batch: run.batch_s for _, run in jobs}


def _reported(jobs: list[tuple[JobPlan, JobRun]]) -> list[tuple[int, JobPlan, JobRun]]:
    """The jobs as fio reports them, with their group ids: a new group at each stonewall or
    new_group; a group with group_reporting as one job (its first's name, all its I/O)."""
    groups: list[list[tuple[JobPlan, JobRun]]] = []
    for p, run in jobs:
        if not groups or p.stonewall or p.new_group:
            groups.append([])
        groups[-1].append((p, run))
    out = []
    for groupid, members in enumerate(groups):
        if len(members) > 1 and any(p.group_reporting for p, _ in members):
            out.append((groupid, members[0][0], _together([run for _, run in members])))
        else:
            out += [(groupid, p, run) for p, run in members]
    return out


def _together(runs: list[JobRun]) -> JobRun:
    """Jobs reported as one, as fio's group_reporting: their I/O added up over the longest
    one's time."""
    first, results = runs[0], [r.result for r in runs]
    result = StepResult(started_at=first.result.started_at, busy_s=max(r.busy_s for r in results),
                        idle_s=0.0, engine=first.result.engine, **merged_directions(results))
    return replace(first, result=result,
                   piece_ios=tuple(n for r in runs for n in r.piece_ios),
                   series=tuple(s for r in runs for s in r.series),
                   unwritten_read_bytes=sum(r.unwritten_read_bytes for r in runs))


def _six_places(node: Any) -> Any:
    """Floats as fio prints them (printf's %f): six decimal places."""
    if isinstance(node, dict):
        return {k: _six_places(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_six_places(v) for v in node]
    return round(node, 6) if isinstance(node, float) else node


def _listed(settings: dict[str, Setting]) -> dict[str, str]:
    """Options as fio lists them: its own names, the values as written, no bare flags."""
    return {name: s.value for name, s in settings.items() if s.value is not None}


def _job_json(groupid: int, p: JobPlan, run: JobRun, elapsed: int) -> dict[str, Any]:
    r, report, job = run.result, p.report, p.job
    runtime_ms = _ms(run.elapsed_s)
    windows = window_ios(run.series, run.elapsed_s)
    out: dict[str, Any] = {"jobname": report.jobname, "groupid": groupid, "error": 0, "eta": 0,
                           "elapsed": elapsed}
    if own := _listed(job.own):
        out["job options"] = own
    for name in DIRECTIONS:
        d = getattr(r, name)
        share = d.ios / r.ios if d and r.ios else 0.0
        bs = d.bytes / d.ios if d and d.ios else p.step.bs
        out[name] = _direction_json(d, runtime_ms, direction_samples(windows, share, bs), report)
    out["sync"] = {"total_ios": 0, "lat_ns": _latency_json(NO_LATENCY, False)}
    out.update({"job_runtime": runtime_ms, "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0,
                "minf": 0})
    out["iodepth_level"] = dict(zip(DEPTH_LABELS, percentages(
        depth_levels(run.piece_ios, p.step.iodepth), r.ios, 0.1)))
    # the simulator takes each I/O as it is submitted, and completes each on its own
    one_at_a_time = percentages([0, r.ios, 0, 0, 0, 0, 0], r.ios, 0.1)
    out["iodepth_submit"] = dict(zip(BATCH_LABELS, one_at_a_time))
    out["iodepth_complete"] = dict(zip(BATCH_LABELS, one_at_a_time))
    ns, us, ms = latency_ranges(d.latency.histogram for d in r.directions.values())
    for key, counts, labels in (("latency_ns", ns, LATENCY_LABELS), ("latency_us", us, LATENCY_LABELS),
                                ("latency_ms", ms, LATENCY_MS_LABELS)):
        out[key] = dict(zip(labels, percentages(counts, r.ios, 0.01)))
    if report.continue_on_error:
        out.update({"total_err": 0, "first_error": 0})
    out.update({"latency_depth": report.iodepth, "latency_target": 0, "latency_percentile": 100.0,
                "latency_window": 0})
    if report.description is not None:
        out["desc"] = report.description
    if p.step.steadystate is not None and run.steady is not None:
        out["steadystate"] = _steadystate_json(p.step.steadystate, run.steady)
    return out


def _steadystate_json(ss: SteadyState, judged: dict) -> dict[str, Any]:
    """fio's steadystate object: its setting, whether it was attained, the last criterion,
    and the window's samples (oldest first, zeros where it had not filled)."""
    pct = "%" if ss.pct else ""
    kind = ("iops" if ss.iops else "bw") + ("_slope" if ss.slope else "")
    pad = [0] * (ss.dur_s - len(judged["iops"]))
    iops, bw = [*judged["iops"], *pad], [*judged["bw"], *pad]
    return {"ss": f"{kind}:{ss.limit:f}{pct}", "duration": ss.dur_s, "attained": int(judged["attained"]),
            "criterion": f"{judged['criterion']:f}{pct}", "max_deviation": float(judged["max_deviation"]),
            "slope": float(judged["slope"]),
            "data": {"bw_mean": sum(bw) // ss.dur_s, "iops_mean": sum(iops) // ss.dur_s, "iops": iops,
                     "bw": bw}}


def _direction_json(d: DirectionResult | None, runtime_ms: int, samples: tuple[Samples, Samples],
                    report: Report) -> dict[str, Any]:
    ios, nbytes = (d.ios, d.bytes) if d else (0, 0)
    runtime = runtime_ms if ios else 0
    bw_bytes = 1000 * nbytes // runtime if runtime else 0
    lat = d.latency if d else NO_LATENCY
    slat = Latency.from_histogram(((0, ios),) if report.slat_measured else (), 0, 0, 0)
    bw, iops = samples
    # fio's share of the group's bandwidth: each job is its own group here
    agg = min(100.0, int(bw.mean) * 100 / (bw_bytes / 1024)) if bw_bytes > 1024 else 100.0
    return {
        "io_bytes": nbytes, "io_kbytes": nbytes >> 10, "bw_bytes": bw_bytes, "bw": bw_bytes // 1024,
        "iops": 1000.0 * ios / runtime if runtime else 0.0, "runtime": runtime, "total_ios": ios,
        "short_ios": 0, "drop_ios": 0,
        "slat_ns": _latency_json(slat, report.slat_percentiles, report.percentiles),
        "clat_ns": _latency_json(lat, report.clat_percentiles, report.percentiles),
        # a submission costs no drive time: the total latency is the completion latency
        "lat_ns": _latency_json(lat, report.lat_percentiles, report.percentiles),
        "bw_min": min(bw.values, default=0), "bw_max": max(bw.values, default=0),
        "bw_agg": agg if bw.n else 0.0, "bw_mean": bw.mean, "bw_dev": bw.stddev,
        "bw_samples": bw.n,
        "iops_min": min(iops.values, default=0), "iops_max": max(iops.values, default=0),
        "iops_mean": iops.mean, "iops_stddev": iops.stddev, "iops_samples": iops.n,
    }


def _latency_json(lat: Latency, with_percentiles: bool,
                  percentiles: tuple[float, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"min": lat.min_ns, "max": lat.max_ns, "mean": lat.mean_ns,
                           "stddev": latency_stddev(lat), "N": lat.count}
    if with_percentiles and lat.count:
        out["percentile"] = {f"{q:.6f}": clamped_percentile(lat.histogram, lat.count, q,
                                                            lat.min_ns, lat.max_ns)
                             for q in percentiles}
        out["bins"] = {str(v): c for v, c in lat.histogram}
    return out


def _disk_util(drive: str, jobs: list[tuple[JobPlan, JobRun]]) -> dict[str, Any]:
    """The simulated drive's I/O over the whole run, as Linux's disk statistics count it:
    commands (the drive's own counts, ramps included), milliseconds spent on them, and the
    share of the time it was busy (in each run of jobs at once, while its longest job ran)."""
    results = [run.result for _, run in jobs]
    devices = {run.batch: run.batch_device for _, run in jobs}

    def ticks(name: str) -> int:
        return round(sum(d.latency.mean_ns * d.latency.count for r in results
                         if (d := getattr(r, name))) / 1e6)

    def ios(name: str) -> int:
        return int(sum(device.get(f"host_{name}_commands", 0) for device in devices.values()))

    elapsed = sum(_batch_seconds(jobs).values())
    longest: dict[int, float] = {}
    for _, run in jobs:
        longest[run.batch] = min(run.batch_s, max(longest.get(run.batch, 0.0), run.result.busy_s))
    busy = sum(longest.values())
    return {"name": f"sim:{drive}", "read_ios": ios("read"), "write_ios": ios("write"),
            "read_merges": 0, "write_merges": 0, "read_ticks": ticks("read"),
            "write_ticks": ticks("write"), "in_queue": sum(ticks(n) for n in DIRECTIONS),
            "util": min(100.0, 100 * busy / elapsed) if elapsed else 0.0}


def _ms(seconds: float) -> int:
    """fio's runtime: microseconds rounded up to whole milliseconds."""
    return (int(seconds * 1e6) + 999) // 1000

