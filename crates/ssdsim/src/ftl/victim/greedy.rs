//! Greedy: the superblock with the fewest valid units (the cheapest to empty);
//! among equals, the one that has been a candidate longest.

use super::buckets::Buckets;
use super::VictimPolicy;

/// Greedy victim choice; exact to within one bucket width (see [`Buckets`]).
pub struct Greedy(Buckets);

impl Greedy {
    pub fn new(superblocks: u32, max_valid: u32) -> Greedy {
        Greedy(Buckets::new(superblocks, max_valid))
    }
}

impl VictimPolicy for Greedy {
    fn insert(&mut self, sb: u32, valid: u32, age_stamp: u64) {
        self.0.insert(sb, valid, age_stamp);
    }
    fn update(&mut self, sb: u32, old: u32, new: u32) {
        self.0.update(sb, old, new);
    }
    fn remove(&mut self, sb: u32) {
        self.0.remove(sb);
    }
    fn best(&mut self, _now: u64) -> Option<(u32, f64)> {
        let (b, sb) = self.0.heads().next()?;
        Some((sb, -(self.0.valid_of(b) as f64)))
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn contains(&self, sb: u32) -> bool {
        self.0.contains(sb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_fewest_valid_and_the_oldest_of_equals() {
        let mut g = Greedy::new(10, 100);
        g.insert(1, 50, 0);
        g.insert(2, 10, 1);
        g.insert(3, 70, 2);
        g.insert(4, 10, 3);
        assert_eq!(g.best(9).map(|b| b.0), Some(2));
        g.update(3, 70, 5);
        assert_eq!(g.best(9).map(|b| b.0), Some(3));
        g.remove(3);
        g.remove(2);
        assert_eq!(g.best(9).map(|b| b.0), Some(4));
        g.remove(4);
        g.remove(1);
        assert_eq!(g.best(9), None);
        assert!(g.is_empty());
    }
}
