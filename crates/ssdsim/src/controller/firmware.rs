//! Firmware work that keeps the mapping table durable, and what it costs the host.
//!
//! Contract: every mapping change (a host unit written, a unit relocated, a TRIM
//! command) adds `journal_entry_bytes` to the journal; each time a program unit
//! of journal is full, it is programmed in SLC mode on the next die in turn. The
//! map pages changed since the last checkpoint are remembered; after every
//! `checkpoint_mib` of journal a checkpoint writes them all to NAND and holds the
//! controller for `checkpoint_us` (host commands wait behind it). Each unit that
//! garbage collection or folding relocates costs `relocate_unit_ns` of controller
//! time, in the path of the host command that caused it. Without a `[drive.firmware]`
//! section there is no such work.

use crate::config::DriveConfig;
use crate::geometry::{Geometry, UNIT};
use crate::time::{ns_from_us, ps_from_ns};

/// Work the NAND and the controller must do now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Due {
    /// Pages of journal to program.
    pub journal_pages: u64,
    /// A checkpoint: the map pages to write.
    pub checkpoint_pages: Option<u64>,
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
    /// Map pages changed since the last checkpoint (a bit each).
    changed: Vec<u64>,
    changed_pages: u64,
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
            changed: vec![0; map_pages.div_ceil(64) as usize],
            changed_pages: 0,
        })
    }

    /// Controller time per relocated unit, ps.
    #[inline]
    pub fn relocate_unit_ps(&self) -> u64 {
        self.relocate_unit_ps
    }

    /// Controller time of a checkpoint, ns.
    pub fn checkpoint_ns(&self) -> u64 {
        self.checkpoint_ns
    }

    /// `changes` mapping changes in map page `page`: returns the work now due.
    #[inline]
    pub fn record(&mut self, changes: u64, page: u64) -> Due {
        let (word, bit) = ((page / 64) as usize, 1u64 << (page % 64));
        if self.changed[word] & bit == 0 {
            self.changed[word] |= bit;
            self.changed_pages += 1;
        }
        self.open_bytes += changes * self.entry_bytes;
        if self.open_bytes < self.page_bytes {
            return Due::default();
        }
        let journal_pages = self.open_bytes / self.page_bytes;
        let written = journal_pages * self.page_bytes;
        self.open_bytes -= written;
        self.since_checkpoint += written;
        let checkpoint_pages = (self.since_checkpoint >= self.checkpoint_bytes).then(|| {
            self.since_checkpoint = 0;
            self.changed.fill(0);
            std::mem::take(&mut self.changed_pages)
        });
        Due {
            journal_pages,
            checkpoint_pages,
        }
    }

    /// Forget the journal and the changed pages (purge: the table is fresh).
    pub fn clear(&mut self) {
        self.open_bytes = 0;
        self.since_checkpoint = 0;
        self.changed.fill(0);
        self.changed_pages = 0;
    }
}
