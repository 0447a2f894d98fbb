//! Bounds of the simulator's inputs: every numeric preset field and step field.
//!
//! Contract: the range of every bounded field is defined once, here: a [`Bound`]
//! (an inclusive range with its unit) documented with the reason for it; fields
//! of the same nature share one. [`DriveConfig::validate`] and
//! [`Step::validate`] refuse a value outside its bound with a message naming
//! the field, its value and the range, e.g.
//! `drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)`.
//!
//! Preset bounds span what real drives do, with a wide margin (about ten times
//! either way where physics allows). Lower bounds of the geometry and capacity
//! also admit the toy drives of the tests. The bounds are what make the
//! simulator's integer clock safe: with them every configured time converts to
//! at least 1 ns (or to exactly 0 where 0 is allowed) and stays below 2^50 ns,
//! so no conversion rounds to 0, saturates or overflows, and no sum or product
//! of times, sizes and counts reaches `u64::MAX` (see `time.rs` and its tests).
//! Relations between fields (a page is whole 4 KiB units, the geometry fits
//! 32-bit page addresses, the thresholds fit the superblocks) are checked by
//! `validate` after the bounds.
//!
//! [`DriveConfig::validate`]: crate::DriveConfig::validate
//! [`Step::validate`]: crate::Step::validate

use std::fmt;

/// Whether a field holds a whole number (printed as such) or a real number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Integer,
    Real,
}

/// An inclusive range of allowed values of one field, with its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    pub min: f64,
    pub max: f64,
    /// Unit shown after the range (empty for plain numbers).
    pub unit: &'static str,
    pub kind: Kind,
}

impl Bound {
    /// A bound on a whole-number field.
    pub const fn integer(min: u64, max: u64, unit: &'static str) -> Bound {
        Bound {
            min: min as f64,
            max: max as f64,
            unit,
            kind: Kind::Integer,
        }
    }

    /// A bound on a real-number field.
    pub const fn real(min: f64, max: f64, unit: &'static str) -> Bound {
        Bound {
            min,
            max,
            unit,
            kind: Kind::Real,
        }
    }

    /// Does `v` lie in the bound? NaN never does.
    pub fn contains(&self, v: f64) -> bool {
        v >= self.min && v <= self.max
    }

    /// `Ok` when `v` lies in the bound, else the message naming `key`, `v` and the range.
    pub fn check(&self, key: &str, v: f64) -> Result<(), String> {
        if self.contains(v) {
            return Ok(());
        }
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.unit)
        };
        Err(format!(
            "{key} = {} is outside {}..{}{unit}",
            self.show(v),
            self.show(self.min),
            self.show(self.max)
        ))
    }

    /// A value as the user most likely wrote it: whole numbers in full, very large
    /// or very small reals with an exponent (`1e10`, `1e-300`).
    fn show(&self, v: f64) -> Shown {
        Shown(v, self.kind)
    }
}

struct Shown(f64, Kind);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Shown(v, kind) = *self;
        let tiny_or_huge = v != 0.0 && !(1e-3..1e7).contains(&v.abs());
        // u64::MAX as f64 is 2^64, which `as u64` turns back into u64::MAX.
        let whole = kind == Kind::Integer && (0.0..=u64::MAX as f64).contains(&v);
        if whole {
            write!(f, "{}", v as u64)
        } else if v.is_finite() && tiny_or_huge {
            write!(f, "{v:e}")
        } else {
            write!(f, "{v}")
        }
    }
}

// ------------------------------------------------------------------ [drive]

/// `user_capacity_gb`: client and enterprise drives of this model hold 120 GB to
/// 8 TB; 1 MB admits the toy drives of the tests. 20 TB is above what 32-bit page
/// addresses of 4 KiB units reach anyway (17.6 TB raw, checked with the geometry).
pub const USER_CAPACITY_GB: Bound = Bound::real(0.001, 20_000.0, "GB");

// ------------------------------------------------------------------ [drive.geometry]

/// `channels`: controllers have 2 (DRAM-less) to 16 (enterprise) NAND channels.
pub const CHANNELS: Bound = Bound::integer(1, 64, "");

