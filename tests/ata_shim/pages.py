"""ATA pages built from a description: what ata_shim.c hands to smartctl for a fake SATA SSD.

`Drive` packs to the 512-byte sectors a SATA drive returns, each field at its place in ATA/ATAPI
Command Set (ACS-3/ACS-4): IDENTIFY DEVICE, SMART READ DATA and READ THRESHOLDS, the SMART log
directory, the summary error log, the self-test and selective self-test logs, and the General
Purpose logs (directory, extended error and self-test logs, Device Statistics). `Drive.write(dir)`
lays out the files the shim reads (see ata_shim.c). DRIVES holds the drives recorded in
tests/golden/telemetry/real/smartctl-7.3-sata-*.json.

Model strings are real products' (so that smartctl's drive database matches them, or not);
firmware strings are ones the database's comments list where there is one. Serial numbers, WWN
unique ids and every counter are invented.

    python -m tests.ata_shim OUTDIR [DRIVE...]   # one sub-directory of pages per drive
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

SECTOR = 512
GIB = 1 << 30


def _checksummed(buf: bytearray) -> bytes:
    """Set the last byte so that all 512 bytes sum to 0 mod 256 (SMART data, logs)."""
    buf[511] = (-sum(buf[:511])) & 0xFF
    return bytes(buf)


def _ata_string(text: str, nwords: int) -> list[int]:
    """An ATA string as IDENTIFY words: space padded, first character of a pair in the high byte."""
    data = text.encode("ascii").ljust(2 * nwords, b" ")
    if len(data) != 2 * nwords:
        raise ValueError(f"{text!r} is longer than {2 * nwords} characters")
    return [(data[2 * i] << 8) | data[2 * i + 1] for i in range(nwords)]


def temperature_raw(current: int, lowest: int | None = None, highest: int | None = None) -> int:
    """Attribute 194's raw bytes as many drives fill them: current in byte 0, min/max in 2 and 4."""
    raw = current
    if lowest is not None and highest is not None:
        raw |= (lowest << 16) | (highest << 32)
    return raw


@dataclass
class Attr:
    """One SMART attribute: a 12-byte entry of READ DATA and a 12-byte entry of READ THRESHOLDS."""

    id: int
    value: int  # normalized, 1..253
    worst: int
    raw: int  # the 6 raw bytes, little-endian
    flags: int = 0x0032  # bit 0 prefailure, 1 online, 2 performance, 3 error rate, 4 events, 5 self-preserving
    threshold: int = 0


@dataclass
class SelfTest:
    """One entry of the SMART self-test log (log 0x06)."""

    kind: int  # subcommand: 1 short offline, 2 extended offline
    status: int  # execution status byte: 0x00 completed without error
    hours: int  # power-on hours when it ran


