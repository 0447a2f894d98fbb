//! Resource timelines.
//!
//! Contract: a [`GapTimeline`] reserves non-overlapping busy intervals on one
//! resource (a channel, a link direction). A reservation of `dur` for data
//! ready at `ready` gets the earliest start `>= ready` where the resource is
//! free for `dur`, including gaps left between earlier reservations, so an
//! operation scheduled later but ready earlier is not stuck behind it
//! (no head-of-line blocking). Only the last `N` intervals are remembered;
//! time before the oldest remembered interval counts as busy (conservative,
//! never overlapping). Adjacent intervals are merged, so a saturated resource
//! costs O(1) per reservation; the intervals are kept in a ring, so forgetting the
//! oldest is O(1) too.

/// A ring slot that holds no interval: it ends after any time, so counting the slots
/// that end by a time counts remembered intervals only.
const UNUSED: (u64, u64) = (u64::MAX, u64::MAX);

/// A timeline remembering the last `N` busy intervals (`N` a power of two: the
/// intervals are a ring).
#[derive(Debug, Clone)]
pub struct GapTimeline<const N: usize> {
    floor: u64,
    /// Ring position of the oldest remembered interval.
    head: usize,
    len: usize,
    /// The remembered intervals from `head` on; the other slots are [`UNUSED`].
    ring: [(u64, u64); N],
}

impl<const N: usize> Default for GapTimeline<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> GapTimeline<N> {
    const POWER_OF_TWO: () = assert!(N.is_power_of_two());

    /// An empty timeline: the resource is free from time 0.
    pub fn new() -> GapTimeline<N> {
        let () = Self::POWER_OF_TWO;
        GapTimeline {
            floor: 0,
            head: 0,
            len: 0,
            ring: [UNUSED; N],
        }
    }

    /// The `i`th remembered interval, oldest first.
    #[inline(always)]
    fn at(&self, i: usize) -> (u64, u64) {
        self.ring[(self.head + i) % N]
    }

    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut (u64, u64) {
        &mut self.ring[(self.head + i) % N]
    }

    /// How many remembered intervals end at or before `t`: since they are in order, the
    /// index of the first that ends after it. Counted over the whole ring without
    /// branches, as a scan that stops there mispredicts its exit.
    #[inline(always)]
    fn ended_by(&self, t: u64) -> usize {
        self.ring.iter().map(|&(_, e)| (e <= t) as usize).sum()
    }

    /// Forget the `k` oldest intervals: time before the end of the last of them counts as busy.
    #[inline]
    fn forget_oldest(&mut self, k: usize) {
        self.floor = self.floor.max(self.at(k - 1).1);
        for j in 0..k {
            *self.at_mut(j) = UNUSED;
        }
        self.head = (self.head + k) % N;
        self.len -= k;
    }

    /// Reserve `dur` ns at or after `ready`; returns the start.
    ///
    /// The two common cases are decided here, inline: a request ready after everything
    /// remembered, and one that cannot start before the last interval ends (the
    /// interval before it ends by `ready`, so no earlier gap lies after `ready`, and the
    /// gap before the last one is too short): it goes right behind the last one.
    #[inline(always)]
    pub fn reserve(&mut self, ready: u64, dur: u64) -> u64 {
        let s = ready.max(self.floor);
        let n = self.len;
        if n > 0 {
            let (last_start, last_end) = self.at(n - 1);
            if s >= last_end {
                if s == last_end {
                    self.at_mut(n - 1).1 = s + dur;
                } else {
                    self.insert(n, (s, s + dur));
                }
                return s;
            }
            if s + dur > last_start && (n == 1 || self.at(n - 2).1 <= s) {
                self.at_mut(n - 1).1 = last_end + dur;
                return last_end;
            }
        }
        self.reserve_in_gap(s, dur)
    }

    /// [`reserve`](Self::reserve) from `s` (at or after the floor), in the general case.
    #[inline(never)]
    fn reserve_in_gap(&mut self, mut s: u64, dur: u64) -> u64 {
        // From the first interval that ends after `s`, the first gap that fits.
        let mut i = self.ended_by(s);
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
        *self.at_mut(self.len - 1) = UNUSED;
        self.len -= 1;
    }

