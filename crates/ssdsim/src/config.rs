//! Drive presets: the typed, closed configuration of a simulated drive.
//!
//! Contract: [`DriveConfig::from_toml_str`] either returns a configuration in
//! which every value is usable by the simulator (every number within its bound
//! in [`crate::bounds`], a geometry that fits 32-bit page addresses, a cache
//! policy with the fields it needs) or an error naming the offending key, e.g.
//! `drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)`,
//! `unknown key `foo` in [drive.nand]`, `missing key `drive.geometry.channels``.
//! Unknown keys are errors everywhere (`deny_unknown_fields`). The sections
//! `thermal`, `power` and `wear` are parsed and validated but not modelled yet.

use crate::bounds::{self as b, Bound};
use crate::geometry::{Geometry, UNIT};
use serde::Deserialize;
use std::fmt;

/// A configuration error; the message names the key (dotted TOML path).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

/// The whole preset file: one `[drive]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PresetFile {
    pub drive: DriveConfig,
}

/// Cell mode of a block.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CellMode {
    Slc,
    Tlc,
    Qlc,
}

impl CellMode {
    /// The mode's name, as in the preset's table names (`drive.nand.tlc`).
    pub fn name(self) -> &'static str {
        match self {
            CellMode::Slc => "slc",
            CellMode::Tlc => "tlc",
            CellMode::Qlc => "qlc",
        }
    }

    /// Bits stored per cell in this mode.
    pub fn bits(self) -> u32 {
        match self {
            CellMode::Slc => 1,
            CellMode::Tlc => 3,
            CellMode::Qlc => 4,
        }
    }
}

/// One simulated drive.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    /// Human-readable model name.
    pub name: String,
    /// User-visible capacity in decimal GB (10^9 bytes). Over-provisioning is
    /// the raw NAND capacity (from the geometry) minus this.
    /// Bound: [`bounds::USER_CAPACITY_GB`](crate::bounds::USER_CAPACITY_GB).
    pub user_capacity_gb: f64,
    /// Native cell mode of the NAND (`tlc` or `qlc`); SLC is the cache mode.
    pub native_mode: CellMode,
    pub geometry: GeometryConfig,
    pub nand: NandConfig,
    pub controller: ControllerConfig,
    pub host: HostConfig,
    pub ftl: FtlConfig,
    pub cache: CacheConfig,
    /// Where the mapping table lives; absent: all of it in the drive's DRAM.
    pub mapping: Option<MappingConfig>,
    /// The firmware's own work on the mapping table; absent: none is modelled.
    pub firmware: Option<FirmwareConfig>,
    pub thermal: Option<ThermalConfig>,
    pub power: Option<PowerConfig>,
    pub wear: Option<WearConfig>,
}

/// Physical organisation of the NAND array.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    /// Independent NAND channels (buses) of the controller.
    /// Bound: [`bounds::CHANNELS`](crate::bounds::CHANNELS).
    pub channels: u32,
    /// Dies (LUNs) on each channel.
    /// Bound: [`bounds::DIES_PER_CHANNEL`](crate::bounds::DIES_PER_CHANNEL).
    pub dies_per_channel: u32,
    /// Planes per die, programmed and read together (multi-plane operations).
    /// Bound: [`bounds::PLANES_PER_DIE`](crate::bounds::PLANES_PER_DIE).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    /// Bound: [`bounds::BLOCKS_PER_PLANE`](crate::bounds::BLOCKS_PER_PLANE).
    pub blocks_per_plane: u32,
    /// Pages per block in native mode (an SLC block has pages_per_block / bits_per_cell(native)).
    /// Bound: [`bounds::PAGES_PER_BLOCK`](crate::bounds::PAGES_PER_BLOCK).
    pub pages_per_block: u32,
    /// Page size in bytes (data area, per plane); a multiple of 4096.
    /// Bound: [`bounds::PAGE_BYTES`](crate::bounds::PAGE_BYTES).
    pub page_bytes: u32,
}

/// NAND timings per cell mode and the channel transfer rate.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Transfer rate of one channel, MB/s (10^6 bytes/s).
    /// Bound: [`bounds::CHANNEL_MBPS`](crate::bounds::CHANNEL_MBPS).
    pub channel_mbps: f64,
    pub slc: CellTiming,
    pub tlc: Option<CellTiming>,
    pub qlc: Option<CellTiming>,
    /// Program/erase suspend: a host read that finds its die programming or erasing
    /// suspends that work and starts after this many µs (absent: the read waits for it).
    /// Bound: [`bounds::SUSPEND_US`](crate::bounds::SUSPEND_US).
    pub suspend_us: Option<f64>,
}

impl NandConfig {
    /// Timings of a cell mode, when the preset has them.
    pub fn timing_of(&self, mode: CellMode) -> Option<&CellTiming> {
        match mode {
            CellMode::Slc => Some(&self.slc),
            CellMode::Tlc => self.tlc.as_ref(),
            CellMode::Qlc => self.qlc.as_ref(),
        }
    }

    /// Every cell mode with its timings, when present.
    fn modes(&self) -> [(CellMode, Option<&CellTiming>); 3] {
        [CellMode::Slc, CellMode::Tlc, CellMode::Qlc].map(|m| (m, self.timing_of(m)))
    }
}

