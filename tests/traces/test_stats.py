"""`ssdlab trace stats`: the figures of known traces, in-process and through the CLI."""

import gzip
import json

import pytest

from ssdlab.traces import Trace
from ssdlab.traces.stats import IDLE_GAP_US, trace_stats
from tests.conftest import run_cli
from tests.traces.samples import SAMPLES, write

# An Alibaba trace: 3 reads, a write, a gap of 100 ms, one read that goes back in time.
ALIBABA = ("0,R,0,4096,1000\n0,R,4096,4096,1100\n1,W,0,65536,1200\n0,R,8192,512,1300\n"
           "2,R,0,1048576,101300\n2,R,0,4096,101200\n")
# The CSV with response times: two overlapping I/Os, an idle second, one more.
# Outstanding: 1 in [0, 100), 2 in [100, 300), 1 in [300, 400); idle; 1 in [1000000, 1000500)
WITH_RESPONSES = ("time_us,op,offset,length,response_us\n0,read,0,4096,300\n100,write,0,4096,300\n"
                  "1000000,read,0,4096,500\n")


def test_counts_sizes_idle_and_devices(tmp_path):
    stats = trace_stats(Trace(write(tmp_path, "t", ALIBABA)))
    assert stats["format"] == "alibaba" and stats["records"] == 6
    assert stats["ops"]["read"] == {"count": 5, "bytes": 4096 * 3 + 512 + 1048576}
    assert stats["ops"]["write"] == {"count": 1, "bytes": 65536}
    assert stats["ops"]["trim"] == stats["ops"]["flush"] == {"count": 0, "bytes": 0}
    assert stats["sizes"] == [
        {"from_bytes": 512, "to_bytes": 1024, "read": 1, "write": 0, "trim": 0},
        {"from_bytes": 4096, "to_bytes": 8192, "read": 3, "write": 0, "trim": 0},
        {"from_bytes": 65536, "to_bytes": 131072, "read": 0, "write": 1, "trim": 0},
        {"from_bytes": 1048576, "to_bytes": 2097152, "read": 1, "write": 0, "trim": 0}]
    assert (stats["earliest_us"], stats["latest_us"], stats["duration_us"]) == (1000, 101300, 100300)
    gap = 100_000
    assert stats["idle"] == {"gap_over_us": IDLE_GAP_US, "gaps": 1, "share": gap / 100300,
                             "capped_duration_us": 100300 - (gap - IDLE_GAP_US)}
    assert stats["queue_depth"]["known"] is False and "no response times" in stats["queue_depth"]["why"]
    assert stats["devices"] == {"0": 3, "1": 1, "2": 2}
    assert stats["notes"] == ["1 record(s) earlier than the record before them (the first on line 6): a replay "
                              "issues them in time order"]
    assert stats["coarse_timing"] is None


def test_queue_depth_from_response_times(tmp_path):
    depth = trace_stats(Trace(write(tmp_path, "t", WITH_RESPONSES)))["queue_depth"]
    busy = 400 + 500
    assert depth == {"known": True, "mean": 1100 / 1000500, "mean_while_busy": 1100 / busy,
                     "busy_share": busy / 1000500}


def test_response_times_all_zero_say_nothing_of_the_queue_depth(tmp_path):
    # `trace make` writes MSR and SYSTOR '17 lines, whose response column it cannot fill, with 0
    zeros = "time_us,op,offset,length,response_us\n0,read,0,4096,0\n100,write,0,4096,0\n"
    depth = trace_stats(Trace(write(tmp_path, "t", zeros)))["queue_depth"]
    assert depth["known"] is False and "every response time is 0" in depth["why"]


def test_the_cli_prints_the_statistics_as_json(tmp_path):
    path = write(tmp_path, "usr_0.csv.gz", gzip.compress(SAMPLES["msr"].text.encode()))
    doc = json.loads(run_cli("trace", "stats", path, "--json").stdout)
    assert doc["format"] == "msr" and doc["records"] == 3
    assert doc["ops"]["read"] == {"count": 1, "bytes": 4096} and doc["ops"]["write"]["bytes"] == 65536 + 512
    assert doc["devices"] == {"usr_0": 2, "usr_1": 1}
    assert doc["queue_depth"]["known"] is True


def test_the_cli_table_and_its_notes(tmp_path):
    out = run_cli("trace", "stats", write(tmp_path, "t", SAMPLES["tencent"].text)).stdout
    assert "Tencent CBS CSV, 3 records over 1 s" in out
    assert "queue depth: unknown" in out and "devices: 2: 1283 (2), 77 (1)" in out
    assert "note: Tencent CBS times I/O in whole seconds" in out


@pytest.mark.parametrize("args, words", [
    (["--format", "nope"], "unknown trace format 'nope'"),
    (["--strict"], "line 6: time 101200 µs is earlier"),
])
def test_the_cli_refuses_with_a_message_and_status_2(tmp_path, args, words):
    proc = run_cli("trace", "stats", write(tmp_path, "t", ALIBABA), *args, check=False)
    assert proc.returncode == 2 and words in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
