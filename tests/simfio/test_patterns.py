"""fio 3.33's bssplit, random_distribution, rw suffix, rate, rate_iops, flow, flow_id and ba,
read as fio 3.33 reads them.

How each expected value was established, marked on the cases:
  [src]   read in fio 3.33's source (options.c split_parse_ddir, bssplit_ddir,
          zone_split_ddir, str_rw_cb, str_random_distribution_cb; parse.c handle_option,
          __handle_option, str_to_decimal; io_u.c get_next_buflen, get_next_offset).
  [parse] fio 3.33 run here: `fio --debug=parse --parse-only job.fio` prints the zone
          table it keeps ("zone ddir 0 (nr=3): 0: 50/5 ..."), and its exit status says
          whether it takes a value (test_fio_* below repeats these).
  [io]    fio 3.33 run here on the null engine with --debug=io: the offsets and lengths
          of the I/O it issues (test_fio_* below repeats these).
  [bw]    fio 3.33 run here on the null engine for 2 s: each direction's bandwidth in its
          JSON (`rate=,2m` held trims at 2 MiB/s, `rate=,2m,` did not).
"""

import json
import re
import shutil
import subprocess
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.simfio.patterns import (
    blockalign,
    bssplit,
    flow,
    flow_id,
    random_distribution,
    rate,
    rate_iops,
    rw_suffix,
)
from ssdlab.simfio.values import ValueProblem

DEVICE = 1 << 30
K, M, G = 1 << 10, 1 << 20, 1 << 30


def same(split):
    return {"read": split, "write": split, "trim": split}


# ---- bssplit ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    # [io] 512 10.2 %, 1k 4.9 %, 4k 59.6 %, 64k 25.3 % of 20000; order [src] qsort by percentage
    ("512/10:1k/5:4k/60:64k/", same([(1 * K, 5), (512, 10), (64 * K, 25), (4 * K, 60)])),
    # HOWTO's example; [io] 1k 25.2 %, 4k 49.6 %, 32k 25.1 %
    ("4k/50:1k/:32k/", same([(1 * K, 25), (32 * K, 25), (4 * K, 50)])),
    # [src] 100 // 3 = 33 each; [io] the rest goes to the size drawn last: 33.2/33.1/33.8 %
    ("4k:8k:16k", same([(4 * K, 33), (8 * K, 33), (16 * K, 34)])),
    # [io] a lone size is every I/O (fio stores it as 0 %, but min_bs == max_bs)
    ("4k", same([(4 * K, 100)])),
    ("4k/", same([(4 * K, 100)])),
    ("4k/100", same([(4 * K, 100)])),
    # [src] the empty ones share nothing: they stay, as the smallest size (alignment)
    ("4k/100:512/", same([(512, 0), (4 * K, 100)])),
    # [src] 1 % left over for two empties: 0 each, the 1 % to the size drawn last
    ("4k/99:8k/:16k/", same([(8 * K, 0), (16 * K, 0), (4 * K, 100)])),
    # [io] HOWTO's per-direction example under rw=randrw: reads 2k 50.2/4k 49.8, writes 4k 90.6/8k 9.4
    ("2k/50:4k/50,4k/90:8k/10", {"read": [(2 * K, 50), (4 * K, 50)],
                                 "write": [(8 * K, 10), (4 * K, 90)], "trim": [(8 * K, 10), (4 * K, 90)]}),
    # [io] rw=randtrim: a trailing comma leaves the trims to bs= (4k 100 %), without it they copy writes
    ("2k/50:4k/50,4k/90:8k/10,", {"read": [(2 * K, 50), (4 * K, 50)], "write": [(8 * K, 10), (4 * K, 90)],
                                  "trim": []}),
    # [io] reads at bs= (4k), writes 8k
    (",8k/100", {"read": [], "write": [(8 * K, 100)], "trim": [(8 * K, 100)]}),
    # [io] rw=randtrim: 16k 100 %
    ("1k/50:2k/50,4k/100,16k/100", {"read": [(1 * K, 50), (2 * K, 50)], "write": [(4 * K, 100)],
                                    "trim": [(16 * K, 100)]}),
    # [io] a trailing ':' ends the list: 4k 50.4 %, 8k 49.6 %
    ("4k/50:8k/50:", same([(4 * K, 50), (8 * K, 50)])),
    # [src] ties keep the order written (glibc's qsort is a stable merge sort for these)
    ("8k/50:4k/50", same([(8 * K, 50), (4 * K, 50)])),
    (" 0x1000/50:8kb/50 ", same([(4 * K, 50), (8 * K, 50)])),
    ("4k/50:1m/50", same([(4 * K, 50), (1 * M, 50)])),
])
def test_bssplit_as_fio_draws_it(text, expected):
    assert bssplit(text, 1024, DEVICE) == expected


