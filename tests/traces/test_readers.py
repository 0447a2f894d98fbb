"""Every reader on its golden sample; detection from content; compression read transparently."""

import bz2
import gzip
import lzma

import pytest

from ssdlab.traces import FORMATS, Op, Record, Trace
from ssdlab.traces.formats import BY_NAME
from tests.traces.samples import SAMPLES, write


@pytest.mark.parametrize("name", SAMPLES)
def test_each_format_reads_its_sample_into_records(tmp_path, name):
    sample = SAMPLES[name]
    trace = Trace(write(tmp_path, "trace", sample.text))
    assert trace.format.name == name
    records = list(trace)
    assert all(type(r) is Record for r in records)
    assert [tuple(r) for r in records] == sample.records
    assert list(trace) == records  # a trace can be read again


@pytest.mark.parametrize("name", SAMPLES)
def test_no_other_format_reads_a_formats_first_line(name):
    text = SAMPLES[name].text
    first = text.splitlines(keepends=True)[0]
    assert [fmt.name for fmt in FORMATS if fmt.sniffs(first)] == [name]
    # nor its first data line, where a header comes first
    data = next(line for line in text.splitlines(keepends=True)[1:] if "," in line or name.startswith("fio"))
    assert name in {fmt.name for fmt in FORMATS if fmt.sniffs(data)} | {"csv", "systor", "fio-v2", "fio-v3"}
    assert len([fmt for fmt in FORMATS if fmt.sniffs(data)]) <= 1


@pytest.mark.parametrize("name", ["msr", "alibaba", "tencent"])
def test_a_header_naming_the_columns_is_accepted(tmp_path, name):
    header = BY_NAME[name].columns.split(" (")[0]
    sample = SAMPLES[name]
    records = list(Trace(write(tmp_path, "t.csv", header.lower() + "\n" + sample.text)))
    assert [r[:6] for r in records] == [r[:6] for r in sample.records]
    assert [r.line for r in records] == [r[6] + 1 for r in sample.records]


def test_systor_without_its_header_and_named_explicitly(tmp_path):
    text = SAMPLES["systor"].text.split("\n", 1)[1]
    records = list(Trace(write(tmp_path, "t", text), "SYSTOR"))
    assert [r.offset for r in records] == [899056122368, 4096]


def test_systors_unanswered_lines_are_skipped_and_counted(tmp_path):
    trace = Trace(write(tmp_path, "t", SAMPLES["systor"].text))
    list(trace)
    assert sum(trace.findings.skipped.values()) == 1
    assert "1 line(s) with a blank IOType" in trace.findings.notes()[0]


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress], ids=["gzip", "xz", "bzip2"])
def test_compressed_files_are_read_by_their_magic_not_their_name(tmp_path, compress):
    sample = SAMPLES["msr"]
    path = write(tmp_path, "usr_0.csv", compress(sample.text.encode()))
    assert [tuple(r) for r in Trace(path)] == sample.records


def test_a_byte_order_mark_blank_lines_and_crlf_line_ends_are_no_trouble(tmp_path):
    sample = SAMPLES["alibaba"]
    text = "\ufeff\r\n\r\n" + sample.text.replace("\n", "\r\n") + "\r\n  \r\n"
    records = list(Trace(write(tmp_path, "t", text)))
    assert [r[:6] for r in records] == [r[:6] for r in sample.records]
    assert [r.line for r in records] == [3, 4, 5]


def test_times_going_backwards_are_noted_with_the_first_line(tmp_path):
    text = "0,R,0,4096,100\n0,R,0,4096,50\n0,R,0,4096,60\n0,R,0,4096,10\n"
    trace = Trace(write(tmp_path, "t", text))
    assert [r.time_us for r in trace] == [100, 50, 60, 10]
    assert (trace.findings.backwards, trace.findings.first_backwards_line) == (2, 2)


def test_tencent_and_fio_v2_say_their_timing_is_too_coarse_to_replay(tmp_path):
    coarse = {fmt.name for fmt in FORMATS if fmt.coarse_timing}
    assert coarse == {"tencent", "fio-v2"}


def test_every_op_of_a_sample_is_an_op():
    assert {r[1] for s in SAMPLES.values() for r in s.records} == set(Op)
