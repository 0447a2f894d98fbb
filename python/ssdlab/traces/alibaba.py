"""Alibaba cloud block traces (github.com/alibaba/block-traces, io_traces.csv), as their
README's schema gives them and METHODOLOGY.md section 6 repeats:

    device_id,opcode,offset,length,timestamp
    0,R,126703644672,4096,1577808000000626

- device_id: the virtual disk (0 to 999), the record's device.
- opcode: `R` or `W`.
- offset, length: bytes.
- timestamp: when the server received the I/O, µs (Unix time).

No response times. The file has no header line; one naming these columns is accepted.
"""

from ssdlab.traces.format import Row, csv_format
from ssdlab.traces.record import Op

_OPS = {"R": Op.READ, "W": Op.WRITE, "r": Op.READ, "w": Op.WRITE}


def _parse(line: str, ops=_OPS) -> Row:
    device, opcode, offset, length, stamp = line.split(",")
    return int(stamp), ops[opcode], int(offset), int(length), device, None


FORMAT = csv_format("alibaba", "Alibaba block trace CSV", "device_id,opcode,offset,length,timestamp", _parse,
                    "µs, bytes, opcode R or W")
