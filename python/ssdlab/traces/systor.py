"""SNIA SYSTOR '17 traces (Fujitsu's enterprise VDI traces, Lee et al., SYSTOR '17), as
their distribution's README.txt describes them:

    Timestamp,Response,IOType,LUN,Offset,Size
    1456135200.013118000,0.000806000,R,4,899056122368,131072

- Timestamp: when the I/O was issued, Unix time in seconds with nine decimals, "accurate
  only to the microsecond level" (the README); rounded to the µs here.
- Response: the time the I/O took, seconds; rounded to the µs.
- IOType: `R`, `W`, or blank when no response was seen (packet loss in the port-mirrored
  capture): the README says to ignore those, so they are skipped and counted.
- LUN: the volume (the record's device).
- Offset, Size: bytes.

The files start with the header line above; a file without one is read as well.
"""

from ssdlab.traces.format import SECOND_US, Row, Skip, csv_format, to_us
from ssdlab.traces.record import Op

_OPS = {"R": Op.READ, "W": Op.WRITE, "r": Op.READ, "w": Op.WRITE}
_UNANSWERED = "line(s) with a blank IOType (no response seen; the README says to ignore them)"


def _parse(line: str, ops=_OPS) -> Row:
    stamp, response, kind, lun, offset, size = line.split(",")
    if not kind.strip():
        raise Skip(_UNANSWERED)
    return to_us(stamp, SECOND_US), ops[kind], int(offset), int(size), lun, to_us(response, SECOND_US)


FORMAT = csv_format("systor", "SNIA SYSTOR '17 CSV", "Timestamp,Response,IOType,LUN,Offset,Size", _parse,
                    "seconds, bytes, IOType R or W")
