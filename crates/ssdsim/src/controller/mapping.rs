//! Where the mapping table is held: all of it in the drive's DRAM, or, on a
//! DRAM-less drive, a cache of map pages in a small memory (the host memory
//! buffer, HMB).
//!
//! Contract: the table has 4 bytes per 4 KiB unit and is stored on NAND in map
//! pages of one NAND page each. When the memory holds the whole table, every
//! lookup hits. Otherwise the memory holds as many map pages as fit, in sets of
//! [`WAYS`] with least-recently-used replacement; a lookup or update of a page
//! that is not held misses (the controller reads it from NAND first), and a page
//! changed while held is written back to NAND when it is evicted. Every page a
//! command touches costs `hit_ns` of controller time (the memory access, across
//! PCIe for HMB).

use crate::config::DriveConfig;
use crate::geometry::{Geometry, UNIT};
use crate::time::ps_from_ns;

/// Map pages per set: enough associativity that sequential and random access
/// patterns are not distorted by conflicts, small enough to search linearly.
const WAYS: usize = 8;
/// Bytes of the mapping table per 4 KiB unit (a 32-bit physical address).
const ENTRY_BYTES: u64 = 4;
/// Marker of an empty way.
const EMPTY: u64 = u64::MAX;

/// What an access to a map page needs from the NAND.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// The page was not held: it must be read from NAND.
    pub miss: bool,
    /// A changed page was evicted to make room: it must be written to NAND.
    pub write_back: bool,
}

pub struct MappingCache {
    /// 4 KiB units whose entries one map page holds.
    units_per_page: u64,
    /// Controller time per map page touched, ps.
    hit_ps: u64,
    /// Map pages held when the table does not fit; None when it does.
    held: Option<Sets>,
}

impl MappingCache {
    pub fn new(cfg: &DriveConfig, geo: &Geometry) -> MappingCache {
        let page_bytes = cfg.geometry.page_bytes as u64;
        let units_per_page = page_bytes / ENTRY_BYTES;
        let Some(m) = &cfg.mapping else {
            // The whole table in DRAM; its access time is part of the command costs.
            return MappingCache {
                units_per_page,
                hit_ps: 0,
                held: None,
            };
        };
        let pages = geo.user_units.div_ceil(units_per_page);
        let capacity = (m.cache_mib * (1u64 << 20) as f64 / page_bytes as f64) as u64;
        MappingCache {
            units_per_page,
            hit_ps: ps_from_ns(m.hit_ns),
            held: (capacity < pages).then(|| Sets::new(capacity.max(WAYS as u64))),
        }
    }

    /// 4 KiB units whose entries one map page holds.
    pub fn units_per_page(&self) -> u32 {
        self.units_per_page as u32
    }

    /// 4 KiB units of NAND one map page takes.
    pub fn page_units(&self) -> u32 {
        (self.units_per_page * ENTRY_BYTES / UNIT) as u32
    }

    /// Controller time per map page touched, ps.
    #[inline]
    pub fn hit_ps(&self) -> u64 {
        self.hit_ps
    }

    /// Does every lookup hit (the whole table in memory)?
    #[inline]
    pub fn holds_all(&self) -> bool {
        self.held.is_none()
    }

    /// Look up (`update` false) or change (`update` true) map page `page`.
    #[inline]
    pub fn access(&mut self, page: u64, update: bool) -> Access {
        match &mut self.held {
            None => Access::default(),
            Some(sets) => sets.access(page, update),
        }
    }

    /// Forget every held page (purge: the table is fresh).
    pub fn clear(&mut self) {
        if let Some(sets) = &mut self.held {
            *sets = Sets::new(sets.tags.len() as u64);
        }
    }
}

/// A set-associative cache of map pages with least-recently-used replacement.
struct Sets {
    sets: u64,
    tags: Vec<u64>,
    last_use: Vec<u64>,
    changed: Vec<bool>,
    clock: u64,
}

impl Sets {
    fn new(capacity: u64) -> Sets {
        let sets = (capacity / WAYS as u64).max(1);
        let n = (sets * WAYS as u64) as usize;
        Sets {
            sets,
            tags: vec![EMPTY; n],
            last_use: vec![0; n],
            changed: vec![false; n],
            clock: 0,
        }
    }

    fn access(&mut self, page: u64, update: bool) -> Access {
        self.clock += 1;
        let base = ((page % self.sets) as usize) * WAYS;
        let ways = base..base + WAYS;
        if let Some(i) = ways.clone().find(|&i| self.tags[i] == page) {
            self.last_use[i] = self.clock;
            self.changed[i] |= update;
            return Access::default();
        }
        let victim = ways.min_by_key(|&i| self.last_use[i]).expect("WAYS > 0");
        let write_back = self.tags[victim] != EMPTY && self.changed[victim];
        self.tags[victim] = page;
        self.last_use[victim] = self.clock;
        self.changed[victim] = update;
        Access {
            miss: true,
            write_back,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_cache_misses_then_hits_and_writes_back_changed_pages() {
        let mut s = Sets::new(8);
        assert!(s.access(1, true).miss);
        assert!(!s.access(1, false).miss);
        for p in 2..9 {
            assert!(!s.access(p, false).write_back);
        }
        // Page 1 is the least recently used and was changed: evicting it writes it back.
        assert_eq!(
            s.access(100, false),
            Access {
                miss: true,
                write_back: true
            }
        );
        assert!(s.access(1, false).miss);
    }
}
