//! Resource timelines.
//!
//! Contract: a [`GapTimeline`] reserves non-overlapping busy intervals on one
//! resource (a channel, a link direction). A reservation of `dur` for data
//! ready at `ready` gets the earliest start `>= ready` where the resource is
//! free for `dur`, including gaps left between earlier reservations, so an
//! operation scheduled later but ready earlier is not stuck behind it
//! (no head-of-line blocking). Only the last `cap` intervals are remembered;
//! time before the oldest remembered interval counts as busy (conservative,
//! never overlapping). Adjacent intervals are merged, so a saturated resource
//! costs O(1) per reservation; the intervals are kept in a ring, so forgetting the
//! oldest is O(1) too.

/// Most intervals a timeline remembers (a power of two: the intervals are a ring).
pub const CAP: usize = 16;

#[derive(Debug, Clone)]
pub struct GapTimeline {
    floor: u64,
    /// Ring position of the oldest remembered interval.
    head: usize,
    len: usize,
    cap: usize,
    ring: [(u64, u64); CAP],
}

impl GapTimeline {
    /// A timeline remembering `cap` (at most [`CAP`]) intervals.
    pub fn new(cap: usize) -> GapTimeline {
        GapTimeline {
            floor: 0,
            head: 0,
            len: 0,
            cap: cap.clamp(1, CAP),
            ring: [(0, 0); CAP],
        }
    }

    /// The `i`th remembered interval, oldest first.
    #[inline]
    fn at(&self, i: usize) -> (u64, u64) {
        self.ring[(self.head + i) % CAP]
    }

    #[inline]
    fn at_mut(&mut self, i: usize) -> &mut (u64, u64) {
        &mut self.ring[(self.head + i) % CAP]
    }

    /// Forget the `k` oldest intervals: time before the end of the last of them counts as busy.
    #[inline]
    fn forget_oldest(&mut self, k: usize) {
        self.floor = self.floor.max(self.at(k - 1).1);
        self.head = (self.head + k) % CAP;
        self.len -= k;
    }

    /// Reserve `dur` ns at or after `ready`; returns the start.
    #[inline]
    pub fn reserve(&mut self, ready: u64, dur: u64) -> u64 {
        let mut s = ready.max(self.floor);
        let n = self.len;
        if n == 0 {
            self.insert(0, (s, s + dur));
            return s;
        }
        let last_end = self.at(n - 1).1;
        if s >= last_end {
            // Fast path: after everything.
            if s == last_end {
                self.at_mut(n - 1).1 = s + dur;
            } else {
                self.insert(n, (s, s + dur));
            }
            return s;
        }
        // First interval that ends after `s` (scan from the back: requests are mostly recent).
        let mut i = n;
        while i > 0 && self.at(i - 1).1 > s {
            i -= 1;
        }
        while i < self.len {
            let (a, b) = self.at(i);
            if s + dur <= a {
                break;
            }
            if b > s {
                s = b;
            }
            i += 1;
        }
        let e = s + dur;
        let touch_prev = i > 0 && self.at(i - 1).1 == s;
        let touch_next = i < self.len && self.at(i).0 == e;
        match (touch_prev, touch_next) {
            (true, true) => {
                self.at_mut(i - 1).1 = self.at(i).1;
                self.remove(i);
            }
            (true, false) => self.at_mut(i - 1).1 = e,
            (false, true) => self.at_mut(i).0 = s,
            (false, false) => self.insert(i, (s, e)),
        }
        s
    }

    /// Remove the `i`th interval, shifting the younger ones down.
    #[inline]
    fn remove(&mut self, i: usize) {
        for j in i..self.len - 1 {
            *self.at_mut(j) = self.at(j + 1);
        }
        self.len -= 1;
    }

    #[inline]
    fn insert(&mut self, mut i: usize, x: (u64, u64)) {
        if self.len == self.cap {
            // Forget the oldest interval: time before its end counts as busy.
            if i == 0 {
                // The new interval is the oldest: forget it at once.
                self.floor = self.floor.max(x.1);
                return;
            }
            self.forget_oldest(1);
            i -= 1;
        }
        for j in (i..self.len).rev() {
            *self.at_mut(j + 1) = self.at(j);
        }
        *self.at_mut(i) = x;
        self.len += 1;
    }

    /// Forget intervals that end at or before `now` (no request can be ready earlier).
    #[inline]
    pub fn prune(&mut self, now: u64) {
        let mut k = 0;
        while k < self.len && self.at(k).1 <= now {
            k += 1;
        }
        if k > 0 {
            self.forget_oldest(k);
        }
    }

    /// Is the resource busy at `t` (time before the remembered history counts as busy)?
    #[inline]
    pub fn busy_at(&self, t: u64) -> bool {
        t < self.floor || (0..self.len).any(|i| self.at(i).0 <= t && t < self.at(i).1)
    }

    /// Time at which the resource is free for good.
    pub fn free_at(&self) -> u64 {
        if self.len == 0 {
            self.floor
        } else {
            self.at(self.len - 1).1.max(self.floor)
        }
    }

    /// Busy until `t`, forgetting every gap before it (used by purge).
    pub fn block_until(&mut self, t: u64) {
        self.len = 0;
        self.floor = self.floor.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_gaps_without_overlap() {
        let mut t = GapTimeline::new(8);
        assert_eq!(t.reserve(100, 10), 100); // [100,110)
        assert_eq!(t.reserve(0, 10), 0); // gap before
        assert_eq!(t.reserve(95, 10), 110); // overlaps 100 -> after 110
        assert_eq!(t.reserve(10, 90), 10); // exactly fills [10,100)
        assert_eq!(t.reserve(0, 5), 120);
        // all merged into one interval [0,125)
        assert_eq!(t.len, 1);
        assert_eq!(t.free_at(), 125);
    }

    #[test]
    fn forgetting_is_conservative() {
        let mut t = GapTimeline::new(2);
        t.reserve(100, 10);
        t.reserve(200, 10);
        t.reserve(300, 10); // forgets [100,110): floor = 110
        assert_eq!(t.reserve(0, 10), 110);
    }
}
