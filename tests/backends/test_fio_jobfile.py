"""Steps become fio job files with fio's meanings."""

from pathlib import Path

from ssdlab.backends.fio.jobfile import Invocation, job_text
from ssdlab.model import Step

PATH = Path("/dev/nvme9n1")


def job(step, index=0):
    return job_text(step, PATH, "io_uring", Invocation.for_burst(step, index), Path("/tmp/log/b"))


def test_time_or_bytes_whichever_first_is_runtime_and_io_size_without_time_based():
    step = Step(label="QD4", rw="randread", bs=4096, iodepth=4, size=64 << 30, runtime=60,
                io_size=32 << 30, idle_after=60)
    assert job(step) == (
        "[QD4]\nfilename=/dev/nvme9n1\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4096\n"
        "iodepth=4\noffset=0\nsize=68719476736\nio_size=34359738368\nruntime=60000ms\n"
        "randseed=1\npercentile_list=50:99:99.9:99.99\nwrite_bw_log=/tmp/log/b\n"
        "log_avg_msec=50\ngroup_reporting=1\n")
    assert "time_based" not in job(step)


def test_a_time_based_step_is_fios_time_based_with_no_byte_limit():
    step = Step(label="90% filled", rw="write", bs=131072, iodepth=32, size=1 << 30, runtime=60,
                time_based=True)
    text = job(step)
    assert "runtime=60000ms\ntime_based=1\n" in text and "io_size" not in text


def test_fractional_runtime_from_scale_is_kept_in_milliseconds():
    step = Step(label="QD1", rw="read", bs=131072, size=1 << 30, runtime=0.6)
    assert "runtime=600ms\n" in job(step)


def test_mixes_carry_their_read_share_and_sequential_jobs_no_seed():
    text = job(Step(label="70% read", rw="rw", rwmixread=70, bs=131072, size=1 << 30))
    assert "rw=rw\n" in text and "rwmixread=70\n" in text and "randseed" not in text


def test_random_bursts_change_seed_sequential_bursts_move_on():
    rnd = Step(label="b", rw="randwrite", bs=4096, size=1 << 30, io_size=32 << 20,
               burst_bytes=1 << 20, duty_cycle=0.2)
    assert [Invocation.for_burst(rnd, i).randseed for i in range(3)] == [1, 2, 3]
    assert {Invocation.for_burst(rnd, i).offset for i in range(3)} == {0}
    seq = Step(label="b", rw="read", bs=131072, size=4 << 20, io_size=8 << 20,
               burst_bytes=1 << 20, duty_cycle=0.2)
    assert [Invocation.for_burst(seq, i).offset for i in range(6)] == [0, 1 << 20, 2 << 20, 3 << 20, 0, 1 << 20]
    text = job(seq, 2)
    assert "offset=2097152\n" in text and "size=2097152\n" in text and "io_size=1048576\n" in text


def test_block_size_splits_and_random_distributions_are_fios_own_options():
    split = ({"bs": 512, "pct": 4}, {"bs": 4096, "pct": 96})
    text = job(Step(label="mix", rw="randwrite", bs=4096, size=1 << 30, bssplit=split,
                    distribution={"kind": "zoned", "zones": [{"access_pct": 50, "extent": 5},
                                                             {"access_pct": 50, "extent": 95}]}))
    assert "bssplit=512/4:4096/96\n" in text and "random_distribution=zoned:50/5:50/95\n" in text
    for spread, said in (({"kind": "zipf", "theta": 1.2}, "zipf:1.2"), ({"kind": "pareto", "h": 0.3}, "pareto:0.3"),
                         ({"kind": "normal", "dev_pct": 20}, "normal:20"),
                         ({"kind": "zoned_abs", "zones": [{"access_pct": 100, "extent": 1 << 20}]},
                          "zoned_abs:100/1048576")):
        step = Step(label="r", rw="randread", bs=4096, size=1 << 30, distribution=spread)
        assert f"random_distribution={said}\n" in job(step)
    plain = job(Step(label="r", rw="randread", bs=4096, size=1 << 30))
    assert "random_distribution" not in plain and "bssplit" not in plain
