"""The fill-state and TRIM suite (METHODOLOGY.md section 2, the "lab report" suite).

Parameters METHODOLOGY.md leaves open, and the choices made (see also states.py
for how each state is reached and where the measured I/O falls):

- Each state is measured for 1 minute, time-based (fio's `time_based`, no byte
  limit), over the data present: a byte cap would end a fast drive's measurement
  inside its SLC cache, and the minute's per-second curve is the stability chart.
- The half-trimmed state and the TRIM test trim the second half of the LBA space
  (rounded down to whole ranges), in 64 MiB ranges (one fio I/O, one discard, per
  range) at QD1. The second half rather than every other range: the measured
  writes then fall in one contiguous span of data present, so before and after
  the TRIM they overwrite the same data and differ only by the TRIM.
- The TRIM test's sequential writes are 128 KiB QD32 (the fill's own pattern),
  1 minute each, time-based, the first right before the TRIM, the second right after
  it, without idle time.
- Maximum write latency: the cases run in METHODOLOGY.md's order; the two cases
  without a stated state (the light load and 4 KiB QD1) run in the 10 % state,
  before the 512 B case of that state, so one fill serves three cases. Every case
  writes at random over the data present, QD1. The light load is 10 IOPS of 4 KiB
  for 1 minute (600 writes at scale 1); every case runs 1 minute, time-based.
  The 70/30 mix is 70 % reads, 30 % writes, and its score is the writes' maximum.
"""

from ssdlab.analysis import lab_scores
from ssdlab.catalogue.states import (
                                     FILLED_10,
                                     FILLED_50,
                                     FILLED_90,
                                     HALF_TRIMMED,
                                     TRIM_RANGE,
                                     CaseList,
                                     LatencyCase,
                                     StateSweep,
                                     TrimTest,
)
from ssdlab.model import Op
from ssdlab.units import KiB

STATE_RUNTIME_S = 60.0     # 1 minute, time-based
STATES = (FILLED_10, FILLED_90, HALF_TRIMMED)
LIGHT_LOAD_IOPS = 10
LIGHT_LOAD_S = 60.0

LAB_TESTS = (
    StateSweep(id="seq-write-states", title="Sequential write 128 KiB QD32 at 10 %, 90 % filled, half trimmed",
               primary_score="mean MB/s over the three fill states", rw=Op.WRITE, bs=128 * KiB,
               iodepth=32, states=STATES, runtime_s=STATE_RUNTIME_S,
               scorer=lab_scores.states_mbps_score),
    StateSweep(id="rand-write-states", title="Random write 4 KiB QD32 at 10 %, 90 % filled, half trimmed",
               primary_score="mean K IOPS over the three fill states", rw=Op.RANDWRITE, bs=4 * KiB,
               iodepth=32, states=STATES, runtime_s=STATE_RUNTIME_S,
               scorer=lab_scores.states_kiops_score),
    TrimTest(id="trim", title="TRIM of half the drive in 64 MiB ranges, full drive",
             primary_score="TRIM ops/s", write_bs=128 * KiB, write_qd=32, trim_range=TRIM_RANGE,
             runtime_s=STATE_RUNTIME_S),
    CaseList(id="max-write-latency", title="Maximum write latency in five cases",
             primary_score="highest maximum write latency of the five cases, ms", cases=(
                 LatencyCase(f"light load {LIGHT_LOAD_IOPS} IOPS 4 KiB", FILLED_10, Op.RANDWRITE,
                             4 * KiB, LIGHT_LOAD_S, rate_iops=LIGHT_LOAD_IOPS),
                 LatencyCase("4 KiB QD1", FILLED_10, Op.RANDWRITE, 4 * KiB, STATE_RUNTIME_S),
                 LatencyCase("512 B QD1 at 10% filled", FILLED_10, Op.RANDWRITE, 512,
                             STATE_RUNTIME_S),
                 LatencyCase("512 B QD1 at 50% filled", FILLED_50, Op.RANDWRITE, 512,
                             STATE_RUNTIME_S),
                 LatencyCase("4 KiB 70/30 mix at 90% filled", FILLED_90, Op.RANDRW, 4 * KiB,
                             STATE_RUNTIME_S, rwmixread=70),
             )),
)
