//! `[drive.cache]`: the SLC cache policy and the fields it needs.

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// SLC cache: one policy and the fields it needs (`policy = "..."` names it).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "policy", rename_all = "lowercase")]
pub enum CacheConfig {
    /// No SLC cache: every host write goes to native blocks.
    None,
    /// A fixed amount of host data held in SLC mode.
    Static(StaticCacheConfig),
    /// A share of the free space written in SLC mode.
    Dynamic(DynamicCacheConfig),
}

impl CacheConfig {
    /// The fields of the policy chosen, as a table (none without a cache).
    fn policy(&self) -> Option<&dyn Section> {
        match self {
            CacheConfig::None => None,
            CacheConfig::Static(c) => Some(c),
            CacheConfig::Dynamic(c) => Some(c),
        }
    }
}

impl Section for CacheConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        if let Some(policy) = self.policy() {
            policy.add_bounded_fields(f);
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.policy().map_or(Ok(()), |policy| policy.validate())
    }
}

/// When the cache that folding frees is the host's again.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Refill {
    /// As soon as the policy allows: a drive writing natively gets bursts at cache speed
    /// as folding frees SLC superblocks.
    #[default]
    Busy,
    /// Once the cache has run out, only after the drive has paused or been trimmed: the
    /// host writes natively meanwhile, while folding drains the cache.
    Idle,
}

/// A static SLC cache.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StaticCacheConfig {
    /// Cache size in decimal GB of host data held in SLC mode.
    /// Bound: [`bounds::STATIC_GB`](crate::bounds::STATIC_GB).
    pub static_gb: f64,
    /// Fold the cache into native blocks while the host is idle.
    pub idle_fold: bool,
    /// While the host writes to native blocks, fold up to this many SLC units per host unit
    /// (as the cache fills; 0 = never while busy).
    /// Bound: [`bounds::BUSY_FOLD_RATIO`](crate::bounds::BUSY_FOLD_RATIO).
    pub busy_fold_ratio: f64,
    /// When freed cache is the host's again (default `busy`).
    #[serde(default)]
    pub refill: Refill,
}

/// Its size must also fit the NAND in SLC mode, checked with the geometry.
impl Section for StaticCacheConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.cache");
        f.add("static_gb", self.static_gb, &b::STATIC_GB);
        f.add("busy_fold_ratio", self.busy_fold_ratio, &b::BUSY_FOLD_RATIO);
    }
}

/// A dynamic SLC cache.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DynamicCacheConfig {
    /// Share of the free superblocks (those not holding native data) that may be in SLC mode (0..1].
    /// Bound: [`bounds::CACHE_SHARE`](crate::bounds::CACHE_SHARE).
    pub free_share: f64,
    /// Cap on the share of all superblocks in SLC mode (0..1].
    /// Bound: [`bounds::CACHE_SHARE`](crate::bounds::CACHE_SHARE).
    pub max_cell_share: f64,
    /// Fold the cache into native blocks while the host is idle.
    pub idle_fold: bool,
    /// While the host writes to native blocks, fold up to this many SLC units per host unit
    /// (as the cache fills; 0 = never while busy).
    /// Bound: [`bounds::BUSY_FOLD_RATIO`](crate::bounds::BUSY_FOLD_RATIO).
    pub busy_fold_ratio: f64,
    /// When freed cache is the host's again (default `busy`).
    #[serde(default)]
    pub refill: Refill,
}

impl Section for DynamicCacheConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.cache");
        f.add("free_share", self.free_share, &b::CACHE_SHARE);
        f.add("max_cell_share", self.max_cell_share, &b::CACHE_SHARE);
        f.add("busy_fold_ratio", self.busy_fold_ratio, &b::BUSY_FOLD_RATIO);
    }
}