def test_bssplit_kb_base_1000():
    # [src] str_to_decimal's kb_base: k is 1000 (so 4k is not a multiple of 512: refused)
    assert bssplit("64k/50:128k/50", 1000, DEVICE)["read"] == [(64000, 50), (128000, 50)]
    with pytest.raises(ValueProblem, match="multiple of 512 bytes"):
        bssplit("4k/50:8k/50", 1000, DEVICE)  # 4000 bytes


@pytest.mark.parametrize("text, message", [
    # [io] fio takes it, then draws 4k 60.5 % and 8k 39.5 %: the percentages it was given are not kept
    ("4k/60:8k/60", "add up to 120, over 100"),
    # [parse] fio refuses this one ("bssplit percentages add to more than 100%")
    ("4k/60:8k/60:16k/:32k/", "over 100"),
    # [io] fio takes it and issues 16k only
    ("4k/60:8k/60:16k/", "over 100"),
    # [io] 4k 10 %, 8k 90 %: the rest goes to the size drawn last
    ("4k/10:8k/20", "add up to 30, not 100"),
    ("4k/50", "add up to 50, not 100"),
    # [io] 4k 100 %: 6k is rounded down to a multiple of the smallest size
    ("4k/50:6k/50", "multiple of the smallest"),
    # [io] 0 is read as empty: 4k 50.4 %, 8k 49.6 %
    ("4k/0:8k/50", "0 percentage"),
    # [io] atoi: 10.5 is 10 (4k 10 %, 8k 90 %)
    ("4k/10.5:8k/", "fraction"),
    # [io] capped: 4k 100 %
    ("4k/150:8k/", "at most 100"),
    ("4k/x:8k/", "not a percentage"),
    ("4k/50%:8k/", "not a percentage"),
    # [io] the list ends at '::': 4k 100 %
    ("4k/50::8k/50", "empty entry"),
    (":4k/100", "empty entry"),
    # [io] fio: "size too small ... < 18446744073709551565"
    ("50%/100", "percentage is not taken"),
    ("256/100", "from 512 B to 1 GiB"),
    ("2g/100", "from 512 B to 1 GiB"),
    ("4607/100", "multiple of 512 bytes"),
    ("4k/50:1mib/50", "multiple of 512 bytes"),        # values.py: mib is 1000 * 1000 bytes at kb_base 1024
    ("4k/50:8k/50,4k/50:8k/50,4k/50:8k/50,4k", "at most three"),
    (",", "no block size"),
    ("", "no value"),
    ("4 k/100", "blank inside"),
    ("4k/50:8k/50,16k/50", "add up to 50"),
    ("1.5k/100", "fraction"),
    ("abc/100", "not a block size"),
    (":".join(["4k/"] * 65), "at most 64"),
])
def test_bssplit_refused(text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        bssplit(text, 1024, DEVICE)


def test_sizes_fit_the_device():
    assert bssplit("32k/100", 1024, 32 * K)["read"] == [(32 * K, 100)]
    with pytest.raises(ValueProblem, match="larger than the device"):
        bssplit("4k/50:64k/50", 1024, 32 * K)
    assert bssplit("64k/100", 1024, 0)["read"] == [(64 * K, 100)]  # 0: no device to fit
    with pytest.raises(ValueProblem, match="from 512 to 32768 bytes"):
        blockalign("64k", 1024, 32 * K)


def test_bssplit_takes_64_sizes():
    # [src] BSSPLIT_MAX is 64: fio drops what is past it, so 64 is the most taken
    split = bssplit(":".join(f"{n}k/" for n in range(1, 65)), 1024, DEVICE)["read"]
    assert len(split) == 64 and sum(p for _, p in split) == 100
    assert [p for _, p in split] == [1] * 63 + [37]  # 100 // 64 = 1 each, the rest to the last


# ---- random_distribution ---------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("random", {"kind": "uniform"}),
    # [src] FIO_DEF_ZIPF 1.1 and FIO_DEF_PARETO 0.2 without a value; normal's 0.0; [parse] taken
    ("zipf", {"kind": "zipf", "theta": 1.1, "center": None}),
    ("pareto", {"kind": "pareto", "h": 0.2, "center": None}),
    ("normal", {"kind": "normal", "dev_pct": 0.0, "center": None}),
    ("zipf:1.2", {"kind": "zipf", "theta": 1.2, "center": None}),
    ("zipf:0.8", {"kind": "zipf", "theta": 0.8, "center": None}),
    # HOWTO's example of a center; [parse] taken, and center 0 and 1 too
    ("zipf:1.2:0.25", {"kind": "zipf", "theta": 1.2, "center": 0.25}),
    ("pareto:0.9:0", {"kind": "pareto", "h": 0.9, "center": 0.0}),
    ("normal:99.5:1", {"kind": "normal", "dev_pct": 99.5, "center": 1.0}),
    ("normal:0", {"kind": "normal", "dev_pct": 0.0, "center": None}),
    ("zipf:.5e1", {"kind": "zipf", "theta": 5.0, "center": None}),
    # [parse] zone ddir 0 (nr=3): 50/5, 30/15, 20/80 -- an empty last range takes the rest
    ("zoned:50/5:30/15:20/", {"kind": "zoned", "zones": [(50, 5), (30, 15), (20, 80)]}),
    # HOWTO's example; [parse] as written
    ("zoned:60/10:30/20:8/30:2/40", {"kind": "zoned", "zones": [(60, 10), (30, 20), (8, 30), (2, 40)]}),
    # [parse] 60/10, 40/90: a range left out is empty
    ("zoned:60/10:40", {"kind": "zoned", "zones": [(60, 10), (40, 90)]}),
    # [parse] 60/10, 40/20: ranges under 100 % leave the rest of the span untouched
    ("zoned:60/10:40/20", {"kind": "zoned", "zones": [(60, 10), (40, 20)]}),
    # [parse] 40/33 three times: 1 % is never reached
    ("zoned:40/:40/:20/", {"kind": "zoned", "zones": [(40, 33), (40, 33), (20, 33)]}),
    # [parse] 0/10, 100/90: a zone without accesses skips its range
    ("zoned:0/10:100/", {"kind": "zoned", "zones": [(0, 10), (100, 90)]}),
    # [parse] a trailing ':' is nothing
    ("zoned:50/10:50/90:", {"kind": "zoned", "zones": [(50, 10), (50, 90)]}),
    ("zoned:100/100", {"kind": "zoned", "zones": [(100, 100)]}),
    # HOWTO's example; [parse] 60/21474836480, 30/107374182400, 10/536870912000
    ("zoned_abs:60/20G:30/100G:10/500g",
     {"kind": "zoned_abs", "zones": [(60, 20 * G), (30, 100 * G), (10, 500 * G)]}),
    # [parse] 50/1024, 50/1048576
    ("zoned_abs:50/1k:50/1m", {"kind": "zoned_abs", "zones": [(50, 1 * K), (50, 1 * M)]}),
    ("zoned_abs:0:100/1m", {"kind": "zoned_abs", "zones": [(0, 0), (100, 1 * M)]}),
])
def test_random_distribution_as_fio_keeps_it(text, expected):
    assert random_distribution(text) == expected


