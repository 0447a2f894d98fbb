"""NVMe admin pages built from a description: what nvme_shim.c hands to nvme-cli and smartctl.

Each dataclass packs to the bytes a drive returns, every field at its byte offset in the NVMe Base
Specification (Identify Controller, Identify Namespace, the SMART / Health Information log, the
Device Self-test log, the Sanitize Status log, the APST feature's data). `Drive.write(directory)` lays out the files the
shim reads (see nvme_shim.c). DRIVES holds the drives tests/golden/telemetry/real/ records.

Power-state tables, WCTEMP/CCTEMP and the thermal-management temperatures follow the declared
values quoted in docs/simulator.md (CAL:PS, CAL:SN850, CAL:980) and the hand-written files in
tests/golden/telemetry/. Serial numbers, health counters, RTD3 latencies, MNTMT/MXTMT, namespace
sizes in use, EUI-64s and the SN850's idle and active power fields are invented.

    python -m tests.nvme_shim OUTDIR [DRIVE...]   # one sub-directory of pages per drive
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path


def _put(buf: bytearray, offset: int, size: int, value: int | str | bytes) -> None:
    """Store an unsigned little-endian integer, a space-padded ASCII string or raw bytes."""
    if isinstance(value, int):
        data = value.to_bytes(size, "little")
    elif isinstance(value, str):
        data = value.encode("ascii").ljust(size, b" ")
    else:
        data = bytes(value).ljust(size, b"\0")
    if len(data) != size:
        raise ValueError(f"{value!r} does not fit in {size} bytes at offset {offset}")
    buf[offset : offset + size] = data


# --------------------------------------------------------------------------------------------
# Identify Controller (CNS 01h), 4096 bytes


@dataclass
class PowerState:
    """One 32-byte power state descriptor (Identify Controller bytes 2048 + 32 * n)."""

    mp: int  # maximum power, in 0.01 W, or 0.0001 W when mxps
    mxps: bool = False  # flags bit 0: max power scale
    nops: bool = False  # flags bit 1: non-operational state
    enlat: int = 0  # entry latency, us
    exlat: int = 0  # exit latency, us
    rrt: int = 0  # relative read throughput (bits 4:0)
    rrl: int = 0  # relative read latency
    rwt: int = 0  # relative write throughput
    rwl: int = 0  # relative write latency
    idlp: int = 0  # idle power, in units of ips
    ips: int = 0  # idle power scale (byte 18 bits 7:6): 0 none, 1 0.0001 W, 2 0.01 W
    actp: int = 0  # active power, in units of aps
    apw: int = 0  # active power workload (byte 22 bits 2:0)
    aps: int = 0  # active power scale (byte 22 bits 7:6)

    @property
    def flags(self) -> int:
        return int(self.mxps) | int(self.nops) << 1

    @property
    def max_power_w(self) -> float:
        return self.mp * (0.0001 if self.mxps else 0.01)

    def pack(self) -> bytes:
        b = bytearray(32)
        _put(b, 0, 2, self.mp)
        _put(b, 3, 1, self.flags)
        _put(b, 4, 4, self.enlat)
        _put(b, 8, 4, self.exlat)
        _put(b, 12, 1, self.rrt & 0x1F)
        _put(b, 13, 1, self.rrl & 0x1F)
        _put(b, 14, 1, self.rwt & 0x1F)
        _put(b, 15, 1, self.rwl & 0x1F)
        _put(b, 16, 2, self.idlp)
        _put(b, 18, 1, (self.ips & 0x3) << 6)
        _put(b, 20, 2, self.actp)
        _put(b, 22, 1, (self.apw & 0x7) | (self.aps & 0x3) << 6)
        return bytes(b)


@dataclass
class IdCtrl:
    """Identify Controller data; fields named as in the specification and in nvme-cli's JSON."""

    sn: str
    mn: str
    fr: str
    vid: int
    ssvid: int
    ieee: int  # IEEE OUI, 24 bits
    psds: list[PowerState]
    rab: int = 2
    cmic: int = 0
    mdts: int = 7
    cntlid: int = 0
    ver: int = 0x10400  # NVMe 1.4
    rtd3r: int = 0
    rtd3e: int = 0
    oaes: int = 0
    ctratt: int = 0
    rrls: int = 0
    cntrltype: int = 1  # I/O controller
    oacs: int = 0x17  # security, format, firmware, device self-test
    acl: int = 7
    aerl: int = 3
    frmw: int = 0x14
    lpa: int = 0x1E
    elpe: int = 255
    avscc: int = 0
    apsta: int = 1
    wctemp: int = 0  # K
    cctemp: int = 0  # K
    mtfa: int = 0
    hmpre: int = 0
    hmmin: int = 0
    tnvmcap: int = 0  # bytes, 128 bit
    unvmcap: int = 0
    rpmbs: int = 0
    edstt: int = 0
    dsto: int = 0
    fwug: int = 0
    kas: int = 0
    hctma: int = 1
    mntmt: int = 0  # K
    mxtmt: int = 0  # K
    sanicap: int = 0
    sqes: int = 0x66
    cqes: int = 0x44
    maxcmd: int = 0
    nn: int = 1
    oncs: int = 0x5F
    fuses: int = 0
    fna: int = 0
    vwc: int = 7
    awun: int = 1023
    awupf: int = 0
    nvscc: int = 0  # nvme-cli 2.x prints it as "icsvscc"
    nwpc: int = 0
    acwu: int = 0
    sgls: int = 0
    mnan: int = 0
    subnqn: str = ""

    @property
    def npss(self) -> int:
        return len(self.psds) - 1

    def pack(self) -> bytes:
        b = bytearray(4096)
        for offset, size, value in (
            (0, 2, self.vid),
            (2, 2, self.ssvid),
            (4, 20, self.sn),
            (24, 40, self.mn),
            (64, 8, self.fr),
            (72, 1, self.rab),
            (73, 3, self.ieee),
            (76, 1, self.cmic),
            (77, 1, self.mdts),
            (78, 2, self.cntlid),
            (80, 4, self.ver),
            (84, 4, self.rtd3r),
            (88, 4, self.rtd3e),
            (92, 4, self.oaes),
            (96, 4, self.ctratt),
            (100, 2, self.rrls),
            (111, 1, self.cntrltype),
            (256, 2, self.oacs),
            (258, 1, self.acl),
            (259, 1, self.aerl),
            (260, 1, self.frmw),
            (261, 1, self.lpa),
            (262, 1, self.elpe),
            (263, 1, self.npss),
            (264, 1, self.avscc),
            (265, 1, self.apsta),
            (266, 2, self.wctemp),
            (268, 2, self.cctemp),
            (270, 2, self.mtfa),
            (272, 4, self.hmpre),
            (276, 4, self.hmmin),
            (280, 16, self.tnvmcap),
            (296, 16, self.unvmcap),
            (312, 4, self.rpmbs),
            (316, 2, self.edstt),
            (318, 1, self.dsto),
            (319, 1, self.fwug),
            (320, 2, self.kas),
            (322, 2, self.hctma),
            (324, 2, self.mntmt),
            (326, 2, self.mxtmt),
            (328, 4, self.sanicap),
            (512, 1, self.sqes),
            (513, 1, self.cqes),
            (514, 2, self.maxcmd),
            (516, 4, self.nn),
            (520, 2, self.oncs),
            (522, 2, self.fuses),
            (524, 1, self.fna),
            (525, 1, self.vwc),
            (526, 2, self.awun),
            (528, 2, self.awupf),
            (530, 1, self.nvscc),
            (531, 1, self.nwpc),
            (532, 2, self.acwu),
            (536, 4, self.sgls),
            (540, 4, self.mnan),
        ):
            _put(b, offset, size, value)
        # SUBNQN is NUL-padded UTF-8, unlike the space-padded SN/MN/FR
        _put(b, 768, 256, self.subnqn.encode())
        if not 1 <= len(self.psds) <= 32:
            raise ValueError("a controller has 1 to 32 power states")
        for i, ps in enumerate(self.psds):
            _put(b, 2048 + 32 * i, 32, ps.pack())
        return bytes(b)


