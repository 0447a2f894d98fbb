//! Static SLC cache: a fixed amount of host data held in SLC mode.
//!
//! The host may open an SLC superblock while the SLC superblocks in use
//! (including the new one) hold at most `units` of host data (at least one
//! superblock). Folding frees SLC superblocks, so the cache refills at cache
//! speed after it is folded (after a pause, when it refills only when idle).
use super::{CachePolicy, CacheView};
use crate::config::Refill;

pub struct StaticCache {
    /// Cache size in 4 KiB units of host data.
    pub units: u64,
    pub idle_fold: bool,
    pub busy_fold_ratio: f64,
    pub refill: Refill,
}

impl CachePolicy for StaticCache {
    fn policy_units(&self, v: &CacheView) -> u64 {
        self.units.max(v.units_per_sb_slc as u64)
    }
    fn idle_fold(&self) -> bool {
        self.idle_fold
    }
    fn max_fold_ratio(&self) -> f64 {
        self.busy_fold_ratio
    }
    fn refill(&self) -> Refill {
        self.refill
    }
}
