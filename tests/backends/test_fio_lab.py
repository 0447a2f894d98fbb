"""fio for the lab and enterprise suites: TRIM as a measured step (block devices; hole
punching on files), rate_iops, 512 B blocks, and 512 B refused by a 4 KiB-sector
target as a per-step note. Goldens recorded with fio 3.33 on loop devices."""

import json
from pathlib import Path

import pytest

from ssdlab.backends.fio import FioBackend, parse
from ssdlab.backends.fio.backend import FILE_TRIM_NOTE, SHORT_RUN_NOTE
from ssdlab.backends.fio.jobfile import Invocation, job_text
from ssdlab.errors import BackendFailed
from ssdlab.model import Op, Step
from ssdlab.units import GiB, MiB
from tests.loop_devices import loop_device, require
from tests.paths import GOLDEN_FIO as GOLDEN

TRIM = Step(label="TRIM 512 MiB", rw=Op.TRIM, bs=64 * MiB, offset=512 * MiB, size=512 * MiB,
            fill_state="full")
LIGHT = Step(label="light", rw=Op.RANDWRITE, bs=512, size=256 * MiB, runtime=1.0, rate_iops=50,
             fill_state="10% filled")


def golden(name):
    return (GOLDEN / name).read_text()


def job(step, path="/dev/loop0", engine="io_uring", prefix=None):
    name = {TRIM: "trim-64m", LIGHT: "rate-512"}.get(step, "x")
    return job_text(step, Path(path), engine, Invocation.for_burst(step, 0),
                    Path(prefix or f"/var/tmp/gtrim/{name}"))


def test_trim_and_rate_limited_512_byte_jobs_are_the_recorded_ones():
    assert job(TRIM) == golden("trim-64m.fio")
    assert job(LIGHT) == golden("rate-512.fio")
    assert "rw=trim\nbs=67108864\niodepth=1\noffset=536870912\nsize=536870912\n" in job(TRIM)
    assert "rate_iops=50\n" in job(LIGHT) and "bs=512\n" in job(LIGHT)
    assert "rate_iops" not in job(Step(label="x", rw=Op.WRITE, bs=4096, size=MiB))


def test_the_trim_section_of_fio_json_becomes_the_trim_direction():
    found = parse.directions(parse.job_of(parse.split_output(golden("trim-64m.json"))[0]))
    assert set(found) == {"trim"}
    trim = found["trim"]
    assert trim.ios == 8 and trim.bytes == 512 * MiB and trim.busy_s == pytest.approx(0.026)
    assert trim.iops == pytest.approx(307.7, rel=1e-3)
    assert trim.latency.count == 8 and trim.latency.max_ns == 3433528
    assert trim.latency.mean_ns == pytest.approx(3102163.125)
    assert 0 < trim.latency.p50_ns <= trim.latency.p99_ns <= trim.latency.max_ns


def test_rate_iops_golden_did_fifty_writes_in_one_second():
    found = parse.directions(parse.job_of(parse.split_output(golden("rate-512.json"))[0]))
    assert set(found) == {"write"} and found["write"].ios == 50 and found["write"].bytes == 50 * 512


def test_512_bytes_on_a_4k_sector_device_is_a_job_error_with_its_errno():
    with pytest.raises(parse.JobError) as caught:
        parse.job_of(parse.split_output(golden("bs512-4kn.out"))[0])
    assert caught.value.code == 22 and "EINVAL" in str(caught.value)


def file_backend(path, **kwargs):
    return FioBackend(path, "file", purge=lambda: ("recreated",), **kwargs)


def test_trim_on_a_file_punches_holes_and_says_so(scratch):
    target = scratch / "t.img"
    with open(target, "wb") as f:
        f.write(b"\x5a" * (8 * MiB))
    step = Step(label="TRIM", rw=Op.TRIM, bs=MiB, offset=4 * MiB, size=4 * MiB)
    outcome = file_backend(target).run_step(step)
    r = outcome.result
    assert "ioengine=falloc" in outcome.commands[0] and r.engine == "falloc"
    assert r.trim.ios == 4 and r.trim.bytes == 4 * MiB and r.trim.latency.max_ns > 0
    assert r.notes[0] == FILE_TRIM_NOTE and r.per_second == ()
    assert r.mbps == 0 and r.iops > 0
    assert target.stat().st_blocks * 512 <= 4 * MiB + 64 * 1024   # the second half is a hole
    with open(target, "rb") as f:
        f.seek(6 * MiB)
        assert f.read(16) == b"\0" * 16


def test_an_einval_for_small_blocks_is_a_note_but_other_failures_still_fail(tmp_path, scratch):
    from tests.backends.test_fio_backend import fake_fio
    target = scratch / "t.img"
    target.write_bytes(b"\0" * MiB)
    body = f"cat {GOLDEN / 'bs512-4kn.out'}; cat {GOLDEN / 'bs512-4kn.err'} >&2; exit 1"
    fio = fake_fio(tmp_path, body)
    small = Step(label="512 B", rw=Op.RANDWRITE, bs=512, size=MiB, runtime=1.0)
    r = file_backend(target, commands=fio, ioengine="io_uring").run_step(small).result
    assert r.directions == {} and r.busy_s == 0
    assert r.notes[0].startswith("not run: the target refused 512 B direct I/O (EINVAL)")
    assert "losetup --sector-size 512" in r.notes[0] and "EINVAL" in r.notes[1]
    with pytest.raises(BackendFailed, match="EINVAL"):  # 4 KiB blocks: the target is broken
        file_backend(target, commands=fio, ioengine="io_uring").run_step(
            Step(label="4k", rw=Op.RANDWRITE, bs=4096, size=MiB, runtime=1.0))


@pytest.mark.root
def test_trim_rate_and_512_bytes_on_loop_devices(scratch):
    require("blkdiscard")
    with loop_device(scratch / "disk.img", size=GiB) as device:
        fio = FioBackend(device, "device", purge=lambda: ())
        fio.run_step(Step(label="fill", rw=Op.WRITE, bs=128 * 1024, iodepth=32, size=GiB))
        r = fio.run_step(TRIM).result
        assert r.trim.ios == 8 and r.trim.bytes == 512 * MiB and r.trim.latency.max_ns > 0
        # no note of a file's punched holes (only, when this fast, that the run was short)
        assert set(r.notes) <= {SHORT_RUN_NOTE} and r.engine in ("io_uring", "libaio")
        light = fio.run_step(LIGHT).result
        assert 40 <= light.write.ios <= 55 and light.write.bytes == light.write.ios * 512
    with loop_device(scratch / "disk4k.img", size=256 * MiB, sector_size=4096) as device:
        assert (Path("/sys/block") / device.name / "queue/logical_block_size").read_text().strip() == "4096"
        r = FioBackend(device, "device", purge=lambda: ()).run_step(
            Step(label="512", rw=Op.RANDWRITE, bs=512, size=64 * MiB, runtime=1.0)).result
        assert r.directions == {} and r.notes[0].startswith("not run")
        json.dumps(r.model_dump(mode="json"))