def test_zoned_abs_sizes_follow_kb_base_and_fit_the_span():
    assert random_distribution("zoned_abs:100/1g", kb_base=1000)["zones"] == [(100, 10**9)]
    assert random_distribution("zoned_abs:50/1g:50/1g", span_bytes=2 * G)["zones"] == [(50, G), (50, G)]
    # [src] io_u.c: "zoned_abs sizes exceed file size" fails the job
    with pytest.raises(ValueProblem, match="more than the job's span"):
        random_distribution("zoned_abs:50/1g:50/1g", span_bytes=2 * G - 1)


@pytest.mark.parametrize("text, message", [
    # [parse] fio 3.33 refuses each of these
    ("zoned:60/10:40/90,50/50", "refuses a comma"),   # HOWTO's per-direction form does not parse
    ("zipf:1.2,zipf:1.1", "refuses a comma"),
    ("zipf:1", "must not be 1"),
    ("zipf:1.0", "must not be 1"),
    ("zipf:1.2:1.5", "from 0 to 1"),
    ("normal:100", "under 100"),
    ("normal:-1", "under 100"),
    ("pareto:1", "both excluded"),
    ("pareto:0", "both excluded"),
    ("ZIPF:1.2", "lower case"),
    ("zip:1.2", "not a random distribution"),
    ("zipf:", "not a number"),
    ("zipf:1.2:", "not a number"),
    ("zoned", "names no zones"),
    ("zoned:", "names no zones"),
    ("zoned:300/10", "not a share of the accesses"),     # [parse] fio: got=44 (300 in 8 bits)
    ("zoned:50k/10:50/90", "not a share of the accesses"),  # [parse] fio: got=50
    ("zoned:50/10:40/90", "add up to 90, not 100"),
    ("zoned:60/10:50/90", "add up to 110, not 100"),
    ("zoned:50/60:50/60", "ranges add up to 120"),
    ("zoned:50/10::50/90", "empty entry"),               # [parse] fio: got=50, the list ends at '::'
    # [parse] fio takes these; [io] zoned:100 (kept as 100/0) reads offset 0 only
    ("zoned:100", "gets no range"),
    ("zoned:100/", "gets no range"),
    ("zoned:50/100:50/", "gets no range"),               # [parse] 50/100, 50/0
    ("zoned:50/0:50/100", "0 percentage"),               # [parse] 50/0, 50/100: 0 is empty
    ("zoned:50/10.7:50/", "fraction"),                   # [parse] 50/10, 50/90
    ("zoned:50/150:50/", "at most 100"),                 # [parse] 50/100, 50/0
    ("zoned:50/-5:50/", "not a percentage"),             # [parse] 50/100, 50/0
    ("zoned:50/x:50/10", "not a percentage"),            # [parse] 50/90, 50/10
    ("zoned:50.5/10:49.5/90", "fraction"),
    ("zoned_abs:100", "gets no size"),                   # [parse] 100/0
    ("zoned_abs:50/50%:50/1m", "percentage is not taken"),  # [parse] 50/18446744073709551565
    ("zoned_abs:50/:50/1m", "not a zone size"),          # [src] str_to_decimal("") fails
    ("zoned_abs:50/1000:50/1m", "sectors"),
    ("zoned_abs:50/0:50/1m", "sectors"),
    # [parse] fio takes and ignores the value, the extra part, a junk tail, and -1 (its "unset")
    ("random:7", "takes no value"),
    ("zipf:1.2:0.5:9", "at most a value and a center"),
    ("zipf:1.2abc", "not a number"),
    ("zipf:1.2:-1", "from 0 to 1"),
    ("zipf:nan", "not a number"),
    ("zipf:inf", "not a number"),
    ("zipf:0x1p0", "not a number"),
    ("zipf:1e999", "too large"),
    ("zipf:0", "above 0"),
    ("zipf:-1.2", "above 0"),
    ("zipf:101", "at most 100"),
    ("zipf:1.2:nan", "not a number"),
    ("zoned:50/10 :50/90", "blank inside"),
    ("", "no value"),
])
def test_random_distribution_refused(text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        random_distribution(text)


def test_zoned_takes_256_zones():
    # [src] ZONESPLIT_MAX is 256: fio drops what is past it
    zones = ":".join(["1/1"] * 100 + ["0/"] * 156)  # the empty ranges share nothing: no accesses there
    assert len(random_distribution("zoned:" + zones)["zones"]) == 256
    with pytest.raises(ValueProblem, match="at most 256"):
        random_distribution("zoned:" + zones + ":0/")


# ---- rw --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("read", ("read", 0, 1)),
    ("readwrite", ("rw", 0, 1)),                      # [src] a posval of its own, the same TD_DDIR_RW
    # [io] bs=4k: 0x0, then 0xfe000, 0xfd000, 0xfc000 ... backwards from the end
    ("read:-8k", ("read", -8 * K, 1)),
    # [io] 0x0, 0x2000, 0x4000 ...: a 4k hole after each write
    ("write:4k", ("write", 4 * K, 1)),
    ("read:+4k", ("read", 4 * K, 1)),                 # [io] as read:4k
    ("read:0x1000", ("read", 4 * K, 1)),              # [io] as read:4k
    ("read: 4k", ("read", 4 * K, 1)),                 # [io] fio strips blanks after the colon
    ("read:0", ("read", 0, 1)),
    ("rw:4k", ("rw", 4 * K, 1)),                      # [io] reads and writes each skip 4k
    ("readwrite:4k", ("rw", 4 * K, 1)),
    ("trimwrite:8k", ("trimwrite", 8 * K, 1)),
    # [io] 0xf000, 0x10000, 0x11000, 0x12000, then 0xbd000 ...: 4 I/Os per random offset
    ("randread:4", ("randread", 0, 4)),
    ("randrw:2", ("randrw", 0, 2)),
    ("randtrim:1", ("randtrim", 0, 1)),
    ("randtrimwrite:2", ("randtrimwrite", 0, 2)),     # [io] each trim is followed by its write
    ("randwrite", ("randwrite", 0, 1)),
    ("trim", ("trim", 0, 1)),
    ("randtrimwrite", ("randtrimwrite", 0, 1)),
])
def test_rw_suffix(text, expected):
    assert rw_suffix(text, 1024, DEVICE) == expected


