//! Mapping entries fetched into the CPU's cache ahead of the commands that look them up.
//!
//! A prefetch of the logical-to-physical table (a gigabyte per terabyte) misses the TLB,
//! and the CPU holds the prefetch until its page walk ends (under a hypervisor, a walk of
//! two page tables). Walks issued back to back overlap; one per command, between a
//! command's other work, would each cost their whole latency. So the entries of commands
//! generated ahead are prefetched in batches.

use crate::controller::Controller;

/// Entries prefetched together: half of the commands generated ahead, so each entry is
/// asked for between one and two batches before its command is issued.
const BATCH: usize = 8;

/// Mapping units waiting for their batch, and the batch before.
pub(super) struct Prefetches {
    lbas: [u64; BATCH],
    n: usize,
    before: Option<[u64; BATCH]>,
}

impl Prefetches {
    pub(super) fn new() -> Prefetches {
        Prefetches {
            lbas: [0; BATCH],
            n: 0,
            before: None,
        }
    }

    /// The entry of mapping unit `lba` will be looked up: prefetch it with its batch. When
    /// a batch is complete, the batch before it (its entries in the cache by now) has the
    /// reverse entries of its pages prefetched too: a write clears them.
    #[inline]
    pub(super) fn add(&mut self, lba: u64, dev: &Controller) {
        self.lbas[self.n] = lba;
        self.n += 1;
        if self.n == BATCH {
            if let Some(before) = &self.before {
                before.iter().for_each(|&l| dev.prefetch_page(l));
            }
            self.lbas.iter().for_each(|&l| dev.prefetch(l));
            self.before = Some(self.lbas);
            self.n = 0;
        }
    }
}
