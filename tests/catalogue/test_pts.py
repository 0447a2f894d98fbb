"""The SNIA PTS tests: the loops as the specification orders them, rounds until steady state
(never hidden when not reached), resume at a round boundary."""

import math

import pytest

from ssdlab.catalogue import Scale, estimated_seconds, lookup
from ssdlab.catalogue.pts import MAX_ROUNDS, PtsTest
from ssdlab.model import Op, Phase, SecondPoint, Step, StepResult
from ssdlab.units import KiB, MiB
from tests.factories import result

TB = 10**12
MIXES = (100, 95, 65, 50, 35, 5, 0)
SIZES = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512)


def pts(test_id: str) -> PtsTest:
    found = lookup(test_id)
    assert isinstance(found, PtsTest)
    return found


def test_the_iops_loop_runs_the_matrix_in_the_specifications_nesting_and_order():
    test = pts("pts-iops").compile(Scale(), TB)
    active = int(TB * 0.75) // MiB * MiB
    purge, wipc, *rounds = test.steps
    assert purge.phase is Phase.PURGE
    assert (wipc.phase, wipc.rw, wipc.bs, wipc.size, wipc.io_size) == (
        Phase.PRECONDITION, Op.WRITE, 128 * KiB, active, 2 * active)
    assert len(rounds) == MAX_ROUNDS * 56
    first = rounds[:56]
    assert [(s.rwmixread if s.rw is Op.RANDRW else {Op.RANDREAD: 100, Op.RANDWRITE: 0}[s.rw], s.bs)
            for s in first] == [(mix, bs) for mix in MIXES for bs in SIZES]
    for step in rounds:
        assert (step.runtime, step.time_based, step.size, step.iodepth) == (60.0, True, active, 16)
        assert [job.iodepth for job in step.concurrent] == [16]  # two threads of QD16
    assert test.settings["conformant"]
    assert (test.settings["threads"], test.settings["write_cache"], test.settings["active_range_pct"]) == (2, "on", 75)
    # the worst case: 25 rounds of 56 minutes
    assert estimated_seconds(test, Scale()) > MAX_ROUNDS * 56 * 60


def test_the_enterprise_variant_uses_the_whole_drive_four_threads_and_two_throughput_block_sizes():
    iops = pts("pts-e-iops").compile(Scale(), TB)
    assert iops.steps[2].size == TB // MiB * MiB
    assert (iops.steps[2].iodepth, len(iops.steps[2].concurrent)) == (32, 3)
    assert iops.settings["write_cache"] == "off"
    tp = pts("pts-e-throughput").compile(Scale(), TB).steps
    purges = [i for i, s in enumerate(tp) if s.phase is Phase.PURGE]
    assert purges == [0, 2 + 2 * MAX_ROUNDS]  # each block size from its own purge and WIPC
    assert [(s.rw, s.bs) for s in tp[2:4]] == [(Op.READ, 1024 * KiB), (Op.WRITE, 1024 * KiB)]
    assert tp[purges[1] + 1].bs == 128 * KiB and tp[purges[1] + 2].bs == 128 * KiB
    assert not tp[2].concurrent and tp[2].iodepth == 128  # one sequential job at the total depth


def test_the_latency_loop_is_one_thread_at_qd1():
    steps = pts("pts-latency").compile(Scale(), TB).steps[2:11]
    assert [(s.bs, s.iodepth, s.concurrent) for s in steps] == [(bs, 1, ()) for _ in range(3)
                                                                for bs in (8 * KiB, 4 * KiB, 512)]


def test_a_scaled_run_is_not_conformant():
    test = pts("pts-iops").compile(Scale(0.01), TB)
    assert not test.settings["conformant"] and test.settings["scale"] == 0.01
    assert test.steps[2].runtime == 1.0


class FakeRun:
    """Runs steps into `done`, each write cell's IOPS from `tracked(round)`; other cells 1000."""

    def __init__(self, tracked, kept=()):
        self.tracked, self.done, self.replayed, self.rounds = tracked, list(kept), [], {}

    def run_step(self, step: Step, read_health: bool = False) -> None:
        self.done.append((step, self._result(step)))

    def replay(self, step: Step, stored: StepResult) -> None:
        self.replayed.append(step.label)

    def _result(self, step: Step) -> StepResult:
        if step.phase is not Phase.MEASURE:
            return result()
        r = int(step.label.split("round ")[1].split("/")[0]) if "round " in step.label else 0
        iops = self.tracked(r) if (step.rw, step.bs) == (Op.RANDWRITE, 4 * KiB) else 1000.0
        return result(mbps=iops * 4096 / 1e6, bs=4096, direction="write")