/// Timings of one cell mode.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellTiming {
    /// Page read time (array to register), µs.
    /// Bound: [`bounds::T_READ_US`](crate::bounds::T_READ_US).
    pub t_read_us: f64,
    /// Effective program time of one (multi-plane) page in this mode, µs.
    /// Bound: [`bounds::T_PROG_US`](crate::bounds::T_PROG_US).
    pub t_prog_us: f64,
    /// Block erase time, µs.
    /// Bound: [`bounds::T_ERASE_US`](crate::bounds::T_ERASE_US).
    pub t_erase_us: f64,
    /// Bits per cell: 1 for SLC, 3 for TLC, 4 for QLC. Not a range: exactly the
    /// mode's value, checked with the cell modes.
    pub bits_per_cell: u32,
    /// Reference-voltage senses needed to read each page type of a wordline (lower,
    /// middle, upper, top), one entry per bit: page read times are in proportion, their
    /// mean being `t_read_us` (absent: every page reads in `t_read_us`). A TLC Gray code
    /// splits its 7 levels 1-2-4, 2-3-2 or 1-3-3; QLC's 15 e.g. 1-2-4-8 or 4-4-3-4.
    /// Bound of each entry: [`bounds::READ_LEVELS`](crate::bounds::READ_LEVELS).
    pub read_levels: Option<Vec<u32>>,
}

/// Controller (front-end and FTL processor) costs.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Controller time to process one read command, µs (serial resource).
    /// Bound: [`bounds::COMMAND_US`](crate::bounds::COMMAND_US).
    pub read_cmd_us: f64,
    /// Controller time to process one write command, µs.
    /// Bound: [`bounds::COMMAND_US`](crate::bounds::COMMAND_US).
    pub write_cmd_us: f64,
    /// Fixed latency of a read command that does not occupy the controller (firmware pipeline,
    /// mapping lookup, completion posting), µs; added before the NAND read.
    /// Bound: [`bounds::FIXED_LATENCY_US`](crate::bounds::FIXED_LATENCY_US).
    pub read_latency_us: f64,
    /// Fixed latency of a write command that does not occupy the controller, µs; added to its completion.
    /// Bound: [`bounds::FIXED_LATENCY_US`](crate::bounds::FIXED_LATENCY_US).
    pub write_latency_us: f64,
    /// Controller time to process one TRIM (deallocate) command, µs.
    /// Bound: [`bounds::COMMAND_US`](crate::bounds::COMMAND_US).
    pub trim_cmd_us: f64,
    /// Additional controller time per 4 KiB unit unmapped by a TRIM, ns.
    /// Bound: [`bounds::TRIM_UNIT_NS`](crate::bounds::TRIM_UNIT_NS).
    pub trim_unit_ns: f64,
    /// Write buffer (DRAM/SRAM) per write stream, KiB: how far host writes may run ahead of NAND programs.
    /// Bound: [`bounds::WRITE_BUFFER_KIB`](crate::bounds::WRITE_BUFFER_KIB).
    pub write_buffer_kib: u32,
    /// Sequential read-ahead, KiB: a read that continues the previous one has the
    /// controller read this much further ahead (absent: none).
    /// Bound: [`bounds::READ_AHEAD_KIB`](crate::bounds::READ_AHEAD_KIB).
    pub read_ahead_kib: Option<u32>,
}

/// Host interface.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Link: `pcie3x4` (about 3500 MB/s of payload) or `pcie4x4` (about 7000 MB/s).
    pub link: LinkKind,
    /// Override of the payload ceiling, MB/s (per direction).
    /// Bound: [`bounds::PAYLOAD_MBPS`](crate::bounds::PAYLOAD_MBPS).
    pub payload_mbps: Option<f64>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Pcie3x4,
    Pcie4x4,
}

impl HostConfig {
    /// Payload ceiling per direction, MB/s.
    pub fn link_mbps(&self) -> f64 {
        self.payload_mbps.unwrap_or(match self.link {
            LinkKind::Pcie3x4 => 3500.0,
            LinkKind::Pcie4x4 => 7000.0,
        })
    }
}

/// Flash translation layer.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Forced garbage collection starts when free superblocks fall to this many.
    /// Bound: [`bounds::GC_SUPERBLOCKS`](crate::bounds::GC_SUPERBLOCKS).
    pub gc_low_superblocks: u32,
    /// Idle-time (background) garbage collection runs while free superblocks are below this many.
    /// Bound: [`bounds::GC_SUPERBLOCKS`](crate::bounds::GC_SUPERBLOCKS).
    pub gc_idle_superblocks: u32,
    /// Victim policy: `greedy` (fewest valid units first) or `cost-benefit` (age-aware).
    pub victim_policy: VictimKind,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum VictimKind {
    Greedy,
    CostBenefit,
}

/// SLC cache: one policy and the fields it needs (`policy = "..."` names it).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "policy", rename_all = "lowercase")]
pub enum CacheConfig {
    /// No SLC cache: every host write goes to native blocks.
    None,
    /// A fixed amount of host data held in SLC mode.
    Static(StaticCacheConfig),
    /// A share of the free space written in SLC mode.
    Dynamic(DynamicCacheConfig),
}

