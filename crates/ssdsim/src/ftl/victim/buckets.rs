//! Superblocks indexed by valid count: the shared index of the victim policies.
//!
//! Superblocks sit in buckets of `2^shift` valid counts (at most 1024 buckets),
//! each a doubly-linked FIFO threaded through flat arrays: a superblock joins
//! its bucket at the tail, so the head of a bucket is the one that has been in
//! it longest (for superblocks that were never overwritten, the oldest).

const NIL: u32 = u32::MAX;
/// Most buckets: bounds the scan of a cost-benefit choice and the error of a greedy one.
const MAX_BUCKETS: u32 = 1024;

pub struct Buckets {
    shift: u32,
    head: Vec<u32>,
    tail: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    bucket: Vec<u32>,
    /// When each superblock was closed (write clock), for age-aware policies.
    pub closed_at: Vec<u64>,
    /// No bucket below this one is occupied.
    low: usize,
    len: usize,
}

impl Buckets {
    pub fn new(superblocks: u32, max_valid: u32) -> Buckets {
        let mut shift = 0;
        while (max_valid >> shift) >= MAX_BUCKETS {
            shift += 1;
        }
        let n = superblocks as usize;
        let buckets = ((max_valid >> shift) + 1) as usize;
        Buckets {
            shift,
            head: vec![NIL; buckets],
            tail: vec![NIL; buckets],
            next: vec![NIL; n],
            prev: vec![NIL; n],
            bucket: vec![NIL; n],
            closed_at: vec![0; n],
            low: 0,
            len: 0,
        }
    }

    fn bucket_of(&self, valid: u32) -> usize {
        ((valid >> self.shift) as usize).min(self.head.len() - 1)
    }

    /// Lowest valid count of bucket `b` (the score of its members, within one bucket width).
    pub fn valid_of(&self, b: usize) -> u32 {
        (b as u32) << self.shift
    }

    fn link(&mut self, sb: u32, valid: u32) {
        let b = self.bucket_of(valid);
        let s = sb as usize;
        let t = self.tail[b];
        self.prev[s] = t;
        self.next[s] = NIL;
        if t != NIL {
            self.next[t as usize] = sb;
        } else {
            self.head[b] = sb;
        }
        self.tail[b] = sb;
        self.bucket[s] = b as u32;
        self.low = self.low.min(b);
    }

    fn unlink(&mut self, sb: u32) {
        let s = sb as usize;
        let b = self.bucket[s] as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.head[b] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            self.tail[b] = p;
        }
        self.bucket[s] = NIL;
    }

    pub fn insert(&mut self, sb: u32, valid: u32, closed_at: u64) {
        debug_assert_eq!(self.bucket[sb as usize], NIL);
        self.closed_at[sb as usize] = closed_at;
        self.link(sb, valid);
        self.len += 1;
    }

    pub fn update(&mut self, sb: u32, old: u32, new: u32) {
        if self.bucket[sb as usize] == NIL || self.bucket_of(old) == self.bucket_of(new) {
            return;
        }
        self.unlink(sb);
        self.link(sb, new);
    }

    pub fn remove(&mut self, sb: u32) {
        if self.bucket[sb as usize] != NIL {
            self.unlink(sb);
            self.len -= 1;
        }
    }

    /// Occupied buckets from the lowest valid count up, each with its head (longest in it).
    pub fn heads(&mut self) -> impl Iterator<Item = (usize, u32)> + '_ {
        if self.len > 0 {
            while self.head[self.low] == NIL {
                self.low += 1;
            }
        }
        let start = if self.len == 0 {
            self.head.len()
        } else {
            self.low
        };
        (start..self.head.len())
            .filter(|&b| self.head[b] != NIL)
            .map(|b| (b, self.head[b]))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn contains(&self, sb: u32) -> bool {
        self.bucket[sb as usize] != NIL
    }

    #[cfg(test)]
    pub fn buckets(&self) -> usize {
        self.head.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_is_first_in_first_out() {
        let mut b = Buckets::new(8, 100);
        for sb in [5, 2, 7] {
            b.insert(sb, 40, 0);
        }
        assert_eq!(b.heads().next(), Some((40, 5)));
        b.remove(5);
        assert_eq!(b.heads().next(), Some((40, 2)));
        b.update(2, 40, 41);
        b.update(2, 41, 40); // rejoins at the tail
        assert_eq!(b.heads().next(), Some((40, 7)));
    }

    #[test]
    fn buckets_are_bounded() {
        let b = Buckets::new(4, 1 << 20);
        assert!(b.buckets() <= MAX_BUCKETS as usize);
    }
}
