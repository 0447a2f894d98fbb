//! Dynamic SLC cache: a share of the free space is written in SLC mode.
//!
//! Free native capacity is the user capacity not yet holding native data
//! (`user − (mapped − slc_valid)`). Up to `free_share` of it may be written in
//! SLC mode, where it holds `1 / bits` of its native data, capped so that at
//! most `max_cell_share` of all cells are in SLC mode. With `free_share = 1`
//! the cache of an empty drive is one third (TLC) of its capacity, and it
//! shrinks as the drive fills.
use super::{CachePolicy, CacheView};

pub struct DynamicCache {
    pub free_share: f64,
    pub max_cell_share: f64,
    pub idle_fold: bool,
    pub busy_fold_ratio: f64,
    pub _geo_units: u64,
}

impl CachePolicy for DynamicCache {
    fn may_open_slc(&self, v: &CacheView) -> bool {
        (v.slc_sbs as u64 + 1) * v.units_per_sb_slc as u64 <= self.limit_units(v)
    }
    fn limit_units(&self, v: &CacheView) -> u64 {
        let native_data = v.mapped - v.slc_valid;
        let free_native = v.user_units.saturating_sub(native_data) as f64;
        let by_free = self.free_share * free_native / v.native_bits as f64;
        let cells = v.superblocks as f64 * v.units_per_sb as f64;
        let by_cells = self.max_cell_share * cells / v.native_bits as f64;
        by_free.min(by_cells) as u64
    }
    fn idle_fold(&self) -> bool {
        self.idle_fold
    }
    fn busy_fold_ratio(&self) -> f64 {
        self.busy_fold_ratio
    }
}
