//! Garbage-collection victim choice.
//!
//! Contract of [`VictimPolicy`]: it holds the set of *full* superblocks that
//! may be reclaimed, is told every change of their valid-unit counts, and
//! names the best victim on request without scanning every superblock. A
//! superblock is in the set from the moment it is full until it is picked
//! (the FTL removes it when reclaiming starts) or emptied.
//!
//! Scores are comparable across policies' instances of the same kind (the FTL
//! keeps one set for SLC and one for native superblocks and takes the better
//! of the two): valid counts are in 4 KiB units, and relocating `v` units of
//! any superblock frees one superblock, so `v` is the cost of a victim in
//! either mode. Among equally attractive victims the oldest goes first.

mod buckets;
mod cost_benefit;
mod greedy;

pub use cost_benefit::CostBenefit;
pub use greedy::Greedy;

use crate::config::VictimKind;

/// A victim-selection policy over full superblocks.
pub trait VictimPolicy: Send + Sync {
    /// A full superblock with `valid` valid units, closed at `age_stamp` (the FTL's
    /// write clock), joins the set.
    fn insert(&mut self, sb: u32, valid: u32, age_stamp: u64);
    /// The valid count of `sb` (if in the set) changed from `old` to `new`.
    fn update(&mut self, sb: u32, old: u32, new: u32);
    /// Remove `sb` from the set (no-op if absent).
    fn remove(&mut self, sb: u32);
    /// The best victim at write clock `now` and its score (higher is better).
    fn best(&mut self, now: u64) -> Option<(u32, f64)>;
    /// Number of superblocks in the set.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn contains(&self, sb: u32) -> bool;
}

/// The policy a preset names, for `superblocks` superblocks of at most `max_valid` units.
pub fn from_kind(kind: VictimKind, superblocks: u32, max_valid: u32) -> Box<dyn VictimPolicy> {
    match kind {
        VictimKind::Greedy => Box::new(Greedy::new(superblocks, max_valid)),
        VictimKind::CostBenefit => Box::new(CostBenefit::new(superblocks, max_valid)),
    }
}
