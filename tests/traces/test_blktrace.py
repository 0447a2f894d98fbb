"""blktrace binary dumps (traces/blktrace.py): real captures read to the I/O that made
them, per-CPU files merged, either byte order, every kind of damage refused with the file
and the record, and records of every kind, made here. tests/traces/data/README.md says how
the captures were recorded; the root tests record new ones the same way."""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import shutil
import struct
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.traces import Op, Trace
from ssdlab.traces.formats import FORMATS, detect_binary
from tests.conftest import run_cli
from tests.loop_devices import loop_device, require
from tests.traces.test_streaming import peak_bytes

DATA = Path(__file__).parent / "data"
R, W, T, F = Op.READ, Op.WRITE, Op.TRIM, Op.FLUSH
KiB, MiB = 1 << 10, 1 << 20
# What capture() below does, in order: (op, offset, length)
KNOWN = [(W, 1 * MiB, 8 * KiB), (R, 0, 4 * KiB), (R, 4 * MiB, 64 * KiB), (T, 2 * MiB, 1 * MiB),
         (W, 12 * KiB, 4 * KiB), (F, 0, 0)]
# The golden captures, record by record: (time_us, op, offset, length, device, response_us, line)
GOLDEN = {
    "loop512": [(41178785164, W, 1048576, 8192, "7:0", None, 1), (41178813801, R, 0, 4096, "7:0", None, 2),
                (41178838411, R, 4194304, 65536, "7:0", None, 6), (41178866306, T, 2097152, 1048576, "7:0", None, 8),
                (41178893855, W, 12288, 4096, "7:0", None, 13), (41178893949, F, 0, 0, "7:0", None, 19)],
    "loop4k": [(41179970011, W, 1048576, 8192, "7:1", None, 1), (41179997760, R, 0, 4096, "7:1", None, 1),
               (41180029938, R, 4194304, 65536, "7:1", None, 8), (41180058038, T, 2097152, 1048576, "7:1", None, 6),
               (41180090219, W, 12288, 4096, "7:1", None, 15), (41180090337, F, 0, 0, "7:1", None, 21)],
}
# The CPU each I/O of a golden capture was issued on (capture() pins them), so its file
CPU_OF = [0, 1, 0, 1, 0, 0]
SKIPPED = {"get request (G) event(s)": 6, "plug (P) event(s)": 5, "unplug (U) event(s)": 4, "issue (D) event(s)": 6,
           "complete (C) event(s)": 7, "unplug by timer (UT) event(s)": 1, "insert (I) event(s)": 1}

# The kernel's blk_io_trace (version 7) and blk_io_trace2 (version 8), to make records
V7 = "IIQQIIIIIHH"  # magic sequence time sector bytes action pid device cpu error pdu_len
V8 = "IIQQIIQIIHH12x"  # magic sequence time sector bytes pid action device cpu error pdu_len pad
MAGIC = 0x65617400
QUEUE, COMPLETE = 1, 8
READ_, WRITE_, FLUSH_, SYNC_, QUEUE_, PC_, NOTIFY_, DISCARD_ = (1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 9,
                                                                1 << 10, 1 << 13)
DEVICE = (259 << 20) | 3  # nvme: 259:3


def action(event: int, *categories: int) -> int:
    return event | (sum(categories) << 16)


def record(time_ns: int, act: int, sector: int = 0, nbytes: int = 0, pdu: bytes = b"", version: int = 7,
           order: str = "<", device: int = DEVICE) -> bytes:
    magic = MAGIC | version
    if version == 8:
        head = struct.pack(order + V8, magic, 0, time_ns, sector, nbytes, 4321, act, device, 1, 0, len(pdu))
    else:
        head = struct.pack(order + V7, magic, 0, time_ns, sector, nbytes, act, 4321, device, 1, 0, len(pdu))
    return head + pdu


def q(time_ns: int, sector: int, nbytes: int, *categories: int, **kwargs) -> bytes:
    return record(time_ns, action(QUEUE, QUEUE_, *categories), sector, nbytes, **kwargs)


