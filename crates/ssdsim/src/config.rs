//! Drive presets: the typed, closed configuration of a simulated drive.
//!
//! Contract: [`DriveConfig::from_toml_str`] either returns a configuration in
//! which every value is usable by the simulator (positive times, consistent
//! geometry, a cache policy with the fields it needs) or an error naming the
//! offending key, e.g. `drive.nand.tlc.t_prog_us must be > 0`,
//! `unknown key `foo` in [drive.nand]`, `missing key `drive.geometry.channels``.
//! Unknown keys are errors everywhere (`deny_unknown_fields`). The sections
//! `thermal`, `power` and `wear` are parsed and validated but not modelled yet.

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

/// One simulated drive.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    /// Human-readable model name.
    pub name: String,
    /// User-visible capacity in decimal GB (10^9 bytes). Over-provisioning is
    /// the raw NAND capacity (from the geometry) minus this.
    pub user_capacity_gb: f64,
    /// Native cell mode of the NAND (`tlc` or `qlc`); SLC is the cache mode.
    pub native_mode: CellMode,
    pub geometry: GeometryConfig,
    pub nand: NandConfig,
    pub controller: ControllerConfig,
    pub host: HostConfig,
    pub ftl: FtlConfig,
    pub cache: CacheConfig,
    pub thermal: Option<ThermalConfig>,
    pub power: Option<PowerConfig>,
    pub wear: Option<WearConfig>,
}

/// Physical organisation of the NAND array.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    /// Independent NAND channels (buses) of the controller.
    pub channels: u32,
    /// Dies (LUNs) on each channel.
    pub dies_per_channel: u32,
    /// Planes per die, programmed and read together (multi-plane operations).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block in native mode (an SLC block has pages_per_block / bits_per_cell(native)).
    pub pages_per_block: u32,
    /// Page size in bytes (data area, per plane); a multiple of 4096.
    pub page_bytes: u32,
}

/// NAND timings per cell mode and the channel transfer rate.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Transfer rate of one channel, MB/s (10^6 bytes/s).
    pub channel_mbps: f64,
    pub slc: CellTiming,
    pub tlc: Option<CellTiming>,
    pub qlc: Option<CellTiming>,
}

/// Timings of one cell mode.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellTiming {
    /// Page read time (array to register), µs.
    pub t_read_us: f64,
    /// Effective program time of one (multi-plane) page in this mode, µs.
    pub t_prog_us: f64,
    /// Block erase time, µs.
    pub t_erase_us: f64,
    /// Bits per cell: 1 for SLC, 3 for TLC, 4 for QLC.
    pub bits_per_cell: u32,
}

/// Controller (front-end and FTL processor) costs.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Controller time to process one read command, µs (serial resource).
    pub read_cmd_us: f64,
    /// Controller time to process one write command, µs.
    pub write_cmd_us: f64,
    /// Fixed latency of a read command that does not occupy the controller (firmware pipeline,
    /// mapping lookup, completion posting), µs; added before the NAND read.
    pub read_latency_us: f64,
    /// Fixed latency of a write command that does not occupy the controller, µs; added to its completion.
    pub write_latency_us: f64,
    /// Controller time to process one TRIM (deallocate) command, µs.
    pub trim_cmd_us: f64,
    /// Additional controller time per 4 KiB unit unmapped by a TRIM, ns.
    pub trim_unit_ns: f64,
    /// Write buffer (DRAM/SRAM) per write stream, KiB: how far host writes may run ahead of NAND programs.
    pub write_buffer_kib: u32,
}

/// Host interface.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Link: `pcie3x4` (about 3500 MB/s of payload) or `pcie4x4` (about 7000 MB/s).
    pub link: LinkKind,
    /// Override of the payload ceiling, MB/s (per direction).
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
    pub gc_low_superblocks: u32,
    /// Idle-time (background) garbage collection runs while free superblocks are below this many.
    pub gc_idle_superblocks: u32,
    /// Victim policy: `greedy` (fewest valid pages first).
    pub victim_policy: VictimKind,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum VictimKind {
    Greedy,
}

/// SLC cache.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// `none`, `static` (fixed size) or `dynamic` (share of free space).
    pub policy: CacheKind,
    /// Static: cache size in decimal GB of host data held in SLC mode.
    pub static_gb: Option<f64>,
    /// Dynamic: share of free native capacity that may be written in SLC mode (0..1].
    pub free_share: Option<f64>,
    /// Dynamic: cap on the share of all cells in SLC mode (0..1].
    pub max_cell_share: Option<f64>,
    /// Fold the cache into native blocks while the host is idle.
    pub idle_fold: bool,
    /// While the host writes to native blocks, fold this many SLC units per host unit (0 = never while busy).
    pub busy_fold_ratio: f64,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    None,
    Static,
    Dynamic,
}