    #[inline]
    fn insert(&mut self, mut i: usize, x: (u64, u64)) {
        if self.len == N {
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

    /// Hint the CPU to fetch the timeline, ahead of a reservation on it.
    #[inline(always)]
    pub fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self as *const Self as *const i8;
            for off in (0..std::mem::size_of::<Self>()).step_by(64) {
                // SAFETY: a prefetch of bytes inside `self`; it has no effect on the program's state.
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch(p.add(off), _MM_HINT_T0);
                }
            }
        }
    }

    /// Forget intervals that end at or before `now` (no request can be ready earlier).
    #[inline(always)]
    pub fn prune(&mut self, now: u64) {
        // The oldest slot is unused when nothing is remembered.
        if self.at(0).1 <= now {
            self.forget_ended_by(now);
        }
    }

    /// [`prune`](Self::prune) when there is something to forget (out of line: the check
    /// alone comes before every reservation on the NAND).
    #[inline(never)]
    fn forget_ended_by(&mut self, now: u64) {
        self.forget_oldest(self.ended_by(now));
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
        self.ring = [UNUSED; N];
        self.floor = self.floor.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_gaps_without_overlap() {
        let mut t = GapTimeline::<8>::new();
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
        let mut t = GapTimeline::<2>::new();
        t.reserve(100, 10);
        t.reserve(200, 10);
        t.reserve(300, 10); // forgets [100,110): floor = 110
        assert_eq!(t.reserve(0, 10), 110);
    }

    /// The contract spelled out plainly: the intervals in a sorted list, the earliest gap
    /// found by a walk over it, the oldest forgotten beyond `cap`.
    struct Plain {
        cap: usize,
        floor: u64,
        iv: Vec<(u64, u64)>,
    }

    impl Plain {
        fn reserve(&mut self, ready: u64, dur: u64) -> u64 {
            let mut s = ready.max(self.floor);
            let mut i = self.iv.iter().take_while(|iv| iv.1 <= s).count();
            while i < self.iv.len() && s + dur > self.iv[i].0 {
                s = s.max(self.iv[i].1);
                i += 1;
            }
            let e = s + dur;
            let prev = i > 0 && self.iv[i - 1].1 == s;
            let next = i < self.iv.len() && self.iv[i].0 == e;
            match (prev, next) {
                (true, true) => self.iv[i - 1].1 = self.iv.remove(i).1,
                (true, false) => self.iv[i - 1].1 = e,
                (false, true) => self.iv[i].0 = s,
                (false, false) => {
                    self.iv.insert(i, (s, e));
                    if self.iv.len() > self.cap {
                        self.floor = self.floor.max(self.iv.remove(0).1);
                    }
                }
            }
            s
        }

        fn prune(&mut self, now: u64) {
            while self.iv.first().is_some_and(|iv| iv.1 <= now) {
                self.floor = self.floor.max(self.iv.remove(0).1);
            }
        }
    }

    /// Random reservations (ready times around a moving clock, as on a busy die or
    /// channel), prunes and purges give the same starts and states as the plain model.
    fn same_as_plain<const N: usize>(seed: u64) {
        let mut rng = crate::rng::Rng::new(seed);
        let mut t = GapTimeline::<N>::new();
        let mut p = Plain {
            cap: N,
            floor: 0,
            iv: vec![],
        };
        let mut now = 0;
        for _ in 0..20_000 {
            now += rng.below(30);
            match rng.below(100) {
                0 => {
                    now += 100;
                    t.block_until(now);
                    p.iv.clear();
                    p.floor = p.floor.max(now);
                }
                1..=9 => {
                    t.prune(now);
                    p.prune(now);
                }
                _ => {
                    let ready = (now + rng.below(200)).saturating_sub(100);
                    let dur = 1 + rng.below(40);
                    assert_eq!(t.reserve(ready, dur), p.reserve(ready, dur));
                }
            }
            let probe = now + rng.below(100);
            assert_eq!(
                t.busy_at(probe),
                probe < p.floor || p.iv.iter().any(|iv| iv.0 <= probe && probe < iv.1)
            );
            assert_eq!(t.floor, p.floor);
            assert_eq!((0..t.len).map(|i| t.at(i)).collect::<Vec<_>>(), p.iv);
        }
    }

    #[test]
    fn reserves_as_the_plain_contract_says() {
        for seed in 1..=4 {
            same_as_plain::<2>(seed);
            same_as_plain::<8>(seed);
            same_as_plain::<16>(seed);
        }
    }
}