/// `dies_per_channel`: 1 to 16 dies share a channel on real drives (a 1 TB drive of
/// 512 Gbit dies on 8 channels has 2; 8 TB of 1 Tbit dies on 8 channels has 8).
pub const DIES_PER_CHANNEL: Bound = Bound::integer(1, 64, "");

/// `planes_per_die`: 1 to 6 planes on real dies (4 on most current ones).
pub const PLANES_PER_DIE: Bound = Bound::integer(1, 16, "");

/// `blocks_per_plane` (the number of superblocks): real dies have about 500 to 4000
/// blocks per plane; 8 is about the least that leaves room for the GC reserve and
/// the open write points (the test drives have 24 to 64). The whole array must also
/// fit 32-bit page addresses, checked with the geometry.
pub const BLOCKS_PER_PLANE: Bound = Bound::integer(8, 65_536, "");

/// `pages_per_block` in native mode (wordlines × strings × bits): real blocks have
/// 256 to about 4000 pages; the toy drive of the unit tests has 6. A multiple of
/// the native bits per cell, checked with the cell timings.
pub const PAGES_PER_BLOCK: Bound = Bound::integer(1, 16_384, "");

/// `page_bytes` (data area per plane): 4 to 16 KiB on real NAND (a few 32 KiB); at
/// least one 4 KiB mapping unit, and whole units (a multiple of 4096, checked apart).
pub const PAGE_BYTES: Bound = Bound::integer(4096, 65_536, "bytes");

// ------------------------------------------------------------------ [drive.nand]

/// `channel_mbps`: NAND interfaces run from about 50 MT/s (legacy SDR) to 3600 MT/s
/// (current Toggle/ONFI), one byte per transfer. Within 10..10000 MB/s a 4 KiB unit
/// takes 0.4 to 410 µs on the channel.
pub const CHANNEL_MBPS: Bound = Bound::real(10.0, 10_000.0, "MB/s");

/// `t_read_us` of any cell mode: about 3 µs (low-latency SLC such as Z-NAND or
/// XL-Flash) to 150 µs (QLC); read retries of worn cells reach a few ms.
pub const T_READ_US: Bound = Bound::real(1.0, 10_000.0, "µs");

/// `t_prog_us` of any cell mode: about 50 µs (low-latency SLC) to 400 µs (SLC),
/// 0.5 to 3 ms (TLC, effective per page) and up to about 15 ms (QLC); 100 ms is
/// beyond any NAND.
pub const T_PROG_US: Bound = Bound::real(1.0, 100_000.0, "µs");

/// Each entry of `read_levels`: a page type of a wordline needs at least one and at
/// most all 15 reference-voltage senses of a QLC cell (TLC has 7).
pub const READ_LEVELS: Bound = Bound::integer(1, 15, "senses");

/// `t_erase_us` of any cell mode: 1.5 to 25 ms on real NAND; 1 s is beyond any.
pub const T_ERASE_US: Bound = Bound::real(10.0, 1_000_000.0, "µs");

/// `suspend_us`: program/erase suspend latency, from the read's arrival to the die
/// being free for it: tens of µs on real NAND; 1 ms would make suspend pointless.
pub const SUSPEND_US: Bound = Bound::real(0.1, 1_000.0, "µs");

// ------------------------------------------------------------------ [drive.controller]

/// `read_cmd_us`, `write_cmd_us`, `trim_cmd_us`: controller time per command is 0.5
/// to 10 µs on real drives (0.3 to 3 million IOPS per core); 10 ms per command is a
/// stall no firmware makes, 10 ns faster than any.
pub const COMMAND_US: Bound = Bound::real(0.01, 10_000.0, "µs");

/// `read_latency_us`, `write_latency_us`: fixed firmware latency of a command, 0 (not
/// modelled) to a few tens of µs on real drives; 10 ms is a wide margin.
pub const FIXED_LATENCY_US: Bound = Bound::real(0.0, 10_000.0, "µs");

/// `trim_unit_ns`: clearing one 4 KiB mapping entry costs 1 to 10 ns in DRAM and up
/// to about 1 µs through host memory (HMB); 0 means free, 100 µs is a wide margin.
pub const TRIM_UNIT_NS: Bound = Bound::real(0.0, 100_000.0, "ns");