def run(test_id, tracked, kept=()):
    test = pts(test_id)
    steps = test.compile(Scale(0.01), TB).steps
    fake = FakeRun(tracked, kept)
    found = test.run(fake, steps)
    return test, steps, fake, found, test.result(found, fake.done)


@pytest.mark.parametrize("tracked, steady_at", [
    (lambda r: 50_000.0, 5),  # steady from the start: the first full window
    (lambda r: 100_000.0 / r if r < 6 else 15_000.0, 10),  # falls to its level, then 5 rounds flat
    (lambda r: 10_000.0 + 2_000.0 * r, None),  # drifting: 8 000 over a window of ~50 000 (16 %)
    (lambda r: 60_000.0 if r % 2 else 40_000.0, None),  # oscillating: a range of 40 % of its mean
])
def test_rounds_run_until_the_tracked_cell_is_steady_and_not_steady_is_said(tracked, steady_at):
    _, _, fake, found, score = run("pts-iops", tracked)
    rounds = steady_at or MAX_ROUNDS
    assert len(fake.done) == 2 + rounds * 56
    assert found == {"steady_rounds": [steady_at]}
    (loop,) = score["loops"]
    assert loop["steady"] == {"reached": steady_at is not None, "round": steady_at, "rounds_run": rounds,
                              "max_rounds": MAX_ROUNDS}
    assert score["steady"] is (steady_at is not None)
    window = [tracked(r) for r in range(rounds - 4, rounds + 1)]
    assert score["value"] == pytest.approx(sum(window) / 5, rel=1e-3)
    series = loop["tracked"]["RND 4 KiB 0/100"]
    assert series["series"] == pytest.approx([tracked(r) for r in range(1, rounds + 1)], rel=1e-3)
    assert (series["window"]["first_round"], series["window"]["last_round"]) == (rounds - 4, rounds)
    assert len(loop["rounds"]) == rounds and len(loop["rounds"][0]) == 56


def test_every_loop_stops_on_its_own_and_the_next_starts_from_its_purge():
    _, _, fake, found, score = run("pts-e-throughput", lambda r: 1.0)  # every cell flat
    assert found == {"steady_rounds": [5, 5]}
    assert [s.phase for s, _ in fake.done].count(Phase.PURGE) == 2
    assert len(fake.done) == 2 * (2 + 5 * 2)
    assert [lp["name"] for lp in score["loops"]] == ["throughput 1 MiB", "throughput 128 KiB"]


def test_a_resumed_test_keeps_its_completed_rounds_and_replays_them():
    tracked = lambda r: 100_000.0 / r if r < 6 else 15_000.0  # noqa: E731  steady at round 10
    test, steps, first, _, whole = run("pts-iops", tracked)
    # stopped in round 4, 10 cells in: the 3 rounds done are kept, round 4 runs again
    stored = first.done[:2 + 3 * 56 + 10]
    assert test.resumable(stored) == 2 + 3 * 56
    again = FakeRun(tracked, stored[:2 + 3 * 56])
    found = test.run(again, steps)
    assert again.replayed == [s.label for s, _ in stored[:2 + 3 * 56]]
    assert found == {"steady_rounds": [10]}
    assert [s for s, _ in again.done] == [s for s, _ in first.done]
    assert test.result(found, again.done) == whole


@pytest.mark.parametrize("kept, keeps", [(0, 0), (1, 0), (2, 0), (2 + 55, 0), (2 + 56, 2 + 56)])
def test_a_loop_not_past_its_first_round_starts_again_from_its_purge(kept, keeps):
    test, _, first, _, _ = run("pts-iops", lambda r: 50_000.0)
    assert test.resumable(first.done[:kept]) == keeps


def test_resume_in_a_later_loop_keeps_the_loops_that_ended():
    test, _, first, _, _ = run("pts-e-throughput", lambda r: 1.0)
    ended = 2 + 5 * 2
    assert test.resumable(first.done) == len(first.done)
    assert test.resumable(first.done[:ended + 3]) == ended  # the second loop not past round 1
    assert test.resumable(first.done[:ended + 2 + 2 * 2 + 1]) == ended + 2 + 2 * 2


