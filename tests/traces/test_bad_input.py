"""Bad traces are refused with an SsdlabError naming the file, the line and what is wrong."""

import gzip

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.traces import Trace
from ssdlab.traces.formats import FORMATS
from ssdlab.traces.reader import MAX_PROBLEMS, SHOWN_PROBLEMS
from ssdlab.traces.source import MAX_LINE
from tests.traces.samples import SAMPLES, write

ALI = "0,R,0,4096,{}\n"  # an Alibaba line at time {}


def refusal(path, format_name=None, strict=False) -> str:
    with pytest.raises(SsdlabError) as caught:
        list(Trace(path, format_name, strict))
    message = str(caught.value)
    assert str(path) in message
    return message


@pytest.mark.parametrize("text, line, words", [
    ("0,R,0,4096,1\n0,R,0,4096\n", 2, "expected 5 comma-separated fields, found 4"),
    ("0,R,0,4096,1\n0,R,0,4096,1,9\n", 2, "expected 5 comma-separated fields, found more"),
    ("0,R,0,4096,1\n0,X,0,4096,2\n", 2, "'X' is not a value this format knows there"),
    ("0,R,0,4096,1\n0,R,zero,4096,2\n", 2, "'zero' is not a whole number"),
    ("0,R,0,4096,1\n0,R,-512,4096,2\n", 2, "offset -512 and length 4096 must not be negative"),
    ("0,R,0,4096,1\n0,R,512,0,2\n", 2, "a read of 0 bytes"),
    ("0,R,0,4096,1\n0,W,1125899906842624,4096,2\n", 2,
     "the write ends at byte 1125899906846720, beyond 1125899906842624 (1 PiB)"),
    ("0,R,0,4096,1\n0,R,0,4096,-3\n", 2, "time -3 µs is outside 0 to"),
    ("0,R,0,4096,1\n0,R,0,4096," + "9" * 30 + "\n", 2, "time 999999999999999999999999999999 µs is outside"),
    ("0,R,0,4096,1\n0,R,0,4096," + "9" * 5000 + "\n", 2, "a number of thousands of digits"),
    (SAMPLES["systor"].text + "nan,0.1,R,4,0,4096\n", 5, "'nan' is not a finite time"),
    (SAMPLES["systor"].text + "1.0,inf,W,4,0,4096\n", 5, "'inf' is not a finite time"),
    (SAMPLES["systor"].text + "1e400,0.1,W,4,0,4096\n", 5, "'1e400' is not a finite time"),
    (SAMPLES["systor"].text + "1,-0.5,W,4,0,4096\n", 5, "response time -500000 µs is negative"),
    (SAMPLES["systor"].text + "1.5.2,0.1,W,4,0,4096\n", 5, "'1.5.2' is not a number"),
    ("time_us,op,offset,length\n5,read,0,4096\n6,read,0,4096,7\n", 3,
     "expected 4 comma-separated fields as the header names, found 5"),
    ("0,R,0,4096,1\n0,R,\xff\xfe,4096,2\n", 2, "'\ufffd\ufffd' is not a whole number"),
    ("fio version 3 iolog\n1 /a add\n2 /b read 0 4096\n", 3, "read on '/b', which no `add` line named"),
    ("fio version 3 iolog\n1 /a add\n2 /a wait 5 0\n", 3, "'wait' is not a value this format knows"),
    ("fio version 3 iolog\n1 /a add\n2 /a open 7\n", 3, "expected 3 or 5 fields, found 4"),
    ("fio version 2 iolog\n/a add\n/a lock\n", 3, "'lock' is not a file action (add, open, close)"),
    ("fio version 2 iolog\n/a add\n/b close\n", 3, "close of '/b', which no `add` line named"),
], ids=["few-fields", "many-fields", "unknown-op", "word", "negative", "empty-read", "beyond-1PiB", "negative-time",
        "huge-time", "endless-number", "nan", "inf", "overflow", "negative-response", "two-points",
        "csv-width", "not-utf8", "fio-not-added", "fio-v3-wait", "fio-fields", "fio-action", "fio-close"])
def test_a_bad_line_is_refused_with_its_number_and_why(tmp_path, text, line, words):
    # \xff\xfe stand for two bytes that are not UTF-8
    message = refusal(write(tmp_path, "t", text.encode("latin-1" if "\xff" in text else "utf-8")))
    assert f"line {line}: {words}" in message
    assert "expected:" in message  # and what the format's lines look like


def test_the_first_few_bad_lines_are_shown_then_counted(tmp_path):
    text = ALI.format(1) + "".join(f"0,R,0,4096,x{i}\n" for i in range(12))
    message = refusal(write(tmp_path, "t", text))
    assert "12 line(s) that are not Alibaba block trace CSV records" in message
    assert message.count("is not a whole number") == SHOWN_PROBLEMS
    assert "line 2:" in message and "line 6:" in message and "line 7:" not in message
    assert "and 7 more" in message and "reading stopped" not in message