/// `write_buffer_kib`: 256 KiB (SRAM) to 64 MiB (DRAM) per stream on real drives; at
/// least one 4 KiB unit, at most 1 GiB.
pub const WRITE_BUFFER_KIB: Bound = Bound::integer(4, 1_048_576, "KiB");

// ------------------------------------------------------------------ [drive.host]

/// `payload_mbps`: SATA gives 550 MB/s, PCIe 5.0 x4 about 14 GB/s and PCIe 6.0 x4
/// about 28 GB/s of payload; within 10..100000 MB/s a byte takes 10 ps to 100 ns.
pub const PAYLOAD_MBPS: Bound = Bound::real(10.0, 100_000.0, "MB/s");

// ------------------------------------------------------------------ [drive.ftl]

/// `gc_low_superblocks`, `gc_idle_superblocks`: real firmware keeps a reserve of a
/// few superblocks; at least 2 (one to open while another is reclaimed), at most
/// 1024. Both must also fit the over-provisioning, checked with the geometry.
pub const GC_SUPERBLOCKS: Bound = Bound::integer(2, 1024, "superblocks");

// ------------------------------------------------------------------ [drive.cache]

/// `static_gb`: static SLC caches hold 6 to 100 GB on real drives; the test drives
/// have caches of a few hundred KB. Also at most what the NAND holds in SLC mode,
/// checked with the geometry.
pub const STATIC_GB: Bound = Bound::real(0.0001, 20_000.0, "GB");

/// `free_share`, `max_cell_share`: a share of the free or of all cells, 1 % to 100 %
/// (real dynamic caches use 20 % to 100 %).
pub const CACHE_SHARE: Bound = Bound::real(0.01, 1.0, "");

/// `busy_fold_ratio`: SLC units folded per host unit written to native blocks, 0
/// (fold only when idle) to about 1 on real drives; 16 is a wide margin.
pub const BUSY_FOLD_RATIO: Bound = Bound::real(0.0, 16.0, "");

// ------------------------------------------------------------------ [drive.mapping]

/// `cache_mib`: memory for the mapping table: 16 to 64 MiB of host memory (HMB) on
/// DRAM-less drives, 256 MiB to 4 GiB of DRAM on others (about 1 MiB per GB); 1 MiB
/// to 64 GiB is a wide margin.
pub const MAPPING_CACHE_MIB: Bound = Bound::real(1.0, 65_536.0, "MiB");

/// `hit_ns`: a mapping lookup or update in DRAM costs tens of ns of controller time,
/// in host memory (HMB, across PCIe) about 1 µs; 100 µs is a wide margin.
pub const MAPPING_HIT_NS: Bound = Bound::real(0.0, 100_000.0, "ns");

// ------------------------------------------------------------------ [drive.firmware]

/// `journal_entry_bytes`: a journal record of one mapping change holds an address or
/// two and a sequence number: 4 to 16 bytes; 64 is a wide margin.
pub const JOURNAL_ENTRY_BYTES: Bound = Bound::integer(1, 64, "bytes");

/// `checkpoint_mib`: journal written between two checkpoints of the mapping table:
/// firmware bounds its replay time after a power loss to seconds, i.e. tens to
/// hundreds of MiB of journal; 1 MiB to 64 GiB is a wide margin.
pub const CHECKPOINT_MIB: Bound = Bound::real(1.0, 65_536.0, "MiB");

/// `checkpoint_us`: controller time during which host commands wait while a
/// checkpoint is taken: 0 (fully in the background) to milliseconds; 1 s is a wide margin.
pub const CHECKPOINT_US: Bound = Bound::real(0.0, 1_000_000.0, "µs");

/// `relocate_unit_ns`: controller time per 4 KiB unit relocated by garbage
/// collection (its mapping update and copy bookkeeping): tens to hundreds of ns;
/// 100 µs is a wide margin.
pub const RELOCATE_UNIT_NS: Bound = Bound::real(0.0, 100_000.0, "ns");

/// `deallocate_share`: controller time per mapped 4 KiB unit a TRIM deallocates (the old
/// unit's valid bit and its superblock's valid count), as a share of a 4 KiB write's
/// controller time: a small part of the write's work (about 1 %); a whole write's worth
/// (1) is a wide margin.
pub const DEALLOCATE_SHARE: Bound = Bound::real(0.0, 1.0, "of write_cmd_us");

