"""The client suite (METHODOLOGY.md section 1), with the exact parameters of the table.

Every test starts from a purged drive with its span written sequentially first
(the data the test reads or overwrites); the whole-drive fill starts purged.
"Up to 1 minute idle after each QD" is implemented as its maximum, 60 s.
"""

from ssdlab.catalogue.definitions import BurstTest, MixSweep, QueueDepthSweep, WholeDriveFill
from ssdlab.model import Op
from ssdlab.units import GiB, KiB, MiB

RANDOM_BS = 4 * KiB
SEQUENTIAL_BS = 128 * KiB
BURST_SPAN = 16 * GiB
SUSTAINED_SPAN = 64 * GiB
PER_STEP_LIMITS = dict(runtime_s=60.0, io_size_bytes=32 * GiB)  # 1 minute or 32 GiB, whichever first
IDLE_AFTER_QD_S = 60.0

SUSTAINED_SCORE = "mean MB/s of QD1, QD2 and QD4"
MIXED_SCORE = "mean MB/s over the 11 mixes"

CLIENT_TESTS = (
    BurstTest(id="rand-read-burst", title="Burst random read, 4 KiB QD1",
              primary_score="MB/s during bursts", rw=Op.RANDREAD, bs=RANDOM_BS,
              span_bytes=BURST_SPAN, burst_bytes=32 * MiB, total_bytes=GiB),
    QueueDepthSweep(id="rand-read-sustained", title="Sustained random read, 4 KiB QD1-32",
                    primary_score=SUSTAINED_SCORE, rw=Op.RANDREAD, bs=RANDOM_BS,
                    span_bytes=SUSTAINED_SPAN, idle_s=IDLE_AFTER_QD_S, **PER_STEP_LIMITS),
    BurstTest(id="rand-write-burst", title="Burst random write, 4 KiB QD1",
              primary_score="MB/s during bursts", rw=Op.RANDWRITE, bs=RANDOM_BS,
              span_bytes=BURST_SPAN, burst_bytes=4 * MiB, total_bytes=128 * MiB),
    QueueDepthSweep(id="rand-write-sustained", title="Sustained random write, 4 KiB QD1-32",
                    primary_score=SUSTAINED_SCORE, rw=Op.RANDWRITE, bs=RANDOM_BS,
                    span_bytes=SUSTAINED_SPAN, idle_s=IDLE_AFTER_QD_S, **PER_STEP_LIMITS),
    BurstTest(id="seq-read-burst", title="Burst sequential read, 128 KiB QD1",
              primary_score="MB/s during bursts", rw=Op.READ, bs=SEQUENTIAL_BS,
              span_bytes=BURST_SPAN, burst_bytes=128 * MiB, total_bytes=GiB),
    QueueDepthSweep(id="seq-read-sustained", title="Sustained sequential read, 128 KiB QD1-32",
                    primary_score=SUSTAINED_SCORE, rw=Op.READ, bs=SEQUENTIAL_BS,
                    span_bytes=SUSTAINED_SPAN, idle_s=IDLE_AFTER_QD_S, **PER_STEP_LIMITS),
    BurstTest(id="seq-write-burst", title="Burst sequential write, 128 KiB QD1",
              primary_score="MB/s during bursts", rw=Op.WRITE, bs=SEQUENTIAL_BS,
              span_bytes=BURST_SPAN, burst_bytes=128 * MiB, total_bytes=GiB),
    QueueDepthSweep(id="seq-write-sustained", title="Sustained sequential write, 128 KiB QD1-32",
                    primary_score=SUSTAINED_SCORE, rw=Op.WRITE, bs=SEQUENTIAL_BS,
                    span_bytes=SUSTAINED_SPAN, idle_s=IDLE_AFTER_QD_S, **PER_STEP_LIMITS),
    MixSweep(id="mixed-random", title="Mixed random read/write, 4 KiB QD4",
             primary_score=MIXED_SCORE, rw=Op.RANDRW, bs=RANDOM_BS, iodepth=4,
             span_bytes=SUSTAINED_SPAN, **PER_STEP_LIMITS),
    MixSweep(id="mixed-sequential", title="Mixed sequential read/write, 128 KiB QD1",
             primary_score=MIXED_SCORE, rw=Op.RW, bs=SEQUENTIAL_BS, iodepth=1,
             span_bytes=SUSTAINED_SPAN, **PER_STEP_LIMITS),
    WholeDriveFill(id="whole-drive-fill", title="Whole-drive sequential fill, 128 KiB QD32",
                   primary_score="mean MB/s over the whole drive", bs=SEQUENTIAL_BS, iodepth=32),
)
