//! SLC cache policies.
//!
//! Contract of [`CachePolicy`]: given a snapshot of the drive's space
//! ([`CacheView`]), it says how much host data the cache may hold now
//! ([`limit_units`](CachePolicy::limit_units)): what its policy allows, within the
//! superblocks young enough for SLC mode (worn blocks retire the cache, see
//! `crate::wear`); the host opens another SLC
//! superblock only while the SLC superblocks, the new one included, stay within
//! it (and the controller keeps its reserve of free superblocks), and writes
//! straight to native blocks otherwise. It also says how the cache is folded
//! into native blocks: while the host is idle (`idle_fold`) and in the
//! background while the host writes to native blocks, at a rate that grows as
//! the cache fills ([`background_fold_ratio`](CachePolicy::background_fold_ratio)).
//! When free superblocks run short, forced reclaim folds SLC superblocks like
//! any other victim: that is not a policy choice (see `controller::reclaim`).
//! A cache holding more than the drive's data leaves room for is
//! [`squeezed`](CachePolicy::squeezed), and one whose policy [`refill`](CachePolicy::refill)s
//! only when idle has run out: the controller then keeps the host out of it until the
//! next idle or TRIM.
//! A policy never moves data itself; the controller does, on the NAND timelines.

pub mod dynamic;
pub mod none;
pub mod static_size;

use crate::config::{CacheConfig, DriveConfig, Refill};
use crate::geometry::UNIT;

/// What a policy may look at.
#[derive(Debug, Clone, Copy)]
pub struct CacheView {
    /// Valid units held in SLC superblocks.
    pub slc_valid: u64,
    /// Superblocks in SLC mode.
    pub slc_sbs: u32,
    /// Superblocks in native mode that are not free (holding native data or being written).
    pub native_sbs: u32,
    /// Superblocks the native data needs: its valid units in whole superblocks (fewer than
    /// `native_sbs` by what garbage collection would free).
    pub native_data_sbs: u32,
    pub superblocks: u32,
    /// Free superblocks the controller keeps for reclaim (never given to the cache).
    pub reserve_sbs: u32,
    /// Units of a superblock in SLC mode.
    pub units_per_sb_slc: u32,
    /// Good superblocks still young enough to be written in SLC mode.
    pub slc_capable_sbs: u32,
}

impl CacheView {
    /// How full the cache is against `limit` units: 0 empty, 1 at (or over) its limit.
    pub fn fullness(&self, limit: u64) -> f64 {
        if limit == 0 {
            1.0
        } else {
            (self.slc_valid as f64 / limit as f64).min(1.0)
        }
    }
}

/// An SLC cache policy (see module docs).
pub trait CachePolicy: Send + Sync {
    /// Host data (units) the policy lets the cache hold in the current state.
    fn policy_units(&self, v: &CacheView) -> u64;
    /// Host data (units) the cache may hold: the policy's, within the superblocks still
    /// young enough for SLC mode.
    fn limit_units(&self, v: &CacheView) -> u64 {
        let young = v.slc_capable_sbs as u64 * v.units_per_sb_slc as u64;
        self.policy_units(v).min(young)
    }
    /// Fold the cache while the host is idle.
    fn idle_fold(&self) -> bool;
    /// SLC units folded per host unit when the cache is full and the host writes to native blocks.
    fn max_fold_ratio(&self) -> f64;
    /// When the cache that folding frees is the host's again.
    fn refill(&self) -> Refill {
        Refill::Busy
    }

    /// May the host open one more SLC superblock now?
    fn may_open_slc(&self, v: &CacheView) -> bool {
        (v.slc_sbs as u64 + 1) * v.units_per_sb_slc as u64 <= self.limit_units(v)
    }

    /// Does the cache hold more than the drive's data leaves room for (the drive filled
    /// up under it)? Superblocks of overwritten data do not squeeze it: garbage
    /// collection frees them at no cost.
    fn squeezed(&self, v: &CacheView) -> bool {
        let by_data = CacheView {
            native_sbs: v.native_data_sbs.min(v.native_sbs),
            ..*v
        };
        v.slc_valid > self.limit_units(&by_data)
    }

    /// SLC units to fold per host unit written to native blocks: the policy's
    /// ratio scaled by how full the cache is. A full cache is folded urgently
    /// (its freed superblocks then give the host bursts at cache speed); a
    /// nearly empty one is left alone, its data read at SLC speed meanwhile.
    fn background_fold_ratio(&self, v: &CacheView) -> f64 {
        self.max_fold_ratio() * v.fullness(self.limit_units(v))
    }
}

/// Build the policy a preset asks for.
pub fn from_config(cfg: &DriveConfig) -> Box<dyn CachePolicy> {
    match &cfg.cache {
        CacheConfig::None => Box::new(none::NoCache),
        CacheConfig::Static(c) => Box::new(static_size::StaticCache {
            units: (c.static_gb * 1e9 / UNIT as f64) as u64,
            idle_fold: c.idle_fold,
            busy_fold_ratio: c.busy_fold_ratio,
            refill: c.refill,
        }),
        CacheConfig::Dynamic(c) => Box::new(dynamic::DynamicCache {
            free_share: c.free_share,
            max_cell_share: c.max_cell_share,
            idle_fold: c.idle_fold,
            busy_fold_ratio: c.busy_fold_ratio,
            refill: c.refill,
        }),
    }
}