/// `flush_idle_us`: firmware flushes its write buffer after about a millisecond to a
/// second without host commands; 1 µs to 10 s is a wide margin.
pub const FLUSH_IDLE_US: Bound = Bound::real(1.0, 10_000_000.0, "µs");

/// `read_ahead_kib`: sequential read-ahead of client drives is a few KiB to a few
/// MiB (a drive without it leaves the key out); 64 MiB is a wide margin.
pub const READ_AHEAD_KIB: Bound = Bound::integer(1, 65_536, "KiB");

// ------------------------------------------------------------------ [drive.thermal]

/// `tmt1_c`, `tmt2_c`: NVMe thermal management thresholds are 70 to 85 °C on client
/// drives; controllers and NAND are rated to about 125 °C.
pub const TMT_C: Bound = Bound::real(0.0, 150.0, "°C");

/// The air around the drive (a run's option, not the preset's): the industrial
/// operating range.
pub const AMBIENT_C: Bound = Bound::real(-40.0, 85.0, "°C");

/// `controller_k_per_w` and the cooling's `*_k_per_w`: an M.2 drive's controller is about
/// 2 K/W over its board, a bare board 6 to 8 K/W over the air, with a heatsink 2.5 to 4
/// (CALIBRATION.md, "Thermal"); 0.05 to 100 is a wide margin.
pub const THERMAL_K_PER_W: Bound = Bound::real(0.05, 100.0, "K/W");

/// `controller_j_per_k`, `board_j_per_k`: about 2 and 30 to 40 J/K on an M.2 drive
/// (CALIBRATION.md); a 2.5" enterprise drive with its case is a few hundred.
pub const HEAT_CAPACITY_J_PER_K: Bound = Bound::real(0.01, 10_000.0, "J/K");

/// `hysteresis_k`: 2 to 5 K (CALIBRATION.md); 0 (none) to 20 allowed.
pub const HYSTERESIS_K: Bound = Bound::real(0.0, 20.0, "K");

/// `light_state`, `heavy_state`: power state numbers (NVMe allows 32).
pub const THROTTLE_STATE: Bound = Bound::integer(0, 31, "");

/// `rise_lookahead_s`: how far ahead a rate-of-rise trigger looks; beyond 10 minutes it
/// would throttle on any rise.
pub const LOOKAHEAD_S: Bound = Bound::real(0.0, 600.0, "s");

// ------------------------------------------------------------------ [drive.power]

/// `active_idle_w`: a drive in its top power state with nothing to do draws 0.03 W (a
/// DRAM-less drive with its link in L1.2) to about 2 W (the 980 PRO in one lab) and up
/// to 8 W (enterprise); 1 mW to 50 W is a wide margin.
pub const ACTIVE_IDLE_W: Bound = Bound::real(0.001, 50.0, "W");

/// `peak_w`: 5 to 10 W on client drives, 25 W on enterprise ones.
pub const PEAK_W: Bound = Bound::real(0.1, 100.0, "W");

/// `max_w`, `measured_w` of a power state: declared states span 2 mW (a client PS4) to
/// 25 W (an enterprise PS0); 0.1 mW to 100 W is a wide margin.
pub const STATE_W: Bound = Bound::real(0.0001, 100.0, "W");

/// Entry and exit latencies of power states and of active idle, and the idle before
/// active idle: drives declare 0 to about 100 ms; 0 to 10 s is a wide margin.
pub const POWER_LATENCY_US: Bound = Bound::real(0.0, 10_000_000.0, "µs");

/// `idle_tick_us`: the tick of a controller's real-time OS timer is 1 to 10 ms in common
/// configurations (1000 or 100 ticks a second); 1 µs to 100 ms is a wide margin.
pub const IDLE_TICK_US: Bound = Bound::real(1.0, 100_000.0, "µs");

/// `nand.vcc_v`: NAND runs on 3.3 V (VCC) with 1.2 to 1.8 V I/O (VCCQ); 0.5 to 5 V is a
/// wide margin.
pub const NAND_V: Bound = Bound::real(0.5, 5.0, "V");