def test_rw_suffix_kb_base():
    assert rw_suffix("write:64k", 1000, DEVICE) == ("write", 64000, 1)
    with pytest.raises(ValueProblem, match="sectors"):
        rw_suffix("write:4k", 1000, DEVICE)  # 4000 bytes


@pytest.mark.parametrize("text, message", [
    ("READ", "lower case"),                 # [parse] fio: "failed parsing rw=READ"
    ("reads", "not an I/O pattern"),
    ("randomread", "not an I/O pattern"),
    ("read:", "a size to skip"),            # [parse] fio: "rw postfix parsing failed"
    ("randread:", "count of I/Os"),         # [src] atoi("") is 0: as randread:0
    ("randread:0", "never draws a new random offset"),  # [io] 0x0, 0x1000, 0x2000 ...: sequential
    ("randread:-1", "count of I/Os"),       # [io] one random offset, then sequential (nr 2^32-1)
    ("randread:2k", "count of I/Os"),       # [io] 2 I/Os per offset: atoi stops at the k
    ("randread:2.5", "count of I/Os"),
    ("randread:3000000000", "at most"),
    ("read,4k", "comma"),                   # [io] the 4k is ignored: plain sequential
    ("randread,4", "comma"),                # [io] the 4 is ignored
    ("read:4k:8k", "not a size to skip"),   # [io] fio reads 4k, ignoring :8k
    ("read:50%", "percentage"),             # [src] str_to_decimal: -1 - 50 = -51 bytes
    ("read:1.5k", "fraction"),
    ("read:4 k", "remove the space"),
    ("read :4k", "blank inside"),           # [src] "read " is no posval
    ("read:1000", "sectors"),
    ("read:2g", "whole device"),
    ("read:-", "a size to skip"),
    ("", "no value"),
])
def test_rw_suffix_refused(text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        rw_suffix(text, 1024, DEVICE)


# ---- rate, rate_iops, ba, flow, flow_id ------------------------------------------------

def directions(read, write, trim):
    return {"read": read, "write": write, "trim": trim}


@pytest.mark.parametrize("text, expected", [
    ("10m", directions(10 * M, 10 * M, 10 * M)),        # [bw] rw=trim rate=1m: trims at 1 MiB/s
    ("1m,2m", directions(1 * M, 2 * M, 2 * M)),         # [bw] randrw: 1048051 and 2096103 B/s
    (",2m", directions(None, 2 * M, 2 * M)),            # [bw] rw=trim: 2095056 B/s (HOWTO: writes only)
    (",2m,", directions(None, 2 * M, None)),            # [bw] rw=trim: unlimited
    ("1m,", directions(1 * M, None, None)),             # [bw] randrw: writes unlimited
    ("1m,,3m", directions(1 * M, None, 3 * M)),         # [bw] rw=trim 3 MiB/s, rw=write unlimited
    ("1m,2m,3m", directions(1 * M, 2 * M, 3 * M)),
    ("0", directions(None, None, None)),                # [src] init.c: 0 is no limit
    ("0,1m", directions(None, 1 * M, 1 * M)),
    ("500k", directions(500 * K, 500 * K, 500 * K)),
    ("1mib", directions(1_000_000, 1_000_000, 1_000_000)),  # values.py's inversion of mib
])
def test_rate(text, expected):
    assert rate(text, 1024, DEVICE) == expected


def test_rate_kb_base():
    # [bw] kb_base=1000 rate=1m: 1003018 B/s
    assert rate("1m", 1000, DEVICE)["read"] == 1_000_000


@pytest.mark.parametrize("text, message", [
    ("1m:2m", "as commas"),              # [bw] read as 1m,2m
    ("1m-2m", "as commas"),              # [bw] read as 1m,2m
    ("1m,2m,3m,4m", "at most three"),    # [bw] the fourth is ignored
    (",", "gives no value"),             # [parse] fio: "failed parsing rate=,"
    (",,", "gives no value"),
    ("50%", "percentage"),               # [bw] unlimited: -1 - 50 bytes/s
    ("1m, 2m", "blank inside"),          # [bw] " 2m" is 2 bytes/s to fio
    ("fast", "not a rate"),
    ("1.5m", "fraction"),
    ("9" * 41, "too large"),
    ("16777216p", "too large"),
    ("", "no value"),
    ("1m,x", "not a rate"),
])
def test_rate_refused(text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        rate(text, 1024, DEVICE)


@pytest.mark.parametrize("text, kb_base, expected", [
    ("500", 1024, directions(500, 500, 500)),
    ("1k", 1024, directions(1024, 1024, 1024)),        # [bw] 1023 IOPS: read as a size
    ("1k", 1000, directions(1000, 1000, 1000)),        # [bw] 1000 IOPS with kb_base=1000 first
    ("0x10", 1024, directions(16, 16, 16)),            # [bw] 16 IOPS
    (",300", 1024, directions(None, 300, 300)),        # [bw] randrw: reads unlimited, writes 300
    ("100,200,", 1024, directions(100, 200, None)),
    ("0", 1024, directions(None, None, None)),
])
def test_rate_iops(text, kb_base, expected):
    assert rate_iops(text, kb_base) == expected


@pytest.mark.parametrize("text, message", [
    ("3g", "at most 2147483647"),        # [src] kept in a C int
    ("10.5", "fraction"),
    ("-5", "as commas"),
    ("1,2,3,4", "at most three"),
    ("many", "not a count"),
])
def test_rate_iops_refused(text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        rate_iops(text)


@pytest.mark.parametrize("text, expected", [
    ("4k", directions(4 * K, 4 * K, 4 * K)),
    ("4k,8k", directions(4 * K, 8 * K, 8 * K)),
    (",8k", directions(None, 8 * K, 8 * K)),
    ("1k,", directions(1 * K, None, None)),
    ("512,1m,64m", directions(512, 1 * M, 64 * M)),
])
def test_blockalign(text, expected):
    assert blockalign(text, 1024, DEVICE) == expected


@pytest.mark.parametrize("text, message", [
    ("0", "from 512 to"),                # [src] minval 1
    ("256", "from 512 to"),
    ("1000", "sectors"),
    ("2g", "from 512 to"),
    ("4k:8k", "as commas"),
    ("10%", "percentage"),
])
def test_blockalign_refused(text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        blockalign(text, 1024, DEVICE)


def test_flow_and_flow_id():
    assert flow("0") == 0 and flow("3") == 3 and flow("1000") == 1000
    assert flow_id("0") == 0 and flow_id("7") == 7 and flow_id("0x10") == 16
    assert flow_id("1k") == 1024 and flow_id("1k", kb_base=1000) == 1000  # [src] read as a size
    assert flow_id(str((1 << 31) - 1)) == (1 << 31) - 1


@pytest.mark.parametrize("function, text, message", [
    (flow, "1001", "from 0 to 1000"),    # [parse] fio: "max value out of range: 1001 (1000 max)"
    (flow, "-1", "one whole number"),    # [parse] fio takes it (an int below its maximum)
    (flow, "3,4", "one whole number"),   # [src] the 4 is ignored
    (flow, "2.5", "fraction"),
    (flow, "", "no value"),
    (flow_id, "-1", "one whole number"),
    (flow_id, "2147483648", "from 0 to 2147483647"),
    (flow_id, "1:2", "one whole number"),
    (flow_id, "x", "not a whole number"),
])
def test_flow_refused(function, text, message):
    with pytest.raises(ValueProblem, match=re.escape(message)):
        function(text)


@pytest.mark.parametrize("call", [
    lambda: bssplit("4k", 512, DEVICE),
    lambda: rate("1m", 1024.0, DEVICE),
    lambda: rate("1m", 1024, -1),
    lambda: rw_suffix("read", True, DEVICE),
    lambda: random_distribution("zipf", span_bytes="big"),
    lambda: rate_iops(None),
    lambda: flow(7),
])
def test_bad_arguments_are_value_problems(call):
    with pytest.raises(ValueProblem):
        call()


# ---- fuzz ------------------------------------------------------------------------------

FIO_ALPHABET = "0123456789kmgtpbiKMGxX/:,.%-+ _abcdefnorswzulpdit\t"
CALLS = [
    lambda t: bssplit(t, 1024, DEVICE),
    lambda t: bssplit(t, 1000, 0),
    lambda t: random_distribution(t),
    lambda t: random_distribution(t, kb_base=1000, span_bytes=DEVICE),
    lambda t: rw_suffix(t, 1024, DEVICE),
    lambda t: rate(t, 1024, DEVICE),
    lambda t: rate_iops(t),
    lambda t: blockalign(t, 1024, DEVICE),
    lambda t: flow(t),
    lambda t: flow_id(t),
]
fio_like = st.one_of(
    st.text(),
    st.text(alphabet=FIO_ALPHABET, max_size=60),
    st.builds(lambda a, b: a + b,
              st.sampled_from(["zipf:", "pareto:", "normal:", "zoned:", "zoned_abs:", "read:", "randread:",
                               "rw:", "4k/", ""]),
              st.text(alphabet=FIO_ALPHABET, max_size=40)),
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=fio_like, which=st.integers(0, len(CALLS) - 1))
def test_any_text_is_a_value_or_a_value_problem(text, which):
    try:
        CALLS[which](text)
    except ValueProblem as exc:
        assert str(exc)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="0123456789k/:,", max_size=40))
def test_a_bssplit_taken_draws_100_percent(text):
    try:
        found = bssplit(text, 1024, DEVICE)
    except ValueProblem:
        return
    for split in found.values():
        if split:
            assert sum(p for _, p in split) == 100
            assert [p for _, p in split[:-1]] == sorted(p for _, p in split[:-1])
            assert all(512 <= s <= 1024 * M and s % 512 == 0 for s, _ in split)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="0123456789/:", max_size=40))
