"""Every parser of user input, fed what hypothesis invents, in-process.

As designed, a parser either returns a valid value or raises:
- SsdlabError, for the parsers the CLI calls directly (suite files, fio job files and
  their plans, the fill CSV, run ids, the test list, text files): the CLI prints its
  message, so nothing else may escape them;
- ValueError, for the small value readers (`units.parse_size`, `simfio.values`), whose
  callers add the option's name and raise SsdlabError.
Anything else (a TypeError, an OverflowError, a ZeroDivisionError, pydantic's
ValidationError) is a bug that would reach the user as a traceback.
"""

from __future__ import annotations

import math
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ssdlab.analysis.fill import analyze_fill
from ssdlab.catalogue import CATALOGUE, check_selection
from ssdlab.cli.analyze import read_fill_csv
from ssdlab.cli.options import parse_test_ids
from ssdlab.documents import run_document
from ssdlab.errors import SsdlabError
from ssdlab.importing.fio_json import read_fio_json
from ssdlab.model import Step
from ssdlab.simfio.jobfile import UNDERSTOOD, FioJob, parse_job_file
from ssdlab.simfio.run import plan
from ssdlab.simfio.values import fio_bool, fio_int, fio_size, fio_time
from ssdlab.store import Store
from ssdlab.store.imports import save_imported
from ssdlab.suites import parse_suite
from ssdlab.text import printable, read_text_file
from ssdlab.units import MAX_BYTES, format_bytes, parse_size
from tests.paths import GOLDEN

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DEVICE = 16 * 10**9
TEST_IDS = sorted(CATALOGUE)

# Numbers as people (and fuzzers) write them: small, huge, negative, fractional, odd.
numbers = st.one_of(st.integers(-10, 10**6).map(str), st.integers().map(str),
                    st.floats(allow_nan=True, allow_infinity=True).map(str),
                    st.sampled_from(["", "0", "-0", "1e5", "0x10", "1_000", "٣", "①", " 4 ",
                                     "9" * 60, "1.5", ".5", "5.", "nan", "inf"]))
units = st.sampled_from(["", "k", "K", "kb", "KiB", "m", "MiB", "g", "GB", "t", "TiB", "p", "%",
                         "b", "q", "us", "ms", "s", "h", "d", " k", "ki"])
values = st.one_of(st.builds(lambda n, u: n + u, numbers, units), st.text(max_size=12))


@FAST
@given(values)
def test_parse_size_is_a_size_in_range_or_a_value_error(text):
    try:
        size = parse_size(text)
    except ValueError:
        return
    assert isinstance(size, int) and 0 <= size <= MAX_BYTES


@FAST
@given(st.integers(0, MAX_BYTES))
@example(2**61 + 1)  # beyond a float's 53 bits
def test_format_bytes_never_looks_exact_or_larger_than_it_is(n):
    shown = format_bytes(n)
    number, unit = shown.split(" ")
    scale = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
    if "." not in number:
        assert int(number) * scale == n  # shown whole: it is whole
    else:
        whole, hundredths = number.split(".")
        shown_hundredths = int(whole) * 100 + int(hundredths)
        assert shown_hundredths * scale <= n * 100 < (shown_hundredths + 1) * scale
        assert hundredths != "00"


@FAST
@given(values)
def test_fio_values_are_values_or_value_errors(text):
    for read in (lambda t: fio_size(t, DEVICE), lambda t: fio_time(t, "s"), fio_int, fio_bool):
        try:
            value = read(text)
        except ValueError:
            continue
        assert isinstance(value, (int, float, bool)) and not (isinstance(value, float)
                                                              and math.isnan(value))


job_options = st.lists(st.tuples(st.sampled_from(sorted(UNDERSTOOD)), values), max_size=6)


@FAST
@given(job_options, st.sampled_from(["read", "write", "randrw", "rw", "trim", "randtrim", "trimwrite",
                                     "read:-8k", "randread:2", "bogus"]))
def test_a_fio_job_plans_or_is_refused_with_a_message(options, rw):
    text = "[job]\n" + "".join(f"{k}={v}\n" for k, v in [("rw", rw), *options])
    try:
        jobs = parse_job_file(text, "x.fio")
        plans = [plan(job, DEVICE, "x.fio") for job in jobs]
    except SsdlabError:
        return
    for p in plans:
        assert p.step.offset + p.step.size <= DEVICE
        assert Step.model_validate(p.step.model_dump()) == p.step  # the simulator's rules hold


@FAST
@given(st.text(max_size=200))
def test_any_text_is_a_job_file_or_a_message(text):
    try:
        jobs = parse_job_file(text, "x.fio")
    except SsdlabError:
        return
    assert jobs and all(isinstance(j, FioJob) for j in jobs)


suite_tests = st.lists(st.one_of(st.sampled_from(TEST_IDS), st.text(max_size=8), st.integers()),
                       max_size=5)


@FAST
@given(st.text(max_size=12), st.one_of(st.text(max_size=12), st.integers()), suite_tests,
       st.booleans())
def test_a_suite_parses_or_is_refused_with_a_message(name, description, tests, extra_key):
    def toml(value):
        return f'"{value}"' if isinstance(value, str) else str(value)
    text = (f"name = {toml(name)}\ndescription = {toml(description)}\n"
            f"tests = [{', '.join(map(toml, tests))}]\n" + ("speed = 1\n" if extra_key else ""))
    try:
        suite = parse_suite(text, "s.toml")
    except SsdlabError:
        return
    assert suite.tests and set(suite.tests) <= set(TEST_IDS) and len(set(suite.tests)) == len(suite.tests)


