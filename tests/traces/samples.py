"""Small traces in every format, shaped as each format's documentation describes it (the
sources are in each reader's module docstring), with the records they hold. fio's iologs
were recorded from fio 3.33 (`write_iolog=`), as test_fio_recorded.py records them anew."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ssdlab.traces import Op

R, W, T, F = Op.READ, Op.WRITE, Op.TRIM, Op.FLUSH


class Sample(NamedTuple):
    format: str
    text: str
    # (time_us, op, offset, length, device, response_us, line)
    records: list[tuple]


SAMPLES = {
    # MSR's README: no header; FILETIME ticks of 100 ns; bytes
    "msr": Sample("msr", "128166372003061629,usr,0,Read,3968475136,4096,1135\n"
                         "128166372003061634,usr,0,Write,8192,65536,40\n"
                         "128166372016382155,usr,1,Write,0,512,94065\n", [
        (12816637200306163, R, 3968475136, 4096, "usr_0", 114, 1),
        (12816637200306163, W, 8192, 65536, "usr_0", 4, 2),
        (12816637201638216, W, 0, 512, "usr_1", 9407, 3),
    ]),
    # Alibaba's README: device_id,opcode,offset,length,timestamp; µs, bytes
    "alibaba": Sample("alibaba", "0,R,126703644672,4096,1577808000000626\n"
                                 "0,W,126703648768,16384,1577808000000700\n"
                                 "7,W,0,4096,1577808000040000\n", [
        (1577808000000626, R, 126703644672, 4096, "0", None, 1),
        (1577808000000700, W, 126703648768, 16384, "0", None, 2),
        (1577808000040000, W, 0, 4096, "7", None, 3),
    ]),
    # SYSTOR '17's README: a header; seconds with nine decimals (µs accuracy); bytes;
    # a blank IOType is a transaction without response, to be ignored
    "systor": Sample("systor", "Timestamp,Response,IOType,LUN,Offset,Size\n"
                               "1456135200.013118000,0.000806000,R,4,899056122368,131072\n"
                               "1456135200.013200000,0.000100000,,4,4096,4096\n"
                               "1456135200.113118000,0.001000000,W,4,4096,8192\n", [
        (1456135200013118, R, 899056122368, 131072, "4", 806, 2),
        (1456135200113118, W, 4096, 8192, "4", 1000, 4),
    ]),
    # Tencent CBS's README: Unix seconds, 512 B sectors, IOType 0 read / 1 write
    "tencent": Sample("tencent", "1538323200,2008,8,1,1283\n"
                                 "1538323200,0,256,0,1283\n"
                                 "1538323201,16,8,0,77\n", [
        (1538323200_000000, W, 2008 * 512, 4096, "1283", None, 1),
        (1538323200_000000, R, 0, 131072, "1283", None, 2),
        (1538323201_000000, R, 8192, 4096, "77", None, 3),
    ]),
    # the CSV with named columns (named_csv.py): any order, any case, other columns ignored
    "csv": Sample("csv", "Offset,LENGTH,time_ms,op,device,comment\n"
                         "0,4096,0.5,read,a,first\n"
                         "4096,8192,2,W,b,\n"
                         "0,0,3,flush,a,\n"
                         "1048576,1048576,4.0004,discard,a,rounded to the µs\n", [
        (500, R, 0, 4096, "a", None, 2),
        (2000, W, 4096, 8192, "b", None, 3),
        (3000, F, 0, 0, "a", None, 4),
        (4000, T, 1048576, 1048576, "a", None, 5),
    ]),
    # HOWTO.rst's v2 format; fio 3.33 reads `wait` as ms since fio started
    "fio-v2": Sample("fio-v2", "fio version 2 iolog\n"
                               "/dev/sdb add\n"
                               "/dev/sdb open\n"
                               "/dev/sdb write 0 4096\n"
                               "/dev/sdb wait 2 0\n"
                               "/dev/sdb read 4096 8192\n"
                               "/dev/sdb trim 8192 4096\n"
                               "/dev/sdb sync 0 0\n"
                               "/dev/sdb close\n", [
        (0, W, 0, 4096, "/dev/sdb", None, 4),
        (2000, R, 4096, 8192, "/dev/sdb", None, 6),
        (2000, T, 8192, 4096, "/dev/sdb", None, 7),
        (2000, F, 0, 0, "/dev/sdb", None, 8),
    ]),
    # written by fio 3.33: `--filename=d1:d2 --rw=randrw --bs=4k --number_ios=8 --fsync=3
    # --write_iolog=...`; its sync lines carry the last offset and length 0
    "fio-v3": Sample("fio-v3", "fio version 3 iolog\n"
                               "18 /tmp/fiot/d1 add\n"
                               "22 /tmp/fiot/d2 add\n"
                               "118 /tmp/fiot/d1 open\n"
                               "120 /tmp/fiot/d1 write 61440 4096\n"
                               "146 /tmp/fiot/d2 open\n"
                               "147 /tmp/fiot/d2 write 774144 4096\n"
                               "155 /tmp/fiot/d1 write 880640 4096\n"
                               "163 /tmp/fiot/d2 sync 880640 0\n"
                               "8131 /tmp/fiot/d1 read 491520 4096\n"
                               "9862 /tmp/fiot/d1 close\n"
                               "9881 /tmp/fiot/d2 close\n", [
        (120, W, 61440, 4096, "/tmp/fiot/d1", None, 5),
        (147, W, 774144, 4096, "/tmp/fiot/d2", None, 7),
        (155, W, 880640, 4096, "/tmp/fiot/d1", None, 8),
        (163, F, 0, 0, "/tmp/fiot/d2", None, 9),
        (8131, R, 491520, 4096, "/tmp/fiot/d1", None, 10),
    ]),
}


def write(directory: Path, name: str, text: str | bytes) -> Path:
    path = directory / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path
