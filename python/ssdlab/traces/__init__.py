"""Block I/O traces: one reader per format into one canonical record stream.

    trace = Trace("usr_0.csv.gz")          # the format detected from the content
    for record in trace:                   # streamed: memory flat in the trace's length
        record.time_us, record.op, record.offset, record.length

record.py holds the record, formats.py the formats (one module each), reader.py the
reading and its checks, source.py the opening of compressed files, stats.py what
`ssdlab trace stats` prints.
"""

from ssdlab.traces.formats import FORMATS
from ssdlab.traces.reader import Findings, Trace
from ssdlab.traces.record import Op, Record

__all__ = ["FORMATS", "Findings", "Op", "Record", "Trace"]