/// A static SLC cache.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StaticCacheConfig {
    /// Cache size in decimal GB of host data held in SLC mode.
    /// Bound: [`bounds::STATIC_GB`](crate::bounds::STATIC_GB).
    pub static_gb: f64,
    /// Fold the cache into native blocks while the host is idle.
    pub idle_fold: bool,
    /// While the host writes to native blocks, fold up to this many SLC units per host unit
    /// (as the cache fills; 0 = never while busy).
    /// Bound: [`bounds::BUSY_FOLD_RATIO`](crate::bounds::BUSY_FOLD_RATIO).
    pub busy_fold_ratio: f64,
}

/// A dynamic SLC cache.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DynamicCacheConfig {
    /// Share of the free superblocks (those not holding native data) that may be in SLC mode (0..1].
    /// Bound: [`bounds::CACHE_SHARE`](crate::bounds::CACHE_SHARE).
    pub free_share: f64,
    /// Cap on the share of all superblocks in SLC mode (0..1].
    /// Bound: [`bounds::CACHE_SHARE`](crate::bounds::CACHE_SHARE).
    pub max_cell_share: f64,
    /// Fold the cache into native blocks while the host is idle.
    pub idle_fold: bool,
    /// While the host writes to native blocks, fold up to this many SLC units per host unit
    /// (as the cache fills; 0 = never while busy).
    /// Bound: [`bounds::BUSY_FOLD_RATIO`](crate::bounds::BUSY_FOLD_RATIO).
    pub busy_fold_ratio: f64,
}

/// Where the logical-to-physical table (4 bytes per 4 KiB unit) is held.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MappingConfig {
    /// Memory for the table, MiB: the drive's DRAM, or the host memory buffer of a
    /// DRAM-less drive. A larger table is cached in map pages of one NAND page each;
    /// a lookup that misses reads its map page from NAND first.
    /// Bound: [`bounds::MAPPING_CACHE_MIB`](crate::bounds::MAPPING_CACHE_MIB).
    pub cache_mib: f64,
    /// Controller time per map page a command looks up or updates when it is in memory, ns.
    /// Bound: [`bounds::MAPPING_HIT_NS`](crate::bounds::MAPPING_HIT_NS).
    pub hit_ns: f64,
}

/// Firmware work that keeps the mapping table durable, and its cost to the host.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FirmwareConfig {
    /// Journal bytes per mapping change; a full page of journal is programmed in SLC mode.
    /// Bound: [`bounds::JOURNAL_ENTRY_BYTES`](crate::bounds::JOURNAL_ENTRY_BYTES).
    pub journal_entry_bytes: u32,
    /// Journal written between two checkpoints, MiB; a checkpoint writes every map
    /// page changed since the last one.
    /// Bound: [`bounds::CHECKPOINT_MIB`](crate::bounds::CHECKPOINT_MIB).
    pub checkpoint_mib: f64,
    /// Controller time of a checkpoint, during which host commands wait, µs.
    /// Bound: [`bounds::CHECKPOINT_US`](crate::bounds::CHECKPOINT_US).
    pub checkpoint_us: f64,
    /// Controller time per unit relocated by garbage collection or folding, ns: the host's
    /// commands wait for the reclaim work done in their path.
    /// Bound: [`bounds::RELOCATE_UNIT_NS`](crate::bounds::RELOCATE_UNIT_NS).
    pub relocate_unit_ns: f64,
}

/// Thermal model parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThermalConfig {
    /// Thermal management threshold 1, °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub tmt1_c: f64,
    /// Thermal management threshold 2, °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub tmt2_c: f64,
    /// Ambient temperature, °C.
    /// Bound: [`bounds::AMBIENT_C`](crate::bounds::AMBIENT_C).
    pub ambient_c: Option<f64>,
}

/// Power model parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// Lowest idle power actually reached, W.
    /// Bound: [`bounds::IDLE_W`](crate::bounds::IDLE_W).
    pub idle_w: f64,
    /// Exit latency of that idle state, µs.
    /// Bound: [`bounds::IDLE_EXIT_US`](crate::bounds::IDLE_EXIT_US).
    pub idle_exit_us: f64,
    /// Peak power, W.
    /// Bound: [`bounds::PEAK_W`](crate::bounds::PEAK_W).
    pub peak_w: Option<f64>,
}

/// Wear parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WearConfig {
    /// Rated program/erase cycles of native blocks.
    /// Bound: [`bounds::PE_CYCLES`](crate::bounds::PE_CYCLES).
    pub rated_pe_cycles: u32,
    /// P/E cycles beyond which the SLC cache is retired.
    /// Bound: [`bounds::PE_CYCLES`](crate::bounds::PE_CYCLES).
    pub slc_retire_pe_cycles: Option<u32>,
}

