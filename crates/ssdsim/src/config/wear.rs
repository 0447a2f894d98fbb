//! `[drive.wear]`: the NAND's endurance and how the firmware spreads wear (see `crate::wear`).

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// Endurance of the NAND and the wear-levelling policy.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WearConfig {
    /// Rated program/erase cycles of native blocks: 100 % in the health log's Percentage Used.
    /// Bound: [`bounds::PE_CYCLES`](crate::bounds::PE_CYCLES).
    pub rated_pe_cycles: u32,
    /// Rated P/E cycles of the same blocks written in SLC mode: an SLC-mode cycle wears a
    /// block by `rated_pe_cycles / slc_pe_cycles` of a native one.
    /// Bound: [`bounds::PE_CYCLES`](crate::bounds::PE_CYCLES).
    pub slc_pe_cycles: u32,
    /// Wear (native P/E cycles) beyond which a block is no longer written in SLC mode: the
    /// cache shrinks as blocks pass it, and is gone when all have. None: never retired.
    /// Bound: [`bounds::PE_CYCLES`](crate::bounds::PE_CYCLES).
    pub slc_retire_pe_cycles: Option<u32>,
    /// Median endurance of a block, as a multiple of `rated_pe_cycles` (ratings hold a margin).
    /// Bound: [`bounds::ENDURANCE_MEDIAN`](crate::bounds::ENDURANCE_MEDIAN).
    pub endurance_median: f64,
    /// Spread of block endurance: the sigma of its natural logarithm (log-normal).
    /// Bound: [`bounds::ENDURANCE_SIGMA`](crate::bounds::ENDURANCE_SIGMA).
    pub endurance_sigma: f64,
    /// How the firmware spreads wear over the blocks.
    pub levelling: Levelling,
    /// Static levelling: the wear spread (P/E cycles) between the most and the least worn
    /// superblocks beyond which cold data is moved off the least worn.
    /// Bound: [`bounds::SPREAD_PE`](crate::bounds::SPREAD_PE).
    pub static_spread_pe: Option<u32>,
    /// Rated endurance, TB written by the host, where the maker publishes it.
    /// Bound: [`bounds::RATED_TBW`](crate::bounds::RATED_TBW).
    pub rated_tbw: Option<f64>,
}

/// Wear-levelling policies (`crate::wear::levelling`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Levelling {
    /// Free superblocks are written in the order they were freed.
    None,
    /// The least worn free superblock is written next.
    Dynamic,
    /// Dynamic, and cold data is moved off the least worn superblocks when the spread
    /// passes `static_spread_pe`.
    Static,
}

impl Section for WearConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.wear");
        f.add("rated_pe_cycles", self.rated_pe_cycles, &b::PE_CYCLES);
        f.add("slc_pe_cycles", self.slc_pe_cycles, &b::PE_CYCLES);
        f.add_some(
            "slc_retire_pe_cycles",
            self.slc_retire_pe_cycles,
            &b::PE_CYCLES,
        );
        f.add(
            "endurance_median",
            self.endurance_median,
            &b::ENDURANCE_MEDIAN,
        );
        f.add("endurance_sigma", self.endurance_sigma, &b::ENDURANCE_SIGMA);
        f.add_some("static_spread_pe", self.static_spread_pe, &b::SPREAD_PE);
        f.add_some("rated_tbw", self.rated_tbw, &b::RATED_TBW);
    }

    /// Static levelling needs its bound, and only static levelling has one.
    fn validate(&self) -> Result<(), ConfigError> {
        match (self.levelling, self.static_spread_pe) {
            (Levelling::Static, None) => Err(ConfigError(
                "drive.wear.levelling = \"static\" needs drive.wear.static_spread_pe".into(),
            )),
            (Levelling::None | Levelling::Dynamic, Some(_)) => Err(ConfigError(
                "drive.wear.static_spread_pe is for levelling = \"static\" only".into(),
            )),
            _ => Ok(()),
        }
    }
}

impl WearConfig {
    /// Native P/E cycles one SLC-mode cycle is worth.
    pub fn slc_weight(&self) -> f64 {
        self.rated_pe_cycles as f64 / self.slc_pe_cycles as f64
    }
}
