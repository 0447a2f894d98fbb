"""Every reader, fed lines hypothesis invents (blktrace's, real captures hypothesis
damages): each read gives checked records or an SsdlabError, never anything else (a
TypeError, an OverflowError, a struct.error... would be a traceback)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.errors import SsdlabError
from ssdlab.traces import Op, Record, Trace
from ssdlab.traces.formats import BINARY, BY_NAME
from ssdlab.traces.record import MAX_END, MAX_TIME_US
from tests.traces.samples import SAMPLES

CAPTURES = sorted((Path(__file__).parent / "data").glob("*.blktrace.*"))

FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

numbers = st.one_of(st.integers(-10, 10**6).map(str), st.integers().map(str),
                    st.floats(allow_nan=True, allow_infinity=True).map(str),
                    st.sampled_from(["", "0", "-0", "1e5", "1e400", "0x10", "1_000", "٣", " 4 ", "9" * 60,
                                     "9" * 5000, "1.5", ".5", "5.", "nan", "-inf", "1125899906842624"]))
words = st.sampled_from(["Read", "Write", "R", "W", "r", "0", "1", "read", "write", "trim", "flush", "sync",
                         "datasync", "discard", "wait", "add", "open", "close", "/dev/sdb", "usr", "\x00",
                         "\ufeff", '"', "é"])
cell = st.one_of(numbers, words, st.text(max_size=6))
invented = st.builds(lambda cells, sep: sep.join(cells), st.lists(cell, max_size=8), st.sampled_from([",", " "]))


def _mutated(line: str, position: int, value: str) -> str:
    """`line` with one of its fields replaced by `value`."""
    sep = "," if "," in line else " "
    cells = line.split(sep)
    cells[position % len(cells)] = value
    return sep.join(cells)


def lines_like(sample: str) -> st.SearchStrategy[str]:
    """Lines of any shape, the sample's own, and the sample's with one field gone wrong."""
    own = sample.splitlines()
    mutated = st.builds(_mutated, st.sampled_from(own), st.integers(0, 7), cell)
    return st.one_of(invented, mutated, mutated, st.sampled_from(own), st.sampled_from(own), st.sampled_from(own))


def read_all(path, format_name=None) -> list[Record] | None:
    try:
        return list(Trace(path, format_name))
    except SsdlabError:
        return None


def assert_checked(records: list[Record] | None) -> None:
    for r in records or []:
        assert type(r) is Record and isinstance(r.op, Op)
        assert 0 <= r.time_us <= MAX_TIME_US and 0 <= r.offset and r.offset + r.length <= MAX_END
        assert r.length > 0 or (r.op is Op.FLUSH and r.length == 0)
        assert r.response_us is None or r.response_us >= 0
        assert not isinstance(r.time_us, float) or math.isfinite(r.time_us)


def test_every_format_is_fuzzed():
    assert set(BY_NAME) == set(SAMPLES) | {fmt.name for fmt in BINARY}


@pytest.mark.parametrize("name", sorted(SAMPLES))
@FAST
@given(data=st.data())
def test_every_reader_gives_records_or_an_ssdlab_error(tmp_path, name, data):
    sample = SAMPLES[name]
    # what comes before the first record (a header, fio's version and add lines), or not
    start = sample.text.splitlines()[:sample.records[0][-1] - 1]
    first = data.draw(st.sampled_from([start, []]), "first lines")
    body = data.draw(st.lists(lines_like(sample.text), max_size=6), "lines")
    path = tmp_path / "trace"
    path.write_text("\n".join([*first, *body]) + "\n", encoding="utf-8")
    assert_checked(read_all(path, name))
    assert_checked(read_all(path))  # and detection


@FAST
@given(data=st.binary(max_size=300))
def test_any_bytes_give_records_or_an_ssdlab_error(tmp_path, data):
    path = tmp_path / "trace"
    path.write_bytes(data)
    assert_checked(read_all(path))


# Ways to damage a binary capture: at a place, by a number of bytes
edits = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 16), st.integers(0, 7)),  # one bit
    st.tuples(st.just("set"), st.integers(0, 1 << 16), st.binary(min_size=1, max_size=8)),  # bytes overwritten
    st.tuples(st.just("cut"), st.integers(0, 1 << 16), st.just(0)),  # the end cut off there
    st.tuples(st.just("insert"), st.integers(0, 1 << 16), st.binary(max_size=60)),
    st.tuples(st.just("drop"), st.integers(0, 1 << 16), st.integers(1, 60)),
    st.tuples(st.just("splice"), st.integers(0, 1 << 16), st.integers(0, 1 << 16)),  # a piece of itself again
)


def damaged(data: bytes, edit: tuple) -> bytes:
    kind, at, value = edit
    at %= len(data) + 1
    if kind == "flip":
        if not data:
            return data
        at %= len(data)
        return data[:at] + bytes([data[at] ^ (1 << value)]) + data[at + 1:]
    if kind == "set":
        return data[:at] + value + data[at + len(value):]
    if kind == "cut":
        return data[:at]
    if kind == "insert":
        return data[:at] + value + data[at:]
    if kind == "drop":
        return data[:at] + data[at + value:]
    start = value % (len(data) + 1)
    return data[:at] + data[start:start + 96] + data[at:]


@FAST
@given(data=st.data())
def test_damaged_blktrace_captures_give_records_or_an_ssdlab_error(tmp_path, data):
    """A real capture (per CPU files, or one of them alone) with a few bits, bytes or
    pieces changed, read with and without --format."""
    per_cpu = data.draw(st.booleans(), "per-CPU files")
    name = data.draw(st.sampled_from(["loop512", "loop4k"]), "capture")
    chosen = [capture for capture in CAPTURES if capture.name.startswith(name + ".")]
    if not per_cpu:
        chosen = [data.draw(st.sampled_from(chosen), "file")]
    for index, capture in enumerate(chosen):
        content = capture.read_bytes()
        for edit in data.draw(st.lists(edits, max_size=3), f"edits of {capture.name}"):
            content = damaged(content, edit)
        (tmp_path / (f"t.blktrace.{index}" if per_cpu else "t")).write_bytes(content)
    first = tmp_path / ("t.blktrace.0" if per_cpu else "t")
    assert_checked(read_all(first))
    assert_checked(read_all(first, "blktrace"))