# --------------------------------------------------------------------------------------------
# Identify Namespace (CNS 00h), 4096 bytes


@dataclass
class IdNs:
    nsze: int  # logical blocks
    ncap: int
    nuse: int
    nvmcap: int = 0  # bytes, 128 bit
    flbas: int = 0  # the format in use
    lbafs: list[tuple[int, int, int]] = field(default_factory=lambda: [(0, 9, 0)])  # (ms, lbads, rp)
    eui64: bytes = bytes(8)
    nguid: bytes = bytes(16)

    def pack(self) -> bytes:
        b = bytearray(4096)
        _put(b, 0, 8, self.nsze)
        _put(b, 8, 8, self.ncap)
        _put(b, 16, 8, self.nuse)
        _put(b, 25, 1, len(self.lbafs) - 1)  # NLBAF is zero-based
        _put(b, 26, 1, self.flbas)
        _put(b, 48, 16, self.nvmcap)
        _put(b, 104, 16, self.nguid)
        _put(b, 120, 8, self.eui64)
        for i, (ms, lbads, rp) in enumerate(self.lbafs):
            _put(b, 128 + 4 * i, 4, ms | lbads << 16 | (rp & 3) << 24)
        return bytes(b)


# --------------------------------------------------------------------------------------------
# SMART / Health Information log (LID 02h), 512 bytes


