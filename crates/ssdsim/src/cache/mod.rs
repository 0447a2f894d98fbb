//! SLC cache policies.
//!
//! Contract of [`CachePolicy`]: given a snapshot of the drive's space
//! ([`CacheView`]), it says whether the host may open one more superblock in
//! SLC mode (host writes go to SLC while it says yes, straight to native
//! blocks once it says no), how much host data the cache may hold now (for
//! reporting), and how the cache is folded into native blocks: while the host
//! is idle (`idle_fold`) and, optionally, in the background while the host is
//! writing to native blocks (`busy_fold_ratio` SLC units folded per host unit).
//! Forced folding when free space runs short is not a policy choice: garbage
//! collection picks SLC superblocks as victims like any other (engine).
//! A policy never moves data itself; the engine does, on the NAND timelines.

pub mod dynamic;
pub mod none;
pub mod static_size;

use crate::config::{CacheKind, DriveConfig};
use crate::geometry::{Geometry, UNIT};

/// What a policy may look at.
#[derive(Debug, Clone, Copy)]
pub struct CacheView {
    /// User-visible units.
    pub user_units: u64,
    /// Mapped units (in SLC or native blocks).
    pub mapped: u64,
    /// Valid units held in SLC superblocks.
    pub slc_valid: u64,
    /// Superblocks in SLC mode.
    pub slc_sbs: u32,
    /// Free superblocks.
    pub free_sbs: u32,
    pub superblocks: u32,
    /// Units of a superblock in native and in SLC mode.
    pub units_per_sb: u32,
    pub units_per_sb_slc: u32,
    pub native_bits: u32,
}

/// An SLC cache policy (see module docs).
pub trait CachePolicy: Send {
    /// May the host open one more SLC superblock now?
    fn may_open_slc(&self, v: &CacheView) -> bool;
    /// Host data (units) the cache may hold in the current state.
    fn limit_units(&self, v: &CacheView) -> u64;
    /// Fold the cache while the host is idle.
    fn idle_fold(&self) -> bool;
    /// SLC units folded per host unit written to native blocks while the host is busy.
    fn busy_fold_ratio(&self) -> f64;
}

/// Build the policy a preset asks for.
pub fn from_config(cfg: &DriveConfig, geo: &Geometry) -> Box<dyn CachePolicy> {
    let c = &cfg.cache;
    match c.policy {
        CacheKind::None => Box::new(none::NoCache),
        CacheKind::Static => Box::new(static_size::StaticCache {
            units: (c.static_gb.expect("validated") * 1e9 / UNIT as f64) as u64,
            idle_fold: c.idle_fold,
            busy_fold_ratio: c.busy_fold_ratio,
        }),
        CacheKind::Dynamic => Box::new(dynamic::DynamicCache {
            free_share: c.free_share.expect("validated"),
            max_cell_share: c.max_cell_share.expect("validated"),
            idle_fold: c.idle_fold,
            busy_fold_ratio: c.busy_fold_ratio,
            _geo_units: geo.total_units(),
        }),
    }
}
