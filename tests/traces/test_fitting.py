"""Fitting a trace to a target (traces/fitting.py): the device filter, time order, the idle
cap and time scale, offsets wrapped or scaled, alignment, and what the notes say."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.errors import SsdlabError
from ssdlab.traces import Trace, fitting, prepared
from ssdlab.traces.fit import Fit
from ssdlab.traces.fitting import prepare

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
T0 = 1_577_808_000_000_000  # an Alibaba timestamp, µs


def alibaba(tmp_path, rows, name="t.csv"):
    """An Alibaba trace of (time µs from T0, op, offset, length[, device])."""
    lines = [f"{r[4] if len(r) > 4 else 0},{r[1]},{r[2]},{r[3]},{T0 + r[0]}" for r in rows]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def fitted(tmp_path, rows, target=GiB, **fit):
    result = prepare(Trace(alibaba(tmp_path, rows)), Fit(**fit), target, tmp_path / "out.trace")
    table = next(prepared.chunks(tmp_path / "out.trace"), prepared.empty(0))
    return result, [(int(r["time_us"]), int(r["op"]), int(r["offset"]), int(r["length"])) for r in table]


def test_gaps_are_capped_at_25_ms_and_times_start_at_zero(tmp_path):
    rows = [(0, "R", 0, 4096), (10_000, "R", 0, 4096), (110_000, "W", 0, 4096), (115_000, "R", 0, 4096)]
    result, records = fitted(tmp_path, rows)
    assert [r[0] for r in records] == [0, 10_000, 35_000, 40_000]
    assert result.duration_us == 40_000 and result.original_duration_us == 115_000
    assert "1 gaps over 25 ms capped, 0.1 s of idle taken out" in result.notes


def test_the_time_scale_applies_before_the_cap_and_no_cap_keeps_every_gap(tmp_path):
    rows = [(0, "R", 0, 4096), (40_000, "R", 0, 4096), (100_000, "R", 0, 4096)]
    _, fast = fitted(tmp_path, rows, speed=2)
    assert [r[0] for r in fast] == [0, 20_000, 45_000]  # 20 ms stays, 30 ms is capped
    _, uncapped = fitted(tmp_path, rows, idle_cap_us=None)
    assert [r[0] for r in uncapped] == [0, 40_000, 100_000]


def test_offsets_past_the_target_wrap_or_scale_and_requests_end_inside(tmp_path):
    target = 1 * MiB
    rows = [(0, "W", 3 * MiB + 8 * KiB, 4096), (1, "W", target - 4096, 16 * KiB), (2, "R", 2 * MiB, 4096)]
    wrapped, records = fitted(tmp_path, rows, target=target)
    assert [r[2] for r in records] == [8 * KiB, target - 16 * KiB, 0]
    assert any("wrapped into it" in note for note in wrapped.notes)
    scaled, records = fitted(tmp_path, rows, target=target, offsets="scale")
    # the trace's extent is 3 MiB + 12 KiB: offsets shrink by target / extent, aligned down
    factor = target / (3 * MiB + 12 * KiB)
    assert [r[2] for r in records] == [int((3 * MiB + 8 * KiB) * factor) // 4096 * 4096,
                                       int((target - 4096) * factor) // 4096 * 4096,
                                       int(2 * MiB * factor) // 4096 * 4096]
    assert all(r[2] + r[3] <= target for r in records)
    assert scaled.notes[0].startswith("offsets scaled by 0.332 (the trace's extent 3.01 MiB into 1 MiB)")


def test_requests_grow_to_whole_logical_blocks(tmp_path):
    rows = [(0, "W", 512, 1024), (1, "R", 4096, 512), (2, "W", 8192, 8192)]
    result, records = fitted(tmp_path, rows)
    assert [(r[2], r[3]) for r in records] == [(0, 4096), (4096, 4096), (8192, 8192)]
    assert "2 requests grown to whole 4 KiB blocks" in result.notes
    _, small = fitted(tmp_path, rows, block=512)
    assert [(r[2], r[3]) for r in small] == [(512, 1024), (4096, 512), (8192, 8192)]


def test_a_device_filter_keeps_one_disk_and_names_the_others_when_none_is_left(tmp_path):
    rows = [(0, "R", 0, 4096, 3), (1, "W", 0, 4096, 7), (2, "R", 4096, 4096, 3)]
    result, records = fitted(tmp_path, rows, device="3")
    assert len(records) == 2 and result.ops == {"read": 2, "write": 0, "trim": 0, "flush": 0}
    assert "1 records of other devices left out" in result.notes
    with pytest.raises(SsdlabError, match=r"no record of device 9 to replay \(devices in it: 3, 7\)"):
        fitted(tmp_path, rows, device="9")


def test_records_out_of_order_are_sorted_keeping_the_files_order_among_equal_times(tmp_path):
    rows = [(30, "R", 0, 4096), (10, "W", 4096, 4096), (10, "R", 8192, 4096), (20, "W", 0, 4096)]
    result, records = fitted(tmp_path, rows)
    assert [(r[0], r[2]) for r in records] == [(0, 4096), (0, 8192), (10, 0), (20, 0)]
    assert "records sorted into time order for the replay" in result.notes


@settings(max_examples=40, deadline=None)
@given(times=st.lists(st.integers(0, 50), min_size=1, max_size=200), run=st.integers(1, 40),
       block=st.integers(1, 30))
def test_sorted_runs_merged_from_disk_give_a_stable_sort(tmp_path_factory, times, run, block):
    tmp_path = tmp_path_factory.mktemp("merge")
    rows = [(t, "R", i * 4096, 4096) for i, t in enumerate(times)]
    trace = Trace(alibaba(tmp_path, rows))
    raw = tmp_path / "raw"
    fitting._read(trace, Fit(), raw, None)
    old = fitting.SORT_RUN
    fitting.SORT_RUN = run
    try:
        merged = [r for chunk in fitting._merged(fitting._sorted_runs(raw, tmp_path), block=block) for r in chunk]
    finally:
        fitting.SORT_RUN = old
    expected = sorted(range(len(times)), key=lambda i: times[i])
    assert [int(r["offset"]) // 4096 for r in merged] == expected


def test_flushes_pass_through_and_counts_and_bytes_are_as_replayed(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("time_us,op,offset,length\n0,write,512,512\n5,flush,0,0\n9,trim,0,1048576\n")
    result = prepare(Trace(path), Fit(), GiB, tmp_path / "out.trace")
    assert result.ops == {"read": 0, "write": 1, "trim": 1, "flush": 1}
    assert result.bytes == {"read": 0, "write": 4096, "trim": MiB, "flush": 0}
    table = next(prepared.chunks(tmp_path / "out.trace"))
    assert (int(table[1]["op"]), int(table[1]["offset"]), int(table[1]["length"])) == (3, 0, 0)


def test_a_request_larger_than_the_target_or_a_target_of_part_blocks_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match="does not fit a target of 1 MiB"):
        fitted(tmp_path, [(0, "W", 0, 2 * MiB)], target=MiB)
    with pytest.raises(SsdlabError, match="not whole logical blocks of 4096"):
        fitted(tmp_path, [(0, "W", 0, 4096)], target=MiB + 512)
    assert not (tmp_path / "out.trace").exists()