/// `nand.read_ma`, `program_ma`, `erase_ma`, `io_ma`: datasheets give 10 to 60 mA per die
/// and operation (multi-plane operations up to a few times that); 0.1 to 1000 mA is a
/// wide margin.
pub const NAND_MA: Bound = Bound::real(0.1, 1000.0, "mA");

/// `controller_active_w`: the power a controller's processors add while they work, 0.1 to
/// a few W on client drives; 0 (not modelled) to 20 W.
pub const CONTROLLER_ACTIVE_W: Bound = Bound::real(0.0, 20.0, "W");

/// `controller_pj_per_byte`, `dram_pj_per_byte`, `link_pj_per_byte`: moving a byte costs
/// a few pJ (a PCIe lane, LPDDR4) to a few hundred (DDR3 written and read, ECC, DMA); 0
/// (not modelled) to 100 nJ is a wide margin.
pub const PJ_PER_BYTE: Bound = Bound::real(0.0, 100_000.0, "pJ/B");

/// Power states of a drive: NVMe allows 1 to 32 (`ps0` to `ps31`).
pub const POWER_STATES: Bound = Bound::integer(1, 32, "states");

// ------------------------------------------------------------------ [drive.wear]

/// `rated_pe_cycles`, `slc_retire_pe_cycles`: about 1000 (QLC), 3000 (TLC) and
/// 100 000 (SLC) cycles on real NAND.
pub const PE_CYCLES: Bound = Bound::integer(10, 1_000_000, "P/E cycles");

/// `static_spread_pe`: a spread of wear of 1 cycle (levelling at every erase) to the
/// endurance of the most durable NAND.
pub const SPREAD_PE: Bound = Bound::integer(1, 1_000_000, "P/E cycles");

/// `endurance_median`: blocks outlive their rating (drives outlived their TBW by 3-60x in
/// public torture tests, a rating assuming a write amplification of about 5); a median of
/// half the rating to 20 times it is a wide margin.
pub const ENDURANCE_MEDIAN: Bound = Bound::real(0.5, 20.0, "x rated");

/// `endurance_sigma`: the log-normal spread of block endurance; 0 (every block alike) to
/// 1 (a factor of e either way for one block in three).
pub const ENDURANCE_SIGMA: Bound = Bound::real(0.0, 1.0, "");

/// `rated_tbw`: client drives of 1 TB are rated 200 to 600 TBW, enterprise drives of
/// 30 TB tens of PB; 1 TB to 1 EB is a wide margin.
pub const RATED_TBW: Bound = Bound::real(1.0, 1e6, "TB");

// ------------------------------------------------------------------ [drive.errors], [drive.ecc]

/// Raw bit error rates and the limits of decoders: 1e-9 (SLC-grade) to 0.1 (beyond any
/// decoder: half the bits of a page are then noise).
pub const RBER: Bound = Bound::real(0.0, 0.1, "");

/// Exponents of the RBER's power laws: published fits stay within 0 to 3 (errors grow
/// much slower than exponentially with wear).
pub const RBER_EXPONENT: Bound = Bound::real(0.0, 3.0, "");

/// `activation_ev`: JEDEC uses 1.1 eV; measured acceleration on real flash is often far
/// weaker; 0 (no acceleration) to 2 eV.
pub const ACTIVATION_EV: Bound = Bound::real(0.0, 2.0, "eV");

/// `reference_c` and the temperature of a powered-off drive: -40 to 125 °C (storage and
/// bake temperatures).
pub const RETENTION_C: Bound = Bound::real(-40.0, 125.0, "°C");

/// `codeword_sigma`: 0 (every codeword of a page alike) to 2.
pub const CODEWORD_SIGMA: Bound = Bound::real(0.0, 2.0, "");

/// Decoder times: LDPC iterations take about a microsecond; 0 to 10 ms.
pub const DECODE_US: Bound = Bound::real(0.0, 10_000.0, "µs");

/// Decoder iterations: 1 to 1000.
pub const ITERATIONS: Bound = Bound::integer(1, 1000, "");

/// Read-retry steps and soft senses: 1 to 100 (vendor tables hold tens of entries).
pub const RETRY_STEPS: Bound = Bound::integer(1, 100, "");