@dataclass
class SmartLog:
    temperature: int  # composite, K
    critical_warning: int = 0
    avail_spare: int = 100
    spare_thresh: int = 10
    percent_used: int = 0
    endurance_grp_critical_warning_summary: int = 0
    # 128-bit counters
    data_units_read: int = 0  # thousands of 512-byte units
    data_units_written: int = 0
    host_read_commands: int = 0
    host_write_commands: int = 0
    controller_busy_time: int = 0  # minutes
    power_cycles: int = 0
    power_on_hours: int = 0
    unsafe_shutdowns: int = 0
    media_errors: int = 0
    num_err_log_entries: int = 0
    warning_temp_time: int = 0  # minutes, 32 bit
    critical_comp_time: int = 0
    temp_sensors: list[int] = field(default_factory=list)  # K, up to 8; 0 = not implemented
    thm_temp1_trans_count: int = 0
    thm_temp2_trans_count: int = 0
    thm_temp1_total_time: int = 0  # seconds
    thm_temp2_total_time: int = 0

    def pack(self) -> bytes:
        b = bytearray(512)
        for offset, size, value in (
            (0, 1, self.critical_warning),
            (1, 2, self.temperature),
            (3, 1, self.avail_spare),
            (4, 1, self.spare_thresh),
            (5, 1, self.percent_used),
            (6, 1, self.endurance_grp_critical_warning_summary),
            (32, 16, self.data_units_read),
            (48, 16, self.data_units_written),
            (64, 16, self.host_read_commands),
            (80, 16, self.host_write_commands),
            (96, 16, self.controller_busy_time),
            (112, 16, self.power_cycles),
            (128, 16, self.power_on_hours),
            (144, 16, self.unsafe_shutdowns),
            (160, 16, self.media_errors),
            (176, 16, self.num_err_log_entries),
            (192, 4, self.warning_temp_time),
            (196, 4, self.critical_comp_time),
            (216, 4, self.thm_temp1_trans_count),
            (220, 4, self.thm_temp2_trans_count),
            (224, 4, self.thm_temp1_total_time),
            (228, 4, self.thm_temp2_total_time),
        ):
            _put(b, offset, size, value)
        if len(self.temp_sensors) > 8:
            raise ValueError("at most 8 temperature sensors")
        for i, kelvin in enumerate(self.temp_sensors):
            _put(b, 200 + 2 * i, 2, kelvin)
        return bytes(b)


