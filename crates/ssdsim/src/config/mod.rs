//! Drive presets: the typed, closed configuration of a simulated drive.
//!
//! Contract: [`DriveConfig::from_toml_str`] either returns a configuration in
//! which every value is usable by the simulator (every number within its bound
//! in [`crate::bounds`], a geometry that fits 32-bit page addresses, a cache
//! policy with the fields it needs) or an error naming the offending key, e.g.
//! `drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)`,
//! `unknown key `foo` in [drive.nand]`, `missing key `drive.geometry.channels``.
//! Unknown keys are errors everywhere (`deny_unknown_fields`).
//!
//! Each table of a preset is a section in its own module: its type, which adds
//! its bounded fields and checks the relations between them (the `Section` trait,
//! in `fields.rs`). Relations across sections are [`DriveConfig::validate`]'s. A
//! new section is a new module, a field of [`DriveConfig`] and a line in
//! `DriveConfig::sections`.

mod cache;
mod controller;
mod ecc;
mod errors;
mod fields;
mod firmware;
mod ftl;
mod geometry;
mod host;
mod mapping;
mod nand;
mod power;
mod refresh;
#[cfg(test)]
pub(crate) mod tests;
mod thermal;
mod wear;

pub use cache::{CacheConfig, DynamicCacheConfig, Refill, StaticCacheConfig};
pub use controller::ControllerConfig;
pub use ecc::EccConfig;
pub use errors::ErrorsConfig;
pub use fields::BoundedField;
pub use firmware::FirmwareConfig;
pub use ftl::{FtlConfig, VictimKind};
pub use geometry::GeometryConfig;
pub use host::{HostConfig, LinkKind};
pub use mapping::MappingConfig;
pub use nand::{CellMode, CellTiming, NandConfig};
pub use power::{NandPowerConfig, PowerConfig, PowerStateConfig};
pub use refresh::RefreshConfig;
pub use thermal::{RcConfig, ThermalConfig, ThrottleConfig};
pub use wear::{Levelling, WearConfig};

use crate::bounds as b;
use crate::geometry::{Geometry, UNIT};
use fields::{Fields, Section};
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