/// `retention_shift`: 1 (retry wins nothing back) to 100.
pub const RETENTION_SHIFT: Bound = Bound::real(1.0, 100.0, "x");

/// `refresh.after_days`: from a quarter of an hour to a century.
pub const REFRESH_DAYS: Bound = Bound::real(0.01, 36_500.0, "days");

/// `refresh.after_reads`: reads of a block since its program; drives move a block after
/// about 1e5; 1e3 to 1e9.
pub const RECLAIM_READS: Bound = Bound::real(1e3, 1e9, "reads");

// ------------------------------------------------------------------ steps

/// Longest step in seconds of drive time (11.6 days): its I/O and the idle between
/// its bursts. The longest real test steps run for hours; the per-second series of
/// a step has one point per second, so this also bounds its memory (16 MB).
pub const MAX_STEP_S: f64 = 1e6;

/// `bs`: fio's smallest block is a 512 B sector; real workloads use at most a few
/// MiB per command; 1 GiB is a wide margin.
pub const STEP_BS: Bound = Bound::integer(512, 1 << 30, "bytes");

/// `iodepth`: NVMe queues hold at most 65536 commands; fio and ssdlab stop at 4096.
pub const STEP_IODEPTH: Bound = Bound::integer(1, 4096, "");

/// `rwmixread`: a percentage.
pub const STEP_RWMIXREAD: Bound = Bound::integer(0, 100, "%");

/// `runtime`: at least 1 µs of drive time (one command), at most [`MAX_STEP_S`].
pub const STEP_RUNTIME_S: Bound = Bound::real(1e-6, MAX_STEP_S, "s");

/// `idle_after`: no idle up to [`MAX_STEP_S`].
pub const STEP_IDLE_S: Bound = Bound::real(0.0, MAX_STEP_S, "s");

/// `duty_cycle`: the share of time a bursty load is busy; 0.1 % (an idle of 999
/// times each burst) to 100 %.
pub const STEP_DUTY_CYCLE: Bound = Bound::real(0.001, 1.0, "");

/// `rate_iops`: the fastest drives serve about 3 million IOPS; 100 million is a wide
/// margin and keeps the interval between commands at 10 ns or more.
pub const STEP_RATE_IOPS: Bound = Bound::integer(1, 100_000_000, "IOPS");

/// `io_size`: at most 2^62 bytes, a placeholder for "no byte limit" in a step that a
/// runtime ends (fio's `time_based`); sums of sizes stay far from `u64::MAX`.
pub const STEP_IO_SIZE: Bound = Bound::integer(1, 1 << 62, "bytes");

/// `rate_bytes`: 1 B/s to 1 TiB/s, beyond any drive.
pub const STEP_RATE_BYTES: Bound = Bound::integer(1, 1 << 40, "bytes/s");

/// `thinktime_blocks`: fio's own limit (an int).
pub const STEP_THINKTIME_BLOCKS: Bound = Bound::integer(1, (1 << 31) - 1, "");

/// Jobs in one step (itself and those at once with it): each keeps its own queue and
/// figures (about 50 KB); fio's own limit is 4096 jobs, real job files use tens.
pub const MAX_JOBS: usize = 1024;

/// A step without a runtime ends at its byte limit, which may be at most this many
/// times the drive's capacity (real tests write at most a few drive capacities in
/// one step), so that such a step always ends in reasonable time.
pub const MAX_DRIVE_WRITES_UNTIMED: u64 = 100;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_key_value_and_range() {
        assert_eq!(
            T_PROG_US.check("drive.nand.tlc.t_prog_us", 1e10),
            Err("drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)".into())
        );
        assert_eq!(
            CHANNELS.check("drive.geometry.channels", 4_294_967_295.0),
            Err("drive.geometry.channels = 4294967295 is outside 1..64".into())
        );
        assert_eq!(
            CACHE_SHARE.check("x", f64::NAN),
            Err("x = NaN is outside 0.01..1".into())
        );
        assert_eq!(
            STEP_BS.check("bs", u64::MAX as f64),
            Err("bs = 18446744073709551615 is outside 512..1073741824 (bytes)".into())
        );
        assert!(T_PROG_US.check("k", 1.0).is_ok());
        assert!(T_PROG_US.check("k", 100_000.0).is_ok());
    }
}
