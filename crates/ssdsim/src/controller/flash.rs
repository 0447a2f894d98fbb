//! The back end every part of the controller schedules on: the FTL's state, the
//! NAND timelines and the activity counters, kept consistent with each other.
//!
//! Contract: a placement that completes a program unit schedules its program at
//! the time the last of its data is ready; a superblock opened without an erase
//! behind it is erased first (deferred erase); the counters count every unit
//! the host wrote and the NAND programmed, and every relocation and erase.

use crate::ftl::{EraseMode, Ftl, Stream};
use crate::geometry::Ppa;
use crate::nand::Nand;

/// Cumulative activity, in 4 KiB units and operations.
#[derive(Debug, Clone, Copy, Default)]
pub struct Activity {
    pub host_units: u64,
    pub nand_units: u64,
    pub gc_units: u64,
    pub fold_units: u64,
    pub gc_sbs: u64,
    pub fold_sbs: u64,
    pub erases: u64,
    pub rmw_reads: u64,
}

pub struct Flash {
    pub ftl: Ftl,
    pub nand: Nand,
    pub activity: Activity,
    /// Per stream: the latest time at which data of its program unit being filled is ready.
    pu_ready: [u64; 3],
}

impl Flash {
    pub fn new(ftl: Ftl, nand: Nand) -> Flash {
        Flash {
            ftl,
            nand,
            activity: Activity::default(),
            pu_ready: [0; 3],
        }
    }

    /// Open a superblock for `stream` at `t`, erasing it first if it still holds old data.
    pub fn open(&mut self, stream: Stream, slc: bool, t: u64) {
        if let Some(mode) = self.ftl.open(stream, slc).erase_first {
            self.erase(mode, t);
        }
    }

    fn erase(&mut self, mode: EraseMode, t: u64) -> u64 {
        self.activity.erases += 1;
        self.nand.erase_all(mode.slc, t)
    }

    /// Erase one free superblock that still holds old data, from `t`; false when there is none.
    pub fn erase_ahead(&mut self, t: u64) -> bool {
        match self.ftl.erase_one() {
            Some(mode) => {
                self.erase(mode, t);
                true
            }
            None => false,
        }
    }

    /// Write `lba` to `stream` (which has room) with its data ready at `ready`;
    /// returns its page and, when it completed a program unit, the program's end.
    #[inline]
    pub fn place(&mut self, lba: u32, stream: Stream, ready: u64) -> (Ppa, Option<u64>) {
        let (ppa, pu_done) = self.ftl.place(lba, stream);
        (ppa, self.after_placement(ppa, stream, pu_done, ready))
    }

    /// Move the valid page `ppa` to the relocation stream, its data ready at `ready`.
    #[inline]
    pub fn relocate(&mut self, ppa: Ppa, ready: u64) {
        let (new, pu_done) = self.ftl.relocate(ppa);
        self.after_placement(new, Stream::Reloc, pu_done, ready);
    }

    #[inline]
    fn after_placement(
        &mut self,
        ppa: Ppa,
        stream: Stream,
        pu_done: bool,
        ready: u64,
    ) -> Option<u64> {
        let s = stream as usize;
        self.pu_ready[s] = self.pu_ready[s].max(ready);
        if !pu_done {
            return None;
        }
        let ready = std::mem::take(&mut self.pu_ready[s]);
        let slc = self.ftl.write_point(stream).slc;
        let g = self.ftl.geo();
        let die = g.die_of_pu(g.pu_of(ppa));
        let units = g.units_per_pu;
        self.activity.nand_units += units as u64;
        Some(self.nand.program(die, slc, units, ready))
    }

    /// The die holding `ppa` and the cell mode its superblock was written in.
    #[inline]
    fn die_and_mode(&self, ppa: Ppa) -> (u32, bool) {
        let g = self.ftl.geo();
        let sb = g.superblock_of(ppa);
        (g.die_of_pu(g.pu_of(ppa)), self.ftl.is_slc(sb))
    }

    /// Sense `n` units of the program unit holding `ppa` for the drive's own work, from `t`.
    #[inline]
    pub fn read_own(&mut self, ppa: Ppa, n: u32, t: u64) -> u64 {
        let (die, slc) = self.die_and_mode(ppa);
        self.nand.read(die, slc, n, t)
    }

    /// Sense `n` units of the program unit holding `ppa` for the host, from `t`.
    #[inline]
    pub fn read_for_host(&mut self, ppa: Ppa, n: u32, t: u64) -> u64 {
        let (die, slc) = self.die_and_mode(ppa);
        self.nand.host_read(die, slc, n, t)
    }

    /// Forget the write points' pending data times (purge).
    pub fn forget_pending(&mut self) {
        self.pu_ready = [0; 3];
    }
}