def swapped(data: bytes) -> bytes:
    """A little-endian version-7 dump in big-endian byte order (payloads as they are)."""
    out, pos = bytearray(), 0
    while pos < len(data):
        fields = struct.unpack_from("<" + V7, data, pos)
        out += struct.pack(">" + V7, *fields)
        pos += struct.calcsize(V7)
        out += data[pos:pos + fields[-1]]
        pos += fields[-1]
    return bytes(out)


def copy_capture(name: str, directory: Path, transform=lambda data: data, ending: str = "") -> Path:
    for cpu in (0, 1):
        (directory / f"{name}.blktrace.{cpu}{ending}").write_bytes(
            transform((DATA / f"{name}.blktrace.{cpu}").read_bytes()))
    return directory / f"{name}.blktrace.0{ending}"


def read(path, format_name=None, strict=False) -> list[tuple]:
    return [tuple(r) for r in Trace(path, format_name, strict)]


def refusal(path, format_name=None, strict=False) -> str:
    with pytest.raises(SsdlabError) as caught:
        list(Trace(path, format_name, strict))
    return str(caught.value)


# -- the captures ----------------------------------------------------------------------

@pytest.mark.parametrize("name", GOLDEN)
def test_a_capture_reads_to_the_io_that_made_it(name):
    trace = Trace(DATA / f"{name}.blktrace.0")
    assert trace.format.name == "blktrace"
    assert [p.name for p in trace.files] == [f"{name}.blktrace.0", f"{name}.blktrace.1"]
    records = [tuple(r) for r in trace]
    assert [r[1:4] for r in records] == KNOWN
    assert records == GOLDEN[name]
    assert dict(trace.findings.skipped) == SKIPPED and trace.findings.backwards == 0
    assert trace.findings.records == len(KNOWN)


def test_a_4kn_devices_sectors_are_512_bytes_all_the_same():
    # the loop device of loop4k had 4096-byte logical blocks: its trace counts in 512 B
    # sectors as the 512 B one does, so both read to the same offsets
    assert [r[1:4] for r in read(DATA / "loop4k.blktrace.0")] == [r[1:4] for r in read(DATA / "loop512.blktrace.0")]


@pytest.mark.parametrize("given", ["loop512", "loop512.blktrace.1"])
def test_the_prefix_or_any_per_cpu_file_names_the_whole_trace(given):
    assert read(DATA / given) == GOLDEN["loop512"]


