"""fio 3.33 outputs recorded on a real file target (tests/golden/fio) -> results."""

import json

import pytest

from ssdlab.backends.fio import parse
from ssdlab.errors import BackendFailed
from tests.paths import GOLDEN_FIO as GOLDEN


def golden(name):
    return (GOLDEN / name).read_text()


def fio_percentiles(job, direction):
    pct = job[direction]["clat_ns"]["percentile"]
    return [int(pct[k]) for k in ("50.000000", "99.000000", "99.900000", "99.990000")]


@pytest.mark.parametrize("name, direction", [
    ("randread-qd4.json", "read"), ("randrw-70.json", "read"), ("randrw-70.json", "write"),
    ("seqwrite-qd32.json", "write")])
def test_percentiles_from_json_plus_histograms_equal_fios_own(name, direction):
    doc, notes = parse.split_output(golden(name))
    job = parse.job_of(doc)
    lat = parse.directions(job)[direction].latency
    assert [lat.p50_ns, lat.p99_ns, lat.p99_9_ns, lat.p99_99_ns] == fio_percentiles(job, direction)
    assert lat.count == job[direction]["clat_ns"]["N"] == sum(c for _, c in lat.histogram)
    assert notes == ()


def test_randread_totals():
    job = parse.job_of(parse.split_output(golden("randread-qd4.json"))[0])
    found = parse.directions(job)
    assert set(found) == {"read"}
    read = found["read"]
    assert (read.ios, read.bytes, read.busy_s) == (60377, 247304192, 1.501)
    assert read.iops == pytest.approx(job["read"]["iops"], rel=1e-3)
    assert read.latency.mean_ns == pytest.approx(job["read"]["clat_ns"]["mean"])
    assert read.latency.max_ns == job["read"]["clat_ns"]["max"]


def test_mixed_job_has_both_directions_in_the_requested_share():
    found = parse.directions(parse.job_of(parse.split_output(golden("randrw-70.json"))[0]))
    assert (found["read"].ios, found["write"].ios) == (33018, 14191)
    assert found["read"].ios / (found["read"].ios + found["write"].ios) == pytest.approx(0.70, abs=0.01)


def test_a_note_printed_into_the_json_stream_is_kept_as_a_note():
    doc, notes = parse.split_output(golden("note-mixed-into-json.out"))
    assert notes == ("note: both iodepth >= 1 and synchronous I/O engine are selected, "
                     "queue depth will be capped at 1",)
    assert parse.directions(parse.job_of(doc))["read"].ios == 1024


def test_error_lines_after_and_before_the_json_are_separated():
    text = "fio: some warning\n" + golden("randread-qd4.json") + "fio: pid=1, err=5/file:io_u.c\n"
    doc, notes = parse.split_output(text)
    assert notes == ("fio: some warning", "fio: pid=1, err=5/file:io_u.c")
    assert doc["jobs"][0]["jobname"] == "QD4"


def test_a_job_error_says_what_to_do():
    doc, _ = parse.split_output(golden("odirect-einval.out"))
    with pytest.raises(BackendFailed, match="EINVAL.*disk-backed filesystem"):
        parse.job_of(doc)


def test_no_json_at_all_is_a_clear_failure():
    with pytest.raises(parse.NoJson, match="fio printed no JSON result .*fio: failed to parse"):
        parse.split_output("fio: failed to parse job file\n{ not json")


def test_a_direction_without_io_is_absent():
    job = json.loads(golden("seqwrite-qd32.json"))["jobs"][0]
    assert set(parse.directions(job)) == {"write"}