/// The whole preset file: one `[drive]` table, and for a twin (`ssdlab fit`) a `[twin]` table
/// saying which measured runs it was fitted to, which ssdlab reads for its reports and the
/// simulator ignores.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PresetFile {
    pub drive: DriveConfig,
    #[serde(default)]
    pub twin: Option<toml::Table>,
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
    /// The power model; absent: the drive reports no energy and never sleeps.
    pub power: Option<PowerConfig>,
    pub wear: Option<WearConfig>,
    /// The NAND's raw errors and the decoding tiers; absent: every read decodes at once.
    pub errors: Option<ErrorsConfig>,
    pub ecc: Option<EccConfig>,
    /// Background refresh and read reclaim; absent: data stays where it was written.
    pub refresh: Option<RefreshConfig>,
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
        let upgraded = without_legacy_tables(text);
        let de = toml::Deserializer::new(upgraded.as_deref().unwrap_or(text));
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

    /// The sections (tables) of the preset, in the order they are checked.
    fn sections(&self) -> Vec<&dyn Section> {
        vec![
            &self.geometry,
            &self.nand,
            &self.controller,
            &self.host,
            &self.ftl,
            &self.cache,
            &self.mapping,
            &self.firmware,
            &self.thermal,
            &self.power,
            &self.wear,
            &self.errors,
            &self.ecc,
            &self.refresh,
        ]
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
        for section in self.sections() {
            section.add_bounded_fields(&mut f);
        }
        f.into_fields()
    }

    /// Check every value; errors name the key. First every field against its bound
    /// (so that nothing below computes with an absurd value), then the relations
    /// within each section, then the relations across sections.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for field in self.bounded_fields() {
            field
                .bound
                .check(&field.key, field.value)
                .map_err(ConfigError)?;
        }
        for section in self.sections() {
            section.validate()?;
        }
        self.check_native_mode()?;
        let geo = Geometry::new(self)?;
        self.check_reclaim_space(&geo)?;
        self.check_static_cache()?;
        self.check_media()?;
        self.check_throttle_states()
    }

    /// Raw errors and their decoding come together, on a drive that wears (its wear
    /// drives the errors); refresh needs them (it acts on data age and reads).
    fn check_media(&self) -> Result<(), ConfigError> {
        if self.refresh.is_some() && self.errors.is_none() {
            return Err(ConfigError(
                "[drive.refresh] needs [drive.errors] and [drive.ecc]: it rewrites data as it ages"
                    .into(),
            ));
        }
        match (&self.errors, &self.ecc, &self.wear) {
            (None, None, _) | (Some(_), Some(_), Some(_)) => Ok(()),
            (Some(_), Some(_), None) => Err(ConfigError(
                "[drive.errors] needs [drive.wear]: wear drives the raw errors".into(),
            )),
            _ => Err(ConfigError(
                "[drive.errors] and [drive.ecc] come together: the errors and how the drive corrects them".into(),
            )),
        }
    }

    /// The native mode is TLC or QLC, and the NAND has its timings.
    fn check_native_mode(&self) -> Result<(), ConfigError> {
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
        if f.gc_idle_superblocks >= geo.superblocks {
            return Err(ConfigError(format!(
                "drive.ftl.gc_idle_superblocks = {} must be less than the drive's {} superblocks (drive.geometry.blocks_per_plane)",
                f.gc_idle_superblocks, geo.superblocks
            )));
        }
        let raw = geo.total_units() * UNIT;
        let user = self.user_bytes();
        let reserve_sbs = self.reserve_superblocks() as u64;
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

    /// Superblocks the drive must keep beyond its user capacity: the reclaim reserve and
    /// the open write points. Spare beyond it is what worn-out superblocks consume.
    pub fn reserve_superblocks(&self) -> u32 {
        self.ftl.gc_low_superblocks + 3
    }

    /// A static cache fits the NAND.
    fn check_static_cache(&self) -> Result<(), ConfigError> {
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

    /// A drive that heats throttles to operational power states of its table whose power
    /// is above its active idle (else throttling could never meet its cap).
    fn check_throttle_states(&self) -> Result<(), ConfigError> {
        let Some((_, throttle)) = self.thermal.as_ref().and_then(|t| t.model()) else {
            return Ok(());
        };
        let Some(power) = &self.power else {
            return Err(ConfigError(
                "a drive that heats ([drive.thermal.rc]) needs [drive.power]: its heat is its power".into(),
            ));
        };
        let table = power.table();
        for (key, n) in [
            ("light_state", throttle.light_state),
            ("heavy_state", throttle.heavy_state),
        ] {
            match table.get(n as usize) {
                Some(s) if s.operational && s.max_w > power.active_idle_w => {}
                _ => {
                    return Err(ConfigError(format!(
                        "drive.thermal.throttle.{key} = {n} must name an operational state of [drive.power.states] whose max_w is above drive.power.active_idle_w"
                    )))
                }
            }
        }
        Ok(())
    }
}

/// Keys of `[drive.power]` before it was modelled (ssdlab 0.1.0 parsed them and used none).
const LEGACY_POWER_KEYS: [&str; 3] = ["idle_w", "idle_exit_us", "peak_w"];

/// Keys of `[drive.wear]` before wear was modelled (parsed and checked, used by nothing but
/// the health log's Percentage Used).
const LEGACY_WEAR_KEYS: [&str; 2] = ["rated_pe_cycles", "slc_retire_pe_cycles"];

/// `text` upgraded from the earlier forms of its tables, which modelled nothing, so that a
/// run stored by an earlier ssdlab resumes as it ran: a `[drive.power]` of
/// [`LEGACY_POWER_KEYS`] goes (no power model), and so does `drive.thermal.ambient_c` (the
/// air around a drive is a run's option now, `Platform::ambient_c`), and a `[drive.wear]`
/// of [`LEGACY_WEAR_KEYS`] (no wear model). None when there is nothing to upgrade (the
/// text is used as it is).
fn without_legacy_tables(text: &str) -> Option<String> {
    let mut doc: toml::Table = text.parse().ok()?;
    let drive = doc.get_mut("drive")?.as_table_mut()?;
    let legacy_power = drive
        .get("power")
        .and_then(|p| p.as_table())
        .is_some_and(|power| {
            power.contains_key("idle_w")
                && power
                    .keys()
                    .all(|k| LEGACY_POWER_KEYS.contains(&k.as_str()))
        });
    if legacy_power {
        drive.remove("power");
    }
    let legacy_ambient = drive
        .get_mut("thermal")
        .and_then(|t| t.as_table_mut())
        .and_then(|thermal| thermal.remove("ambient_c"))
        .is_some();
    let legacy_wear = drive
        .get("wear")
        .and_then(|w| w.as_table())
        .is_some_and(|wear| wear.keys().all(|k| LEGACY_WEAR_KEYS.contains(&k.as_str())));
    if legacy_wear {
        drive.remove("wear");
    }
    (legacy_power || legacy_ambient || legacy_wear).then(|| toml::to_string(&doc).ok())?
}
