//! Firmware work that keeps the mapping table durable, and what it costs the host.
//!
//! Contract: every mapping change (a host unit written, a unit relocated, a TRIM
//! command) adds `journal_entry_bytes` to the journal; each time a program unit
//! of journal is full, it is programmed in SLC mode on the next die in turn. The
//! map pages changed since the last checkpoint are remembered; after every
//! `checkpoint_mib` of journal a checkpoint holds the controller for
//! `checkpoint_us` (host commands wait behind it), and the pages it must write go
//! to NAND a few with each journal page until the next one (a rolling checkpoint:
//! firmware spreads the table's write-back rather than stopping the drive for it). Each unit that
//! garbage collection or folding relocates costs `relocate_unit_ns` of controller
//! time, in the path of the host command that caused it; each mapped unit a TRIM
//! deallocates costs `deallocate_share` of a write command's controller time and is a
//! mapping change of its own (a TRIM of an unmapped range changes nothing). Without a
//! `[drive.firmware]` section there is no such work.

use crate::config::DriveConfig;
use crate::geometry::{Geometry, UNIT};
use crate::time::{ns_from_us, ps_from_ns};

/// Work the NAND and the controller must do now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Due {
    /// Pages of journal to program.
    pub journal_pages: u64,
    /// Map pages of a checkpoint to program.
    pub map_pages: u64,
    /// A checkpoint was taken (the controller stalls).
    pub checkpoint: bool,
}

pub struct Firmware {
    entry_bytes: u64,
    /// Bytes of one journal page (a program unit).
    page_bytes: u64,
    /// Journal bytes not yet programmed.
    open_bytes: u64,
    /// Journal bytes between checkpoints, and since the last one.
    checkpoint_bytes: u64,
    since_checkpoint: u64,
    checkpoint_ns: u64,
    relocate_unit_ps: u64,
    deallocate_unit_ps: u64,
    /// Map pages changed since the last checkpoint (a bit each).
    changed: Vec<u64>,
    changed_pages: u64,
    /// Map pages of past checkpoints not yet written, and how many go with each journal page.
    backlog: u64,
    per_journal_page: u64,
}

impl Firmware {
    /// The firmware work of a preset, or None when it has no `[drive.firmware]` section.
    pub fn new(cfg: &DriveConfig, geo: &Geometry, map_pages: u64) -> Option<Firmware> {
        let f = cfg.firmware.as_ref()?;
        Some(Firmware {
            entry_bytes: f.journal_entry_bytes as u64,
            page_bytes: geo.units_per_pu as u64 * UNIT,
            open_bytes: 0,
            checkpoint_bytes: (f.checkpoint_mib * (1u64 << 20) as f64) as u64,
            since_checkpoint: 0,
            checkpoint_ns: ns_from_us(f.checkpoint_us),
            relocate_unit_ps: ps_from_ns(f.relocate_unit_ns),
            deallocate_unit_ps: ps_from_ns(f.deallocate_share * cfg.controller.write_cmd_us * 1e3),
            changed: vec![0; map_pages.div_ceil(64) as usize],
            changed_pages: 0,
            backlog: 0,
            per_journal_page: 0,
        })
    }

    /// Controller time per relocated unit, ps.
    #[inline]
    pub fn relocate_unit_ps(&self) -> u64 {
        self.relocate_unit_ps
    }

    /// Controller time per mapped unit a TRIM deallocates, ps.
    pub fn deallocate_unit_ps(&self) -> u64 {
        self.deallocate_unit_ps
    }

    /// Controller time of a checkpoint, ns.
    pub fn checkpoint_ns(&self) -> u64 {
        self.checkpoint_ns
    }

    /// Map page `page` changed.
    #[inline]
    pub fn mark(&mut self, page: u64) {
        let (word, bit) = ((page / 64) as usize, 1u64 << (page % 64));
        if self.changed[word] & bit == 0 {
            self.changed[word] |= bit;
            self.changed_pages += 1;
        }
    }

    /// `changes` more mapping changes in the journal: returns the work now due.
    #[inline]
    pub fn append(&mut self, changes: u64) -> Due {
        self.open_bytes += changes * self.entry_bytes;
        if self.open_bytes < self.page_bytes {
            return Due::default();
        }
        let journal_pages = self.open_bytes / self.page_bytes;
        let written = journal_pages * self.page_bytes;
        self.open_bytes -= written;
        self.since_checkpoint += written;
        let checkpoint = self.since_checkpoint >= self.checkpoint_bytes;
        if checkpoint {
            self.since_checkpoint = 0;
            self.changed.fill(0);
            self.backlog += std::mem::take(&mut self.changed_pages);
            let interval_pages = (self.checkpoint_bytes / self.page_bytes).max(1);
            self.per_journal_page = self.backlog.div_ceil(interval_pages);
        }
        let map_pages = self.backlog.min(self.per_journal_page * journal_pages);
        self.backlog -= map_pages;
        Due {
            journal_pages,
            map_pages,
            checkpoint,
        }
    }

    /// Forget the journal and the changed pages (purge: the table is fresh).
    pub fn clear(&mut self) {
        self.open_bytes = 0;
        self.since_checkpoint = 0;
        self.changed.fill(0);
        self.changed_pages = 0;
        self.backlog = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::small;
    use crate::config::FirmwareConfig;

    // A checkpoint stalls once and spreads its map pages over the next interval's journal pages.
    #[test]
    fn a_checkpoint_writes_its_map_pages_a_few_at_a_time() {
        let mut cfg = small(0.6);
        cfg.firmware = Some(FirmwareConfig {
            journal_entry_bytes: 8,
            checkpoint_mib: 1.0,
            checkpoint_us: 100.0,
            relocate_unit_ns: 0.0,
            deallocate_share: 0.0,
        });
        let geo = Geometry::new(&cfg).unwrap();
        let mut fw = Firmware::new(&cfg, &geo, 1000).unwrap();
        let page_bytes = geo.units_per_pu as u64 * UNIT;
        let mut dues = Vec::new();
        for i in 0..(3u64 << 20) / 8 {
            fw.mark(i % 1000);
            let due = fw.append(1);
            if due != Due::default() {
                dues.push(due);
            }
        }
        let pages_per_interval = (1u64 << 20) / page_bytes;
        assert_eq!(dues.len() as u64, 3 * pages_per_interval);
        assert_eq!(dues.iter().filter(|d| d.checkpoint).count(), 3);
        let most = dues.iter().map(|d| d.map_pages).max().unwrap();
        assert!(
            most <= 1000u64.div_ceil(pages_per_interval),
            "{most} map pages at once"
        );
        // Two checkpoints' pages written in full; the third's are being written.
        let written: u64 = dues.iter().map(|d| d.map_pages).sum();
        assert!((2000..3000).contains(&written), "{written}");
    }
}