def self_test_log() -> bytes:
    """Device Self-test log (LID 06h), 564 bytes: no test running, all 20 result entries unused."""
    b = bytearray(564)
    for i in range(20):
        b[4 + 28 * i] = 0x0F  # Device Self-test Status bits 3:0 = Fh: entry not used
    return bytes(b)


NO_ESTIMATE = 0xFFFFFFFF  # a sanitize time the drive does not report


def sanitize_log(sstat: int = 0, block_erase_s: int = NO_ESTIMATE, crypto_erase_s: int = NO_ESTIMATE) -> bytes:
    """Sanitize Status log (LID 81h), 512 bytes: SSTAT (0: never sanitized) and the estimated
    seconds of each action (overwrite and the no-deallocate ones not reported)."""
    b = bytearray(512)
    _put(b, 0, 2, 0xFFFF if sstat & 7 != 2 else 0)  # SPROG: done, unless in progress
    _put(b, 2, 2, sstat)
    for offset, seconds in ((8, NO_ESTIMATE), (12, block_erase_s), (16, crypto_erase_s),
                            (20, NO_ESTIMATE), (24, NO_ESTIMATE), (28, NO_ESTIMATE)):
        _put(b, offset, 4, seconds)
    return bytes(b)


def apst_table(entries: list[tuple[int, int]]) -> bytes:
    """Autonomous Power State Transition data (feature 0Ch), 32 entries of 8 bytes.

    entries: (idle time prior to transition in ms, idle transition power state) for PS0, PS1, ...
    """
    b = bytearray(256)
    for i, (itpt_ms, itps) in enumerate(entries):
        _put(b, 8 * i, 8, (itps & 0x1F) << 3 | (itpt_ms & 0xFFFFFF) << 8)
    return bytes(b)


# --------------------------------------------------------------------------------------------
# A drive: every page the shim serves


@dataclass
class Drive:
    name: str
    id_ctrl: IdCtrl
    smart_log: SmartLog
    id_ns: IdNs | None = None
    features: dict[int, int] = field(default_factory=dict)  # FID -> completion dword 0
    apst: list[tuple[int, int]] | None = None  # feature 0Ch's table, see apst_table()

    def write(self, directory: Path | str) -> Path:
        """Write the pages nvme_shim.c reads into `directory` (created); returns it."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / "id-ctrl.bin").write_bytes(self.id_ctrl.pack())
        self.write_smart_log(d)
        if self.id_ns is not None:
            (d / "id-ns.bin").write_bytes(self.id_ns.pack())
        if self.id_ctrl.oacs & 0x10:  # Device Self-test supported: the log page exists
            (d / "log-0x06.bin").write_bytes(self_test_log())
        if self.id_ctrl.sanicap & 0x7:  # sanitize supported: so is its status log
            (d / "log-0x81.bin").write_bytes(sanitize_log())
        for fid, value in self.features.items():
            (d / f"feature-0x{fid:02x}").write_text(f"0x{value:08x}\n")
        if self.apst is not None:
            (d / "feature-0x0c.bin").write_bytes(apst_table(self.apst))
        return d

    def write_smart_log(self, directory: Path | str, smart_log: SmartLog | None = None) -> None:
        """Replace just the health log (the shim re-reads it on the next Get Log Page)."""
        Path(directory, "smart-log.bin").write_bytes((smart_log or self.smart_log).pack())


def _thermal_mgmt(tmt1_k: int, tmt2_k: int) -> int:
    """Feature 10h's dword: TMT1 in bits 31:16, TMT2 in bits 15:0."""
    return tmt1_k << 16 | tmt2_k


# 1 TB = 1953525168 blocks of 512 bytes (IDEMA)
_TB_BLOCKS = 1953525168
_TB_BYTES = _TB_BLOCKS * 512

