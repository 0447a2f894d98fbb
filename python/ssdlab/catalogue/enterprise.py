"""The enterprise QD1 suite (METHODOLOGY.md section 3).

Every test starts from a purged drive filled sequentially (128 KiB QD32) over its
whole LBA range, then runs at QD1 over the whole drive. Choices where
METHODOLOGY.md leaves them open:

- QoS tests (4 KiB random read / write): 10^6 I/Os or 2 minutes, whichever comes
  first. 10^6 I/Os leave 100 completions beyond the 99.99th percentile; a drive
  slower than 8,300 IOPS stops at 2 minutes, which still gives at least 10^5 I/Os
  (10 beyond the 99.99th) down to 830 IOPS.
- QD1 sequential read and write, 128 KiB: 1 minute or 32 GiB, as the client suite.
- Block-size sweep: 12 sizes from 512 B to 1 MiB, for random read, sequential
  read, random write, sequential write in that order (reads first, so they read
  the sequentially written layout), each 20 s or 8 GiB: 48 points, 16 minutes at
  most.
- Each test fills the drive itself: tests are the unit of resumption, so none
  depends on the state another left behind.
"""

from ssdlab.analysis import lab_scores
from ssdlab.catalogue.states import FullDriveSteps
from ssdlab.model import Op
from ssdlab.units import GiB, KiB, MiB

QOS_IOS = 10**6
QOS_RUNTIME_S = 120.0
SEQ_RUNTIME_S = 60.0
SEQ_IO_SIZE = 32 * GiB
SWEEP_RUNTIME_S = 20.0
SWEEP_IO_SIZE = 8 * GiB
SWEEP_BLOCK_SIZES = (512, 1 * KiB, 2 * KiB, 4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB,
                     128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB)
SWEEP_PATTERNS = (Op.RANDREAD, Op.READ, Op.RANDWRITE, Op.WRITE)
QOS_NAME = "IOPS at QD1 (with mean, 99th and 99.99th percentile latency)"

ENTERPRISE_TESTS = (
    FullDriveSteps(id="qos-rand-read-qd1", title="QoS: 4 KiB random read QD1, full drive",
                   primary_score=QOS_NAME, patterns=(Op.RANDREAD,), block_sizes=(4 * KiB,),
                   iodepth=1, runtime_s=QOS_RUNTIME_S, io_size_bytes=QOS_IOS * 4 * KiB,
                   scorer=lab_scores.qos_score),
    FullDriveSteps(id="qos-rand-write-qd1", title="QoS: 4 KiB random write QD1, full drive",
                   primary_score=QOS_NAME, patterns=(Op.RANDWRITE,), block_sizes=(4 * KiB,),
                   iodepth=1, runtime_s=QOS_RUNTIME_S, io_size_bytes=QOS_IOS * 4 * KiB,
                   scorer=lab_scores.qos_score),
    FullDriveSteps(id="qd1-seq-read", title="Sequential read 128 KiB QD1, full drive",
                   primary_score="MB/s at QD1", patterns=(Op.READ,), block_sizes=(128 * KiB,),
                   iodepth=1, runtime_s=SEQ_RUNTIME_S, io_size_bytes=SEQ_IO_SIZE,
                   scorer=lab_scores.qd1_mbps_score),
    FullDriveSteps(id="qd1-seq-write", title="Sequential write 128 KiB QD1, full drive",
                   primary_score="MB/s at QD1", patterns=(Op.WRITE,), block_sizes=(128 * KiB,),
                   iodepth=1, runtime_s=SEQ_RUNTIME_S, io_size_bytes=SEQ_IO_SIZE,
                   scorer=lab_scores.qd1_mbps_score),
    FullDriveSteps(id="bs-sweep", title="Block sizes 512 B to 1 MiB at QD1, four patterns, full drive",
                   primary_score="mean MB/s over the 48 points", patterns=SWEEP_PATTERNS,
                   block_sizes=SWEEP_BLOCK_SIZES, iodepth=1, runtime_s=SWEEP_RUNTIME_S,
                   io_size_bytes=SWEEP_IO_SIZE, scorer=lab_scores.bs_sweep_score),
)
