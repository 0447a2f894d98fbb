//! Static SLC cache: a fixed amount of host data held in SLC mode.
//!
//! The host may open an SLC superblock while the SLC superblocks in use
//! (including the new one) hold at most `units` of host data. Folding frees
//! SLC superblocks, so the cache refills at cache speed after it is folded.
use super::{CachePolicy, CacheView};

pub struct StaticCache {
    /// Cache size in 4 KiB units of host data.
    pub units: u64,
    pub idle_fold: bool,
    pub busy_fold_ratio: f64,
}

impl CachePolicy for StaticCache {
    fn may_open_slc(&self, v: &CacheView) -> bool {
        (v.slc_sbs as u64 + 1) * v.units_per_sb_slc as u64
            <= self.units.max(v.units_per_sb_slc as u64)
    }
    fn limit_units(&self, _: &CacheView) -> u64 {
        self.units
    }
    fn idle_fold(&self) -> bool {
        self.idle_fold
    }
    fn busy_fold_ratio(&self) -> f64 {
        self.busy_fold_ratio
    }
}
