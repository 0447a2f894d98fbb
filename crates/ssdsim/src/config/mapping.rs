//! `[drive.mapping]`: where the logical-to-physical table is held.

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

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

impl Section for MappingConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.mapping");
        f.add("cache_mib", self.cache_mib, &b::MAPPING_CACHE_MIB);
        f.add("hit_ns", self.hit_ns, &b::MAPPING_HIT_NS);
    }
}