def test_reading_stops_after_many_bad_lines(tmp_path):
    text = ALI.format(1) + "0,R,0,4096,x\n" * (MAX_PROBLEMS + 50)
    message = refusal(write(tmp_path, "t", text))
    assert f"{MAX_PROBLEMS} line(s)" in message and f"reading stopped at line {MAX_PROBLEMS + 1}" in message


def test_no_record_is_yielded_after_a_bad_line(tmp_path):
    path = write(tmp_path, "t", ALI.format(1) + "0,R,bad,4096,2\n" + ALI.format(3))
    seen = []
    with pytest.raises(SsdlabError):
        for record in Trace(path):
            seen.append(record.time_us)
    assert seen == [1]


def test_an_unknown_format_names_the_formats_known(tmp_path):
    message = refusal(write(tmp_path, "t", "\n\nhello,world\n"))
    assert "line 3: not a trace format ssdlab knows: 'hello,world'" in message
    for fmt in FORMATS:
        assert fmt.name in message and fmt.title in message


def test_an_unknown_format_name_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match="unknown trace format 'spc': the formats are fio-v2"):
        Trace(write(tmp_path, "t", ALI.format(1)), "spc")


def test_a_named_format_whose_first_line_cannot_start_it(tmp_path):
    with pytest.raises(SsdlabError, match=r"line 1: not fio iolog v3: the first line must be "
                                          r"'fio version 3 iolog'"):
        Trace(write(tmp_path, "t", SAMPLES["fio-v2"].text), "fio-v3")


@pytest.mark.parametrize("text, words", [
    ("", "holds no records: it is empty"),
    ("\n  \n\n", "holds no records: it is empty"),
    ("Timestamp,Response,IOType,LUN,Offset,Size\n", "holds no records"),
    ("fio version 3 iolog\n1 /a add\n2 /a open\n3 /a close\n", "holds no records"),
    ("Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0,,4,0,4096\n",
     "holds no records (1 line(s) with a blank IOType"),
], ids=["empty", "blank", "header-only", "fio-files-only", "systor-unanswered"])
def test_a_trace_without_records_is_refused(tmp_path, text, words):
    assert words in refusal(write(tmp_path, "t", text))


def test_strict_refuses_times_going_backwards(tmp_path):
    path = write(tmp_path, "t", ALI.format(100) + ALI.format(200) + ALI.format(150))
    assert "line 3: time 150 µs is earlier than the 200 µs of the record before it" in refusal(path, strict=True)
    assert len(list(Trace(path))) == 3


def test_a_truncated_gzip_file(tmp_path):
    data = gzip.compress((ALI.format(1) * 20000).encode())
    message = refusal(write(tmp_path, "t.gz", data[: len(data) // 2]))
    assert "reading stopped after line" in message and "damaged or truncated" in message


def test_damaged_gzip_data_from_the_start(tmp_path):
    assert "the compressed data is damaged" in refusal(write(tmp_path, "t.gz", b"\x1f\x8b\x08\x00garbage" * 10))


@pytest.mark.parametrize("data, words", [
    (b"\x28\xb5\x2f\xfd" + b"\0" * 20, "zstd-compressed: decompress it first"),
    (b"PK\x03\x04" + b"\0" * 20, "a zip archive"),
    (gzip.compress(b"\0" * 257 + b"ustar\x0000" + b"\0" * 250), "a tar archive: extract the trace first"),
], ids=["zstd", "zip", "tgz"])
def test_archives_and_unsupported_compression_are_refused(tmp_path, data, words):
    assert words in refusal(write(tmp_path, "t", data))


def test_a_file_without_line_breaks(tmp_path):
    assert f"line 2 is longer than {MAX_LINE} characters" in refusal(
        write(tmp_path, "t", ALI.format(1) + "7" * (3 * MAX_LINE)))


def test_a_missing_file_and_a_directory(tmp_path):
    assert "cannot read the trace" in refusal(tmp_path / "missing")
    assert "cannot read the trace" in refusal(tmp_path)


def test_csv_headers_that_do_not_say_enough(tmp_path):
    for header, words in [("time_us,op,offset\n", "the header names no length column"),
                          ("time_us,time_s,op,offset,length\n", "must name one of time_ns, time_us"),
                          ("op,offset,length\n", "must name one of"),
                          ("time_us,op,offset,length,response_us,response_ms\n", "at most one of response_ns")]:
        with pytest.raises(SsdlabError, match=words):
            Trace(write(tmp_path, "t", header + "1,read,0,4096\n"), "csv")
