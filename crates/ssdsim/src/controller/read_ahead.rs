//! Sequential read-ahead.
//!
//! Contract: a read that starts where the previous read ended continues a
//! sequential stream; the controller then reads ahead from the end of what it
//! has fetched up to `read_ahead_kib` beyond the read, on the NAND, at once. A
//! later read wholly inside what was fetched takes its data from the
//! controller's buffer when the NAND delivered it, without new NAND reads. Any
//! other read ends the stream. A drive without read-ahead reads sequentially
//! at queue depth 1 no faster than it reads at random.

use crate::config::DriveConfig;
use crate::geometry::UNIT;
use std::collections::VecDeque;

/// Fetched pieces remembered: a window of a few MiB read ahead in pieces of one
/// command each.
const PIECES: usize = 64;

pub struct ReadAhead {
    /// Units to keep fetched beyond the end of the last read.
    window: u64,
    /// Where a read continuing the stream starts.
    next_lba: u64,
    /// Fetched pieces in order: (first unit, end unit, when their data is in the controller).
    pieces: VecDeque<(u64, u64, u64)>,
}

impl ReadAhead {
    /// The read-ahead of a preset, or None when it has none.
    pub fn new(cfg: &DriveConfig) -> Option<ReadAhead> {
        let kib = cfg.controller.read_ahead_kib? as u64;
        Some(ReadAhead {
            window: (kib * 1024).div_ceil(UNIT),
            next_lba: u64::MAX,
            pieces: VecDeque::with_capacity(PIECES),
        })
    }

    /// A read of `units` from `lba`: when its data was all fetched ahead, the time it is
    /// in the controller; and the range to fetch now (if the read continues the stream).
    pub fn on_read(&mut self, lba: u64, units: u64) -> (Option<u64>, Option<(u64, u64)>) {
        let end = lba + units;
        let continues = lba == self.next_lba;
        self.next_lba = end;
        if !continues {
            self.pieces.clear();
            return (None, None);
        }
        while self.pieces.front().is_some_and(|p| p.1 <= lba) {
            self.pieces.pop_front();
        }
        let covered = self.pieces.front().is_some_and(|p| p.0 <= lba)
            && self.pieces.back().is_some_and(|p| p.1 >= end);
        let ready = covered.then(|| {
            self.pieces
                .iter()
                .filter(|p| p.0 < end)
                .map(|p| p.2)
                .max()
                .unwrap_or(0)
        });
        let fetched_end = self.pieces.back().map_or(end, |p| p.1.max(end));
        let target = end + self.window;
        let fetch = (fetched_end < target).then_some((fetched_end, target));
        (ready, fetch)
    }

    /// Units `first..end` were fetched and are in the controller at `ready`.
    pub fn fetched(&mut self, first: u64, end: u64, ready: u64) {
        if self.pieces.len() == PIECES {
            self.pieces.pop_front();
        }
        self.pieces.push_back((first, end, ready));
    }

    /// Forget the stream (a write or TRIM may have changed what was fetched).
    pub fn forget(&mut self) {
        self.next_lba = u64::MAX;
        self.pieces.clear();
    }
}
