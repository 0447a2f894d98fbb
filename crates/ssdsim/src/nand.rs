//! NAND array timing: die and channel timelines.
//!
//! Contract: every die and every channel is a timeline, "busy until t"
//! (nanoseconds of virtual time). An operation starts at the later of the
//! time its input is ready and the time its resources are free, and pushes
//! their busy-until forward; resources serve operations in the order they
//! are scheduled (first come, first served, no backfilling). Nothing here
//! knows about mapping; callers pass die indices and cell modes.
//!
//! Dies and channels are gap-filling timelines ([`GapTimeline`]): a transfer ready
//! earlier may use a gap before a transfer scheduled earlier but ready later.
//!
//! - read: die busy `t_read`, then the channel moves the data out.
//! - program: the channel moves the data in, then the die is busy `t_prog`.
//! - erase: the die is busy `t_erase` (no channel use).

use crate::config::{CellMode, DriveConfig};
use crate::geometry::{Geometry, UNIT};
use crate::time::{ns_from_us, ps_to_move};
use crate::timeline::GapTimeline;

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
    pub die: Vec<GapTimeline>,
    pub chan: Vec<GapTimeline>,
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

impl Nand {
    pub fn new(cfg: &DriveConfig, geo: &Geometry) -> Nand {
        let t = |m: CellMode| {
            let c = cfg.timing(m);
            ModeNs {
                read: ns_from_us(c.t_read_us),
                prog: ns_from_us(c.t_prog_us),
                erase: ns_from_us(c.t_erase_us),
            }
        };
        Nand {
            die: vec![GapTimeline::new(8); geo.dies as usize],
            chan: vec![GapTimeline::new(16); geo.channels as usize],
            channels: geo.channels,
            unit_xfer_ps: ps_to_move(UNIT, cfg.nand.channel_mbps),
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
        if slc {
            &self.slc
        } else {
            &self.native
        }
    }

    /// Read `units` units of one page on `die`, input ready at `t`; returns when the data is in the controller.
    #[inline]
    pub fn read(&mut self, die: u32, slc: bool, units: u32, t: u64) -> u64 {
        let d = die as usize;
        let tr = self.mode(slc).read;
        let sensed = self.die[d].reserve(t, tr) + tr;
        let c = (die % self.channels) as usize;
        let d = self.xfer_ns(units);
        let done = self.chan[c].reserve(sensed, d) + d;
        self.reads += 1;
        done
    }

    /// Program one program unit of `units` units on `die`, data ready at `t`; returns the program's end.
    #[inline]
    pub fn program(&mut self, die: u32, slc: bool, units: u32, t: u64) -> u64 {
        let c = (die % self.channels) as usize;
        let dur = self.xfer_ns(units);
        let xe = self.chan[c].reserve(t, dur) + dur;
        let d = die as usize;
        let tp = self.mode(slc).prog;
        let pe = self.die[d].reserve(xe, tp) + tp;
        self.programs += 1;
        pe
    }

    /// Erase one block on every die (a superblock), from `t`; returns when all are done.
    pub fn erase_all(&mut self, slc: bool, t: u64) -> u64 {
        let e = self.mode(slc).erase;
        let mut end = t;
        for d in self.die.iter_mut() {
            end = end.max(d.reserve(t, e) + e);
        }
        self.erases += 1;
        end
    }

    /// Time at which every die and channel is free.
    pub fn all_free(&self) -> u64 {
        let d = self.die_busy_until();
        self.chan
            .iter()
            .map(|c| c.free_at())
            .max()
            .unwrap_or(0)
            .max(d)
    }

    /// Time at which every die is free for good.
    pub fn die_busy_until(&self) -> u64 {
        self.die.iter().map(|d| d.free_at()).max().unwrap_or(0)
    }

    /// Every die busy until `t` (purge).
    pub fn block_dies_until(&mut self, t: u64) {
        for d in self.die.iter_mut() {
            d.block_until(t);
        }
    }

    /// Forget channel history before `now` (all later requests are ready at or after it).
    #[inline]
    pub fn prune(&mut self, now: u64) {
        for c in self.chan.iter_mut().chain(self.die.iter_mut()) {
            c.prune(now);
        }
    }
}
