//! `[drive.ftl]`: the flash translation layer.

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// Flash translation layer.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Forced garbage collection starts when free superblocks fall to this many.
    /// Bound: [`bounds::GC_SUPERBLOCKS`](crate::bounds::GC_SUPERBLOCKS).
    pub gc_low_superblocks: u32,
    /// Idle-time (background) garbage collection runs while free superblocks are below this many.
    /// Bound: [`bounds::GC_SUPERBLOCKS`](crate::bounds::GC_SUPERBLOCKS).
    pub gc_idle_superblocks: u32,
    /// Victim policy: `greedy` (fewest valid units first) or `cost-benefit` (age-aware).
    pub victim_policy: VictimKind,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum VictimKind {
    Greedy,
    CostBenefit,
}

impl Section for FtlConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.ftl");
        f.add(
            "gc_low_superblocks",
            self.gc_low_superblocks,
            &b::GC_SUPERBLOCKS,
        );
        f.add(
            "gc_idle_superblocks",
            self.gc_idle_superblocks,
            &b::GC_SUPERBLOCKS,
        );
    }

    /// Background collection starts no later than forced collection. (Both must also
    /// fit the drive's superblocks and spare space, checked with the geometry.)
    fn validate(&self) -> Result<(), ConfigError> {
        if self.gc_idle_superblocks < self.gc_low_superblocks {
            return Err(ConfigError(
                "drive.ftl.gc_idle_superblocks must be >= drive.ftl.gc_low_superblocks".into(),
            ));
        }
        Ok(())
    }
}
