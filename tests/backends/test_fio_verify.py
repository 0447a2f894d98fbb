"""The retention test's verify pattern (ssdlab.backends.fio.verify) with real fio 3.33 on real
files: the pattern written by one fio run, checked by another, after Python damaged the file
as a drive can (flipped bytes, a TRIM, a block at the wrong place, a moved region, another
seed, unreadable blocks)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.backends.fio.parse import split_output
from ssdlab.backends.fio.verify import (
    KEEP,
    BlockFailure,
    FailureKind,
    VerifyReport,
    check_options,
    parse_failures,
    pattern_options,
)
from ssdlab.external import c_locale
from ssdlab.units import KiB, MiB
from tests.paths import DATA

RECORDED = DATA / "fio_verify"
SEED = 20240611
SIZE = 16 * MiB
BS = 4 * KiB
BLOCKS = SIZE // BS   # 4096

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")


def fio(directory: Path, name: str, target: Path, options: dict[str, str], *, offset: int = 0,
        size: int = SIZE, engine: str = "libaio", env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """One fio run of one job, as the fio backend runs it (a thread, json+, the C locale),
    in `directory` (its working directory)."""
    lines = [f"[{name}]", f"filename={target}", f"ioengine={engine}", "iodepth=8", "direct=1",
             f"offset={offset}", f"size={size}", *(f"{k}={v}" for k, v in options.items())]
    job = directory / f"{name}.fio"
    job.write_text("\n".join(lines) + "\n")
    return subprocess.run(["fio", "--thread", "--output-format=json+", str(job)], cwd=directory,
                          capture_output=True, text=True, timeout=120, env={**c_locale(), **(env or {})})


def write_pattern(directory: Path, seed: int = SEED, bs: int = BS, size: int = SIZE) -> Path:
    target = directory / "target.img"
    done = fio(directory, "pattern", target, pattern_options(seed, bs), size=size)
    assert done.returncode == 0, done.stderr
    assert split_output(done.stdout)[0]["jobs"][0]["read"]["total_ios"] == 0   # no inline verify
    return target


def check(directory: Path, target: Path, seed: int = SEED, bs: int = BS, **kwargs) -> VerifyReport:
    done = fio(directory, "check", target, check_options(seed, bs), **kwargs)
    doc, notes = split_output(done.stdout)
    return parse_failures("\n".join([*notes, done.stderr]), doc)


def damage(target: Path, offset: int, data: bytes) -> None:
    with open(target, "r+b") as f:
        f.seek(offset)
        f.write(data)


def punch_hole(target: Path, offset: int, length: int) -> None:
    """What ssdlab's TRIM of a file target does (fio's falloc engine): the range reads as zeros."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
    fd = os.open(target, os.O_RDWR)
    try:
        if libc.fallocate(fd, 0x01 | 0x02, offset, length) != 0:   # KEEP_SIZE | PUNCH_HOLE
            pytest.skip(f"cannot punch a hole here: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def test_options_are_fios_own_names_and_the_two_passes_share_the_pattern():
    shared = {"rw": "readwrite", "rwmixread": "0", "bs": "4096", "verify": "crc32c",
              "verify_interval": "4096", "randseed": "7", "verify_state_save": "0"}
    assert pattern_options(7, 4096) == {**shared, "do_verify": "0"}
    assert check_options(7, 4096) == {**shared, "verify_only": "1", "do_verify": "1", "verify_fatal": "0",
                                      "verify_dump": "0", "continue_on_error": "all", "error_dump": "1"}


@pytest.mark.parametrize("seed, bs", [(-1, 4096), (2**63, 4096), (1, 0), (1, 4000), (1, 256)])
def test_a_seed_or_block_size_fio_cannot_take_is_refused(seed, bs):
    with pytest.raises(ValueError):
        pattern_options(seed, bs)
    with pytest.raises(ValueError):
        check_options(seed, bs)


def test_the_largest_seed_fio_parses_writes_and_verifies(scratch):
    target = write_pattern(scratch, seed=2**63 - 1, size=MiB)
    assert check(scratch, target, seed=2**63 - 1, size=MiB).ok


def test_a_later_separate_check_finds_every_block_intact_and_leaves_no_file_behind(scratch):
    target = write_pattern(scratch)
    report = check(scratch, target)
    assert report.ok
    assert (report.blocks_checked, report.blocks_expected, report.failed_blocks) == (BLOCKS, BLOCKS, 0)
    assert (report.fio_error_count, report.fio_error, report.failures) == (0, 0, ())
    assert report.describe() == "all 4096 blocks verified"
    # no verify state file, no dumps: only the job files and the target
    assert sorted(p.name for p in scratch.iterdir()) == ["check.fio", "pattern.fio", "target.img"]


def test_bytes_damaged_in_three_blocks_are_each_reported_at_their_offset(scratch):
    target = write_pattern(scratch)
    damage(target, 1 * MiB + 100, b"\xff\xff\xff")          # data of the block at 1 MiB
    damage(target, 5 * MiB, b"\xff")                        # first byte of its header: the magic
    damage(target, 9 * MiB + BS - 1, b"\x00" if target.read_bytes()[9 * MiB + BS - 1] else b"\x01")
    report = check(scratch, target)
    assert [(f.offset, f.length, f.kind) for f in report.failures] == [
        (1 * MiB, BS, FailureKind.CHECKSUM), (5 * MiB, BS, FailureKind.BAD_MAGIC),
        (9 * MiB, BS, FailureKind.CHECKSUM)]
    first = report.failures[0]
    assert first.check == "crc32c" and first.found and first.expected and first.found != first.expected
    assert report.failures[1].expected == "acca"                         # fio's header magic
    assert (report.failed_blocks, report.fio_error_count, report.fio_error) == (3, 3, 84)   # EILSEQ
    assert report.complete and report.counts_agree and not report.ok
    assert report.describe() == (
        f"3 of 4096 blocks differ: offset 1048576 (crc32c mismatch), offset 5242880 (no fio header "
        f"(magic {report.failures[1].found})), offset 9437184 (crc32c mismatch)")


def test_a_trimmed_range_reads_as_zeroed_headers(scratch):
    target = write_pattern(scratch)
    punch_hole(target, 12 * MiB, 64 * KiB)
    report = check(scratch, target)
    assert [f.offset for f in report.failures] == list(range(12 * MiB, 12 * MiB + 64 * KiB, BS))
    assert report.kinds == {FailureKind.ZERO_HEADER: 16}
    assert report.counts_agree and report.complete
    assert report.describe().startswith(
        "16 of 4096 blocks differ: offset 12582912 (header zeroed, as after a TRIM), "
        "offset 12587008 (header zeroed, as after a TRIM)")
    assert report.describe().endswith(" and 6 more")


def test_a_block_copied_to_another_offset_is_a_header_of_another_write(scratch):
    target = write_pattern(scratch)
    block_0 = target.read_bytes()[:BS]
    damage(target, 10 * MiB, block_0)   # a misdirected write: block 0's data at 10 MiB
    report = check(scratch, target)
    [failure] = report.failures
    assert (failure.offset, failure.kind) == (10 * MiB, FailureKind.WRONG_SEED)
    assert failure.found != failure.expected
    assert report.counts_agree


def test_a_region_moved_by_1_mib_has_headers_naming_offsets_1_mib_earlier(scratch):
    """The region checked at 1 MiB holds the pattern written at 0 (as after a shifted
    partition): same seeds in the same order, so fio's offset check is what fails."""
    target = write_pattern(scratch, size=4 * MiB)
    data = target.read_bytes()[:4 * MiB]
    target.write_bytes(b"\0" * MiB + data)
    report = check(scratch, target, offset=MiB, size=4 * MiB)
    assert report.failed_blocks == report.blocks_checked == 1024 == report.fio_error_count
    assert report.kinds == {FailureKind.WRONG_OFFSET: 1024}
    assert [(f.offset, f.found) for f in report.failures[:2]] == [(MiB, "0"), (MiB + BS, str(BS))]
    assert report.describe().startswith("1024 of 1024 blocks differ: offset 1048576 (header names offset 0), "
                                        "offset 1052672 (header names offset 4096)")


def test_another_seed_fails_every_block_and_the_report_keeps_the_first_thousand(scratch):
    target = write_pattern(scratch)
    report = check(scratch, target, seed=SEED + 1)
    assert (report.failed_blocks, report.fio_error_count, report.blocks_checked) == (BLOCKS, BLOCKS, BLOCKS)
    assert len(report.failures) == KEEP
    assert report.kinds == {FailureKind.WRONG_SEED: BLOCKS}
    assert [f.offset for f in report.failures] == list(range(0, KEEP * BS, BS))
    assert report.describe().startswith("4096 of 4096 blocks differ: offset 0 (header of another write: seed ")
    assert report.describe().endswith(" and 4086 more")


def test_with_rw_write_fio_would_not_notice_another_seed(scratch):
    """Why both passes are readwrite: a write-only job takes each header's seed as given."""
    target = write_pattern(scratch)
    options = {**check_options(SEED + 1, BS), "rw": "write"}
    options.pop("rwmixread")
    done = fio(scratch, "check", target, options)
    report = parse_failures(done.stderr, split_output(done.stdout)[0])
    assert report.ok and report.blocks_checked == BLOCKS


# Unreadable blocks: reads made to fail with EIO by tests/data/fio_verify/eio_shim.c

UNREADABLE = (3 * MiB, 3 * MiB + 128 * KiB)


@pytest.fixture(scope="module")
def eio_shim(tmp_path_factory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler for the EIO shim")
    shim = tmp_path_factory.mktemp("shim") / "eio_shim.so"
    done = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(shim),
                           str(RECORDED / "eio_shim.c"), "-ldl"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot build the EIO shim: {done.stderr.strip()[-200:]}")
    return shim


def check_unreadable(directory: Path, shim: Path, engine: str) -> VerifyReport:
    target = write_pattern(directory, bs=128 * KiB)
    env = {"LD_PRELOAD": str(shim), "EIO_PATH": os.path.realpath(target),
           "EIO_OFFSET": str(UNREADABLE[0]), "EIO_LENGTH": str(256 * KiB)}
    return check(directory, target, bs=128 * KiB, engine=engine, env=env)


def assert_unreadable_blocks_all_found(report: VerifyReport) -> None:
    assert [(f.offset, f.length, f.kind, f.check) for f in report.failures] == [
        (offset, 128 * KiB, FailureKind.READ_ERROR, "Input/output error") for offset in UNREADABLE]
    assert (report.blocks_checked, report.blocks_expected, report.fio_error_count, report.fio_error) == (
        128, 128, 2, 5)   # EIO first
    assert report.complete and report.counts_agree and not report.ok
    assert report.describe() == ("2 of 128 blocks failed: offset 3145728 (unreadable: Input/output error), "
                                 "offset 3276800 (unreadable: Input/output error)")


def assert_psync_stopped_at_the_first_unreadable_block(report: VerifyReport) -> None:
    assert [(f.offset, f.kind) for f in report.failures] == [(UNREADABLE[0], FailureKind.READ_ERROR)]
    assert (report.blocks_checked, report.blocks_expected, report.fio_error_count) == (25, 128, 0)
    assert report.stopped is not None and report.stopped.endswith(
        "func=io_u error, error=Input/output error")
    assert not report.complete and not report.counts_agree
    assert report.notes == ("note: both iodepth >= 1 and synchronous I/O engine are selected, "
                            "queue depth will be capped at 1",)
    assert "fio checked only 25 of 128 blocks (fio: pid=" in report.describe()
    assert report.describe().endswith("; fio counted 0 errors where 1 bad blocks were reported")


def test_unreadable_blocks_are_all_reported_with_an_async_engine(scratch, eio_shim):
    assert_unreadable_blocks_all_found(check_unreadable(scratch, eio_shim, "libaio"))


def test_a_synchronous_engine_ends_the_check_at_the_first_unreadable_block(scratch, eio_shim):
    assert_psync_stopped_at_the_first_unreadable_block(check_unreadable(scratch, eio_shim, "psync"))


@pytest.mark.parametrize("continue_on_error, first_failures", [
    ("none", [(MiB, FailureKind.CHECKSUM)]),
    ("verify", [(MiB, FailureKind.CHECKSUM), (UNREADABLE[0], FailureKind.READ_ERROR)])])
def test_a_check_that_does_not_continue_past_all_errors_stops_early(scratch, eio_shim, continue_on_error,
                                                                     first_failures):
    """Why continue_on_error=all: `none` stops at the first bad block, `verify` at the first
    unreadable one (the reads still in flight then, up to iodepth, are printed too)."""
    target = write_pattern(scratch, bs=128 * KiB)
    damage(target, MiB + 1000, b"\xee\xee")
    options = {**check_options(SEED, 128 * KiB), "continue_on_error": continue_on_error}
    env = {"LD_PRELOAD": str(eio_shim), "EIO_PATH": os.path.realpath(target),
           "EIO_OFFSET": str(UNREADABLE[0]), "EIO_LENGTH": str(256 * KiB)}
    done = fio(scratch, "check", target, options, env=env)
    assert done.returncode == 1
    doc, notes = split_output(done.stdout)
    report = parse_failures("\n".join([*notes, done.stderr]), doc)
    assert [(f.offset, f.kind) for f in report.failures][:len(first_failures)] == first_failures
    assert {f.offset for f in report.failures} <= {MiB, *UNREADABLE}
    assert report.blocks_checked is not None and report.blocks_checked < report.blocks_expected == 128
    assert report.stopped is not None and report.unparsed == ()
    assert not report.complete and not report.ok
    assert f"fio checked only {report.blocks_checked} of 128 blocks (fio: pid=" in report.describe()


def recorded(name: str) -> VerifyReport:
    doc, notes = split_output((RECORDED / f"{name}.stdout").read_text())
    return parse_failures("\n".join([*notes, (RECORDED / f"{name}.stderr").read_text()]), doc)


def test_recorded_unreadable_blocks_with_libaio():
    assert_unreadable_blocks_all_found(recorded("read-error-libaio"))


def test_recorded_unreadable_block_with_psync():
    assert_psync_stopped_at_the_first_unreadable_block(recorded("read-error-psync"))


# The parser on text fio did not print

CRC_FAILURE = ("crc32c: verify failed at file /dev/nvme0n1 offset 1048576, length 4096 "
               "(requested block: offset=1048576, length=4096, flags=88)")
CLEAN_JOB = {"jobs": [{"error": 0, "total_err": 0, "read": {"total_ios": 8}, "write": {"total_ios": 8}}]}


@pytest.mark.parametrize("text, doc", [("", None), ("   \n\n", None), ("garbage", None),
                                       ("garbage", CLEAN_JOB), ("", {"jobs": []}), ("", {"x": 1}),
                                       ("", {"jobs": [{"read": "many"}]})])
def test_nothing_or_garbage_is_an_unparsed_entry_not_an_exception(text, doc):
    report = parse_failures(text, doc)
    assert report.unparsed_count == len(report.unparsed) == 1
    assert report.unparsed[0].startswith("unparsed fio verify ")
    assert not report.ok and report.failed_blocks == 0
    assert report.unparsed[0] in report.describe()


def test_crc_lines_belong_to_the_failure_before_them_only():
    text = "\n".join(["       Expected CRC: 15bea8ff", CRC_FAILURE, "       Expected CRC: 15bea8ff",
                      "       Received CRC: b2271c2a", "       received data dumped as target.1048576.received"])
    report = parse_failures(text, None)
    assert report.failures == (BlockFailure(MiB, 4096, FailureKind.CHECKSUM, "crc32c", "b2271c2a", "15bea8ff"),)
    assert report.unparsed == ("unparsed fio verify message:        Expected CRC: 15bea8ff",)


def test_lines_can_be_streamed_and_beyond_the_limit_are_only_counted():
    lines = (CRC_FAILURE.replace("1048576", str(i * 4096)) for i in range(5000))
    report = parse_failures(lines, {"jobs": [{"error": 84, "total_err": 5000, "read": {"total_ios": 5000},
                                              "write": {"total_ios": 5000}}]}, keep=10)
    assert (len(report.failures), report.failed_blocks, report.counts_agree) == (10, 5000, True)
    assert report.describe().endswith("offset 36864 (crc32c mismatch) and 4990 more")


def test_a_clean_result_is_ok():
    report = parse_failures("", CLEAN_JOB)
    assert report.ok and report.describe() == "all 8 blocks verified"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=200), st.sampled_from(
    [CRC_FAILURE, "       Expected CRC: 00", "fio: pid=1, err=5/file:io_u.c:1, func=x, error=y", "note: n"])),
    max_size=20), st.one_of(st.none(), st.just(CLEAN_JOB), st.dictionaries(st.text(max_size=5), st.integers())))
def test_any_text_gives_a_report(lines, doc):
    report = parse_failures("\n".join(lines), doc)
    assert isinstance(report.describe(), str)
    assert report.failed_blocks >= len(report.failures)
    assert report.unparsed_count >= len(report.unparsed)
