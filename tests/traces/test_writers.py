"""The trace writers: every text format the readers know is written, and reads back as the
records written, within the format's precision (writers.py's table); compression by the
suffix; refusals as SsdlabErrors; fio iolog v3 line by line."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.errors import SsdlabError
from ssdlab.traces import FORMATS, Op, Record, Trace, prepared
from ssdlab.traces.fio_iolog_writer import write_iolog_v3
from ssdlab.traces.format import Format
from ssdlab.traces.formats import BY_NAME
from ssdlab.traces.writers import PREPARED, TEXT_WRITERS, WRITABLE, chunks_from_records, write_trace
from tests.traces.samples import SAMPLES, write

READ_WRITE = ("msr", "alibaba", "systor", "tencent")  # formats without trims and flushes
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def chunk(*rows: tuple[int, Op, int, int]) -> np.ndarray:
    out = prepared.empty(len(rows))
    for i, (time, op, offset, length) in enumerate(rows):
        out[i] = (time, offset, length, prepared.OP_CODE[op], b"\0\0\0")
    return out


def read_back(path, name=None) -> list[tuple[int, Op, int, int]]:
    return [(r.time_us, r.op, r.offset, r.length) for r in Trace(path, name)]


def expected(records: np.ndarray, name: str) -> list[tuple[int, Op, int, int]]:
    """What `name`'s reader gives back for `records`: times at the format's precision."""
    rows = []
    for time, offset, length, code in zip(*(records[f].tolist() for f in ("time_us", "offset", "length", "op")),
                                          strict=True):
        op = prepared.OPS[code]
        if name == "fio-v2":
            time = (time + 500) // 1000 * 1000  # ms, rounded half up
        elif name == "tencent":
            time = time // 1_000_000 * 1_000_000  # whole seconds, cut
        rows.append((time, op, 0 if op is Op.FLUSH else offset, 0 if op is Op.FLUSH else length))
    return rows


def test_every_text_format_the_readers_know_has_a_writer():
    assert set(TEXT_WRITERS) == {fmt.name for fmt in FORMATS if isinstance(fmt, Format)}
    assert PREPARED in WRITABLE


@st.composite
def records(draw, ops=tuple(Op), sectors=False):
    """Up to 60 records in time order, as the readers allow them; whole 512 B sectors
    where the format counts them."""
    n = draw(st.integers(1, 60))
    unit = 512 if sectors else 1
    gaps = draw(st.lists(st.integers(0, 3_000_000), min_size=n, max_size=n))
    start = draw(st.integers(0, 2 * 10**15))  # µs: Unix times now are 1.7e15
    rows = []
    for gap in gaps:
        start += gap
        op = draw(st.sampled_from(ops))
        if op is Op.FLUSH:
            rows.append((start, op, 0, 0))
        else:
            length = draw(st.integers(1, (1 << 24) // unit)) * unit
            rows.append((start, op, draw(st.integers(0, (1 << 40) // unit)) * unit, length))
    return chunk(*rows)


@pytest.mark.parametrize("name", sorted(TEXT_WRITERS))
@FAST
@given(data=st.data())
def test_what_is_written_reads_back_within_the_formats_precision(tmp_path, name, data):
    ops = (Op.READ, Op.WRITE) if name in READ_WRITE else tuple(Op)
    written = data.draw(records(ops, sectors=name == "tencent"))
    path = tmp_path / "trace"
    # split in two chunks, to cross a chunk boundary (fio-v2's waits, fio-v3's add and open)
    halves = [written[:len(written) // 2], written[len(written) // 2:]]
    assert write_trace(halves, path, name) == len(written)
    assert Trace(path).format.name == name  # detected from the content
    assert read_back(path) == expected(written, name)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_readers_records_written_in_its_own_format_and_as_csv_read_back(tmp_path, name):
    sample = SAMPLES[name]
    original = [(r.time_us, r.op, r.offset, r.length) for r in Trace(write(tmp_path, "in", sample.text))]
    again = list(chunks_from_records(Trace(tmp_path / "in")))
    for fmt in {name, "csv"}:
        write_trace(again, tmp_path / fmt, fmt)
        assert read_back(tmp_path / fmt) == expected(np.concatenate(again), fmt)
        if fmt not in ("fio-v2", "tencent"):
            assert read_back(tmp_path / fmt) == original


@pytest.mark.parametrize(("suffix", "magic"), [(".gz", b"\x1f\x8b"), (".xz", b"\xfd7zXZ\x00"), (".bz2", b"BZh")])
def test_the_suffix_compresses(tmp_path, suffix, magic):
    records = chunk((0, Op.READ, 0, 4096), (10, Op.WRITE, 8192, 65536))
    path = tmp_path / f"t.csv{suffix}"
    write_trace([records], path, "csv")
    assert path.read_bytes().startswith(magic)
    assert read_back(path) == expected(records, "csv")


def test_a_prepared_trace_is_written_as_the_replay_reads_it(tmp_path):
    records = chunk((0, Op.READ, 0, 4096), (10, Op.TRIM, 8192, 65536), (11, Op.FLUSH, 0, 0))
    path = tmp_path / "t.prepared"
    assert write_trace([records[:1], records[1:]], path, "prepared") == 3
    assert np.array_equal(np.concatenate(list(prepared.chunks(path))), records)


def test_devices_are_written_as_each_format_names_them(tmp_path):
    records = chunk((0, Op.READ, 0, 4096))
    for fmt, device, back in [("msr", "usr_2", "usr_2"), ("msr", "web", "web_0"), ("csv", "nvme0n1", "nvme0n1"),
                              ("fio-v3", "/dev/sdb", "/dev/sdb"), ("alibaba", "17", "17")]:
        write_trace([records], tmp_path / "t", fmt, device)
        assert [r.device for r in Trace(tmp_path / "t")] == [back]


@pytest.mark.parametrize(("fmt", "records", "device", "phrase"), [
    ("msr", chunk((0, Op.TRIM, 0, 4096)), "0", "MSR Cambridge CSV cannot hold a trim: it has read, write only"),
    ("alibaba", chunk((0, Op.FLUSH, 0, 0)), "0", "cannot hold a flush"),
    ("tencent", chunk((0, Op.READ, 100, 4096)), "0", "record 1 (offset 100, length 4096 bytes) is not whole sectors"),
    ("fio-v3", chunk((0, Op.READ, 0, 4096)), "/dev/my disk", "without white space"),
    ("csv", chunk((0, Op.READ, 0, 4096)), "a,b", "without commas"),
    ("systor", chunk((0, Op.READ, 0, 4096)), "", "non-empty name"),
    ("nope", chunk((0, Op.READ, 0, 4096)), "0", "the formats written are fio-v2, fio-v3, msr"),
])
def test_what_a_format_cannot_hold_is_refused_and_nothing_is_left(tmp_path, fmt, records, device, phrase):
    path = tmp_path / "t"
    with pytest.raises(SsdlabError, match=phrase.replace("(", r"\(").replace(")", r"\)")):
        write_trace([records], path, fmt, device)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_place_and_a_compressed_prepared_trace_are_refused(tmp_path):
    records = [chunk((0, Op.READ, 0, 4096))]
    with pytest.raises(SsdlabError, match="cannot write the trace .*: No such file or directory"):
        write_trace(records, tmp_path / "missing" / "t.csv", "csv")
    with pytest.raises(SsdlabError, match="a prepared trace is not compressed"):
        write_trace(records, tmp_path / "t.prepared.gz", "prepared")
    (tmp_path / "dir").mkdir()
    with pytest.raises(SsdlabError, match="cannot write the trace"):
        write_trace(records, tmp_path / "dir", "csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]


def test_an_iolog_v3_is_written_line_by_line_with_times_as_given():
    out = io.StringIO()
    records = chunk((5, Op.WRITE, 61440, 4096), (7, Op.READ, 0, 512), (7, Op.TRIM, 4096, 8192), (9, Op.FLUSH, 0, 0))
    assert write_iolog_v3([records[:2], records[2:]], "/dev/nvme0n1", out) == 4
    assert out.getvalue() == ("fio version 3 iolog\n"
                              "5 /dev/nvme0n1 add\n5 /dev/nvme0n1 open\n"
                              "5 /dev/nvme0n1 write 61440 4096\n7 /dev/nvme0n1 read 0 512\n"
                              "7 /dev/nvme0n1 trim 4096 8192\n9 /dev/nvme0n1 sync 0 0\n"
                              "9 /dev/nvme0n1 close\n")
    empty = io.StringIO()
    assert write_iolog_v3([], "f", empty) == 0
    assert empty.getvalue() == "fio version 3 iolog\n0 f add\n0 f open\n0 f close\n"


def test_fio_v2_waits_in_ms_before_each_io_of_a_new_ms(tmp_path):
    path = tmp_path / "t"
    write_trace([chunk((0, Op.READ, 0, 4096), (400, Op.READ, 0, 4096), (1600, Op.WRITE, 0, 4096),
                       (2400, Op.WRITE, 0, 4096))], path, "fio-v2", "/dev/sdb")
    assert path.read_text() == ("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n"
                                "/dev/sdb read 0 4096\n/dev/sdb wait 2 0\n/dev/sdb write 0 4096\n"
                                "/dev/sdb write 0 4096\n/dev/sdb close\n")


def test_records_longer_than_a_prepared_record_holds_are_refused():
    huge = Record(0, Op.READ, 0, 1 << 33, None, None, 7)
    with pytest.raises(SsdlabError, match="line 7: a read of 8589934592 bytes is longer than a prepared record"):
        list(chunks_from_records([huge]))


def test_the_cli_fuzzer_mutates_a_trace_of_every_format_the_readers_know(tmp_path):
    """scripts/fuzz_cli.py's traces (one per format, and the writers' output in every text
    format) are, unmutated, each a trace of some format, and every format has one."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "fuzz_cli.py"
    spec = importlib.util.spec_from_file_location("fuzz_cli_under_test", path)
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fuzz  # dataclasses look their module up
    try:
        spec.loader.exec_module(fuzz)
        seeds = [*fuzz.TRACES, *fuzz.written_traces()]
    finally:
        del sys.modules[spec.name]
    formats = set()
    for i, data in enumerate(seeds):
        (tmp_path / f"t{i}").write_bytes(data)
        formats.add(Trace(tmp_path / f"t{i}").format.name)
    assert formats == set(BY_NAME)
