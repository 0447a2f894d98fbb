"""FioBackend with the real fio on a small file, and with fake fios that fail."""

import os
import stat

import pytest

from ssdlab.backends.fio import FioBackend
from ssdlab.errors import BackendFailed, SsdlabError
from ssdlab.external import Commands
from ssdlab.model import Op, Phase, Step
from ssdlab.targets.purge import Purge
from ssdlab.units import MiB

SIZE = 64 * MiB


@pytest.fixture
def target(scratch):
    path = scratch / "target.img"
    with open(path, "wb") as f:
        f.write(os.urandom(MiB) * (SIZE // MiB))
    return path


class FakeSleep:
    def __init__(self):
        self.calls = []

    def __call__(self, seconds):
        self.calls.append(seconds)


def backend(path, **kwargs):
    return FioBackend(path, "file", purge=lambda: Purge("recreating it", ("recreated",)), **kwargs)


def test_the_probe_picks_io_uring_here_and_describe_names_fio(target):
    info = backend(target).describe()
    assert info["engine"] == "fio" and info["fio_version"].startswith("fio-3")
    assert info["ioengine"] in ("io_uring", "libaio")


def test_random_read_step(target):
    step = Step(label="QD4", rw=Op.RANDREAD, bs=4096, iodepth=4, size=SIZE, io_size=8 * MiB)
    outcome = backend(target).run_step(step)
    r = outcome.result
    assert set(r.directions) == {"read"} and r.read.bytes == 8 * MiB and r.read.ios == 2048
    assert r.iops > 0 and r.read.latency.p99_ns >= r.read.latency.p50_ns > 0
    assert r.per_second and all(p.mbps > 0 for p in r.per_second)
    text, = outcome.commands
    assert f"filename={target}" in text and "rw=randread" in text and "iodepth=4" in text


def test_mixed_step_measures_both_directions(target):
    step = Step(label="50%", rw=Op.RANDRW, rwmixread=50, bs=4096, iodepth=2, size=SIZE, io_size=4 * MiB)
    r = backend(target).run_step(step).result
    assert r.read.ios > 0 and r.write.ios > 0 and r.read.ios + r.write.ios == 1024


def test_bursts_idle_for_the_duty_cycle_and_merge_exactly(target):
    sleep = FakeSleep()
    step = Step(label="bursts", rw=Op.RANDWRITE, bs=4096, size=SIZE, io_size=4 * MiB,
                burst_bytes=MiB, duty_cycle=0.2, idle_after=3.0)
    outcome = backend(target, sleep=sleep).run_step(step)
    r = outcome.result
    assert r.bursts == 4 and len(outcome.commands) == 4
    assert [f"randseed={i}" in c for i, c in enumerate(outcome.commands, 1)] == [True] * 4
    assert r.write.bytes == 4 * MiB and r.write.ios == 1024
    assert len(sleep.calls) == 5 and sleep.calls[-1] == 3.0
    assert sum(sleep.calls[:4]) == pytest.approx(r.busy_s * 4)   # busy / (busy + idle) = 0.2
    assert r.idle_s == pytest.approx(sum(sleep.calls))
    assert r.write.latency.count == 1024


def test_runtime_ends_a_step_before_its_byte_limit(target):
    step = Step(label="QD1", rw=Op.RANDREAD, bs=4096, size=SIZE, runtime=1.0, io_size=64 * 1024 * MiB)
    r = backend(target).run_step(step).result
    assert r.read.bytes < step.io_size
    assert 0.9 <= r.busy_s <= 1.1  # fio's own measured runtime, not the test's wall clock
    assert len(r.per_second) == 1 and r.per_second[0].t_s == pytest.approx(r.busy_s, abs=0.01)


def test_io_size_beyond_the_span_loops_over_it(target):
    step = Step(label="loop", rw=Op.READ, bs=128 * 1024, iodepth=8, size=8 * MiB, io_size=32 * MiB)
    assert backend(target).run_step(step).result.read.bytes == 32 * MiB


def test_fill_step_gets_a_sixteen_point_per_gib_series(target):
    step = Step(label="fill", rw=Op.WRITE, bs=128 * 1024, iodepth=32, size=SIZE, per_gib_series=True)
    r = backend(target).run_step(step).result
    assert len(r.per_gib) == 16 and r.per_gib[-1].gib == pytest.approx(SIZE / (1 << 30))
    assert all(p.mbps > 0 for p in r.per_gib)


def test_purge_step_calls_the_targets_purge_and_records_it(target):
    step = Step(label="purge", phase=Phase.PURGE, rw=Op.TRIM, bs=128 * 1024, size=SIZE)
    outcome = backend(target, ioengine="io_uring").run_step(step)
    assert outcome.commands == ("recreated",) and outcome.result.directions == {}
    assert outcome.result.notes == ("purged by recreating it",)


class FakeFio(Commands):
    def __init__(self, script):
        self.script = script

    def which(self, program):
        return str(self.script) if program == "fio" else super().which(program)


def fake_fio(tmp_path, body):
    script = tmp_path / "fio"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return FakeFio(script)


STEP = Step(label="QD1", rw=Op.RANDREAD, bs=4096, size=SIZE, io_size=MiB)


@pytest.mark.parametrize("body, message", [
    ("kill -KILL $$", "fio was killed by SIGKILL"),
    ("echo 'fio: engine io_uring not loadable' >&2; exit 1", "exit status 1.*io_uring not loadable"),
    ("echo 'Segmentation fault? no: garbage'", "fio printed no JSON result"),
])
def test_fio_failures_become_clear_messages(tmp_path, target, body, message):
    with pytest.raises(BackendFailed, match=message):
        backend(target, commands=fake_fio(tmp_path, body), ioengine="io_uring").run_step(STEP)


def test_missing_fio_says_how_to_install_it(target):
    class NoFio(Commands):
        def which(self, program):
            return None
    with pytest.raises(SsdlabError, match="apt-get install fio"):
        backend(target, commands=NoFio(), ioengine="io_uring").run_step(STEP)


def test_reads_after_idle_on_a_file_say_what_they_measure(target):
    """idle-wake's reads: on a file they time the filesystem and its device, not a drive."""
    step = Step(label="reads after 0.01 s idle", rw=Op.RANDREAD, bs=4096, size=SIZE, io_size=3 * 4096)
    outcome, latencies = backend(target).run_timed_reads(step, 0.01, randseed=7)
    assert len(latencies) == 3 and all(ns > 0 for ns in latencies)
    assert outcome.result.notes[0].startswith("reads after idle on a file target: their latency is the filesystem's")
    assert outcome.result.idle_s == pytest.approx(0.03)


def test_a_run_too_short_for_fios_millisecond_clock_is_timed_by_its_completions(target):
    """fio counts a run's time in whole milliseconds (rounded up), so a burst of a few ms
    measures one of two or three throughputs run after run. A run of few I/Os logs each
    I/O's completion, and its busy time is the I/O count over their completion rate, inside
    the millisecond fio's clock allows; under 10 ms a note says how little it measures."""
    step = Step(label="burst", rw=Op.RANDREAD, bs=4096, iodepth=1, size=SIZE, io_size=512 * 1024)
    backend(target).run_step(step)  # the new file's first reads are the filesystem's, cold
    outcomes = [backend(target).run_step(step) for _ in range(5)]
    busy_ms = [o.result.busy_s * 1000 for o in outcomes]
    for o in outcomes:
        assert "write_lat_log=" in o.commands[0] and "log_avg_msec=0" in o.commands[0]
        assert o.result.read.bytes == 512 * 1024 and o.result.per_second
        if o.result.busy_s < 0.01:
            assert any("timed by its I/Os' completions" in n for n in o.result.notes)
    # a finer clock than fio's: not whole milliseconds (not always: on a loaded machine the
    # completions spread past fio's millisecond, and its own time is kept; 4 runs of 5 seen)
    assert any(abs(b - round(b)) > 1e-6 for b in busy_ms), busy_ms