SN850_ID_CTRL = IdCtrl(
    vid=0x15B7,
    ssvid=0x15B7,
    sn="21050A800123",  # invented
    mn="WDS100T1X0E-00AFY0",
    fr="614900WD",
    ieee=0x001B44,
    cntlid=0x2020,
    mdts=7,
    rtd3r=500000,
    rtd3e=1000000,
    frmw=0x14,
    lpa=0x1E,
    elpe=255,
    wctemp=357,  # 84 C
    cctemp=361,  # 88 C
    mntmt=273,
    mxtmt=357,
    tnvmcap=_TB_BYTES,
    subnqn="nqn.2014.08.org.nvmexpress:15b715b721050A800123        WDS100T1X0E-00AFY0                      ",
    psds=[
        # operational states in 0.01 W; idle power 0.63 W in 0.0001 W units (ips 1), active power
        # in 0.01 W units (aps 2) measured with workload #1 (apw 1: unlike aps, so that an output
        # showing one of them can be told from one showing the other)
        PowerState(mp=900, idlp=6300, ips=1, actp=900, apw=1, aps=2),
        PowerState(mp=410, rrt=1, rrl=1, rwt=1, rwl=1, idlp=6300, ips=1, actp=410, apw=1, aps=2),
        PowerState(mp=350, rrt=2, rrl=2, rwt=2, rwl=2, idlp=6300, ips=1, actp=350, apw=1, aps=2),
        # non-operational states in 0.0001 W: 0.0250 W and 0.0050 W
        PowerState(mp=250, mxps=True, nops=True, enlat=5000, exlat=10000, rrt=3, rrl=3, rwt=3, rwl=3),
        PowerState(mp=50, mxps=True, nops=True, enlat=5000, exlat=45000, rrt=4, rrl=4, rwt=4, rwl=4),
    ],
)

SN850_ID_NS = IdNs(
    nsze=_TB_BLOCKS,
    ncap=_TB_BLOCKS,
    nuse=1032011776,
    nvmcap=_TB_BYTES,
    lbafs=[(0, 9, 2), (0, 12, 1)],  # 512 B (in use) and 4 KiB
    eui64=bytes.fromhex("001b44aadbed4012"),
)

# Linux's APST table for the SN850 (PS3 after 100 ms, PS4 after 2 s), as the kernel programs it
SN850_APST = [(100, 3), (100, 3), (100, 3), (2000, 4)]

SN850_FEATURES = {
    0x02: 0x00000000,  # power management: PS0
    0x04: 357,  # temperature threshold: the composite over-temperature threshold, 84 C
    0x06: 0x00000001,  # volatile write cache enabled
    0x0C: 0x00000001,  # APST enabled
    0x10: _thermal_mgmt(353, 355),  # TMT1 80 C, TMT2 82 C
}

SN850 = Drive(
    name="sn850",
    id_ctrl=SN850_ID_CTRL,
    id_ns=SN850_ID_NS,
    features=SN850_FEATURES,
    apst=SN850_APST,
    smart_log=SmartLog(  # invented counters
        temperature=311,
        avail_spare=100,
        spare_thresh=10,
        percent_used=1,
        data_units_read=178037231,
        data_units_written=2000,  # a multiple of 1000: locale grouping shows as "2,000" / "2.000"
        host_read_commands=412345678,
        host_write_commands=567891234,
        controller_busy_time=1234,
        power_cycles=312,
        power_on_hours=1893,
        unsafe_shutdowns=27,
        media_errors=0,
        num_err_log_entries=3,
        warning_temp_time=7,
        critical_comp_time=1,
        temp_sensors=[318, 311],
        thm_temp1_trans_count=4,
        thm_temp2_trans_count=1,
        thm_temp1_total_time=212,
        thm_temp2_total_time=9,
    ),
)

