"""MSR Cambridge block traces (SNIA IOTTA), as their distribution's README.txt describes
them and METHODOLOGY.md section 6 repeats:

    Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
    128166372003061629,usr,0,Read,3968475136,4096,1135

- Timestamp: when the I/O was issued, in Windows FILETIME ticks of 100 ns (since 1601);
  rounded to the µs here.
- Hostname, DiskNumber: the volume (the distribution's files are named `<host>_<disk>`,
  and so is the record's device).
- Type: `Read` or `Write`.
- Offset, Size: bytes.
- ResponseTime: how long the I/O took, in FILETIME ticks; rounded to the µs here.

The files have no header line; one naming these columns is accepted.
"""

from ssdlab.traces.format import Row, csv_format
from ssdlab.traces.record import Op

_OPS = {"Read": Op.READ, "Write": Op.WRITE, "read": Op.READ, "write": Op.WRITE}


def _parse(line: str, ops=_OPS) -> Row:
    stamp, host, disk, kind, offset, size, response = line.split(",")
    # ticks of 100 ns to µs, rounded half up
    return ((int(stamp) + 5) // 10, ops[kind], int(offset), int(size), f"{host}_{disk}",
            (int(response) + 5) // 10)


FORMAT = csv_format("msr", "MSR Cambridge CSV", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
                    _parse, "FILETIME ticks of 100 ns, bytes, Type Read or Write")
