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
//! History no request can use any more is forgotten lazily: [`Nand::prune`] only
//! raises a watermark, and each timeline forgets what ended before it when it is
//! next used (pruning every timeline on every host read was a fifth of a read's cost;
//! the results are the same, since pruning is idempotent and monotone).
//!
//! - read: die busy `t_read`, then the channel moves the data out. With
//!   program/erase suspend (`drive.nand.suspend_us`), a host read does not wait
//!   for the program or erase its die is doing: it starts after the suspend
//!   latency, and the die's other work is pushed back by the read's time (the
//!   die's time is conserved; see [`Nand::host_read`]).
//! - program: the channel moves the data in, then the die is busy `t_prog`.
//! - erase: the die is busy `t_erase` (no channel use).
//!
//! Every operation adds its die and channel time to [`Nand::work`], for the drive's
//! energy (`crate::power`).

use crate::config::{CellMode, CellTiming, DriveConfig};
use crate::geometry::{FastDiv, Geometry, UNIT};
use crate::power::Work;
use crate::time::{ns_from_us, ps_to_move};
use crate::timeline::GapTimeline;

/// Most bits per cell of any mode (QLC), hence most page types of a wordline.
const MAX_BITS: usize = 4;
/// Busy intervals a die's timeline remembers for gap filling: a few programs and reads
/// in flight on one die at a time.
const DIE_HISTORY: usize = 8;
/// Busy intervals a channel's timeline remembers: the transfers of all its dies' work
/// in flight.
const CHANNEL_HISTORY: usize = 16;

/// Timings of one mode, in ns.
#[derive(Debug, Clone, Copy)]
pub struct ModeNs {
    /// Read time of each page type of a wordline (lower, middle, upper, top page):
    /// pages that need more reference-voltage senses take longer. Their mean is
    /// the mode's `t_read_us`.
    read: [u64; MAX_BITS],
    /// Bits per cell: a row's page type is its index modulo them.
    bits: FastDiv,
    pub prog: u64,
    pub erase: u64,
}

impl ModeNs {
    fn new(t: &CellTiming) -> ModeNs {
        let bits = t.bits_per_cell as usize;
        let levels = t.read_levels.clone().unwrap_or_else(|| vec![1; bits]);
        let mean = levels.iter().sum::<u32>() as f64 / bits as f64;
        let mut read = [0; MAX_BITS];
        for (r, &l) in read.iter_mut().zip(&levels) {
            *r = ns_from_us(t.t_read_us * l as f64 / mean);
        }
        ModeNs {
            read,
            bits: FastDiv::new(bits as u32),
            prog: ns_from_us(t.t_prog_us),
            erase: ns_from_us(t.t_erase_us),
        }
    }

    /// Read time of a page in wordline row `row`, ns.
    #[inline]
    pub fn read_ns(&self, row: u32) -> u64 {
        self.read[self.bits.rem(row) as usize]
    }
}

/// The dies and channels of the drive.
#[derive(Debug, Clone)]
pub struct Nand {
    die: Vec<GapTimeline<DIE_HISTORY>>,
    /// Host reads of each die, when reads suspend programs and erases.
    die_reads: Vec<GapTimeline<DIE_HISTORY>>,
    chan: Vec<GapTimeline<CHANNEL_HISTORY>>,
    /// No request is ready before this time: history that ended before it is forgotten.
    watermark: u64,
    /// Suspend latency, ns; None: reads wait for programs and erases.
    suspend_ns: Option<u64>,
    /// Channel of a die: its index modulo the channels (a multiply, not a division).
    channel_of: FastDiv,
    /// Channel time to move one 4 KiB unit, ns (fractional kept in ps).
    unit_xfer_ps: u64,
    slc: ModeNs,
    native: ModeNs,
    /// Die and channel time spent, for the drive's energy.
    pub work: Work,
}

impl Nand {
    pub fn new(cfg: &DriveConfig, geo: &Geometry) -> Nand {
        let t = |m: CellMode| ModeNs::new(cfg.timing(m));
        Nand {
            die: vec![GapTimeline::new(); geo.dies as usize],
            die_reads: vec![GapTimeline::new(); geo.dies as usize],
            chan: vec![GapTimeline::new(); geo.channels as usize],
            watermark: 0,
            suspend_ns: cfg.nand.suspend_us.map(ns_from_us),
            channel_of: FastDiv::new(geo.channels),
            unit_xfer_ps: ps_to_move(UNIT, cfg.nand.channel_mbps),
            slc: t(CellMode::Slc),
            native: t(cfg.native_mode),
            work: Work::default(),
        }
    }

