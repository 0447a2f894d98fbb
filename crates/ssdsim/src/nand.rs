//! NAND array timing: die and channel timelines.
//!
//! Contract: every die and every channel is a timeline, "busy until t"
//! (nanoseconds of virtual time). An operation starts at the later of the
//! time its input is ready and the time its resources are free, and pushes
//! their busy-until forward; resources serve operations in the order they
//! are scheduled (first come, first served, no backfilling). Nothing here
//! knows about mapping; callers pass die indices and cell modes.
//!
//! - read: die busy `t_read`, then the channel moves the data out.
//! - program: the channel moves the data in, then the die is busy `t_prog`.
//! - erase: the die is busy `t_erase` (no channel use).

use crate::config::{CellMode, DriveConfig};
use crate::geometry::{Geometry, UNIT};

/// Timings of one mode, in ns.
#[derive(Debug, Clone, Copy)]
pub struct ModeNs {
    pub read: u64,
    pub prog: u64,
    pub erase: u64,
}

/// The dies and channels of the drive.
#[derive(Debug, Clone)]
pub struct Nand {
    pub die_free: Vec<u64>,
    pub chan_free: Vec<u64>,
    channels: u32,
    /// Channel time to move one 4 KiB unit, ns (fractional kept in ps).
    unit_xfer_ps: u64,
    pub slc: ModeNs,
    pub native: ModeNs,
    /// Count of die-operations (for counters).
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
}

fn us(v: f64) -> u64 {
    (v * 1000.0).round() as u64
}

impl Nand {
    pub fn new(cfg: &DriveConfig, geo: &Geometry) -> Nand {
        let t = |m: CellMode| {
            let c = cfg.timing(m);
            ModeNs { read: us(c.t_read_us), prog: us(c.t_prog_us), erase: us(c.t_erase_us) }
        };
        Nand {
            die_free: vec![0; geo.dies as usize],
            chan_free: vec![0; geo.channels as usize],
            channels: geo.channels,
            unit_xfer_ps: (UNIT as f64 / (cfg.nand.channel_mbps * 1e6) * 1e12).round() as u64,
            slc: t(CellMode::Slc),
            native: t(cfg.native_mode),
            reads: 0,
            programs: 0,
            erases: 0,
        }
    }

    /// Channel time to move `units` 4 KiB units, ns.
    #[inline]
    pub fn xfer_ns(&self, units: u32) -> u64 {
        (self.unit_xfer_ps * units as u64).div_ceil(1000)
    }

    #[inline]
    pub fn mode(&self, slc: bool) -> &ModeNs {
        if slc { &self.slc } else { &self.native }
    }

    /// Read `units` units of one page on `die`, input ready at `t`; returns when the data is in the controller.
    #[inline]
    pub fn read(&mut self, die: u32, slc: bool, units: u32, t: u64) -> u64 {
        let d = die as usize;
        let start = self.die_free[d].max(t);
        let sensed = start + self.mode(slc).read;
        self.die_free[d] = sensed;
        let c = (die % self.channels) as usize;
        let xs = self.chan_free[c].max(sensed);
        let done = xs + self.xfer_ns(units);
        self.chan_free[c] = done;
        self.reads += 1;
        done
    }

    /// Program one program unit of `units` units on `die`, data ready at `t`; returns the program's end.
    #[inline]
    pub fn program(&mut self, die: u32, slc: bool, units: u32, t: u64) -> u64 {
        let c = (die % self.channels) as usize;
        let xs = self.chan_free[c].max(t);
        let xe = xs + self.xfer_ns(units);
        self.chan_free[c] = xe;
        let d = die as usize;
        let ps = self.die_free[d].max(xe);
        let pe = ps + self.mode(slc).prog;
        self.die_free[d] = pe;
        self.programs += 1;
        pe
    }

    /// Erase one block on every die (a superblock), from `t`; returns when all are done.
    pub fn erase_all(&mut self, slc: bool, t: u64) -> u64 {
        let e = self.mode(slc).erase;
        let mut end = t;
        for f in self.die_free.iter_mut() {
            *f = (*f).max(t) + e;
            end = end.max(*f);
        }
        self.erases += 1;
        end
    }

    /// Time at which every die and channel is free.
    pub fn all_free(&self) -> u64 {
        self.die_free.iter().chain(self.chan_free.iter()).copied().max().unwrap_or(0)
    }
}
