"""fio's JSON read into runs (importing/fio_json.py): real fio 3.33 outputs of every shape
(tests/golden/fio_json/README.md), other versions' from public test data, and files that
are refused, whole, with a message naming them."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.importing.fio_json import SUITE, TEST_ID, read_fio_json, step_notes
from ssdlab.model import Op
from ssdlab.store import Store
from ssdlab.store import imports as store_imports
from ssdlab.store.imports import save_imported
from tests.paths import GOLDEN

DATA = GOLDEN / "fio_json"
MiB = 1 << 20


def doc(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def notes_of(run) -> list[str]:
    return [note for _, note in step_notes(run)]


def test_plain_json_keeps_fio_figures_and_percentiles():
    run = read_fio_json(DATA / "fio-3.33-json.json")
    raw = doc("fio-3.33-json.json")
    job = raw["jobs"][0]
    (step,), ((result, (commands,)),) = run.test.steps, run.results
    assert (run.test.id, run.suite, run.name) == (TEST_ID, SUITE, "fio-3.33-json.json")
    assert (step.label, step.rw, step.bs, step.iodepth, step.size, step.io_size) == (
        "randread-4k", Op.RANDREAD, 4096, 1, 8 * MiB, 2 * MiB)
    read = result.read
    clat = job["read"]["clat_ns"]
    assert (read.ios, read.bytes, read.busy_s) == (512, 2 * MiB, job["read"]["runtime"] / 1000)
    lat = read.latency
    assert (lat.count, lat.mean_ns, lat.min_ns, lat.max_ns) == (clat["N"], clat["mean"], clat["min"], clat["max"])
    assert (lat.p50_ns, lat.p99_ns, lat.p99_9_ns, lat.p99_99_ns) == tuple(
        clat["percentile"][q] for q in ("50.000000", "99.000000", "99.900000", "99.990000"))
    assert lat.histogram == () and result.write is None and result.trim is None
    assert result.busy_s == read.busy_s and result.engine == "psync"
    assert run.engine["fio_version"] == "fio-3.33" and run.engine["output"] == "json"
    assert run.target == "/var/tmp/fiorec-data.bin" and run.target_kind == "file"
    assert run.identity == {"disks": "vda"} and run.host == {}
    reported = datetime.fromtimestamp(raw["timestamp_ms"] / 1000, UTC)
    assert datetime.fromisoformat(run.finished_at) == reported
    assert (reported - datetime.fromisoformat(run.started_at)).total_seconds() == job["elapsed"]
    assert commands.startswith("[global]\n") and "[randread-4k]\nrw=randread\nbs=4k\n" in commands
    assert notes_of(run) == []  # everything the step holds, fio printed


def test_json_plus_keeps_the_histogram_and_its_percentiles_are_fios():
    run = read_fio_json(DATA / "fio-3.33-jsonplus.json")
    clat = doc("fio-3.33-jsonplus.json")["jobs"][0]["write"]["clat_ns"]
    lat = run.results[0][0].write.latency
    assert sum(n for _, n in lat.histogram) == lat.count == 256
    assert lat.histogram == tuple(sorted((int(v), n) for v, n in clat["bins"].items()))
    assert (lat.p50_ns, lat.p99_ns, lat.p99_9_ns, lat.p99_99_ns) == tuple(
        clat["percentile"][q] for q in ("50.000000", "99.000000", "99.900000", "99.990000"))
    assert run.engine["output"] == "json+" and run.test.steps[0].iodepth == 4


def test_several_jobs_are_steps_in_order():
    run = read_fio_json(DATA / "fio-3.33-several-jobs.json")
    shapes = [(s.label, s.rw, s.bs, s.iodepth, s.rwmixread, s.runtime, s.io_size) for s in run.test.steps]
    assert shapes == [("seqread-128k", Op.READ, 128 << 10, 8, None, 1.0, 2 * MiB),
                      ("randwrite-4k", Op.RANDWRITE, 4096, 2, None, 1.0, 2 * MiB),
                      ("randrw-70", Op.RANDRW, 8192, 4, 70, 1.0, 2 * MiB)]
    results = [r for r, _ in run.results]
    assert [sorted(r.directions) for r in results] == [["read"], ["write"], ["read", "write"]]
    jobs = doc("fio-3.33-several-jobs.json")["jobs"]
    assert [r.ios for r in results] == [j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs]


def test_numjobs_reported_as_one_is_that_many_jobs_at_once():
    run = read_fio_json(DATA / "fio-3.33-numjobs-group-reporting.json")
    (step,) = run.test.steps
    assert len(step.jobs) == 2 and step.concurrent[0].rw is Op.RANDREAD
    assert run.results[0][0].read.ios == 512  # both jobs' 256
    assert any("numjobs=2 reported as one" in n for n in notes_of(run))


def test_a_group_of_different_jobs_is_said_to_have_no_known_workload():
    run = read_fio_json(DATA / "fio-3.33-group-reporting-two-jobs.json")
    (step,) = run.test.steps
    assert step.label == "a" and step.rw is Op.RANDWRITE  # fio's first name, its last job's options
    assert set(run.results[0][0].directions) == {"read", "write"}
    assert any("do not describe its figures (read too)" in n and "not known" in n for n in notes_of(run))


def test_trims_are_their_own_direction():
    run = read_fio_json(DATA / "fio-3.33-trim.json")
    ops = [s.rw for s in run.test.steps]
    assert ops == [Op.WRITE, Op.TRIM, Op.TRIMWRITE]
    trim, trimwrite = (r for r, _ in run.results[1:])
    assert sorted(trim.directions) == ["trim"] and trim.trim.ios == 128 and trim.bytes == 0
    assert sorted(trimwrite.directions) == ["trim", "write"]
    assert trim.engine == "falloc"
    assert any("ioengine=falloc" in n for n in notes_of(run))  # no drive's engine: said


def test_client_server_output_is_read_without_its_sum():
    run = read_fio_json(DATA / "fio-3.33-client.json")
    assert [s.label for s in run.test.steps] == ["randread-4k", "seqwrite-64k"]
    assert run.host == {"hostname": "localhost", "port": "8765"}
    assert run.engine["client"] == "localhost:8765"
    raw = doc("fio-3.33-client.json")
    assert "timestamp_ms" not in raw and run.finished_at.startswith(
        datetime.fromtimestamp(raw["timestamp"], UTC).isoformat()[:19])
    assert any("All clients" in n for n in run.options["imported"]["notes"])


def test_two_clients_are_named_by_host_and_port():
    run = read_fio_json(DATA / "fio-3.33-two-clients.json")
    assert [s.label for s in run.test.steps] == ["randread-4k @ localhost:8765", "randread-4k @ localhost:8766"]
    assert run.host == {"hostnames": "localhost:8765, localhost:8766"}


@pytest.mark.parametrize("name", ["fio-3.33-note-before.txt", "fio-3.33-normal-and-json.txt"])
def test_text_around_the_json_is_kept_as_fios_notes(name):
    run = read_fio_json(DATA / name)
    (step,), ((result, _),) = run.test.steps, run.results
    assert step.iodepth == 1 and step.bs == 64 << 10  # iodepth=8 with psync: fio keeps one
    assert result.notes[0].startswith("note: both iodepth >= 1 and synchronous I/O engine")
    assert result.read.ios == 32
    assert notes_of(run) == []  # fio's own lines are not the import's findings


def test_status_interval_reports_import_the_final_one():
    run = read_fio_json(DATA / "fio-3.33-status-interval.txt")
    text = (DATA / "fio-3.33-status-interval.txt").read_text()
    last = json.loads(text[text.rindex('{\n  "fio version"'):])
    assert run.results[0][0].read.ios == last["jobs"][0]["read"]["total_ios"]
    assert run.test.steps[0].time_based and run.test.steps[0].rate_iops == 200
    assert any("2 reports" in n for n in run.options["imported"]["notes"])


def test_a_job_that_ended_with_an_error_is_refused_whole():
    with pytest.raises(SsdlabError, match=r"fio-3.33-job-error.txt: fio's job 'unaligned' ended with an error: "
                                          r"EINVAL .*not imported: fix the job and run fio again"):
        read_fio_json(DATA / "fio-3.33-job-error.txt")


def test_fio_3_26_on_windows():
    run = read_fio_json(DATA / "public" / "fio-3.26-windowsaio-randwrite.json")
    (step,), ((result, _),) = run.test.steps, run.results
    assert (step.rw, step.bs, step.iodepth, step.size) == (Op.RANDWRITE, 4096, 1, 1 << 30)
    assert result.write.ios == 262144 and result.engine == "windowsaio"
    assert run.engine["fio_version"] == "fio-3.26" and "disks" not in run.identity


def test_fio_3_26_readwrite_alias_and_an_option_printed_twice():
    run = read_fio_json(DATA / "public" / "fio-3.26-19-libaio-readwrite.json")
    (step,) = run.test.steps
    assert (step.rw, step.rwmixread, step.bs, step.iodepth) == (Op.RW, 70, 256 << 10, 64)
    assert run.target.endswith("remote_disk_1_1/fio-test.dat")  # JSON keeps the last of a key given twice


def test_an_unknown_span_is_said_and_stood_in_for(tmp_path):
    raw = doc("fio-3.33-json.json")
    del raw["global options"]["size"]
    path = tmp_path / "nosize.json"
    path.write_text(json.dumps(raw))
    run = read_fio_json(path)
    assert run.test.steps[0].size == 2 * MiB  # the bytes it moved
    assert any("span is not known" in n and "a stand-in" in n for n in notes_of(run))


def test_options_the_step_cannot_hold_are_named(tmp_path):
    raw = doc("fio-3.33-json.json")
    raw["jobs"][0]["job options"].update({"fsync": "1", "rw": "randread:8", "bs": "4k,64k"})
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(raw))
    run = read_fio_json(path)
    (step,) = run.test.steps
    assert step.rw is Op.READ  # randread:8 is not a pattern a step holds: fio's default, said
    said = " ".join(notes_of(run))
    assert "fsync=1" in said and "rw=randread:8" in said and "is fio's default, not the job's" in said


def test_missing_percentiles_are_said(tmp_path):
    raw = doc("fio-3.33-json.json")
    del raw["jobs"][0]["read"]["clat_ns"]["percentile"]
    path = tmp_path / "nopct.json"
    path.write_text(json.dumps(raw))
    run = read_fio_json(path)
    assert run.results[0][0].read.latency.count == 0
    assert any("latencies are not known" in n for n in notes_of(run))


def edited(tmp_path, change) -> object:
    raw = doc("fio-3.33-json.json")
    change(raw)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda d: d["jobs"].clear(), "holds no job"),
    (lambda d: d.update(jobs={"a": 1}), "is not a list of jobs"),
    (lambda d: d["jobs"][0]["read"].update(total_ios=-5), "are not possible (ios: "),
    (lambda d: d["jobs"][0]["read"]["clat_ns"].update(mean=float("nan")), "nan at jobs[0].read.clat_ns.mean, which"),
    (lambda d: d["jobs"][0]["read"].update(io_bytes=10**30), "at jobs[0].read.io_bytes larger than any"),
    (lambda d: d["jobs"][0]["read"]["clat_ns"].update(min=2_000_000), "percentiles are not in order"),
    (lambda d: d["jobs"][0]["read"].update(runtime="soon"), "are not fio's numbers"),
    (lambda d: d.update(timestamp=-1, timestamp_ms=-1000), "is not a time fio can have written"),
    (lambda d: d.update({"fio version": "fio-2.2.10"}), "ssdlab imports fio 3's JSON"),
    (lambda d: d["jobs"][0].update(mixed=d["jobs"][0]["read"]), "unified_rw_reporting"),
    (lambda d: d["jobs"][0]["job options"].update(bs=["4k"]), "is not text as fio prints it"),
    (lambda d: d["jobs"][0].update(error=5), "ended with an error: EIO"),
])
def test_edited_or_damaged_files_are_refused_with_the_file_named(tmp_path, change, message):
    path = edited(tmp_path, change)
    with pytest.raises(SsdlabError) as caught:
        read_fio_json(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text
    assert "validation error" not in text and "pydantic" not in text


@pytest.mark.parametrize("content, message", [
    (b"", "no fio JSON output in it (it is empty)"),
    (b"hello world\n", "no fio JSON output in it (it begins 'hello world')"),
    (b'{"name": "x"}\n', "incomplete or damaged"),
    (b"\xff\xfe\x00", "is not UTF-8 text"),
])
def test_files_that_are_no_fio_output_are_refused(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(SsdlabError, match=re.escape(message)):
        read_fio_json(path)


@pytest.mark.parametrize("share", [0.1, 0.5, 0.9, 0.999])
def test_a_truncated_file_is_refused(tmp_path, share):
    data = (DATA / "fio-3.33-jsonplus.json").read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[:int(len(data) * share)])
    with pytest.raises(SsdlabError, match="incomplete or damaged .*record fio's output again"):
        read_fio_json(path)


def test_a_run_is_stored_whole_or_not_at_all(tmp_path, monkeypatch):
    run = read_fio_json(DATA / "fio-3.33-several-jobs.json", name="several", drive="WD SN850X 2TB")
    with Store(tmp_path / "ssdlab.db") as store:
        dump = store_imports.rec.dump
        calls = []

        def failing(kind, value):
            calls.append(kind)
            if kind is store_imports.rec.RESULT and calls.count(kind) == 2:
                raise SsdlabError("the disk is full")
            return dump(kind, value)

        monkeypatch.setattr(store_imports.rec, "dump", failing)
        with pytest.raises(SsdlabError, match="disk is full"):
            save_imported(store, run)
        assert store.runs() == []
        monkeypatch.setattr(store_imports.rec, "dump", dump)
        run_id = save_imported(store, run)
        stored = store.run(run_id)
        assert (stored.status.value, stored.name, stored.identity["drive"]) == ("done", "several", "WD SN850X 2TB")
        assert stored.created_at == run.started_at and stored.finished_at == run.finished_at
        (test,) = store.tests(run_id)
        assert test.status.value == "done" and test.score["value"] is None
        steps = store.steps(run_id, 0)
        assert [s.step for s in steps] == list(run.test.steps)
        assert [s.result for s in steps] == [r for r, _ in run.results]
        assert store.run_extras(run_id)["engine"]["fio_version"] == "fio-3.33"


def test_text_utf8_cannot_hold_is_stored_escaped(tmp_path):
    """A file name's bytes that are not UTF-8, and lone surrogates that JSON escapes can
    make, reach neither the database nor a report as such."""
    raw = doc("fio-3.33-json.json")
    raw["jobs"][0]["jobname"] = "job\ud800"
    raw["global options"]["filename"] = "/dev/nvme\udcff"
    path = tmp_path / "caf\udcc3\udca9 \udcff.json"  # bytes c3 a9 (é) and ff
    path.write_text(json.dumps(raw))
    run = read_fio_json(path)
    assert run.name == "café \\xff.json"
    assert run.test.steps[0].label == "job\\xed\\xa0\\x80" and run.target == "/dev/nvme\\xff"
    with Store(tmp_path / "ssdlab.db") as store:
        assert store.run(save_imported(store, run)).name == "café \\xff.json"