def test_a_stored_step_that_is_not_the_tests_refuses_to_resume():
    test, steps, first, _, _ = run("pts-iops", lambda r: 50_000.0)
    changed = [(s.model_copy(update={"label": "other"}) if i == 1 else s, r) for i, (s, r) in enumerate(first.done)]
    with pytest.raises(Exception, match="not the test's"):
        test.run(FakeRun(lambda r: 1.0, changed[:60]), steps)


def test_the_latency_loop_tracks_the_mean_and_keeps_the_maximum():
    _, _, fake, _, score = run("pts-latency", lambda r: 1.0)
    row = score["loops"][0]["rounds"][0]
    assert row["RND 4 KiB 0/100"] == pytest.approx(37.5) and row["RND 4 KiB 0/100 max"] == 90.0
    assert score["unit"] == "mean µs" and not math.isnan(score["value"])


def test_write_saturation_writes_four_capacities_or_24_hours_from_a_purged_drive():
    client, enterprise = (lookup(t).compile(Scale(), TB) for t in ("pts-wsat", "pts-e-wsat"))
    purge, writes = client.steps
    assert purge.phase is Phase.PURGE
    assert (writes.rw, writes.bs, writes.iodepth, writes.size, writes.io_size, writes.runtime) == (
        Op.RANDWRITE, 4 * KiB, 32, int(TB * 0.75) // MiB * MiB, 4 * (TB // MiB * MiB), 24 * 3600.0)
    assert enterprise.steps[1].iodepth == 128 and enterprise.steps[1].size == TB // MiB * MiB
    assert enterprise.settings["write_cache"] == "off"


def test_write_saturation_gives_iops_per_minute_against_time_and_data_written():
    # 20 minutes: 100 K IOPS falling by 8 K a minute to 20 K at minute 10, then flat
    per_minute = [100_000 - 8_000 * m if m < 10 else 20_000 for m in range(20)]
    seconds = tuple(SecondPoint(t_s=s + 1, mbps=per_minute[s // 60] * 4096 / 1e6, iops=per_minute[s // 60])
                    for s in range(1200))
    wsat = lookup("pts-wsat")
    step = wsat.compile(Scale(), TB).steps[1]
    measured = StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=1200.0, idle_s=0.0, engine="test",
                          per_second=seconds)
    score = wsat.score([(step, measured)])
    assert score["window_s"] == 60 and [p["iops"] for p in score["points"]] == per_minute
    assert [p["t_s"] for p in score["points"]] == [60.0 * (m + 1) for m in range(20)]
    written = [sum(per_minute[:m + 1]) * 60 * 4096 / 1e9 for m in range(20)]
    assert [p["written_gb"] for p in score["points"]] == pytest.approx(written, abs=1e-3)
    assert (score["value"], score["fob_iops"], score["unit"]) == (20_000, 100_000, "IOPS")


def test_cross_stimulus_recovery_writes_sequential_random_sequential_without_a_pause():
    xsr = lookup("pts-xsr")
    purge, *accesses = xsr.compile(Scale(), TB).steps
    assert purge.phase is Phase.PURGE
    assert [(s.rw, s.bs, s.runtime, s.time_based, s.iodepth) for s in accesses] == [
        (Op.WRITE, 128 * KiB, 8 * 3600.0, True, 32), (Op.RANDWRITE, 4 * KiB, 6 * 3600.0, True, 32),
        (Op.WRITE, 128 * KiB, 8 * 3600.0, True, 32)]
    assert all(s.idle_after == 0 for s in accesses)


def test_cross_stimulus_recovery_says_how_long_sequential_writes_take_to_come_back():
    xsr = lookup("pts-xsr")
    steps = xsr.compile(Scale(), TB).steps[1:]

    def measured(mbps_at):  # MB/s of minute m
        return StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=3600.0, idle_s=0.0, engine="test",
                          per_second=tuple(SecondPoint(t_s=s + 1, mbps=mbps_at(s // 60), iops=mbps_at(s // 60) * 8)
                                           for s in range(3600)))
    recovering = [measured(lambda m: 2000.0), measured(lambda m: 100.0),
                  measured(lambda m: min(2000.0, 500.0 + 50.0 * m))]
    score = xsr.score(list(zip(steps, recovering, strict=True)))
    assert (score["before_mbps"], score["value"], score["unit"]) == (2000.0, 2000.0, "MB/s")
    # 90 % of 2000 MB/s first reached in minute 26 (500 + 50 x 26 = 1800)
    assert score["recovered_after_s"] == 27 * 60.0
    assert [a["mbps"] for a in score["accesses"]] == [2000.0, 100.0, 2000.0]
    assert len(score["accesses"][1]["points"]) == 60


def test_host_idle_recovery_bursts_after_each_idle_length_once_steady():
    steps = pts("pts-hir").compile(Scale(), TB).steps
    loop = 2 + MAX_ROUNDS
    assert [s.label for s in steps[2:4]] == ["steady state round 1/25: RND 4 KiB 0/100",
                                            "steady state round 2/25: RND 4 KiB 0/100"]
    after = steps[loop:]
    assert len(after) == 5 * 361
    for k, idle in enumerate((5, 10, 15, 25, 50)):
        bursts, back = after[k * 361:k * 361 + 360], after[k * 361 + 360]
        assert {(s.rw, s.bs, s.runtime, s.idle_after, s.iodepth) for s in bursts} == {
            (Op.RANDWRITE, 4 * KiB, 5.0, idle, 32)}
        assert (back.runtime, back.idle_after) == (1800.0, 0)


def test_host_idle_recovery_reports_each_idle_lengths_bursts_after_steady_state():
    def tracked(r):  # every 4 KiB write step at 20 K IOPS
        return 20_000.0
    test, steps, fake, found, score = run("pts-hir", tracked)
    assert found == {"steady_rounds": [5]}
    assert len(fake.done) == 2 + 5 + 5 * (10 + 1)  # scale 0.01: 10 bursts per idle length
    states = score["wait_states"]
    assert [s["idle_s"] for s in states] == [5, 10, 15, 25, 50]
    assert all(len(s["burst_iops"]) == 10 for s in states)
    assert score["value"] == states[-1]["mean_iops"] and score["unit"] == "IOPS"
    assert score["loops"][0]["steady"]["round"] == 5
    # stopped in its third idle length: every stored step kept, the rest run
    assert test.resumable(fake.done[:40]) == 40
    again = FakeRun(tracked, fake.done[:40])
    assert test.run(again, steps) == found and len(again.done) == len(fake.done)


def test_demand_intensity_sweeps_threads_and_depths_then_runs_the_histogram_load():
    steps = pts("pts-dirth").compile(Scale(), TB).steps
    loads = [(len(s.jobs), s.iodepth) for s in steps[2:2 + 49]]
    assert loads == [(tc, qd) for tc in (32, 16, 8, 6, 4, 2, 1) for qd in (32, 16, 8, 6, 4, 2, 1)]
    assert {(s.rw, s.rwmixread, s.bs, s.runtime) for s in steps[2:2 + 49]} == {(Op.RANDRW, 65, 4 * KiB, 60.0)}
    histogram = steps[-1]
    assert len(steps) == 2 + 25 * 49 + 1
    assert (len(histogram.jobs), histogram.iodepth, histogram.runtime) == (32, 32, 600.0)  # until chosen


def test_the_histogram_load_has_the_most_iops_under_a_5_ms_mean_response_time():
    from ssdlab.catalogue.pts import ResponseHistogram
    from ssdlab.model import DirectionResult
    from tests.factories import latency

    test = pts("pts-dirth")
    (loop,) = test.loops

    def measured(cell):  # IOPS grow with the load up to 300 K; the mean response 10 µs per command outstanding
        load = cell.threads * cell.depth
        d = DirectionResult(ios=min(load, 300) * 1000, bytes=min(load, 300) * 1000 * 4096, busy_s=1.0,
                            latency=latency([load * 10_000]))
        return StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=1.0, idle_s=0.0, engine="test", read=d)
    window = [measured(cell) for _ in range(5) for cell in loop.cells]
    threads, depth, iops, mean_us = ResponseHistogram.chosen(loop, window)
    assert (threads * depth, iops, mean_us) == (256, 256_000, 2560)  # 512 outstanding: 5.1 ms
    assert (threads, depth) == (32, 8)  # the first of the equal loads, in the loop's order
    step = test.after.actual(test.compile(Scale(), TB).steps[-1], loop, window)
    assert (len(step.jobs), step.iodepth, step.runtime) == (32, 8, 600.0)
    # no load under 5 ms: the lightest
    slow = [StepResult(started_at="2026-01-01T00:00:00+00:00", busy_s=1.0, idle_s=0.0, engine="test",
                       read=DirectionResult(ios=10, bytes=40960, busy_s=1.0, latency=latency([9_000_000])))
            for _ in range(5) for _ in loop.cells]
    assert ResponseHistogram.chosen(loop, slow)[:2] == (1, 1)
