//! Greedy victim choice: the superblock with the fewest valid units.

use super::VictimPolicy;

const NIL: u32 = u32::MAX;

/// Greedy: the superblock with the fewest valid units. Superblocks sit in
/// buckets of `2^shift` valid counts (at most about 1024 buckets), each a
/// doubly-linked list threaded through flat arrays; the victim is the head of
/// the lowest non-empty bucket, so it is within one bucket width of the true
/// minimum (exact when `shift` is 0).
pub struct Greedy {
    shift: u32,
    head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    bucket: Vec<u32>,
    low: usize,
    len: usize,
}

impl Greedy {
    pub fn new(superblocks: u32, max_valid: u32) -> Greedy {
        let mut shift = 0;
        while (max_valid >> shift) > 1023 {
            shift += 1;
        }
        let n = superblocks as usize;
        Greedy {
            shift,
            head: vec![NIL; ((max_valid >> shift) + 1) as usize],
            next: vec![NIL; n],
            prev: vec![NIL; n],
            bucket: vec![NIL; n],
            low: 0,
            len: 0,
        }
    }

    fn link(&mut self, sb: u32, valid: u32) {
        let b = ((valid >> self.shift) as usize).min(self.head.len() - 1);
        let s = sb as usize;
        let h = self.head[b];
        self.next[s] = h;
        self.prev[s] = NIL;
        if h != NIL {
            self.prev[h as usize] = sb;
        }
        self.head[b] = sb;
        self.bucket[s] = b as u32;
        if b < self.low {
            self.low = b;
        }
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
        }
        self.bucket[s] = NIL;
    }
}

impl VictimPolicy for Greedy {
    fn insert(&mut self, sb: u32, valid: u32) {
        debug_assert_eq!(self.bucket[sb as usize], NIL);
        self.link(sb, valid);
        self.len += 1;
    }

    fn update(&mut self, sb: u32, old: u32, new: u32) {
        let s = sb as usize;
        if self.bucket[s] == NIL || (old >> self.shift) == (new >> self.shift) {
            return;
        }
        self.unlink(sb);
        self.link(sb, new);
    }

    fn remove(&mut self, sb: u32) {
        if self.bucket[sb as usize] != NIL {
            self.unlink(sb);
            self.len -= 1;
        }
    }

    fn peek(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        while self.head[self.low] == NIL {
            self.low += 1;
        }
        Some(self.head[self.low])
    }

    fn len(&self) -> usize {
        self.len
    }

    fn contains(&self, sb: u32) -> bool {
        self.bucket[sb as usize] != NIL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_fewest_valid() {
        let mut g = Greedy::new(10, 100);
        g.insert(1, 50);
        g.insert(2, 10);
        g.insert(3, 70);
        assert_eq!(g.peek(), Some(2));
        g.update(3, 70, 5);
        assert_eq!(g.peek(), Some(3));
        g.remove(3);
        assert_eq!(g.peek(), Some(2));
        g.remove(2);
        g.remove(1);
        assert_eq!(g.peek(), None);
        assert!(g.is_empty());
    }

    #[test]
    fn buckets_bound_the_error() {
        let mut g = Greedy::new(4, 1 << 20);
        assert!(g.head.len() <= 1024);
        g.insert(0, 900_000);
        g.insert(1, 1000);
        assert_eq!(g.peek(), Some(1));
    }
}
