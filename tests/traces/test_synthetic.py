"""The built-in synthetic traces: their stated figures (METHODOLOGY.md section 6) met at
scale 1, counted from the generator's chunks; seeds; the shape of the arrivals, sizes and
addresses; refusals; and `ssdlab trace list` and `trace make`, in-process and once
through the real command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from ssdlab.cli.trace import trace_app
from ssdlab.errors import SsdlabError
from ssdlab.traces import Op, Trace, prepared
from ssdlab.traces.stats import IDLE_GAP_US, trace_stats
from ssdlab.traces.synthetic import (
    BUILTIN,
    MAX_QD,
    REGION,
    Generator,
    builtin,
    cluster_law,
    parse_sizes,
    parse_zones,
    variant,
)
from ssdlab.traces.writers import WRITABLE
from ssdlab.units import GB, KiB, TiB
from tests.conftest import run_cli

READ, WRITE = prepared.OP_CODE[Op.READ], prepared.OP_CODE[Op.WRITE]
# METHODOLOGY.md section 6's table: bytes read and written
STATED = {"destroyer-like": (1583 * GB, 876 * GB), "heavy-like": (48.6 * GB, 106.3 * GB),
          "light-like": (18 * GB, 23.3 * GB)}


def records(name: str, scale: float, seed: int = 0, **changes) -> np.ndarray:
    spec = BUILTIN[name].changed(changes) if changes else BUILTIN[name]
    return np.concatenate(list(Generator(spec, scale, seed).chunks()))


@pytest.mark.parametrize("name", sorted(STATED))
def test_totals_at_scale_1_within_2_percent_in_time_order_aligned_and_inside_the_drive(name):
    spec = BUILTIN[name]
    read = written = reads = count = last = 0
    largest = 0
    for chunk in Generator(spec, 1.0, 0).chunks():  # counted, never written: 2.5 TB of I/O
        assert chunk.dtype == prepared.RECORD and len(chunk) <= 2 * prepared.CHUNK  # memory stays flat
        ops, lengths, times = chunk["op"], chunk["length"].astype(np.int64), chunk["time_us"]
        reading = ops == READ
        read += int(lengths[reading].sum())
        written += int(lengths[ops == WRITE].sum())
        reads += int(reading.sum())
        count += len(chunk)
        assert times[0] >= last and (np.diff(times) >= 0).all()
        last = int(times[-1])
        assert not ((chunk["offset"] | chunk["length"]) & 4095).any()
        largest = max(largest, int((chunk["offset"] + chunk["length"]).max()))
    stated_read, stated_written = STATED[name]
    assert read == pytest.approx(stated_read, rel=0.02) and written == pytest.approx(stated_written, rel=0.02)
    assert (spec.read_bytes, spec.write_bytes) == (stated_read, stated_written)
    assert reads / count == pytest.approx(spec.read_share, abs=0.01)
    assert largest <= spec.footprint <= spec.device_size == 10**12
    assert last == pytest.approx(spec.duration_s * 1e6, rel=0.1)
    # "client requests are small on average (7-26 KiB, about half reads)"
    assert 7 * KiB <= (read + written) / count <= 26 * KiB
    assert 0.39 <= reads / count <= 0.6


def test_heavy_like_does_not_fill_a_1_tb_drive():
    spec = BUILTIN["heavy-like"]
    assert spec.footprint < 10**12 / 2 and spec.footprint > spec.write_bytes


def test_the_same_seed_gives_the_same_trace_and_another_seed_another():
    first = records("light-like", 0.003, seed=7)
    assert np.array_equal(first, records("light-like", 0.003, seed=7))
    other = records("light-like", 0.003, seed=8)
    assert not np.array_equal(first[:1000], other[:1000])
    total = first["length"].astype(float).sum()
    assert other["length"].astype(float).sum() == pytest.approx(total, rel=0.01)  # the totals are the budget


def queue_depths(chunk: np.ndarray) -> np.ndarray:
    """Each request's queue depth on a drive much faster than the arrivals: the size of its
    cluster, the requests issued at its µs."""
    _, counts = np.unique(chunk["time_us"], return_counts=True)
    return np.repeat(counts, counts)


# METHODOLOGY.md section 6's mean queue depths; scales of about 2 * 10^5 records
@pytest.mark.parametrize(("name", "mean_qd", "scale"), [("destroyer-like", 5.5, 0.002), ("heavy-like", 4.6, 0.02),
                                                        ("light-like", 4.6, 0.05)])
def test_the_mean_queue_depth_is_the_stated_one_on_a_drive_faster_than_the_arrivals(name, mean_qd, scale):
    depths = queue_depths(records(name, scale))
    assert depths.mean() == pytest.approx(mean_qd, rel=0.05)
    assert depths.max() <= MAX_QD


def test_73_percent_of_light_likes_requests_arrive_alone():
    depths = queue_depths(records("light-like", 0.05))
    assert (depths == 1).mean() == pytest.approx(0.73, abs=0.015)
    law = cluster_law(BUILTIN["light-like"])
    assert law[0] == pytest.approx(0.73) and (law * np.arange(1, MAX_QD + 1)).sum() == pytest.approx(4.6)


# scales of some 300 idle gaps (bursts of 4096, 2048 and 512 requests)
@pytest.mark.parametrize(("name", "scale"), [("destroyer-like", 0.015), ("heavy-like", 0.06), ("light-like", 0.05)])
def test_sizes_sequential_share_and_idle_time_are_as_stated(name, scale):
    spec = BUILTIN[name]
    trace = records(name, scale)
    lengths = trace["length"]
    random = lengths != spec.sequential_size  # the random sizes are all smaller
    for size in spec.random_sizes:
        assert (lengths[random] == size.size).mean() == pytest.approx(size.share, abs=0.01)
    assert lengths[~random].astype(float).sum() / lengths.astype(float).sum() == pytest.approx(
        spec.sequential_share, abs=0.03)
    # sequential runs: each request of a run starts where the one before it ended
    runs = np.flatnonzero(~random[1:] & ~random[:-1])
    follows = trace["offset"][runs + 1] == trace["offset"][runs] + spec.sequential_size
    assert follows.mean() > 0.9
    gaps = np.diff(trace["time_us"].astype(np.int64))
    assert gaps[gaps > IDLE_GAP_US].sum() / (trace["time_us"][-1] - trace["time_us"][0]) == pytest.approx(
        spec.idle_share, abs=0.05)


def test_locality_is_skewed_zipf_and_zoned_as_stated():
    spec = BUILTIN["light-like"]
    trace = records("light-like", 0.01)
    random = trace["length"] != spec.sequential_size
    hits = np.bincount((trace["offset"][random] // REGION).astype(np.int64), minlength=spec.footprint // REGION)
    hottest = np.sort(hits)[::-1]
    # a uniform law would put 1 % of the accesses in 1 % of the regions
    assert hottest[:len(hits) // 100].sum() / hits.sum() > 0.3
    zoned = records("light-like", 0.01, locality=parse_zones("60/10,30/20,10/70"))
    random = zoned["length"] != spec.sequential_size
    where = zoned["offset"][random] / (spec.footprint // REGION * REGION)
    shares = [((where >= low) & (where < high)).mean() for low, high in [(0, 0.1), (0.1, 0.3), (0.3, 1)]]
    assert shares == pytest.approx([0.6, 0.3, 0.1], abs=0.02)


def test_the_footprint_is_cut_to_a_smaller_device():
    trace = records("heavy-like", 0.001, device_size=32 * 2**30)
    assert int((trace["offset"] + trace["length"]).max()) <= 32 * 2**30


@pytest.mark.parametrize(("changes", "phrase"), [
    ({"read_share": 0.9}, "heavy-like: reads cannot be 90.0% of the requests .* between 5.1% and 43.4% can"),
    ({"mean_qd": 5.0, "qd1_share": 0.9}, "needs the others at a mean depth of 41, outside 2 to 32"),
    ({"read_bytes": 0, "write_bytes": 0}, "must read or write something"),
    ({"duration_s": 1e7, "idle_share": 0}, "would leave .* µs between arrivals in a burst, outside 5 to 5000 µs"),
    ({"burst_requests": 3, "duration_s": 7200}, "would have idle gaps of .* ms on average, not over the 25 ms"),
    ({"random_sizes": ({"size": 4096, "share": 0.5},)}, "must add up to 100 %, not 50.0000%"),
])
def test_figures_that_cannot_hold_together_are_refused(changes, phrase):
    with pytest.raises(SsdlabError, match=phrase):
        list(Generator(builtin("heavy-like").changed(changes), 0.001).chunks())


def test_a_variant_that_puts_the_read_share_out_of_reach_gets_the_nearest_with_a_note():
    spec, notes = variant(BUILTIN["heavy-like"], {"write_bytes": 400 * GB})
    low, high = spec.read_shares()
    assert spec.read_share == pytest.approx(high) and "reads are" in notes[0]
    assert variant(BUILTIN["light-like"], {"mean_qd": 6.0})[1] == []


@pytest.mark.parametrize(("parse", "text", "phrase"), [
    (parse_sizes, "4k:60,8k", "write SIZE:PERCENT pairs"),
    (parse_sizes, "3k:100", "multiple of 4096"),
    (parse_sizes, "2m:100", "less than or equal to 1048576"),
    (parse_zones, "60/10,40", "write ACCESS/SPAN percent pairs"),
    (parse_zones, "60/10,30/20", "must add up to 100 %"),
])
def test_variant_options_in_words_are_parsed_or_refused(parse, text, phrase):
    with pytest.raises(SsdlabError, match=phrase):
        parse(text)
    assert parse_sizes("4k:75,64K:25")[1].size == 64 * KiB


# -- the command line ------------------------------------------------------------------------

@pytest.fixture
def ssdlab():
    """`ssdlab trace ...` in-process, mounted as main.py mounts it (an SsdlabError comes out
    as the exception: main turns it into its message and exit status 2)."""
    app = typer.Typer()
    app.add_typer(trace_app, name="trace")
    return lambda *args: CliRunner().invoke(app, [str(a) for a in args])


def test_trace_list_says_they_are_synthetic_and_not_the_reviews(ssdlab):
    result = ssdlab("trace", "list", "--json")
    listed = json.loads(result.stdout)
    assert [t["name"] for t in listed["traces"]] == ["destroyer-like", "heavy-like", "light-like"]
    assert "not the reviews' traces" in listed["note"] and all("not the reviews' traces" in t["about"]
                                                               for t in listed["traces"])
    table = ssdlab("trace", "list").stdout
    assert "1583 GB" in table and "73%" in table and "not the reviews' traces" in table


@pytest.mark.parametrize("fmt", [f for f in WRITABLE if f not in ("fio-v2", "tencent")])
def test_trace_make_writes_each_format_that_reads_back_as_made(ssdlab, tmp_path, fmt):
    out = tmp_path / f"t.{fmt}"
    result = ssdlab("trace", "make", "light-like", "-o", out, "--format", fmt, "--scale", "0.0005", "--seed", "3",
                    "--json")
    assert result.exit_code == 0, result.output
    made = json.loads(result.stdout)
    assert made["records"] > 1000 and made["read_bytes"] == pytest.approx(9 * 10**6, rel=0.05)
    if fmt == "prepared":
        assert prepared.records(out) == made["records"]
        return
    stats = trace_stats(Trace(out))
    assert (stats["records"], stats["ops"]["read"]["bytes"], stats["ops"]["write"]["bytes"]) == (
        made["records"], made["read_bytes"], made["write_bytes"])
    assert stats["duration_us"] == made["duration_us"]


def test_trace_make_takes_variants_and_the_format_from_the_name(ssdlab, tmp_path):
    out = tmp_path / "v.csv.gz"
    result = ssdlab("trace", "make", "heavy-like", "-o", out, "--scale", "0.001", "--written", "400GB",
                    "--sizes", "4k:50,16k:50", "--zones", "80/20,20/80", "--device-size", "64GiB", "--json")
    assert result.exit_code == 0, result.output
    made = json.loads(result.stdout)
    assert made["format"] == "csv" and made["write_bytes"] == pytest.approx(400 * 10**6, rel=0.02)
    assert made["variant"]["--written"] == 400 * GB and made["footprint"] <= 64 * 2**30
    assert any("reads are" in note for note in made["notes"])
    assert {r.length for r in Trace(out) if r.op is Op.READ} <= {4096, 16384, 131072}
    text = ssdlab("trace", "make", "light-like", "-o", tmp_path / "x.iolog", "--scale", "0.0001").stdout
    assert "as fio-v3" in text and "not the reviews' traces" in text


@pytest.mark.parametrize(("args", "phrase"), [
    (["nope", "-o", "x.csv"], "unknown built-in trace 'nope': the built-in traces are destroyer-like, heavy-like"),
    (["light-like", "-o", "x.csv", "--scale", "0"], "a trace's scale must be from 1e-06 to 10, not 0"),
    (["light-like", "-o", "x.csv", "--scale", "nan"], "a trace's scale must be from 1e-06 to 10, not nan"),
    (["light-like", "-o", "x.csv", "--seed", "-1"], "a seed must be a whole number from 0"),
    (["light-like", "-o", "x.txt"], "name the format with --format"),
    (["light-like", "-o", "x", "--format", "tencent"], "tencent cannot hold the trace's µs timing"),
    (["light-like", "-o", "x", "--format", "blktrace"], "cannot write a trace as 'blktrace'"),
    (["light-like", "-o", "x.prepared.gz"], "a prepared trace is not compressed"),
    (["light-like", "-o", "missing/x.csv"], "cannot write the trace missing/x.csv: No such file or directory"),
    (["light-like", "-o", "x.csv", "--zipf", "1", "--zones", "100/100"], "--zipf and --zones are two localities"),
    (["light-like", "-o", "x.csv", "--zipf", "-1"], "light-like: --zipf: Input should be greater than 0"),
    (["light-like", "-o", "x.csv", "--mean-qd", "40"], "light-like: --mean-qd: Input should be less than or equal"),
    (["light-like", "-o", "x.csv", "--read", "lots"], "--read: cannot read 'lots' as a size"),
    (["light-like", "-o", "x.csv", "--device", "a,b"], "cannot be a device in a comma-separated trace"),
])
def test_bad_input_to_trace_make_is_a_clear_refusal(ssdlab, tmp_path, monkeypatch, args, phrase):
    monkeypatch.chdir(tmp_path)
    result = ssdlab("trace", "make", *args)
    assert isinstance(result.exception, SsdlabError), result.output
    assert phrase in str(result.exception)
    assert list(tmp_path.iterdir()) == []


def test_trace_make_refuses_to_replace_a_file_without_force(ssdlab, tmp_path):
    out = tmp_path / "t.csv"
    out.write_text("mine")
    result = ssdlab("trace", "make", "light-like", "-o", out, "--scale", "0.0001")
    assert "exists: add --force to replace it" in str(result.exception) and out.read_text() == "mine"
    assert ssdlab("trace", "make", "light-like", "-o", out, "--scale", "0.0001", "--force").exit_code == 0
    assert out.read_text().startswith("time_us,op,offset,length,device\n")


def test_through_the_command_line_a_made_trace_is_read_by_trace_stats(tmp_path):
    out = tmp_path / "light.iolog.xz"
    run_cli("trace", "make", "light-like", "-o", out, "--scale", "0.001", "--coarse", "--format", "fio-v2")
    stats = json.loads(run_cli("trace", "stats", out, "--json").stdout)
    assert stats["format"] == "fio-v2" and stats["ops"]["write"]["bytes"] == pytest.approx(23.3e6, rel=0.02)
    refused = run_cli("trace", "make", "light-like", "-o", out, "--scale", "99", check=False)
    assert refused.returncode == 2 and "scale must be from" in refused.stderr and "Traceback" not in refused.stderr


def test_one_tb_is_the_default_device():
    assert all(spec.device_size == 10**12 for spec in BUILTIN.values()) and 10**12 < TiB