/// Turn a serde error (with its path) into a message naming the key.
fn describe(path: &str, msg: &str) -> String {
    let table = if path.is_empty() || path == "." {
        "top level".to_string()
    } else {
        format!("[{path}]")
    };
    let tick = |s: &str| s.split('`').nth(1).map(str::to_string);
    if msg.starts_with("unknown field") {
        if let Some(k) = tick(msg) {
            // serde_path_to_error may already include the unknown key in the path.
            let table = match path.rsplit_once('.') {
                Some((parent, last)) if last == k => format!("[{parent}]"),
                _ if path == k => "top level".to_string(),
                _ => table,
            };
            return format!("unknown key `{k}` in {table}");
        }
    }
    if msg.starts_with("missing field") {
        if let Some(k) = tick(msg) {
            let full = if path.is_empty() || path == "." {
                k
            } else {
                format!("{path}.{k}")
            };
            return format!("missing key `{full}`");
        }
    }
    if path.is_empty() || path == "." {
        msg.to_string()
    } else {
        format!("{path}: {msg}")
    }
}

impl DriveConfig {
    /// Parse a preset file (`[drive]` table) and validate it.
    pub fn from_toml_str(text: &str) -> Result<DriveConfig, ConfigError> {
        let de = toml::Deserializer::new(text);
        let file: PresetFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            ConfigError(describe(&path, e.inner().message()))
        })?;
        file.drive.validate()?;
        Ok(file.drive)
    }

    /// Read and parse a preset file.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<DriveConfig, ConfigError> {
        let p = path.as_ref();
        let text = std::fs::read_to_string(p)
            .map_err(|e| ConfigError(format!("cannot read preset {}: {e}", p.display())))?;
        Self::from_toml_str(&text).map_err(|e| ConfigError(format!("{}: {}", p.display(), e.0)))
    }

    /// Timings of a cell mode (present after validation for SLC and the native mode).
    pub fn timing(&self, mode: CellMode) -> &CellTiming {
        self.nand.timing_of(mode).expect("validated")
    }

    /// Raw NAND capacity in bytes (native mode).
    pub fn raw_bytes(&self) -> u64 {
        let g = &self.geometry;
        g.channels as u64
            * g.dies_per_channel as u64
            * g.planes_per_die as u64
            * g.blocks_per_plane as u64
            * g.pages_per_block as u64
            * g.page_bytes as u64
    }

    /// User-visible capacity, bytes, rounded down to 4 KiB.
    pub fn user_bytes(&self) -> u64 {
        ((self.user_capacity_gb * 1e9) as u64) / 4096 * 4096
    }

    /// Over-provisioning: spare raw capacity over user capacity.
    pub fn over_provisioning(&self) -> f64 {
        self.raw_bytes() as f64 / self.user_bytes() as f64 - 1.0
    }

    /// Every numeric field present in the preset with its dotted key and its bound:
    /// the one table of bounds that [`validate`](Self::validate) checks.
    pub fn bounded_fields(&self) -> Vec<BoundedField> {
        let mut f = Fields::default();
        f.table("drive");
        f.add(
            "user_capacity_gb",
            self.user_capacity_gb,
            &b::USER_CAPACITY_GB,
        );
        let g = &self.geometry;
        f.table("drive.geometry");
        f.add("channels", g.channels, &b::CHANNELS);
        f.add("dies_per_channel", g.dies_per_channel, &b::DIES_PER_CHANNEL);
        f.add("planes_per_die", g.planes_per_die, &b::PLANES_PER_DIE);
        f.add("blocks_per_plane", g.blocks_per_plane, &b::BLOCKS_PER_PLANE);
        f.add("pages_per_block", g.pages_per_block, &b::PAGES_PER_BLOCK);
        f.add("page_bytes", g.page_bytes, &b::PAGE_BYTES);
        f.table("drive.nand");
        f.add("channel_mbps", self.nand.channel_mbps, &b::CHANNEL_MBPS);
        f.add_some("suspend_us", self.nand.suspend_us, &b::SUSPEND_US);
        for (mode, timing) in self.nand.modes() {
            let Some(t) = timing else { continue };
            f.table(&format!("drive.nand.{}", mode.name()));
            f.add("t_read_us", t.t_read_us, &b::T_READ_US);
            f.add("t_prog_us", t.t_prog_us, &b::T_PROG_US);
            f.add("t_erase_us", t.t_erase_us, &b::T_ERASE_US);
        }
        let c = &self.controller;
        f.table("drive.controller");
        f.add("read_cmd_us", c.read_cmd_us, &b::COMMAND_US);
        f.add("write_cmd_us", c.write_cmd_us, &b::COMMAND_US);
        f.add("read_latency_us", c.read_latency_us, &b::FIXED_LATENCY_US);
        f.add("write_latency_us", c.write_latency_us, &b::FIXED_LATENCY_US);
        f.add("trim_cmd_us", c.trim_cmd_us, &b::COMMAND_US);
        f.add("trim_unit_ns", c.trim_unit_ns, &b::TRIM_UNIT_NS);
        f.add("write_buffer_kib", c.write_buffer_kib, &b::WRITE_BUFFER_KIB);
        f.add_some("read_ahead_kib", c.read_ahead_kib, &b::READ_AHEAD_KIB);
        f.table("drive.host");
        f.add_some("payload_mbps", self.host.payload_mbps, &b::PAYLOAD_MBPS);
        let ftl = &self.ftl;
        f.table("drive.ftl");
        f.add(
            "gc_low_superblocks",
            ftl.gc_low_superblocks,
            &b::GC_SUPERBLOCKS,
        );
        f.add(
            "gc_idle_superblocks",
            ftl.gc_idle_superblocks,
            &b::GC_SUPERBLOCKS,
        );
        f.table("drive.cache");
        match &self.cache {
            CacheConfig::None => {}
            CacheConfig::Static(c) => {
                f.add("static_gb", c.static_gb, &b::STATIC_GB);
                f.add("busy_fold_ratio", c.busy_fold_ratio, &b::BUSY_FOLD_RATIO);
            }
            CacheConfig::Dynamic(c) => {
                f.add("free_share", c.free_share, &b::CACHE_SHARE);
                f.add("max_cell_share", c.max_cell_share, &b::CACHE_SHARE);
                f.add("busy_fold_ratio", c.busy_fold_ratio, &b::BUSY_FOLD_RATIO);
            }
        }
        if let Some(m) = &self.mapping {
            f.table("drive.mapping");
            f.add("cache_mib", m.cache_mib, &b::MAPPING_CACHE_MIB);
            f.add("hit_ns", m.hit_ns, &b::MAPPING_HIT_NS);
        }
        if let Some(w) = &self.firmware {
            f.table("drive.firmware");
            f.add(
                "journal_entry_bytes",
                w.journal_entry_bytes,
                &b::JOURNAL_ENTRY_BYTES,
            );
            f.add("checkpoint_mib", w.checkpoint_mib, &b::CHECKPOINT_MIB);
            f.add("checkpoint_us", w.checkpoint_us, &b::CHECKPOINT_US);
            f.add("relocate_unit_ns", w.relocate_unit_ns, &b::RELOCATE_UNIT_NS);
        }
        if let Some(t) = &self.thermal {
            f.table("drive.thermal");
            f.add("tmt1_c", t.tmt1_c, &b::TMT_C);
            f.add("tmt2_c", t.tmt2_c, &b::TMT_C);
            f.add_some("ambient_c", t.ambient_c, &b::AMBIENT_C);
        }
        if let Some(p) = &self.power {
            f.table("drive.power");
            f.add("idle_w", p.idle_w, &b::IDLE_W);
            f.add("idle_exit_us", p.idle_exit_us, &b::IDLE_EXIT_US);
            f.add_some("peak_w", p.peak_w, &b::PEAK_W);
        }
        if let Some(w) = &self.wear {
            f.table("drive.wear");
            f.add("rated_pe_cycles", w.rated_pe_cycles, &b::PE_CYCLES);
            f.add_some(
                "slc_retire_pe_cycles",
                w.slc_retire_pe_cycles,
                &b::PE_CYCLES,
            );
        }
        f.fields
    }

    /// Check every value; errors name the key. First every field against its bound
    /// (so that nothing below computes with an absurd value), then the relations
    /// between fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for field in self.bounded_fields() {
            field
                .bound
                .check(&field.key, field.value)
                .map_err(ConfigError)?;
        }
        self.check_cell_modes()?;
        let geo = Geometry::new(self)?;
        self.check_reclaim_space(&geo)?;
        self.check_cache()?;
        self.check_thermal_and_power()
    }

    /// Each cell mode has its own bits per cell, and the native mode (TLC or QLC) has timings.
    fn check_cell_modes(&self) -> Result<(), ConfigError> {
        for (mode, timing) in self.nand.modes() {
            if let Some(t) = timing {
                if t.bits_per_cell != mode.bits() {
                    return Err(ConfigError(format!(
                        "drive.nand.{}.bits_per_cell must be {}",
                        mode.name(),
                        mode.bits()
                    )));
                }
                if let Some(levels) = &t.read_levels {
                    let key = format!("drive.nand.{}.read_levels", mode.name());
                    if levels.len() != mode.bits() as usize {
                        return Err(ConfigError(format!(
                            "{key} must have {} entries, one per page type of a wordline",
                            mode.bits()
                        )));
                    }
                    for (i, &l) in levels.iter().enumerate() {
                        b::READ_LEVELS
                            .check(&format!("{key}[{i}]"), l.into())
                            .map_err(ConfigError)?;
                    }
                }
            }
        }
        if self.native_mode == CellMode::Slc {
            return Err(ConfigError(
                "drive.native_mode must be `tlc` or `qlc`".into(),
            ));
        }
        if self.nand.timing_of(self.native_mode).is_none() {
            return Err(ConfigError(format!(
                "missing key `drive.nand.{}` (the native mode)",
                self.native_mode.name()
            )));
        }
        Ok(())
    }

    /// The garbage-collection thresholds fit the superblocks, and the spare capacity
    /// holds the GC reserve plus the open write points.
    fn check_reclaim_space(&self, geo: &Geometry) -> Result<(), ConfigError> {
        let f = &self.ftl;
        if f.gc_idle_superblocks < f.gc_low_superblocks {
            return Err(ConfigError(
                "drive.ftl.gc_idle_superblocks must be >= drive.ftl.gc_low_superblocks".into(),
            ));
        }
        if f.gc_idle_superblocks >= geo.superblocks {
            return Err(ConfigError(format!(
                "drive.ftl.gc_idle_superblocks = {} must be less than the drive's {} superblocks (drive.geometry.blocks_per_plane)",
                f.gc_idle_superblocks, geo.superblocks
            )));
        }
        let raw = geo.total_units() * UNIT;
        let user = self.user_bytes();
        let reserve_sbs = f.gc_low_superblocks as u64 + 3;
        let reserve = reserve_sbs * geo.units_per_sb as u64 * UNIT;
        if raw.saturating_sub(user) < reserve {
            return Err(ConfigError(format!(
                "drive.user_capacity_gb leaves too little over-provisioning: raw {:.3} GB, user {:.3} GB, need spare of at least {reserve_sbs} superblocks ({:.3} GB)",
                raw as f64 / 1e9,
                user as f64 / 1e9,
                reserve as f64 / 1e9
            )));
        }
        Ok(())
    }

    /// A static cache fits the NAND.
    fn check_cache(&self) -> Result<(), ConfigError> {
        if let CacheConfig::Static(c) = &self.cache {
            // With every cell in SLC mode the NAND holds raw / bits of host data.
            let bits = self.timing(self.native_mode).bits_per_cell;
            if c.static_gb * 1e9 > self.raw_bytes() as f64 / bits as f64 {
                return Err(ConfigError(
                    "drive.cache.static_gb is larger than the NAND can hold in SLC mode".into(),
                ));
            }
        }
        Ok(())
    }

    /// Thresholds and powers in their natural order.
    fn check_thermal_and_power(&self) -> Result<(), ConfigError> {
        if let Some(t) = &self.thermal {
            if t.tmt2_c < t.tmt1_c {
                return Err(ConfigError(
                    "drive.thermal.tmt2_c must be >= drive.thermal.tmt1_c".into(),
                ));
            }
        }
        if let Some(p) = &self.power {
            if p.peak_w.is_some_and(|peak| peak < p.idle_w) {
                return Err(ConfigError(
                    "drive.power.peak_w must be >= drive.power.idle_w".into(),
                ));
            }
        }
        Ok(())
    }
}