def test_per_cpu_files_merge_in_time_order(tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    for cpu in (0, 1):
        # each file alone, under a name that is not per-CPU: the I/O issued on its CPU
        alone = one / f"cpu{cpu}.bin"
        shutil.copy(DATA / f"loop512.blktrace.{cpu}", alone)
        assert read(alone) == [r for r, on in zip(GOLDEN["loop512"], CPU_OF) if on == cpu]
    merged = read(DATA / "loop512.blktrace.0")
    assert [r[0] for r in merged] == sorted(r[0] for r in merged)


def test_an_empty_per_cpu_file_is_no_trouble(tmp_path):
    # blktrace writes a file for every CPU, empty for one that did no I/O
    shutil.copy(DATA / "loop512.blktrace.1", tmp_path / "t.blktrace.1")
    (tmp_path / "t.blktrace.0").write_bytes(b"")
    assert read(tmp_path / "t.blktrace.0") == [r for r, on in zip(GOLDEN["loop512"], CPU_OF) if on == 1]


def test_either_byte_order(tmp_path):
    big = copy_capture("loop512", tmp_path, swapped)
    assert big.read_bytes()[:4] == b"\x65\x61\x74\x07" and read(big) == GOLDEN["loop512"]
    # each file is read in its own order
    (tmp_path / "loop512.blktrace.1").write_bytes((DATA / "loop512.blktrace.1").read_bytes())
    assert read(big) == GOLDEN["loop512"]


def test_compressed_per_cpu_files(tmp_path):
    first = copy_capture("loop4k", tmp_path, gzip.compress, ".gz")
    trace = Trace(first)
    assert trace.format.name == "blktrace" and len(trace.files) == 2
    assert read(first) == GOLDEN["loop4k"]


@pytest.mark.skipif(shutil.which("blkparse") is None, reason="needs blkparse (Debian's blktrace)")
@pytest.mark.parametrize("name", GOLDEN)
def test_blkparse_sees_the_same_queue_events(tmp_path, name):
    out = subprocess.run(["blkparse", "-i", str(DATA / name), "-q", "-f", "%a %d %S %N\n"], capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout
    queued = [line.split() for line in out.splitlines() if line.startswith("Q ")]
    ops = {"W": W, "R": R, "D": T}
    theirs = [(F, 0, 0) if rwbs.startswith("F") else (ops[rwbs[0]], int(sector) * 512, int(nbytes))
              for _, rwbs, sector, nbytes in queued]
    assert theirs == [r[1:4] for r in GOLDEN[name]]


def fio_counts(*options: str) -> dict:
    done = subprocess.run(["fio", "--name=replay", "--output-format=json", *options], capture_output=True, text=True,
                          timeout=60)
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]
    return {op: (job[op]["total_ios"], job[op].get("io_bytes", 0)) for op in ("read", "write", "trim", "sync")}


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
@pytest.mark.parametrize("cpu", [0, 1])
def test_fio_reads_each_per_cpu_file_as_we_do(tmp_path, cpu):
    target = tmp_path / "target"
    target.write_bytes(b"\0" * 16 * MiB)
    alone = tmp_path / "cpu.bin"
    shutil.copy(DATA / f"loop512.blktrace.{cpu}", alone)
    ours = Counter()
    for r in read(alone):
        ours[r[1], "ios"] += 1
        ours[r[1], "bytes"] += r[3]
    common = [f"--read_iolog={alone}", f"--replay_redirect={target}"]
    # psync cannot trim a file and falloc cannot sync one: each counts what it can
    by_psync = fio_counts(*common, "--ioengine=psync", "--replay_skip=trim")
    by_falloc = fio_counts(*common, "--ioengine=falloc", "--replay_skip=sync")
    assert by_psync["read"] == (ours[R, "ios"], ours[R, "bytes"])
    assert by_psync["write"] == (ours[W, "ios"], ours[W, "bytes"])
    assert by_psync["sync"][0] == ours[F, "ios"]
    assert by_falloc["trim"] == (ours[T, "ios"], ours[T, "bytes"])


# -- detection ---------------------------------------------------------------------------

def test_detected_from_the_magic_in_either_order_whatever_the_name(tmp_path):
    for order in "<>":
        path = tmp_path / f"trace{order == '>'}.dat"
        path.write_bytes(q(1000, 8, 4096, READ_, order=order))
        assert Trace(path).format.name == "blktrace"
        assert read(path) == [(1, R, 4096, 4096, "259:3", None, 1)]
    assert detect_binary(b"0,R,0,4096,1\n") is None
    assert not any(fmt.sniffs("\x07tae\x00\x00\x00\x00") for fmt in FORMATS)  # never from a line


def test_format_blktrace_names_it_and_refuses_what_is_not(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(q(1000, 8, 4096, WRITE_))
    assert read(path, "blktrace") == [(1, W, 4096, 4096, "259:3", None, 1)]
    path.write_text("0,R,0,4096,1\n")
    message = refusal(path, "blktrace")
    assert f"{path}, record 1: not blktrace binary dump: it starts with 30 2c 52 2c" in message
    assert "expected blk_io_trace records" in message


def test_an_unknown_version_is_detected_then_refused(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(q(1000, 8, 4096, READ_) + q(2000, 8, 4096, READ_).replace(b"\x07tae", b"\x06tae", 1))
    assert Trace(path).format.name == "blktrace"
    assert f"{path}, record 2: blktrace version 6, which ssdlab does not read (it reads versions 7 and 8)" in refusal(
        path)


# -- damage --------------------------------------------------------------------------------

def damaged(tmp_path, change) -> tuple[Path, bytes]:
    data = (DATA / "loop512.blktrace.0").read_bytes()
    path = tmp_path / "t.bin"
    path.write_bytes(change(bytearray(data)))
    return path, data


@pytest.mark.parametrize("change, words", [
    (lambda d: d[:-20], "record 23: cut short: 28 of its 48 bytes"),
    (lambda d: d[:-46], "record 23: cut short: 2 bytes, less than a record's magic"),
    (lambda d: d[:96] + b"\0" * 4 + d[100:], "record 3: magic 0x00000000 is not a blktrace record's 656174xx"),
    (lambda d: d[:96] + b"\x07tae"[::-1] + d[100:], "record 3: magic 0x07746165 is not a blktrace record's"),
    (lambda d: d[:-2] + b"\x00\x10", "record 23: its payload of 4096 bytes (pdu_len) runs past the end of the file"),
    (lambda d: d[:48] + b"\x09" + d[49:], "record 2: blktrace version 9, which ssdlab does not read"),
    (lambda d: d + b"garbage of some length, more than a magic's 4 bytes, less than 48",
     "record 24: magic 0x62726167 is not"),
], ids=["truncated", "truncated-in-magic", "zero-magic", "other-byte-order", "pdu-past-end", "version", "garbage"])
def test_damage_is_refused_with_the_file_and_the_record(tmp_path, change, words):
    path, _ = damaged(tmp_path, change)
    message = refusal(path)
    assert message.startswith(f"{path}, {words}"), message


def test_damage_in_the_second_per_cpu_file_names_that_file(tmp_path):
    copy_capture("loop512", tmp_path)
    second = tmp_path / "loop512.blktrace.1"
    second.write_bytes(second.read_bytes()[:-10])
    assert refusal(tmp_path / "loop512.blktrace.0").startswith(f"{second}, record 13: cut short: 38 of its 48 bytes")


def test_a_truncated_compressed_file(tmp_path):
    path = tmp_path / "t.gz"
    data = gzip.compress(b"".join(q(i * 7919, i * 104729 % 99991, 4096, READ_) for i in range(20_000)))
    path.write_bytes(data[:len(data) // 2])
    message = refusal(path)
    assert message.startswith(f"{path}: reading stopped after record ") and "damaged or truncated" in message


@pytest.mark.parametrize("content, words", [
    (b"hello\n", "record 1: not a blktrace record: it starts with 68 65 6c 6c"),
    (b"\x07t", "record 1: cut short: 2 bytes, less than a record's magic"),
])
def test_a_non_trace_file_among_the_per_cpu_files(tmp_path, content, words):
    copy_capture("loop512", tmp_path)
    (tmp_path / "loop512.blktrace.1").write_bytes(content)
    assert refusal(tmp_path / "loop512.blktrace.0").startswith(f"{tmp_path / 'loop512.blktrace.1'}, {words}")


# -- what each record is -------------------------------------------------------------------

def test_what_becomes_io_and_what_is_skipped(tmp_path):
    notify_name = record(0, action(0, NOTIFY_), pdu=b"fio\0" + b"\0" * 12)
    events = [
        notify_name,
        q(1_000_499, 100, 4096, READ_, SYNC_),  # 1000.499 µs rounds down
        record(1_000_600, action(7, READ_, 1 << 6), 100, 4096),  # issue
        q(2_000_500, 200, 8192, WRITE_),  # .500 rounds up
        q(3_000_000, 0, 0, WRITE_, FLUSH_, SYNC_),  # an fsync's flush
        q(4_000_000, 300, 4096, WRITE_, FLUSH_, SYNC_),  # a write with a preflush: a journal commit
        q(5_000_000, 400, 1 << 20, WRITE_, DISCARD_),  # a discard (it has the write bit too)
        q(6_000_000, 0, 0, WRITE_),  # no data, no flush
        q(6_500_000, 0, 0, WRITE_, DISCARD_, FLUSH_),  # nor a discard of nothing
        q(7_000_000, 500, 512, READ_, PC_),  # a passthrough command
        record(8_000_000, action(QUEUE | 1 << 8, QUEUE_, READ_), 600, 4096, pdu=struct.pack("<Q", 77)),  # a cgroup
        record(9_000_000, action(COMPLETE, READ_, 1 << 7), 600, 4096),
    ]
    path = tmp_path / "t"
    path.write_bytes(b"".join(events))
    trace = Trace(path)
    assert read(path) == [
        (1000, R, 51200, 4096, "259:3", None, 2),
        (2001, W, 102400, 8192, "259:3", None, 4),
        (3000, F, 0, 0, "259:3", None, 5),
        (4000, F, 0, 0, "259:3", None, 6), (4000, W, 153600, 4096, "259:3", None, 6),
        (5000, T, 204800, 1 << 20, "259:3", None, 7),
        (8000, R, 307200, 4096, "259:3", None, 11),
    ]
    list(trace)
    assert dict(trace.findings.skipped) == {
        "notify record(s) (process names, messages)": 1, "issue (D) event(s)": 1, "complete (C) event(s)": 1,
        "queue (Q) event(s) without data": 2, "passthrough (PC) event(s)": 1}


def test_version_8_records(tmp_path):
    zone_reset = 1 << 17
    path = tmp_path / "t"
    path.write_bytes(q(1000, 8, 4096, WRITE_, version=8) + q(2000, 0, 0, WRITE_, zone_reset, version=8)
                     + record(3000, action(0, NOTIFY_), pdu=b"dd\0\0", version=8)
                     + q(4000, 16, 8192, READ_, version=8))
    trace = Trace(path)
    assert read(path) == [(1, W, 4096, 4096, "259:3", None, 1), (4, R, 8192, 8192, "259:3", None, 4)]
    list(trace)
    assert dict(trace.findings.skipped) == {"zone management event(s)": 1,
                                            "notify record(s) (process names, messages)": 1}


def test_the_device_is_major_minor_of_the_kernels_dev_t(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(q(1000, 8, 4096, READ_, device=(8 << 20) | 16) + q(2000, 8, 4096, READ_, device=(4095 << 20)
                                                                         | 0xFFFFF))
    assert [r[4] for r in read(path)] == ["8:16", "4095:1048575"]


def test_records_beyond_sense_are_shown_then_counted_as_records(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(q(1000, 8, 4096, READ_) + q(2000, 1 << 41, 4096, WRITE_) * 7)
    message = refusal(path)
    assert message.startswith(f"{path}: 7 record(s) that are not blktrace binary dump records")
    assert "\n  record 2: the write ends at byte 1125899906846720, beyond 1125899906842624 (1 PiB)" in message
    assert "'Q write of 4096 bytes at sector 2199023255552 of 259:3, time 2000 ns'" in message
    assert "and 2 more" in message and "expected: blk_io_trace records" in message


def test_times_going_backwards_are_noted_by_record_or_refused(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(q(5000, 8, 4096, READ_) + q(3000, 8, 4096, READ_))
    trace = Trace(path)
    assert [r[0] for r in trace] == [5, 3]
    assert "(the first on record 2)" in trace.findings.notes()[0]
    assert f"{path}, record 2: time 3 µs is earlier than the 5 µs" in refusal(path, strict=True)


def test_a_trace_of_no_io_is_refused(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(record(0, action(0, NOTIFY_), pdu=b"dd\0\0") + record(10, action(COMPLETE, READ_), 8, 4096))
    assert "holds no records (1 notify record(s) (process names, messages) skipped; 1 complete (C) event(s) " \
           "skipped)" in refusal(path)


# -- streaming, statistics -----------------------------------------------------------------

def synthetic(directory: Path, ios: int) -> Path:
    """`ios` reads and writes, queued and completed, alternating between two CPUs' files."""
    chunk = [[], []]
    with open(directory / "s.blktrace.0", "wb") as cpu0, open(directory / "s.blktrace.1", "wb") as cpu1:
        for i in range(ios):
            kind = READ_ if i % 2 else WRITE_
            chunk[i % 2].append(q(i * 1000, i * 8, 4096, kind) + record(i * 1000 + 500, action(COMPLETE, kind),
                                                                              i * 8, 4096))
            if len(chunk[0]) + len(chunk[1]) >= 4096 or i == ios - 1:
                cpu0.write(b"".join(chunk[0]))
                cpu1.write(b"".join(chunk[1]))
                chunk = [[], []]
    return directory / "s.blktrace.0"


def test_memory_is_flat_in_the_traces_length(tmp_path):
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small, small_records = peak_bytes(synthetic(tmp_path / "small", 5_000))
    large, large_records = peak_bytes(synthetic(tmp_path / "large", 50_000))
    assert (small_records, large_records) == (5_000, 50_000)
    assert large < 1.5 * small, (small, large)
    assert large < 1 << 20


def test_progress_counts_every_per_cpu_file(tmp_path):
    trace = Trace(synthetic(tmp_path, 20_000))
    seen = []
    for n, _ in enumerate(trace):
        if n % 5000 == 0:
            seen.append(trace.fraction_read())
    assert seen == sorted(seen) and 0 < seen[-1] <= 1
    assert seen[1] == pytest.approx(0.25, abs=0.05)  # a quarter of the I/O is a quarter of both files


def test_the_cli_statistics_of_a_capture(tmp_path):
    doc = json.loads(run_cli("trace", "stats", DATA / "loop512", "--json").stdout)
    assert doc["format"] == "blktrace" and doc["records"] == 6
    assert doc["ops"]["read"] == {"count": 2, "bytes": 4096 + 65536}
    assert doc["ops"]["write"] == {"count": 2, "bytes": 8192 + 4096}
    assert doc["ops"]["trim"] == {"count": 1, "bytes": 1 << 20} and doc["ops"]["flush"]["count"] == 1
    assert doc["devices"] == {"7:0": 6}
    assert "7 complete (C) event(s) skipped" in doc["notes"]
    out = run_cli("trace", "stats", DATA / "loop4k.blktrace.1", "--format", "blktrace").stdout
    assert "blktrace binary dump, 6 records" in out


# -- recording anew (root) -------------------------------------------------------------------

TRACEFS = Path("/sys/kernel/tracing")
DEBUGFS = Path("/sys/kernel/debug")
# The kernel's block tracing is one machine-wide state: one test at a time uses it
TRACING_LOCK = Path("/run/lock/ssdlab-blk-tracing.lock")


@contextmanager
def kernel_tracing(fstype: str, where: Path) -> Iterator[None]:
    """The kernel's tracing to this test alone (a lock other workers wait on), with its
    filesystem mounted at `where` while inside: unmounted after if it was not before."""
    TRACING_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(TRACING_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        mounted = False
        if not os.path.ismount(where):
            if subprocess.run(["mount", "-t", fstype, fstype, str(where)], capture_output=True).returncode:
                pytest.skip(f"cannot mount {fstype} here")
            mounted = True
        try:
            yield
        finally:
            if mounted:
                subprocess.run(["umount", str(where)], capture_output=True)


def do_the_known_io(device: Path) -> None:
    """KNOWN, each I/O pinned to a CPU (CPU_OF) where there are two, 20 ms apart."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    dd = ["dd", "status=none", f"of={device}", "oflag=direct", "if=/dev/zero"]
    steps = [dd + ["bs=8k", "seek=128", "count=1"],
             ["dd", "status=none", f"if={device}", "iflag=direct", "of=/dev/null", "bs=4k", "count=1"],
             ["dd", "status=none", f"if={device}", "iflag=direct", "of=/dev/null", "bs=64k", "skip=64", "count=1"],
             ["blkdiscard", "-f", "-o", str(2 * MiB), "-l", str(1 * MiB), str(device)],
             dd + ["bs=4k", "seek=3", "count=1", "conv=fsync"]]  # a write, then the fsync's flush
    for step, cpu in zip(steps, CPU_OF):
        subprocess.run(["taskset", "-c", str(cpus[cpu % len(cpus)]), *step], check=True, capture_output=True)
        time.sleep(0.02)


def capture_with_tracefs(device: Path, out: Path) -> Path:
    """The kernel's blk tracer, its binary output per CPU from tracefs: blk_io_trace
    records as blktrace(8) gets them from debugfs, which a kernel in lockdown refuses."""
    with kernel_tracing("tracefs", TRACEFS):
        return _capture_with_tracefs(device, out)


def _capture_with_tracefs(device: Path, out: Path) -> Path:
    if "blk" not in (TRACEFS / "available_tracers").read_text().split():
        pytest.skip("this kernel has no blk tracer")
    if (TRACEFS / "current_tracer").read_text().strip() != "nop":
        pytest.skip("something else is tracing")
    enable = Path("/sys/block") / device.name / "trace" / "enable"
    settings = [("current_tracer", "blk", "nop"), ("trace_clock", "mono", "local"), ("trace_options", "bin", "nobin"),
                ("trace_options", "nocontext-info", "context-info"), ("trace_options", "noannotate", "annotate")]
    readers = []
    try:
        for name, value, _ in settings:
            (TRACEFS / name).write_text(value)
        enable.write_text("1")
        (TRACEFS / "trace").write_text("")
        for cpu in sorted(os.sched_getaffinity(0)):
            with open(out / f"cap.blktrace.{cpu}", "wb") as sink:
                readers.append(subprocess.Popen(["cat", str(TRACEFS / "per_cpu" / f"cpu{cpu}" / "trace_pipe")],
                                                stdout=sink))
        (TRACEFS / "tracing_on").write_text("1")
        do_the_known_io(device)
        time.sleep(0.3)
        (TRACEFS / "tracing_on").write_text("0")
        time.sleep(0.3)  # the readers drain the buffers
    finally:
        for reader in readers:
            reader.terminate()
            reader.wait()
        enable.write_text("0")
        for name, _, undo in reversed(settings):
            (TRACEFS / name).write_text(undo)
    return out / "cap"


def capture_with_blktrace(device: Path, out: Path) -> Path:
    """blktrace(8) itself, where it is installed and the kernel lets it read debugfs."""
    if shutil.which("blktrace") is None:
        pytest.skip("blktrace is not installed")
    with kernel_tracing("debugfs", DEBUGFS):
        return _capture_with_blktrace(device, out)


def _capture_with_blktrace(device: Path, out: Path) -> Path:
    tracer = subprocess.Popen(["blktrace", "-d", str(device), "-D", str(out), "-o", "cap"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    if tracer.poll() is not None:
        pytest.skip(f"blktrace cannot trace here: {tracer.communicate()[1].strip()[:200]}")
    try:
        do_the_known_io(device)
        time.sleep(0.3)
    finally:
        tracer.send_signal(2)  # SIGINT: blktrace writes what it has and stops
        tracer.communicate(timeout=30)
    return out / "cap"


@pytest.mark.root
@pytest.mark.parametrize("sector_size", [512, 4096])
@pytest.mark.parametrize("capture", [capture_with_tracefs, capture_with_blktrace], ids=["tracefs", "blktrace"])
def test_a_capture_recorded_now_reads_to_the_known_io(scratch, sector_size, capture):
    require("dd", "blkdiscard", "taskset")
    with loop_device(scratch / "disk.img", size=16 * MiB, sector_size=sector_size) as device:
        rdev = device.stat().st_rdev
        out = scratch / "out"
        out.mkdir()
        trace = Trace(capture(device, out))
        records = list(trace)
    assert trace.format.name == "blktrace"
    assert [(r.op, r.offset, r.length) for r in records] == KNOWN
    assert {r.device for r in records} == {f"{os.major(rdev)}:{os.minor(rdev)}"}
