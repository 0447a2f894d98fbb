//! Cost-benefit (Rosenblum and Ousterhout's log-structured file system): the
//! victim with the highest `(1 - u) / (1 + u) x age`, where `u` is the share
//! of the superblock still valid and `age` the time since it was closed. Cold
//! superblocks (old, their data unlikely to be overwritten soon) are reclaimed
//! at a higher utilisation than hot ones, which a greedy choice would leave to
//! empty themselves; the cost `1 + u` counts reading and rewriting the valid part.

use super::buckets::Buckets;
use super::VictimPolicy;

/// Cost-benefit victim choice over the heads of the valid-count buckets: within a
/// bucket the head has been a candidate longest, so it is (nearly) the oldest and
/// the best of its bucket; a choice looks at most at every bucket once.
pub struct CostBenefit {
    buckets: Buckets,
    max_valid: f64,
}

impl CostBenefit {
    pub fn new(superblocks: u32, max_valid: u32) -> CostBenefit {
        CostBenefit {
            buckets: Buckets::new(superblocks, max_valid),
            max_valid: max_valid as f64,
        }
    }
}

impl VictimPolicy for CostBenefit {
    fn insert(&mut self, sb: u32, valid: u32, age_stamp: u64) {
        self.buckets.insert(sb, valid, age_stamp);
    }
    fn update(&mut self, sb: u32, old: u32, new: u32) {
        self.buckets.update(sb, old, new);
    }
    fn remove(&mut self, sb: u32) {
        self.buckets.remove(sb);
    }
    fn best(&mut self, now: u64) -> Option<(u32, f64)> {
        let max_valid = self.max_valid;
        let heads: Vec<(usize, u32)> = self.buckets.heads().collect();
        heads
            .into_iter()
            .map(|(b, sb)| {
                let u = self.buckets.valid_of(b) as f64 / max_valid;
                // +1: a superblock closed this instant still has an age, so ties keep their order.
                let age = (now.saturating_sub(self.buckets.closed_at[sb as usize]) + 1) as f64;
                (sb, (1.0 - u) / (1.0 + u) * age)
            })
            .fold(None, |best: Option<(u32, f64)>, c| match best {
                Some(b) if b.1 >= c.1 => Some(b),
                _ => Some(c),
            })
    }
    fn len(&self) -> usize {
        self.buckets.len()
    }
    fn contains(&self, sb: u32) -> bool {
        self.buckets.contains(sb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_fuller_superblock_beats_a_young_emptier_one() {
        let mut c = CostBenefit::new(4, 1000);
        c.insert(0, 600, 0); // cold: closed long ago, 60 % valid
        c.insert(1, 400, 9_900); // hot: just closed, 40 % valid
        assert_eq!(c.best(10_000).map(|b| b.0), Some(0));
        // Of the same age, the emptier one wins (as greedy would choose).
        let mut c = CostBenefit::new(4, 1000);
        c.insert(0, 600, 0);
        c.insert(1, 400, 0);
        assert_eq!(c.best(10_000).map(|b| b.0), Some(1));
    }
}