/// Thermal model parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThermalConfig {
    /// Thermal management threshold 1, °C.
    pub tmt1_c: f64,
    /// Thermal management threshold 2, °C.
    pub tmt2_c: f64,
    /// Ambient temperature, °C.
    pub ambient_c: Option<f64>,
}

/// Power model parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// Lowest idle power actually reached, W.
    pub idle_w: f64,
    /// Exit latency of that idle state, µs.
    pub idle_exit_us: f64,
    /// Peak power, W.
    pub peak_w: Option<f64>,
}

/// Wear parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WearConfig {
    /// Rated program/erase cycles of native blocks.
    pub rated_pe_cycles: u32,
    /// P/E cycles beyond which the SLC cache is retired.
    pub slc_retire_pe_cycles: Option<u32>,
}

fn positive(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError(format!("{key} must be > 0")))
    }
}

fn nonzero(key: &str, v: u32) -> Result<(), ConfigError> {
    if v > 0 {
        Ok(())
    } else {
        Err(ConfigError(format!("{key} must be > 0")))
    }
}

fn share(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError(format!("{key} must be in (0, 1]")))
    }
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
        match mode {
            CellMode::Slc => &self.nand.slc,
            CellMode::Tlc => self.nand.tlc.as_ref().expect("validated"),
            CellMode::Qlc => self.nand.qlc.as_ref().expect("validated"),
        }
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

    /// Check every value; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("drive.user_capacity_gb", self.user_capacity_gb)?;
        let g = &self.geometry;
        nonzero("drive.geometry.channels", g.channels)?;
        nonzero("drive.geometry.dies_per_channel", g.dies_per_channel)?;
        nonzero("drive.geometry.planes_per_die", g.planes_per_die)?;
        nonzero("drive.geometry.blocks_per_plane", g.blocks_per_plane)?;
        nonzero("drive.geometry.pages_per_block", g.pages_per_block)?;
        nonzero("drive.geometry.page_bytes", g.page_bytes)?;
        if !g.page_bytes.is_multiple_of(4096) {
            return Err(ConfigError(
                "drive.geometry.page_bytes must be a multiple of 4096".into(),
            ));
        }
        positive("drive.nand.channel_mbps", self.nand.channel_mbps)?;
        let modes = [
            ("slc", Some(&self.nand.slc), 1),
            ("tlc", self.nand.tlc.as_ref(), 3),
            ("qlc", self.nand.qlc.as_ref(), 4),
        ];
        for (name, t, bits) in modes {
            if let Some(t) = t {
                positive(&format!("drive.nand.{name}.t_read_us"), t.t_read_us)?;
                positive(&format!("drive.nand.{name}.t_prog_us"), t.t_prog_us)?;
                positive(&format!("drive.nand.{name}.t_erase_us"), t.t_erase_us)?;
                if t.bits_per_cell != bits {
                    return Err(ConfigError(format!(
                        "drive.nand.{name}.bits_per_cell must be {bits}"
                    )));
                }
            }
        }
        let native = match self.native_mode {
            CellMode::Slc => {
                return Err(ConfigError(
                    "drive.native_mode must be `tlc` or `qlc`".into(),
                ))
            }
            CellMode::Tlc => ("tlc", &self.nand.tlc),
            CellMode::Qlc => ("qlc", &self.nand.qlc),
        };
        let Some(nt) = native.1 else {
            return Err(ConfigError(format!(
                "missing key `drive.nand.{}` (the native mode)",
                native.0
            )));
        };
        if !g.pages_per_block.is_multiple_of(nt.bits_per_cell) {
            return Err(ConfigError(format!(
                "drive.geometry.pages_per_block must be a multiple of drive.nand.{}.bits_per_cell",
                native.0
            )));
        }
        let c = &self.controller;
        positive("drive.controller.read_cmd_us", c.read_cmd_us)?;
        positive("drive.controller.write_cmd_us", c.write_cmd_us)?;
        positive("drive.controller.trim_cmd_us", c.trim_cmd_us)?;
        for (k, v) in [
            ("read_latency_us", c.read_latency_us),
            ("write_latency_us", c.write_latency_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError(format!("drive.controller.{k} must be >= 0")));
            }
        }
        if !(c.trim_unit_ns.is_finite() && c.trim_unit_ns >= 0.0) {
            return Err(ConfigError(
                "drive.controller.trim_unit_ns must be >= 0".into(),
            ));
        }
        nonzero("drive.controller.write_buffer_kib", c.write_buffer_kib)?;
        if let Some(p) = self.host.payload_mbps {
            positive("drive.host.payload_mbps", p)?;
        }
        let f = &self.ftl;
        if f.gc_low_superblocks < 2 {
            return Err(ConfigError(
                "drive.ftl.gc_low_superblocks must be >= 2".into(),
            ));
        }
        if f.gc_idle_superblocks < f.gc_low_superblocks {
            return Err(ConfigError(
                "drive.ftl.gc_idle_superblocks must be >= drive.ftl.gc_low_superblocks".into(),
            ));
        }
        let sbs = g.blocks_per_plane;
        let raw = self.raw_bytes() as f64;
        let user = self.user_bytes() as f64;
        let sb_bytes = raw / sbs as f64;
        // Spare must hold the GC reserve plus open write points.
        if raw - user < sb_bytes * (f.gc_low_superblocks as f64 + 3.0) {
            return Err(ConfigError(format!(
                "drive.user_capacity_gb leaves too little over-provisioning: raw {:.3} GB, user {:.3} GB, need spare of at least {} superblocks ({:.3} GB)",
                raw / 1e9,
                user / 1e9,
                f.gc_low_superblocks + 3,
                sb_bytes * (f.gc_low_superblocks as f64 + 3.0) / 1e9
            )));
        }
        let cc = &self.cache;
        match cc.policy {
            CacheKind::None => {}
            CacheKind::Static => {
                let Some(s) = cc.static_gb else {
                    return Err(ConfigError(
                        "missing key `drive.cache.static_gb` (needed by policy = \"static\")"
                            .into(),
                    ));
                };
                positive("drive.cache.static_gb", s)?;
                let slc_bytes_max =
                    (raw - user) / nt.bits_per_cell as f64 + user / nt.bits_per_cell as f64;
                if s * 1e9 > slc_bytes_max {
                    return Err(ConfigError(
                        "drive.cache.static_gb is larger than the NAND can hold in SLC mode".into(),
                    ));
                }
            }
            CacheKind::Dynamic => {
                let Some(s) = cc.free_share else {
                    return Err(ConfigError(
                        "missing key `drive.cache.free_share` (needed by policy = \"dynamic\")"
                            .into(),
                    ));
                };
                share("drive.cache.free_share", s)?;
                let Some(m) = cc.max_cell_share else {
                    return Err(ConfigError(
                        "missing key `drive.cache.max_cell_share` (needed by policy = \"dynamic\")"
                            .into(),
                    ));
                };
                share("drive.cache.max_cell_share", m)?;
            }
        }
        if !(cc.busy_fold_ratio.is_finite() && cc.busy_fold_ratio >= 0.0) {
            return Err(ConfigError(
                "drive.cache.busy_fold_ratio must be >= 0".into(),
            ));
        }
        if let Some(t) = &self.thermal {
            positive("drive.thermal.tmt1_c", t.tmt1_c)?;
            if t.tmt2_c < t.tmt1_c {
                return Err(ConfigError(
                    "drive.thermal.tmt2_c must be >= drive.thermal.tmt1_c".into(),
                ));
            }
        }
        if let Some(p) = &self.power {
            positive("drive.power.idle_w", p.idle_w)?;
            if p.idle_exit_us < 0.0 {
                return Err(ConfigError("drive.power.idle_exit_us must be >= 0".into()));
            }
        }
        if let Some(w) = &self.wear {
            nonzero("drive.wear.rated_pe_cycles", w.rated_pe_cycles)?;
        }
        Ok(())
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
            "drive.nand.tlc.t_prog_us must be > 0"
        );
        assert_eq!(
            err(&base.replace("channels = 2", "channels = 0")),
            "drive.geometry.channels must be > 0"
        );
        assert_eq!(
            err(&base.replace("page_bytes = 8192", "page_bytes = 5000")),
            "drive.geometry.page_bytes must be a multiple of 4096"
        );
        assert_eq!(
            err(&base.replace("max_cell_share = 0.5", "max_cell_share = 1.5")),
            "drive.cache.max_cell_share must be in (0, 1]"
        );
        assert!(
            err(&SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.006"))
                .starts_with("drive.user_capacity_gb leaves too little")
        );
        assert!(
            err(&base.replace("link = \"pcie4x4\"", "link = \"pcie9x4\""))
                .starts_with("drive.host.link")
        );
    }
}
