//! Garbage-collection victim choice.
//!
//! Contract of [`VictimPolicy`]: it holds the set of *full* superblocks that
//! may be reclaimed, is told every change of their valid-unit counts, and
//! names a victim on request in O(1) amortised time (no scan of all blocks).
//! A superblock is in the set from the moment it is full until it is picked
//! (the FTL removes it when reclaiming starts) or removed otherwise.

/// A victim-selection policy over full superblocks.
pub trait VictimPolicy: Send {
    /// A full superblock with `valid` valid units joins the set.
    fn insert(&mut self, sb: u32, valid: u32);
    /// The valid count of `sb` (if in the set) changed from `old` to `new`.
    fn update(&mut self, sb: u32, old: u32, new: u32);
    /// Remove `sb` from the set (no-op if absent).
    fn remove(&mut self, sb: u32);
    /// The best victim's id, without removing it.
    fn peek(&mut self) -> Option<u32>;
    /// Number of superblocks in the set.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn contains(&self, sb: u32) -> bool;
}

mod greedy;
pub use greedy::Greedy;