@dataclass
class Drive:
    name: str  # file tag: smartctl-7.3-sata-<name>.json
    model: str  # IDENTIFY words 27-46, what the drive database matches
    serial: str
    firmware: str
    sectors: int  # user-addressable logical sectors (words 100-103)
    attributes: list[Attr]
    # the truth behind the counters, for the Device Statistics log and the README
    power_on_hours: int
    power_cycles: int
    written_bytes: int
    read_bytes: int
    percent_used: int
    counts: str = ""  # what raw 241/242/246 count on this drive, in words (README table)
    physical_sector: int = 512  # 4096 = 8 logical sectors per physical one (word 106)
    wwn_oui: int | None = None  # IEEE OUI of the vendor; None = no World Wide Name
    wwn_id: int = 0  # 36-bit vendor-assigned part
    ata_major: int = 0x07F0  # word 80: ATA/ATAPI-5 .. ACS-3 (bits 4..10)
    ata_minor: int = 0x006D  # word 81: ACS-3 revision 5
    sata_major: int = 0x11FF  # word 222: SATA transport, ATA8-AST .. SATA 3.3
    form_factor: int = 3  # word 168: 3 = 2.5 inch
    smart_revision: int = 1  # SMART data structure revision (bytes 0-1)
    offline_capability: int = 0x53  # byte 367: offline immediate, self-tests, selective self-test
    short_minutes: int = 2
    extended_minutes: int = 30
    self_tests: list[SelfTest] = field(default_factory=list)

    # ---------------------------------------------------------------------------------------
    # IDENTIFY DEVICE

    def identify(self) -> bytes:
        w = [0] * 256
        w[0] = 0x0040  # ATA device, fixed (not removable) media
        w[1], w[3], w[6] = 16383, 16, 63  # the obsolete CHS geometry drives still report
        w[10:20] = _ata_string(self.serial, 10)
        w[23:27] = _ata_string(self.firmware, 4)
        w[27:47] = _ata_string(self.model, 20)
        w[47] = 0x8001  # READ/WRITE MULTIPLE: at most 1 sector per DRQ block
        w[49] = 0x0F00  # capabilities: DMA, LBA, IORDY, standby timer
        w[50] = 0x4000
        w[53] = 0x0006  # words 64-70 and 88 are valid
        w[59] = 0x0101  # multiple-sector setting valid, 1 sector
        lba28 = min(self.sectors, 0x0FFFFFFF)  # words 60-61 saturate, 100-103 have the size
        w[60], w[61] = lba28 & 0xFFFF, lba28 >> 16
        w[63] = 0x0007  # multiword DMA 0-2 supported
        w[64] = 0x0003  # PIO modes 3 and 4
        w[65:69] = [120, 120, 120, 120]  # cycle times, ns
        w[69] = 0x4020  # TRIM reads deterministic (bit 14) and zeroed (bit 5)
        w[75] = 31  # NCQ queue depth - 1
        w[76] = 0x010E  # SATA Gen1/Gen2/Gen3 (1.5/3.0/6.0 Gb/s), NCQ
        w[77] = 0x0006  # current signaling speed: Gen3 (bits 3:1 = 3)
        w[80], w[81] = self.ata_major, self.ata_minor
        # supported (82-84) and enabled (85-87) feature sets
        w[82] = 0x7069  # SMART, power management, write cache, look-ahead, buffers, NOP
        w[83] = 0x7400  # 48-bit addressing, FLUSH CACHE (EXT); bit 14 = valid
        w[84] = 0x4023  # SMART error logging, SMART self-test, General Purpose Logging; valid
        w[85] = w[82]  # all enabled (bit 0: SMART is enabled)
        w[86] = 0x3400
        w[87] = 0x4023
        if self.wwn_oui is not None:  # word 84/87 bit 8: words 108-111 hold a World Wide Name
            w[84] |= 0x0100
            w[87] |= 0x0100
            naa = (5 << 60) | (self.wwn_oui << 36) | (self.wwn_id & ((1 << 36) - 1))
            w[108:112] = [(naa >> s) & 0xFFFF for s in (48, 32, 16, 0)]
        w[88] = 0x407F  # UDMA 0-6 supported, 6 selected
        w[100:104] = [(self.sectors >> s) & 0xFFFF for s in (0, 16, 32, 48)]
        ratio = self.physical_sector // SECTOR
        w[106] = 0x4000 if ratio == 1 else 0x6000 | (ratio.bit_length() - 1)
        w[168] = self.form_factor
        w[169] = 0x0001  # DATA SET MANAGEMENT with TRIM
        w[217] = 0x0001  # nominal media rotation rate: 1 = non-rotating (solid state)
        w[222] = self.sata_major
        buf = bytearray(b"".join(x.to_bytes(2, "little") for x in w))
        buf[510] = 0xA5  # integrity word: signature A5h, then the checksum byte
        return _checksummed(buf)

    # ---------------------------------------------------------------------------------------
    # SMART READ DATA / READ THRESHOLDS

    def smart_data(self) -> bytes:
        if len(self.attributes) > 30:
            raise ValueError(f"{self.name}: at most 30 attributes fit")
        buf = bytearray(SECTOR)
        buf[0:2] = self.smart_revision.to_bytes(2, "little")
        for i, a in enumerate(self.attributes):
            o = 2 + 12 * i
            buf[o] = a.id
            buf[o + 1 : o + 3] = a.flags.to_bytes(2, "little")
            buf[o + 3] = a.value
            buf[o + 4] = a.worst
            buf[o + 5 : o + 11] = a.raw.to_bytes(6, "little")
        buf[362] = 0x00  # offline data collection: never started
        buf[363] = 0x00  # self-test execution: last one completed without error
        buf[364:366] = (0).to_bytes(2, "little")  # offline collection takes 0 s
        buf[367] = self.offline_capability
        buf[368:370] = (0x0003).to_bytes(2, "little")  # saves SMART data on power-saving, autosave
        buf[370] = 0x01  # error logging supported
        buf[372] = self.short_minutes
        if self.extended_minutes < 0xFF:
            buf[373] = self.extended_minutes
        else:  # 0xFF says "see the 16-bit field at 375-376"
            buf[373] = 0xFF
            buf[375:377] = self.extended_minutes.to_bytes(2, "little")
        buf[374] = 0  # no conveyance self-test
        return _checksummed(buf)

    def smart_thresholds(self) -> bytes:
        buf = bytearray(SECTOR)
        buf[0:2] = self.smart_revision.to_bytes(2, "little")
        for i, a in enumerate(self.attributes):
            buf[2 + 12 * i] = a.id
            buf[3 + 12 * i] = a.threshold
        return _checksummed(buf)

    # ---------------------------------------------------------------------------------------
    # logs

    @property
    def selective_self_test(self) -> bool:
        return bool(self.offline_capability & 0x40)

    def smart_logs(self) -> dict[int, bytes]:
        """SMART READ LOG pages by log address: directory, summary error log, self-test logs."""
        logs: dict[int, bytes] = {}
        pages = {0x01: 1, 0x06: 1}
        if self.selective_self_test:
            pages[0x09] = 1
        directory = bytearray(SECTOR)
        directory[0:2] = (1).to_bytes(2, "little")  # directory version 1: GPL is supported too
        for address, count in pages.items():
            directory[2 * address] = count
        logs[0x00] = bytes(directory)

        errors = bytearray(SECTOR)
        errors[0] = 1  # version; index pointer 0 and error count 0: no errors
        logs[0x01] = _checksummed(errors)

        tests = bytearray(SECTOR)
        tests[0:2] = (1).to_bytes(2, "little")
        for i, t in enumerate(self.self_tests[-21:]):
            o = 2 + 24 * i
            tests[o] = t.kind
            tests[o + 1] = t.status
            tests[o + 2 : o + 4] = t.hours.to_bytes(2, "little")
        tests[508] = min(len(self.self_tests), 21)  # index of the newest entry, 1-based
        logs[0x06] = _checksummed(tests)

        if self.selective_self_test:
            selective = bytearray(SECTOR)
            selective[0:2] = (1).to_bytes(2, "little")  # five empty spans, nothing pending
            logs[0x09] = _checksummed(selective)
        return logs

    def gp_logs(self) -> dict[int, bytes]:
        """READ LOG EXT logs by address (several pages each): directory, errors, self-tests, statistics."""
        logs: dict[int, bytes] = {}
        directory = bytearray(SECTOR)
        directory[0:2] = (1).to_bytes(2, "little")
        for address, count in {0x03: 1, 0x04: 8, 0x07: 1}.items():
            directory[2 * address : 2 * address + 2] = count.to_bytes(2, "little")
        logs[0x00] = bytes(directory)

        ext_errors = bytearray(SECTOR)
        ext_errors[0] = 1  # version; index and device error count 0
        logs[0x03] = _checksummed(ext_errors)

        ext_tests = bytearray(SECTOR)
        ext_tests[0] = 1
        for i, t in enumerate(self.self_tests[-19:]):
            o = 4 + 26 * i
            ext_tests[o] = t.kind
            ext_tests[o + 1] = t.status
            ext_tests[o + 2 : o + 4] = t.hours.to_bytes(2, "little")
        ext_tests[2:4] = min(len(self.self_tests), 19).to_bytes(2, "little")
        logs[0x07] = _checksummed(ext_tests)

        logs[0x04] = self.device_statistics()
        return logs

    def device_statistics(self) -> bytes:
        """Device Statistics (GP log 0x04): page 0 (list), 1 (general), 7 (solid state); 8 pages."""

        def header(page: int) -> bytearray:
            p = bytearray(SECTOR)
            p[0:2] = (1).to_bytes(2, "little")  # revision
            p[2] = page
            return p

        def stat(p: bytearray, offset: int, value: int) -> None:
            # bit 63 supported, bit 62 valid, the value in the low bytes
            p[offset : offset + 8] = ((0xC0 << 56) | value).to_bytes(8, "little")

        listing = header(0)
        listing[8] = 3
        listing[9:12] = bytes([0, 1, 7])
        general = header(1)
        stat(general, 8, self.power_cycles)  # lifetime power-on resets
        stat(general, 16, self.power_on_hours)
        stat(general, 24, self.written_bytes // SECTOR)  # logical sectors written
        stat(general, 40, self.read_bytes // SECTOR)  # logical sectors read
        ssd = header(7)
        stat(ssd, 8, self.percent_used)  # percentage used endurance indicator
        pages = [listing, general] + [bytearray(SECTOR) for _ in range(5)] + [ssd]
        return b"".join(bytes(p) for p in pages)

    # ---------------------------------------------------------------------------------------

    def write(self, directory: Path | str) -> Path:
        """Write the pages ata_shim.c reads into `directory` (made if missing); returns it."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / "identify.bin").write_bytes(self.identify())
        (d / "smart-data.bin").write_bytes(self.smart_data())
        (d / "smart-thresholds.bin").write_bytes(self.smart_thresholds())
        for address, data in self.smart_logs().items():
            (d / f"smart-log-0x{address:02x}.bin").write_bytes(data)
        for address, data in self.gp_logs().items():
            (d / f"gp-log-0x{address:02x}.bin").write_bytes(data)
        return d

    def attribute(self, attr_id: int) -> Attr:
        return next(a for a in self.attributes if a.id == attr_id)


def _a(
    attr_id: int, raw: int = 0, value: int = 100, worst: int | None = None, flags: int = 0x0032, thr: int = 0
) -> Attr:
    return Attr(attr_id, value, value if worst is None else worst, raw, flags, thr)


# --------------------------------------------------------------------------------------------
# The drives

TB = 10**12

# (a) WD Red SA500 4 TB. drivedb.h of 2022-02-19 matches "WDC  ?WDS(...|[12]00T)(1B|2B|1G|2G|1R)0[AB]":
# the 1 and 2 TB Red SA500 are known, the 4 TB one (400T) is not. Attributes 241/242 count GiB.
WD_SA500_4T = Drive(
    name="wd-red-sa500-4t",
    model="WDC  WDS400T1R0A-68A4W0",
    serial="22143Z801234",
    firmware="411000WR",
    sectors=7814037168,
    power_on_hours=8244,
    power_cycles=12,
    written_bytes=173800 * GIB,
    read_bytes=58000 * GIB,
    percent_used=8,
    counts="241/242: GiB written/read by the host (173800 GiB = 186.6 TB)",
    wwn_oui=0x0014EE,
    wwn_id=0x2C0FFEE01,
    attributes=[
        _a(5, 0),
        _a(9, 8244),
        _a(12, 12),
        _a(165, 30123),
        _a(166, 1),
        _a(167, 18),
        _a(168, 61),
        _a(169, 402),
        _a(170, 0),
        _a(171, 0),
        _a(172, 0),
        _a(173, 52),
        _a(174, 5),
        _a(184, 0),
        _a(187, 0),
        _a(188, 0),
        _a(194, temperature_raw(36, 20, 55), value=64, worst=45, flags=0x0022),
        _a(199, 0),
        _a(230, 0x003400340034),
        _a(232, 100, flags=0x0033, thr=4),
        _a(233, 201700),
        _a(234, 401800),
        _a(241, 173800, flags=0x0030),
        _a(242, 58000, flags=0x0030),
        _a(244, 0),
    ],
    self_tests=[SelfTest(1, 0x00, 8200)],
)

# (b) SK hynix: the SC311 is in the 2022 database ("SK ?hynix (SC(...|311|...)) .*"), its 241/242
# named Total_Writes_GB/Total_Reads_GB (the database notes ~GB, not GiB, on the SC31x).
SKHYNIX_SC311 = Drive(
    name="skhynix-sc311-512g",
    model="SK hynix SC311 SATA 512GB",
    serial="MS83N71011230A13K",
    firmware="70000P10",
    sectors=1000215216,
    power_on_hours=14321,
    power_cycles=2210,
    written_bytes=21500 * 10**9,
    read_bytes=18300 * 10**9,
    percent_used=4,
    counts="241/242: GB (10^9 bytes) written/read by the host, as the database's note says",
    wwn_oui=0xACE42E,
    wwn_id=0x812345678,
    ata_major=0x03F0,  # ATA8-ACS (bit 8), ACS-2 (bit 9)
    ata_minor=0x0110,  # ACS-2 revision 3
    sata_major=0x107F,  # SATA 3.1
    smart_revision=1,
    offline_capability=0x13,  # no selective self-test
    extended_minutes=2,
    attributes=[
        _a(1, 0, flags=0x000F, value=166, worst=166, thr=6),
        _a(5, 0, flags=0x0033, thr=36),
        _a(9, 14321),
        _a(12, 2210),
        _a(100, 310144, flags=0x0032),
        _a(168, 0, flags=0x0012),
        _a(169, 1254, flags=0x0012),
        _a(171, 0),
        _a(172, 0),
        _a(173, 0x0000004700000034),
        _a(174, 97, flags=0x0030),
        _a(176, 0, flags=0x0013, thr=2),
        _a(178, 0, flags=0x0013, thr=10),
        _a(179, 0, flags=0x0013, thr=10),
        _a(180, 4211),
        _a(181, 8, flags=0x0022),
        _a(187, 0),
        _a(188, 0),
        _a(194, temperature_raw(33, 12, 69), value=67, worst=31, flags=0x0022),
        _a(195, 0, value=200, worst=200),
        _a(198, 0, flags=0x0030),
        _a(199, 0, value=200, worst=200, flags=0x003E),
        _a(204, 0, value=200, worst=200, flags=0x000E),
        _a(212, 0),
        _a(234, 0x000000000123),
        _a(241, 21500, flags=0x0030),
        _a(242, 18300, flags=0x0030),
        _a(250, 0),
    ],
)

# (b') SK hynix SE5110 960 GB (HFS960G3H2X069N): the 2022 database does not know it. Later ones add
# "HFS(480|960|1T9|3T8)G3H2X069N" to the entry whose 235/241/242 are Lifetime_Writes_GiB,
# Lifetime_NAND_Prg_GiB and Lifetime_Reads_GiB: host writes in 235, NAND programs in 241, GiB all.
SKHYNIX_SE5110 = Drive(
    name="skhynix-se5110-960g",
    model="HFS960G3H2X069N",
    serial="FJA4N4226I0304C4K",
    firmware="DZ00",
    sectors=1875385008,
    power_on_hours=22010,
    power_cycles=41,
    written_bytes=612345 * GIB,
    read_bytes=1034567 * GIB,
    percent_used=11,
    counts="235: GiB written by the host (612345 GiB = 657.5 TB); 241: GiB programmed to NAND; 242: GiB read",
    wwn_oui=0xACE42E,
    wwn_id=0x9A0C0FFEE,
    ata_major=0x0FF0,  # up to ACS-4
    ata_minor=0x005E,  # ACS-4 revision 5
    smart_revision=1,
    extended_minutes=60,
    attributes=[
        _a(1, 0, flags=0x002F, thr=6),
        _a(5, 0, flags=0x0033, thr=10),
        _a(9, 22010),
        _a(12, 41),
        _a(171, 0),
        _a(172, 0),
        _a(174, 33),
        _a(175, 0, flags=0x0033, thr=10),
        _a(176, 0, flags=0x0033, thr=10),
        _a(177, 0, flags=0x0032),
        _a(178, 0, flags=0x0033, thr=10),
        _a(179, 0, flags=0x0033, thr=10),
        _a(180, 0),
        _a(181, 0, flags=0x0033, thr=10),
        _a(182, 0, flags=0x0033, thr=10),
        _a(184, 0, flags=0x0033, thr=97),
        _a(187, 0),
        _a(188, 0),
        _a(194, temperature_raw(41, 19, 58), value=59, worst=42, flags=0x0022),
        _a(195, 0, value=100, worst=100, flags=0x001A),
        _a(199, 0, flags=0x003E),
        _a(201, 0, flags=0x001A),
        _a(204, 0, flags=0x001A),
        _a(231, 89, value=89, worst=89, flags=0x0033, thr=10),
        _a(234, 1470211),
        _a(235, 612345, flags=0x0030),
        _a(241, 771555, flags=0x0030),
        _a(242, 1034567, flags=0x0030),
        _a(245, 89, value=89, worst=89, flags=0x0033, thr=10),
        _a(250, 0),
    ],
)

# (c) Crucial MX500 1 TB: in the database; no 241/242, its 246 Total_LBAs_Written counts 512-byte
# sectors (LBAs).
CRUCIAL_MX500 = Drive(
    name="crucial-mx500-1t",
    model="CT1000MX500SSD1",
    serial="2034E4A1B2C3",
    firmware="M3CR045",
    sectors=1953525168,
    power_on_hours=6100,
    power_cycles=420,
    written_bytes=41234567890 * SECTOR,
    read_bytes=30123456789 * SECTOR,
    percent_used=8,
    counts="246: 512-byte LBAs written by the host (41234567890 LBAs = 21.1 TB); no 241/242",
    physical_sector=4096,
    wwn_oui=0x00A075,
    wwn_id=0x12E4A1B2C,
    ata_major=0x0FF0,
    ata_minor=0x005E,
    smart_revision=16,
    offline_capability=0x7B,  # adds offline read scanning and conveyance
    attributes=[
        _a(1, 0, flags=0x002F),
        _a(5, 0, flags=0x0032, thr=10),
        _a(9, 6100),
        _a(12, 420),
        _a(171, 0),
        _a(172, 0),
        _a(173, 123, value=92, worst=92),
        _a(174, 61),
        _a(180, 91, value=0, worst=0, flags=0x0033),
        _a(183, 0),
        _a(184, 0),
        _a(187, 0),
        _a(194, temperature_raw(36, 0, 70), value=64, worst=44, flags=0x0022),
        _a(196, 0),
        _a(197, 0),
        _a(198, 0, flags=0x0030),
        _a(199, 0, flags=0x0032),
        _a(202, 8, value=92, worst=92, flags=0x0030, thr=1),
        _a(206, 0, flags=0x000E),
        _a(210, 0),
        _a(246, 41234567890),
        _a(247, 1288580246),
        _a(248, 3054567890),
    ],
    self_tests=[SelfTest(1, 0x00, 6080), SelfTest(2, 0x00, 5300)],
)

# (d) Samsung 870 EVO 1 TB: in the database ("Samsung SSD 8[4-7]0 EVO ..."); 241 Total_LBAs_Written
# counts 512-byte LBAs; 187 is Uncorrectable_Error_Cnt; no 242; temperature in 190.
SAMSUNG_870EVO = Drive(
    name="samsung-870evo-1t",
    model="Samsung SSD 870 EVO 1TB",
    serial="S626NF0R123456K",
    firmware="SVT01B6Q",
    sectors=1953525168,
    power_on_hours=9876,
    power_cycles=345,
    written_bytes=23456789012 * SECTOR,
    read_bytes=19876543210 * SECTOR,
    percent_used=3,
    counts="241: 512-byte LBAs written by the host (23456789012 LBAs = 12.0 TB); no 242",
    wwn_oui=0x002538,
    wwn_id=0x5A1234567,
    ata_major=0x0FF0,
    ata_minor=0x005E,
    smart_revision=1,
    extended_minutes=85,
    attributes=[
        _a(5, 0, flags=0x0033, thr=10),
        _a(9, 9876, value=98, worst=98),
        _a(12, 345, value=99, worst=99),
        _a(177, 31, value=97, worst=97, flags=0x0013),
        _a(179, 0, flags=0x0013, thr=10),
        _a(181, 0),
        _a(182, 0),
        _a(183, 0, flags=0x0013, thr=10),
        _a(187, 0),
        _a(190, 36, value=64, worst=48),
        _a(195, 0, value=200, worst=200, flags=0x001A),
        _a(199, 0, flags=0x003E),
        _a(235, 18, value=99, worst=99, flags=0x0012),
        _a(241, 23456789012, value=99, worst=99),
    ],
    self_tests=[SelfTest(1, 0x00, 9800)],
)

# (e) An unknown vendor: no database entry can match "ACME SSD 1TB"; 241/242 count 512-byte LBAs
# here, which smartctl's default names happen to say, though smartctl cannot know it.
ACME_1T = Drive(
    name="acme-1t",
    model="ACME SSD 1TB",
    serial="ACME0000000042",
    firmware="1.0.3",
    sectors=1953525168,
    power_on_hours=1234,
    power_cycles=56,
    written_bytes=9876543210 * SECTOR,
    read_bytes=5432109876 * SECTOR,
    percent_used=2,
    counts="241/242: 512-byte LBAs written/read (9876543210 LBAs = 5.06 TB)",
    ata_major=0x03F0,
    ata_minor=0x0110,
    sata_major=0x107F,
    offline_capability=0x11,  # offline immediate and self-tests only
    attributes=[
        _a(5, 0, flags=0x0033, thr=10),
        _a(9, 1234),
        _a(12, 56),
        _a(194, 38, value=62, worst=50, flags=0x0022),
        _a(241, 9876543210),
        _a(242, 5432109876),
    ],
)

DRIVES: dict[str, Drive] = {
    d.name: d for d in (WD_SA500_4T, SKHYNIX_SC311, SKHYNIX_SE5110, CRUCIAL_MX500, SAMSUNG_870EVO, ACME_1T)
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[-1].strip())
        print("drives:", " ".join(DRIVES))
        return 0 if argv else 2
    out = Path(argv[0])
    names = argv[1:] or list(DRIVES)
    for name in names:
        if name not in DRIVES:
            print(f"unknown drive {name!r}; known: {' '.join(DRIVES)}", file=sys.stderr)
            return 2
        print(DRIVES[name].write(out / name))
    return 0