# the same SN850 worn out: spare below threshold, reliability degraded, > 100 % used, media errors
SN850_WORN = Drive(
    name="sn850-worn",
    id_ctrl=SN850_ID_CTRL,
    id_ns=SN850_ID_NS,
    features=SN850_FEATURES,
    apst=SN850_APST,
    smart_log=SmartLog(
        critical_warning=0x05,  # bit 0 spare below threshold, bit 2 reliability degraded
        temperature=322,
        avail_spare=8,
        spare_thresh=10,
        percent_used=103,
        data_units_read=2_345_678_901,
        data_units_written=1_234_567_000,
        host_read_commands=2**70 + 5,  # above 2^64: needs all 128 bits
        host_write_commands=98_765_432_109,
        controller_busy_time=45678,
        power_cycles=1523,
        power_on_hours=26280,
        unsafe_shutdowns=311,
        media_errors=12,
        num_err_log_entries=57,
        warning_temp_time=1440,
        critical_comp_time=35,
        temp_sensors=[330, 322],
        thm_temp1_trans_count=8123,
        thm_temp2_trans_count=411,
        thm_temp1_total_time=456789,
        thm_temp2_total_time=12345,
    ),
)

SAMSUNG_980PRO = Drive(
    name="980pro",
    id_ctrl=IdCtrl(
        vid=0x144D,
        ssvid=0x144D,
        sn="S5GXNF0R712345A",  # invented
        mn="Samsung SSD 980 PRO 1TB",
        fr="5B2QGXA7",
        ieee=0x002538,
        cntlid=6,
        mdts=9,
        rtd3r=200000,
        rtd3e=2000000,
        frmw=0x16,
        lpa=0x0F,
        elpe=63,
        wctemp=355,  # 82 C
        cctemp=358,  # 85 C
        mntmt=356,
        mxtmt=358,
        tnvmcap=_TB_BYTES,
        subnqn="nqn.2014.08.org.nvmexpress:144d144dS5GXNF0R712345A     Samsung SSD 980 PRO 1TB                 ",
        psds=[
            PowerState(mp=849),
            PowerState(mp=448, exlat=200, rrt=1, rrl=1, rwt=1, rwl=1),
            PowerState(mp=318, exlat=1000, rrt=2, rrl=2, rwt=2, rwl=2),
            PowerState(mp=400, mxps=True, nops=True, enlat=2000, exlat=1200, rrt=3, rrl=3, rwt=3, rwl=3),
            PowerState(mp=50, mxps=True, nops=True, enlat=500, exlat=9500, rrt=4, rrl=4, rwt=4, rwl=4),
        ],
    ),
    id_ns=IdNs(
        nsze=_TB_BLOCKS,
        ncap=_TB_BLOCKS,
        nuse=412300288,
        nvmcap=_TB_BYTES,
        lbafs=[(0, 9, 0)],
        eui64=bytes.fromhex("002538b711b2c3d4"),
    ),
    features={
        0x02: 0x00000000,
        0x04: 355,
        0x06: 0x00000001,
        0x0C: 0x00000001,
        0x10: _thermal_mgmt(354, 355),  # TMT1 81 C, TMT2 82 C
    },
    apst=[(100, 3), (100, 3), (100, 3), (2000, 4)],
    smart_log=SmartLog(  # invented counters
        temperature=309,
        avail_spare=100,
        spare_thresh=10,
        percent_used=2,
        data_units_read=23_456_789,
        data_units_written=31_000_000,
        host_read_commands=301_234_567,
        host_write_commands=456_789_012,
        controller_busy_time=987,
        power_cycles=640,
        power_on_hours=2210,
        unsafe_shutdowns=44,
        media_errors=0,
        num_err_log_entries=0,
        temp_sensors=[309, 316],
    ),
)

DRIVES: dict[str, Drive] = {d.name: d for d in (SN850, SN850_WORN, SAMSUNG_980PRO)}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out, names = Path(argv[0]), argv[1:] or list(DRIVES)
    for name in names:
        print(DRIVES[name].write(out / name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