/// One bounded numeric field of a preset.
#[derive(Debug, Clone)]
pub struct BoundedField {
    /// Dotted TOML path, e.g. `drive.nand.tlc.t_prog_us`.
    pub key: String,
    pub value: f64,
    pub bound: &'static Bound,
}

/// Builder of the table of bounded fields, one TOML table after another.
#[derive(Default)]
struct Fields {
    table: String,
    fields: Vec<BoundedField>,
}

impl Fields {
    /// Fields added from now on are in the table with this dotted name.
    fn table(&mut self, name: &str) {
        self.table = name.to_string();
    }

    fn add(&mut self, field: &str, value: impl Into<f64>, bound: &'static Bound) {
        self.fields.push(BoundedField {
            key: format!("{}.{field}", self.table),
            value: value.into(),
            bound,
        });
    }

    /// An optional field is checked when present.
    fn add_some(&mut self, field: &str, value: Option<impl Into<f64>>, bound: &'static Bound) {
        if let Some(v) = value {
            self.add(field, v, bound);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small, valid preset used by unit tests across the crate.
    pub const SMALL: &str = r#"
[drive]
name = "small test drive"
user_capacity_gb = 0.0
native_mode = "tlc"

[drive.geometry]
channels = 2
dies_per_channel = 2
planes_per_die = 1
blocks_per_plane = 32
pages_per_block = 6
page_bytes = 8192

[drive.nand]
channel_mbps = 800.0
[drive.nand.slc]
t_read_us = 25.0
t_prog_us = 200.0
t_erase_us = 2000.0
bits_per_cell = 1
[drive.nand.tlc]
t_read_us = 60.0
t_prog_us = 700.0
t_erase_us = 3500.0
bits_per_cell = 3

[drive.controller]
read_cmd_us = 2.0
write_cmd_us = 2.0
read_latency_us = 0.0
write_latency_us = 0.0
trim_cmd_us = 2.0
trim_unit_ns = 1.0
write_buffer_kib = 64

[drive.host]
link = "pcie4x4"

[drive.ftl]
gc_low_superblocks = 3
gc_idle_superblocks = 5
victim_policy = "greedy"

[drive.cache]
policy = "dynamic"
free_share = 1.0
max_cell_share = 0.5
idle_fold = true
busy_fold_ratio = 0.0
"#;

    /// SMALL with a user capacity of `frac` of raw.
    pub fn small(frac: f64) -> DriveConfig {
        let mut text = SMALL.to_string();
        // raw = 2*2*1*32*6*8192 = 6_291_456 bytes
        let user = (6_291_456.0 * frac) / 1e9;
        text = text.replace(
            "user_capacity_gb = 0.0",
            &format!("user_capacity_gb = {user}"),
        );
        DriveConfig::from_toml_str(&text).unwrap()
    }

    fn err(text: &str) -> String {
        DriveConfig::from_toml_str(text).unwrap_err().0
    }

    #[test]
    fn small_preset_parses() {
        let c = small(0.7);
        assert_eq!(c.raw_bytes(), 6_291_456);
        assert!(c.over_provisioning() > 0.4);
    }

    #[test]
    fn unknown_key_is_named_with_its_table() {
        let t = SMALL
            .replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001")
            .replace("channel_mbps = 800.0", "channel_mbps = 800.0\nfoo = 1");
        assert_eq!(err(&t), "unknown key `foo` in [drive.nand]");
        let t = SMALL.replace("t_prog_us = 700.0", "t_prog_us = 700.0\nt_prgo = 1");
        assert_eq!(err(&t), "unknown key `t_prgo` in [drive.nand.tlc]");
    }

    #[test]
    fn missing_key_is_named() {
        let t = SMALL
            .replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001")
            .replace("t_prog_us = 700.0\n", "");
        assert_eq!(err(&t), "missing key `drive.nand.tlc.t_prog_us`");
    }

    #[test]
    fn impossible_values_are_refused() {
        let base = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001");
        assert_eq!(
            err(&base.replace("t_prog_us = 700.0", "t_prog_us = 0.0")),
            "drive.nand.tlc.t_prog_us = 0 is outside 1..100000 (µs)"
        );
        assert_eq!(
            err(&base.replace("channels = 2", "channels = 0")),
            "drive.geometry.channels = 0 is outside 1..64"
        );
        assert_eq!(
            err(&base.replace("page_bytes = 8192", "page_bytes = 5000")),
            "drive.geometry.page_bytes must be a multiple of 4096"
        );
        assert_eq!(
            err(&base.replace("max_cell_share = 0.5", "max_cell_share = 1.5")),
            "drive.cache.max_cell_share = 1.5 is outside 0.01..1"
        );
        assert!(
            err(&SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.006"))
                .starts_with("drive.user_capacity_gb leaves too little")
        );
        assert!(
            err(&base.replace("link = \"pcie4x4\"", "link = \"pcie9x4\""))
                .starts_with("drive.host.link")
        );
        assert_eq!(
            err(&base.replace("channels = 2", "channels = -1")),
            "drive.geometry.channels: invalid value: integer `-1`, expected u32"
        );
        assert_eq!(
            err(&base.replace("gc_idle_superblocks = 5", "gc_idle_superblocks = 32")),
            "drive.ftl.gc_idle_superblocks = 32 must be less than the drive's 32 superblocks (drive.geometry.blocks_per_plane)"
        );
    }

    #[test]
    fn read_levels_have_one_entry_per_page_type_within_bounds() {
        let base = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001");
        let with = |levels: &str| {
            base.replace(
                "t_prog_us = 700.0",
                &format!("t_prog_us = 700.0\nread_levels = {levels}"),
            )
        };
        assert!(DriveConfig::from_toml_str(&with("[1, 2, 4]")).is_ok());
        assert_eq!(
            err(&with("[1, 2]")),
            "drive.nand.tlc.read_levels must have 3 entries, one per page type of a wordline"
        );
        assert_eq!(
            err(&with("[1, 0, 4]")),
            "drive.nand.tlc.read_levels[1] = 0 is outside 1..15 (senses)"
        );
    }

    /// SMALL at 70 % of raw with every optional field present, so that every bound applies.
    pub fn full_text() -> String {
        SMALL
            .replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.0044")
            .replace(
                "link = \"pcie4x4\"",
                "link = \"pcie4x4\"\npayload_mbps = 7000.0",
            )
            .replace(
                "channel_mbps = 800.0",
                "channel_mbps = 800.0\nsuspend_us = 30.0",
            )
            .replace(
                "write_buffer_kib = 64",
                "write_buffer_kib = 64\nread_ahead_kib = 256",
            )
            + OPTIONAL_SECTIONS
    }

    /// [`full_text`] with a static cache, whose fields are the other policy's.
    pub fn full_static_text() -> String {
        full_text()
            .replace(
                "policy = \"dynamic\"",
                "policy = \"static\"\nstatic_gb = 0.001",
            )
            .replace("free_share = 1.0\n", "")
            .replace("max_cell_share = 0.5\n", "")
    }

    const OPTIONAL_SECTIONS: &str = r#"
[drive.mapping]
cache_mib = 1.0
hit_ns = 500.0

[drive.firmware]
journal_entry_bytes = 8
checkpoint_mib = 64.0
checkpoint_us = 500.0
relocate_unit_ns = 100.0

[drive.nand.qlc]
t_read_us = 110.0
t_prog_us = 3500.0
t_erase_us = 10000.0
bits_per_cell = 4

[drive.thermal]
tmt1_c = 80.0
tmt2_c = 82.0
ambient_c = 25.0

[drive.power]
idle_w = 0.05
idle_exit_us = 1000.0
peak_w = 8.0

[drive.wear]
rated_pe_cycles = 3000
slc_retire_pe_cycles = 2000
"#;

    /// `text` with the value at the dotted `key` replaced.
    pub fn with_value(text: &str, key: &str, value: toml::Value) -> String {
        let mut doc: toml::Table = text.parse().unwrap();
        let (tables, field) = key.rsplit_once('.').unwrap();
        let mut table = &mut doc;
        for name in tables.split('.') {
            table = table.get_mut(name).unwrap().as_table_mut().unwrap();
        }
        table.insert(field.into(), value);
        toml::to_string(&doc).unwrap()
    }

    /// Dotted keys of every number in a TOML table.
    pub fn numeric_keys(table: &toml::Table, prefix: &str) -> Vec<String> {
        let mut keys = Vec::new();
        for (name, value) in table {
            let key = format!("{prefix}{name}");
            match value {
                toml::Value::Integer(_) | toml::Value::Float(_) => keys.push(key),
                toml::Value::Table(t) => keys.extend(numeric_keys(t, &format!("{key}."))),
                _ => {}
            }
        }
        keys
    }

    /// Values just below and just above a bound, of the field's TOML type.
    fn just_outside(bound: &Bound) -> [toml::Value; 2] {
        match bound.kind {
            b::Kind::Integer => [
                toml::Value::Integer(bound.min as i64 - 1),
                toml::Value::Integer(bound.max as i64 + 1),
            ],
            b::Kind::Real => {
                let nudge = |v: f64| v.abs().max(1.0) * 1e-6;
                [
                    toml::Value::Float(bound.min - nudge(bound.min)),
                    toml::Value::Float(bound.max + nudge(bound.max)),
                ]
            }
        }
    }

    #[test]
    fn every_number_of_a_preset_has_a_bound() {
        for full in [full_text(), full_static_text()] {
            every_number_has_a_bound(&full);
        }
    }

    fn every_number_has_a_bound(full: &str) {
        let cfg = DriveConfig::from_toml_str(full).unwrap();
        let mut bounded: Vec<String> = cfg.bounded_fields().into_iter().map(|f| f.key).collect();
        let mut numbers: Vec<String> = numeric_keys(&full.parse().unwrap(), "")
            .into_iter()
            // Not a range: each mode has exactly one value, checked by check_cell_modes.
            .filter(|k| !k.ends_with(".bits_per_cell"))
            .collect();
        bounded.sort();
        numbers.sort();
        assert_eq!(bounded, numbers);
    }

    #[test]
    fn every_bounded_field_just_outside_its_range_is_refused_by_name() {
        for full in [full_text(), full_static_text()] {
            every_field_just_outside_is_refused(&full);
        }
    }

    fn every_field_just_outside_is_refused(full: &str) {
        let cfg = DriveConfig::from_toml_str(full).unwrap();
        for field in cfg.bounded_fields() {
            for value in just_outside(field.bound) {
                let text = with_value(full, &field.key, value.clone());
                let msg = err(&text);
                assert!(
                    msg.starts_with(&format!("{} = ", field.key)) && msg.contains(" is outside "),
                    "{} = {value}: {msg}",
                    field.key
                );
            }
        }
    }

    #[test]
    fn the_values_of_issue_9_are_refused_at_load_with_the_field_value_and_range() {
        let base = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001");
        let cases = [
            (
                "channel_mbps = 800.0",
                "channel_mbps = 1e-300",
                "drive.nand.channel_mbps = 1e-300 is outside 10..10000 (MB/s)",
            ),
            (
                "t_prog_us = 700.0",
                "t_prog_us = 1e10",
                "drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)",
            ),
            (
                "read_cmd_us = 2.0",
                "read_cmd_us = 1e8",
                "drive.controller.read_cmd_us = 1e8 is outside 0.01..10000 (µs)",
            ),
            (
                "t_prog_us = 700.0",
                "t_prog_us = 1e20",
                "drive.nand.tlc.t_prog_us = 1e20 is outside 1..100000 (µs)",
            ),
            (
                "t_prog_us = 700.0",
                "t_prog_us = 1e-300",
                "drive.nand.tlc.t_prog_us = 1e-300 is outside 1..100000 (µs)",
            ),
            (
                "page_bytes = 8192",
                "page_bytes = 1073741824",
                "drive.geometry.page_bytes = 1073741824 is outside 4096..65536 (bytes)",
            ),
            (
                "channels = 2",
                "channels = 4294967295",
                "drive.geometry.channels = 4294967295 is outside 1..64",
            ),
        ];
        for (line, bad, expected) in cases {
            assert!(base.contains(line));
            assert_eq!(err(&base.replace(line, bad)), expected);
        }
    }

    #[test]
    fn a_geometry_beyond_32_bit_page_addresses_is_refused() {
        let huge = full_text()
            .replace("channels = 2", "channels = 64")
            .replace("dies_per_channel = 2", "dies_per_channel = 64")
            .replace("planes_per_die = 1", "planes_per_die = 16")
            .replace("page_bytes = 8192", "page_bytes = 65536")
            .replace("pages_per_block = 6", "pages_per_block = 16383");
        assert_eq!(
            err(&huge),
            "drive.geometry: 4 KiB units per superblock = 17178820608 is outside 1..4294967294 (the simulator's 32-bit page addresses); use a smaller geometry"
        );
        let many_blocks = full_text()
            .replace("pages_per_block = 6", "pages_per_block = 16383")
            .replace("blocks_per_plane = 32", "blocks_per_plane = 65536");
        assert!(
            err(&many_blocks).starts_with("drive.geometry: 4 KiB units in the NAND array = "),
            "{}",
            err(&many_blocks)
        );
    }
}