@FAST
@given(st.text(max_size=200))
def test_any_text_is_a_suite_or_a_message(text):
    try:
        parse_suite(text, "s.toml")
    except SsdlabError:
        pass


csv_cell = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.integers(-10, 10**9).map(str), st.text(max_size=6))


@FAST
@given(st.lists(st.tuples(csv_cell, csv_cell), max_size=12), st.booleans(), st.booleans())
def test_a_fill_csv_reads_and_analyses_or_is_refused_with_a_message(tmp_path, rows, header, bom):
    path = tmp_path / "fill.csv"
    text = ("gib,mbps\n" if header else "") + "".join(f"{g},{m}\n" for g, m in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
    try:
        points = read_fill_csv(path)
    except SsdlabError:
        return
    analysis = analyze_fill(points)  # whatever the reader accepts, the analysis takes
    assert all(math.isfinite(p.mean_mbps) for p in analysis.phases)


@FAST
@given(st.lists(st.floats(1e-6, 1e6), min_size=2, max_size=30, unique=True),
       st.lists(st.floats(1e-3, 1e6), min_size=30, max_size=30))
def test_any_accepted_fill_curve_is_analysed(tmp_path, gibs, speeds):
    path = tmp_path / "fill.csv"
    path.write_text("".join(f"{g!r},{m!r}\n" for g, m in zip(sorted(gibs), speeds)))
    analysis = analyze_fill(read_fill_csv(path))
    assert math.isfinite(analysis.mean_mbps) and analysis.finding


@FAST
@given(st.binary(max_size=64))
def test_any_bytes_are_text_or_a_message(tmp_path, data):
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    try:
        text = read_text_file(path, "the file")
    except SsdlabError:
        return
    assert not text.startswith("\ufeff")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with Store(tmp_path_factory.mktemp("ids") / "ssdlab.db") as opened:
        yield opened


@FAST
@given(st.one_of(st.text(max_size=25), st.integers().map(str), st.just("latest")))
def test_a_run_id_resolves_or_is_refused_with_a_message(store, text):
    try:
        run_id = store.resolve_run_id(text)
    except SsdlabError:
        return
    assert isinstance(run_id, int) and 0 <= run_id < 1 << 63


@FAST
@given(st.lists(st.one_of(st.sampled_from(TEST_IDS), st.text(max_size=6)), max_size=5),
       st.sampled_from([",", ", ", ",,", " ,"]))
def test_a_test_list_is_a_valid_selection_or_a_message(ids, separator):
    try:
        selected = parse_test_ids(separator.join(ids))
        check_selection(selected, "--tests")
    except SsdlabError:
        return
    assert selected and len(set(selected)) == len(selected) and set(selected) <= set(TEST_IDS)


@FAST
@given(st.text(), st.booleans())
def test_printable_text_has_nothing_a_terminal_obeys(text, multiline):
    shown = printable(text, multiline)
    kept = "\n\t" if multiline else ""
    assert not any(unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp", "Cn"} and c not in kept
                   for c in shown)
    assert printable(shown, multiline) == shown


FIO_OUTPUTS = sorted(p for p in (GOLDEN / "fio_json").rglob("*") if p.suffix in (".json", ".txt"))
FIO_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# What an edit or a damaged disk puts where fio printed a number
fio_values = st.sampled_from(["-1", "-4096", "0", "NaN", "Infinity", "-Infinity", "1e400", "1e308", "0.5",
                              "18446744073709551617", "9" * 5000, '"x"', '""', "null", "true", "[]", "{}",
                              '{"a": [1, 2]}', "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]"])


@pytest.fixture(scope="module")
def import_store(tmp_path_factory):
    with Store(tmp_path_factory.mktemp("imports") / "ssdlab.db") as opened:
        yield opened


@FAST
@given(st.sampled_from(FIO_OUTPUTS), st.lists(st.tuples(st.floats(0, 1), fio_values), max_size=4),
       st.one_of(st.none(), st.floats(0, 1)), st.text(max_size=12))
def test_a_fio_output_imports_whole_or_is_refused_with_a_message(tmp_path, import_store, source, edits, cut,
                                                                  inserted):
    """Real fio outputs with numbers replaced by what fio never prints, cut short, or with text
    put in: each imports, and reads back as every command reads a run, or is refused."""
    text = source.read_text()
    numbers = list(FIO_NUMBER.finditer(text))
    for where, value in sorted(edits, reverse=True):
        m = numbers[int(where * (len(numbers) - 1))]
        text = text[:m.start()] + value + text[m.end():]
    if cut is not None:
        at = int(cut * len(text))
        text = text[:at] + inserted + text[at:] if inserted else text[:at]
    path = tmp_path / "fio.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        run = read_fio_json(path)
    except SsdlabError as exc:
        assert str(exc).startswith(str(path)) or "the fio output" in str(exc)
        return
    run_id = save_imported(import_store, run)
    document = run_document(import_store, run_id, full=True)
    assert len(document["tests"][0]["steps"]) == len(run.test.steps) >= 1