def test_zones_taken_add_up(text):
    try:
        zones = random_distribution("zoned:" + text)["zones"]
    except ValueProblem:
        return
    assert sum(a for a, _ in zones) == 100 and sum(r for _, r in zones) <= 100
    assert all(r > 0 for a, r in zones if a)


# ---- the same against fio 3.33 itself --------------------------------------------------

FIO = shutil.which("fio")


def _fio_version():
    if FIO is None:
        return None
    return subprocess.run([FIO, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()


needs_fio = pytest.mark.skipif(_fio_version() != "fio-3.33",
                               reason="checked against fio 3.33's own parsing (fio 3.33 is not installed)")


def _parse(tmp_path, option, value):
    """fio --debug=parse --parse-only on a one-job file: (exit status, zone table of reads)."""
    job = tmp_path / "job.fio"
    job.write_text(f"[j]\nioengine=null\nsize=1g\nfilename={tmp_path / 'x'}\nrw=randread\n{option}={value}\n")
    proc = subprocess.run([FIO, "--debug=parse", "--parse-only", str(job)],
                          capture_output=True, text=True, timeout=60)
    lines = (proc.stdout + proc.stderr).splitlines()
    zones, reading = [], False
    for line in lines:
        if "zone ddir" in line:
            reading = "zone ddir 0 " in line
        elif reading and (m := re.search(r"\t\d+: (\d+)/(\d+)$", line)):
            zones.append((int(m.group(1)), int(m.group(2))))
    failed = proc.returncode != 0 or any("failed parsing" in line for line in lines)
    return failed, zones


ZONED = ["zoned:50/5:30/15:20/", "zoned:60/10:30/20:8/30:2/40", "zoned:60/10:40", "zoned:60/10:40/20",
         "zoned:40/:40/:20/", "zoned:0/10:100/", "zoned:50/10:50/90:", "zoned:100/100",
         "zoned_abs:60/20G:30/100G:10/500g", "zoned_abs:50/1k:50/1m"]


@needs_fio
@pytest.mark.parametrize("text", ZONED)
def test_fio_keeps_the_same_zones(tmp_path, text):
    failed, zones = _parse(tmp_path, "random_distribution", text)
    assert not failed and zones == random_distribution(text)["zones"]


@needs_fio
@pytest.mark.parametrize("text", ["random", "zipf", "pareto", "normal", "zipf:1.2:0.25", "pareto:0.9:0",
                                  "normal:99.5:1", "zipf:0.8"])
def test_fio_takes_what_is_taken(tmp_path, text):
    random_distribution(text)
    assert _parse(tmp_path, "random_distribution", text) == (False, [])


@needs_fio
@pytest.mark.parametrize("option, value", [
    ("random_distribution", "zoned:60/10:40/90,50/50"), ("random_distribution", "zipf:1"),
    ("random_distribution", "zipf:1.2:1.5"), ("random_distribution", "normal:100"),
    ("random_distribution", "pareto:1"), ("random_distribution", "zoned:300/10"),
    ("random_distribution", "zoned:50/10::50/90"), ("random_distribution", "ZIPF:1.2"),
    ("bssplit", "4k/60:8k/60:16k/:32k/"), ("rw", "READ"), ("flow", "1001"), ("rate", ","),
    ("ba", "0"),
])
def test_fio_refuses_too(tmp_path, option, value):
    assert _parse(tmp_path, option, value)[0]


def _issued(tmp_path, *options, ios=20000):
    """(direction, offset, length) of each I/O fio 3.33 issues on the null engine."""
    proc = subprocess.run([FIO, "--debug=io", "--name=j", "--ioengine=null", "--size=1g",
                           f"--filename={tmp_path / 'x'}", f"--number_ios={ios}", "--norandommap",
                           *options], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [(int(d), int(o, 16), int(n, 16)) for o, n, d in
            re.findall(r"fill: io_u \S+ off=(0x[0-9a-f]+),len=(0x[0-9a-f]+),ddir=(\d)", proc.stdout + proc.stderr)]


@needs_fio
@pytest.mark.parametrize("text, rw", [("512/10:1k/5:4k/60:64k/", "randread"), ("4k:8k:16k", "randread"),
                                      ("2k/50:4k/50,4k/90:8k/10", "randrw"),
                                      ("2k/50:4k/50,4k/90:8k/10", "randtrim"), (",8k/100", "randrw")])
def test_fio_draws_the_same_sizes(tmp_path, text, rw):
    counts = Counter((d, n) for d, _, n in _issued(tmp_path, f"--rw={rw}", f"--bssplit={text}"))
    totals = Counter()
    for (d, _), k in counts.items():
        totals[d] += k
    expected = bssplit(text, 1024, DEVICE)
    for d, total in totals.items():
        split = expected[("read", "write", "trim")[d]] or [(4096, 100)]  # none: bs=, 4k
        drawn = {n: 100 * counts[(d, n)] / total for (dd, n) in counts if dd == d}
        assert set(drawn) == {s for s, p in split if p}
        for size, pct in split:
            assert abs(drawn.get(size, 0) - pct) < 2.5, (d, size, drawn)


@needs_fio
@pytest.mark.parametrize("text", ["read:-8k", "write:4k", "read:+4k", "randread:4", "randread:1", "rw:4k"])
def test_fio_moves_offsets_the_same(tmp_path, text):
    op, add, nr = rw_suffix(text, 1024, DEVICE)
    # a span of 1 GiB: a random offset lands right after the one before about once in 2^18
    issued = _issued(tmp_path, f"--rw={text}", "--bs=4k", ios=12)
    size = 1 << 30
    for direction in {d for d, _, _ in issued}:
        offsets = [o for d, o, _ in issued if d == direction]
        if op.startswith("rand"):
            # nr I/Os in a row at each new offset, then a jump
            runs = [offsets[i + 1] - offsets[i] == 4096 for i in range(len(offsets) - 1)]
            assert runs == [(i + 1) % nr != 0 for i in range(len(runs))]
        else:
            expected, pos = [0], 0
            for _ in offsets[1:]:
                pos = pos + 4096 + add
                pos = (0 if add > 0 else size + add) if not 0 <= pos < size else pos
                expected.append(pos)
            assert offsets == expected


def _bandwidth(tmp_path, *options):
    proc = subprocess.run([FIO, "--name=j", "--ioengine=null", "--size=100g", f"--filename={tmp_path / 'x'}",
                           "--runtime=1", "--time_based", "--bs=4k", "--output-format=json", *options],
                          capture_output=True, text=True, timeout=60)
    job = json.loads(proc.stdout[proc.stdout.index("{"):])["jobs"][0]
    return {d: job[d]["bw_bytes"] for d in ("read", "write", "trim") if job[d]["total_ios"]}


@needs_fio
@pytest.mark.parametrize("text, rw", [(",2m", "trim"), (",2m,", "trim"), ("1m,", "randrw"),
                                      ("1m,,4m", "trim"), ("1m,4m", "randrw")])
def test_fio_limits_the_same_directions(tmp_path, text, rw):
    limits = rate(text, 1024, DEVICE)
    for direction, bw in _bandwidth(tmp_path, f"--rw={rw}", f"--rate={text}").items():
        limit = limits[direction]
        if limit is None:
            assert bw > 50 * M  # the null engine unlimited: gigabytes a second
        else:
            # fio never passes its limit; starved of CPU (make test runs the Rust tests beside
            # pytest's workers) it falls short of it, 26 % seen; the limits differ fourfold, so
            # one read from the wrong field is still told apart
            assert 0.4 * limit < bw < 1.05 * limit
