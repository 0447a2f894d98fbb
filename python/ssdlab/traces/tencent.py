"""Tencent CBS block traces (SNIA IOTTA; Zhang et al., "OSCA", USENIX ATC '20), as their
distribution's README.txt describes them:

    Timestamp,Offset,Size,IOType,VolumeID
    1538323200,2008,8,1,1283

- Timestamp: when the I/O was issued, Unix time in whole seconds.
- Offset, Size: 512-byte sectors.
- IOType: 0 for a read, 1 for a write.
- VolumeID: the cloud virtual volume (the record's device).

Whole seconds cannot time a replay: every I/O of a second would start at once. The format
says so (`coarse_timing`), and replay offers --no-timing. The distribution ships each hour
as a .tgz; extract it first. A header line naming these columns is accepted.
"""

from ssdlab.traces.format import SECOND_US, Row, csv_format
from ssdlab.traces.record import Op

_OPS = {"0": Op.READ, "1": Op.WRITE}
SECTOR = 512


def _parse(line: str, ops=_OPS) -> Row:
    stamp, offset, size, kind, volume = line.split(",")
    return int(stamp) * SECOND_US, ops[kind.strip()], int(offset) * SECTOR, int(size) * SECTOR, volume.strip(), None


FORMAT = csv_format("tencent", "Tencent CBS CSV", "Timestamp,Offset,Size,IOType,VolumeID", _parse,
                    "whole seconds, 512 B sectors, IOType 0 read or 1 write",
                    coarse_timing="Tencent CBS times I/O in whole seconds: every I/O of a second would "
                                  "start at once")
