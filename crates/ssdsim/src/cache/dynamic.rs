//! Dynamic SLC cache: a share of the free superblocks is written in SLC mode.
//!
//! The free superblocks are those not holding native data, minus the
//! controller's reserve: the SLC superblocks themselves count as free space the
//! cache occupies. Up to `free_share` of them may be in SLC mode, where each
//! holds `1 / bits` of its native data, and at most `max_cell_share` of all
//! superblocks. The bound is physical: as native data fills superblocks, the
//! limit falls below what the cache holds, the host is refused SLC, and forced
//! reclaim must fold SLC superblocks to free the space the host writes into
//! (the slower third phase of a whole-drive fill), until little cache is left.
use super::{CachePolicy, CacheView};
use crate::config::Refill;

pub struct DynamicCache {
    pub free_share: f64,
    pub max_cell_share: f64,
    pub idle_fold: bool,
    pub busy_fold_ratio: f64,
    pub refill: Refill,
}

impl CachePolicy for DynamicCache {
    fn policy_units(&self, v: &CacheView) -> u64 {
        let free = v.superblocks.saturating_sub(v.native_sbs + v.reserve_sbs) as f64;
        let by_free = self.free_share * free;
        let by_cells = self.max_cell_share * v.superblocks as f64;
        (by_free.min(by_cells).floor() as u64) * v.units_per_sb_slc as u64
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

#[cfg(test)]
mod tests {
    use super::*;

    fn view(native_sbs: u32) -> CacheView {
        CacheView {
            slc_valid: 0,
            slc_sbs: 0,
            native_sbs,
            native_data_sbs: native_sbs,
            superblocks: 100,
            reserve_sbs: 4,
            units_per_sb_slc: 10,
            slc_capable_sbs: 100,
        }
    }

    #[test]
    fn the_limit_shrinks_as_native_data_fills_superblocks() {
        let c = DynamicCache {
            free_share: 1.0,
            max_cell_share: 0.5,
            idle_fold: true,
            busy_fold_ratio: 0.5,
            refill: Refill::Busy,
        };
        assert_eq!(c.limit_units(&view(0)), 500); // the cap on cells
        assert_eq!(c.limit_units(&view(56)), 400); // 100 - 56 - 4 free
        assert_eq!(c.limit_units(&view(96)), 0);
        // worn blocks no longer written in SLC mode retire the cache
        let worn = CacheView {
            slc_capable_sbs: 30,
            ..view(0)
        };
        assert_eq!(c.limit_units(&worn), 300);
    }
}
