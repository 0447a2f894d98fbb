//! `[drive.nand]`: NAND timings per cell mode (`[drive.nand.slc]`, `.tlc`, `.qlc`)
//! and the channel transfer rate.

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

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

    /// Every cell mode that has timings, with them.
    fn timings(&self) -> impl Iterator<Item = (CellMode, &CellTiming)> {
        [CellMode::Slc, CellMode::Tlc, CellMode::Qlc]
            .into_iter()
            .filter_map(|m| self.timing_of(m).map(|t| (m, t)))
    }
}

impl Section for NandConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.nand");
        f.add("channel_mbps", self.channel_mbps, &b::CHANNEL_MBPS);
        f.add_some("suspend_us", self.suspend_us, &b::SUSPEND_US);
        for (mode, timing) in self.timings() {
            timing.add_bounded_fields(mode, f);
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.timings()
            .try_for_each(|(mode, timing)| timing.validate(mode))
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
    /// mode's value, checked with the cell mode.
    pub bits_per_cell: u32,
    /// Reference-voltage senses needed to read each page type of a wordline (lower,
    /// middle, upper, top), one entry per bit: page read times are in proportion, their
    /// mean being `t_read_us` (absent: every page reads in `t_read_us`). A TLC Gray code
    /// splits its 7 levels 1-2-4, 2-3-2 or 1-3-3; QLC's 15 e.g. 1-2-4-8 or 4-4-3-4.
    /// Bound of each entry: [`bounds::READ_LEVELS`](crate::bounds::READ_LEVELS).
    pub read_levels: Option<Vec<u32>>,
}

/// The table of a cell mode is named after the mode (`drive.nand.tlc`), so its
/// two methods take the mode where a [`Section`]'s know their table.
impl CellTiming {
    fn add_bounded_fields(&self, mode: CellMode, f: &mut Fields) {
        f.table(&format!("drive.nand.{}", mode.name()));
        f.add("t_read_us", self.t_read_us, &b::T_READ_US);
        f.add("t_prog_us", self.t_prog_us, &b::T_PROG_US);
        f.add("t_erase_us", self.t_erase_us, &b::T_ERASE_US);
    }

    /// Each cell mode has its own bits per cell, and read levels for each page type.
    fn validate(&self, mode: CellMode) -> Result<(), ConfigError> {
        if self.bits_per_cell != mode.bits() {
            return Err(ConfigError(format!(
                "drive.nand.{}.bits_per_cell must be {}",
                mode.name(),
                mode.bits()
            )));
        }
        let Some(levels) = &self.read_levels else {
            return Ok(());
        };
        let key = format!("drive.nand.{}.read_levels", mode.name());
        if levels.len() != mode.bits() as usize {
            return Err(ConfigError(format!(
                "{key} must have {} entries, one per page type of a wordline",
                mode.bits()
            )));
        }
        levels.iter().enumerate().try_for_each(|(i, &l)| {
            b::READ_LEVELS
                .check(&format!("{key}[{i}]"), l.into())
                .map_err(ConfigError)
        })
    }
}
