//! Wear-levelling policies: which free superblock the FTL writes next, and when cold
//! data must move off young superblocks.
//!
//! Contract of [`Levelling`]: [`pick`](Levelling::pick) chooses among the free
//! superblocks the FTL offers (in the order they were freed), given each one's wear, or
//! None where it may not be used (a block too worn for SLC mode); [`spread_bound`](Levelling::spread_bound)
//! is the wear spread beyond which static levelling moves the data of the least worn
//! superblock holding data, so that it too takes its share of the erases.

use crate::config::{Levelling as Kind, WearConfig};

/// A wear-levelling policy (see module docs).
pub trait Levelling: Send + Sync {
    /// Index of the free superblock to write next, among `wear` (each free superblock's
    /// wear in native P/E cycles in the order they were freed, None where not usable).
    fn pick(&self, wear: &mut dyn Iterator<Item = Option<f64>>) -> Option<usize>;
    /// Spread of wear (cycles) beyond which the least worn data is moved; None: never.
    fn spread_bound(&self) -> Option<f64> {
        None
    }
}

/// No levelling: the oldest freed superblock is written next (first in, first out), as
/// a simple firmware does; wear then evens out only as far as the workload evens it.
pub struct FirstFreed;

impl Levelling for FirstFreed {
    fn pick(&self, wear: &mut dyn Iterator<Item = Option<f64>>) -> Option<usize> {
        wear.enumerate().find(|(_, w)| w.is_some()).map(|(i, _)| i)
    }
}

/// Dynamic levelling: the least worn free superblock is written next (the first freed
/// of equally worn ones). Blocks holding data that is never rewritten keep their wear.
pub struct LeastWorn;

impl Levelling for LeastWorn {
    fn pick(&self, wear: &mut dyn Iterator<Item = Option<f64>>) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, w) in wear.enumerate() {
            if let Some(w) = w {
                if best.is_none_or(|(_, b)| w < b) {
                    best = Some((i, w));
                }
            }
        }
        best.map(|(i, _)| i)
    }
}

/// Static levelling: dynamic, and cold data moved off the least worn superblocks when the
/// spread passes `bound` cycles.
pub struct MovesColdData {
    pub bound: f64,
}

impl Levelling for MovesColdData {
    fn pick(&self, wear: &mut dyn Iterator<Item = Option<f64>>) -> Option<usize> {
        LeastWorn.pick(wear)
    }
    fn spread_bound(&self) -> Option<f64> {
        Some(self.bound)
    }
}

/// The policy a preset asks for; without `[drive.wear]`, none.
pub fn from_config(cfg: Option<&WearConfig>) -> Box<dyn Levelling> {
    match cfg.map(|w| (w.levelling, w.static_spread_pe)) {
        None | Some((Kind::None, _)) => Box::new(FirstFreed),
        Some((Kind::Dynamic, _)) => Box::new(LeastWorn),
        Some((Kind::Static, bound)) => Box::new(MovesColdData {
            bound: bound.expect("checked by the preset's validation") as f64,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(policy: &dyn Levelling, wear: &[Option<f64>]) -> Option<usize> {
        policy.pick(&mut wear.iter().copied())
    }

    #[test]
    fn policies_pick_the_first_freed_or_the_least_worn_usable_superblock() {
        let wear = [Some(5.0), None, Some(2.0), Some(2.0)];
        assert_eq!(pick(&FirstFreed, &wear), Some(0));
        assert_eq!(pick(&LeastWorn, &wear), Some(2));
        assert_eq!(pick(&MovesColdData { bound: 1.0 }, &wear), Some(2));
        assert_eq!(pick(&LeastWorn, &[None, None]), None);
        assert_eq!(pick(&FirstFreed, &[]), None);
    }
}