    /// Dies of the drive.
    #[inline]
    pub fn dies(&self) -> u32 {
        self.die.len() as u32
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

    /// Read `units` units of the page in wordline row `row` on `die` for the drive's own
    /// work (relocation, read-modify-write merges, map pages): in turn with the die's
    /// programs and erases.
    #[inline]
    pub fn read(&mut self, die: u32, slc: bool, row: u32, units: u32, t: u64) -> u64 {
        // The channel's timeline arrives from memory while the die's is worked on.
        self.chan[self.channel_of.rem(die) as usize].prefetch();
        let tr = self.mode(slc).read_ns(row);
        self.work.read_ns += tr;
        let sensed = pruned(&mut self.die[die as usize], self.watermark).reserve(t, tr) + tr;
        self.transfer_out(die, units, sensed)
    }

    /// Read for the host: like [`read`](Self::read), but with program/erase suspend
    /// the read starts after the suspend latency instead of after the die's
    /// current program or erase, and that work resumes later: the read's time is
    /// reserved on the die's timeline at its first gap from the read's start on.
    #[inline]
    pub fn host_read(&mut self, die: u32, slc: bool, row: u32, units: u32, t: u64) -> u64 {
        let Some(suspend) = self.suspend_ns else {
            return self.read(die, slc, row, units, t);
        };
        let d = die as usize;
        let tr = self.mode(slc).read_ns(row);
        self.work.read_ns += tr;
        let ready = if pruned(&mut self.die[d], self.watermark).busy_at(t) {
            t + suspend
        } else {
            t
        };
        let start = pruned(&mut self.die_reads[d], self.watermark).reserve(ready, tr);
        self.die[d].reserve(start, tr);
        self.transfer_out(die, units, start + tr)
    }

    /// Read the same page `times` more times, one after another from `t`, each after `gap`
    /// (the decode that failed before it), moving its `units` out each time (read retries,
    /// soft senses): the die senses them back to back with the gaps between, and the
    /// channel moves all of them out after the last, so that an idle drive takes exactly
    /// `times` × (gap + sense + transfer) with the channel's load conserved (under load,
    /// the transfers' order is approximate). Returns when the last is out.
    #[allow(clippy::too_many_arguments)]
    pub fn read_again(
        &mut self,
        die: u32,
        slc: bool,
        row: u32,
        units: u32,
        t: u64,
        times: u32,
        gap: u64,
    ) -> u64 {
        if times == 0 {
            return t;
        }
        let (k, tr) = (times as u64, self.mode(slc).read_ns(row));
        let held = k * tr + (k - 1) * gap;
        self.work.read_ns += k * tr;
        let sensed =
            pruned(&mut self.die[die as usize], self.watermark).reserve(t + gap, held) + held;
        self.transfer_out(die, units * times, sensed)
    }

    /// The channel moves `units` sensed units out of `die` from `sensed` on; returns when they are out.
    #[inline]
    fn transfer_out(&mut self, die: u32, units: u32, sensed: u64) -> u64 {
        let c = self.channel_of.rem(die) as usize;
        let d = self.xfer_ns(units);
        self.work.channel_units += units as u64;
        pruned(&mut self.chan[c], self.watermark).reserve(sensed, d) + d
    }

    /// Program one program unit of `units` units on `die`, data ready at `t`; returns the program's end.
    #[inline]
    pub fn program(&mut self, die: u32, slc: bool, units: u32, t: u64) -> u64 {
        let (c, d) = (self.channel_of.rem(die) as usize, die as usize);
        // The die's timeline arrives from memory while the channel's is worked on.
        self.die[d].prefetch();
        let dur = self.xfer_ns(units);
        let xe = pruned(&mut self.chan[c], self.watermark).reserve(t, dur) + dur;
        let tp = self.mode(slc).prog;
        self.work.channel_units += units as u64;
        self.work.program_ns += tp;
        pruned(&mut self.die[d], self.watermark).reserve(xe, tp) + tp
    }

    /// Erase one block on every die (a superblock), from `t`; returns when all are done.
    pub fn erase_all(&mut self, slc: bool, t: u64) -> u64 {
        let e = self.mode(slc).erase;
        self.work.erase_ns += e * self.dies() as u64;
        let mut end = t;
        for d in self.die.iter_mut() {
            end = end.max(pruned(d, self.watermark).reserve(t, e) + e);
        }
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

    /// Erase `superblocks` native superblocks one after another from `t`, every die
    /// blocked until the last is erased (purge); returns when that is.
    pub fn erase_in_turn(&mut self, superblocks: u64, t: u64) -> u64 {
        let e = self.mode(false).erase;
        self.work.erase_ns += superblocks * e * self.dies() as u64;
        let end = t + superblocks * e;
        for d in self.die.iter_mut().chain(self.die_reads.iter_mut()) {
            d.block_until(end);
        }
        end
    }

    /// Forget history before `now` (all later requests are ready at or after it);
    /// each timeline forgets it when next used.
    #[inline]
    pub fn prune(&mut self, now: u64) {
        self.watermark = self.watermark.max(now);
    }
}

/// `timeline`, with the history that ended before `watermark` forgotten.
#[inline]
fn pruned<const N: usize>(timeline: &mut GapTimeline<N>, watermark: u64) -> &mut GapTimeline<N> {
    timeline.prune(watermark);
    timeline
}
