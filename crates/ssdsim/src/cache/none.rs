//! No SLC cache: every host write goes to native blocks.
use super::{CachePolicy, CacheView};

pub struct NoCache;

impl CachePolicy for NoCache {
    fn policy_units(&self, _: &CacheView) -> u64 {
        0
    }
    fn idle_fold(&self) -> bool {
        false
    }
    fn max_fold_ratio(&self) -> f64 {
        0.0
    }
}
