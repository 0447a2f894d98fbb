//! `[drive.wear]`: wear of the NAND (parsed and validated; not modelled yet).

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

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

impl Section for WearConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.wear");
        f.add("rated_pe_cycles", self.rated_pe_cycles, &b::PE_CYCLES);
        f.add_some(
            "slc_retire_pe_cycles",
            self.slc_retire_pe_cycles,
            &b::PE_CYCLES,
        );
    }
}
