//! Reclaim scheduling: garbage collection and folding of the SLC cache.
//!
//! Space is reclaimed by one mechanism, relocation of a victim superblock's
//! valid units into native blocks (garbage collection of a native victim,
//! folding of an SLC victim). It runs
//! - by force while host writes find free superblocks short: in proportion to
//!   the host's writes, so that reclaim keeps pace with the host (the host
//!   then writes at the speed the NAND has left after relocation);
//! - in the background while the host writes to native blocks: folding, at the
//!   rate the cache policy asks for (it grows as the cache fills; the faster of it
//!   and forced folding), one whole victim after another, so each folded victim
//!   frees a superblock;
//! - while the host is idle: folding (if the policy folds when idle), garbage
//!   collection while free superblocks are below the idle threshold, static wear
//!   levelling when the FTL asks for it (the least worn full superblock emptied),
//!   refresh of data due to be rewritten (old, or read often: `crate::wear::media`),
//!   then the erases deferred when superblocks were emptied.
//!
//! Victims are chosen by the FTL's victim policy; a victim is emptied in order
//! of its pages, one read of each source program unit bringing all its valid
//! units, and freed (its erase deferred) when the last is moved.

use super::flash::Flash;
use crate::config::DriveConfig;
use crate::ftl::Stream;
use crate::geometry::NONE;

/// Relocations of forced reclaim are issued in batches of at least this many
/// units: fewer calls into the relocation loop, while still interleaved finely
/// with the host's program units (a 32 KiB program unit is 8 units).
const FORCED_BATCH_UNITS: f64 = 8.0;
/// The mapping entries of a victim's next units are prefetched this far ahead of its
/// position: several batches of forced reclaim.
const PREFETCH_UNITS: u32 = 64;
/// Background folding is issued in batches of this many units (128 KiB).
const FOLD_BATCH_UNITS: f64 = 32.0;
/// Forced reclaim relocates at least this share of a unit per host unit, so that
/// a victim with almost nothing valid is still emptied promptly.
const MIN_PACE: f64 = 0.05;
/// Below its floor of free superblocks, forced reclaim runs this many times faster
/// than the pace that keeps free space level, to win space back.
const BELOW_FLOOR_PACE: f64 = 2.0;
/// Free superblocks below which the write path reclaims synchronously before opening
/// one: one for the host stream being opened and one for relocation.
const EMERGENCY_FREE_SBS: u32 = 2;
/// Idle garbage collection takes no victim that is at least 19/20 valid: freeing one
/// superblock would cost almost a superblock of writes.
const IDLE_GC_MAX_VALID: (u64, u64) = (19, 20);

/// What a reclaim job empties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Garbage collection: the best victim, SLC or native.
    Collect,
    /// Folding: SLC victims only.
    Fold,
    /// Static wear levelling: the least worn full superblock, whose cold data holds it
    /// back from its share of the erases (in the slot of garbage collection).
    Level,
    /// Refresh: a full superblock whose data is old or was read often, rewritten (in the
    /// slot of garbage collection).
    Refresh,
}

/// A victim being emptied.
#[derive(Debug, Clone, Copy)]
struct Victim {
    sb: u32,
    /// Next unit offset to look at.
    pos: u32,
    /// End of the written area (capacity of the superblock in its mode).
    end: u32,
    slc: bool,
    /// Source program unit whose read is scheduled, and when its data is ready.
    cur_pu: u32,
    pu_ready: u64,
    /// Relocations per host unit that keep free space level while emptying it.
    pace: f64,
    /// Offset up to which the mapping entries of valid units have been prefetched.
    prefetched: u32,
}

pub struct Reclaim {
    collect: Option<Victim>,
    fold: Option<Victim>,
    /// Relocations owed to the host's pace (forced) and to background folding.
    collect_credit: f64,
    fold_credit: f64,
    gc_low: u32,
    gc_idle: u32,
}

impl Reclaim {
    pub fn new(cfg: &DriveConfig) -> Reclaim {
        Reclaim {
            collect: None,
            fold: None,
            collect_credit: 0.0,
            fold_credit: 0.0,
            gc_low: cfg.ftl.gc_low_superblocks,
            gc_idle: cfg.ftl.gc_idle_superblocks,
        }
    }

    /// Free superblocks at which forced reclaim starts.
    pub fn gc_low(&self) -> u32 {
        self.gc_low
    }

    /// Forget every job (purge).
    pub fn reset(&mut self) {
        self.collect = None;
        self.fold = None;
        self.collect_credit = 0.0;
        self.fold_credit = 0.0;
    }

    fn slot(&mut self, job: Job) -> &mut Option<Victim> {
        match job {
            Job::Collect | Job::Level | Job::Refresh => &mut self.collect,
            Job::Fold => &mut self.fold,
        }
    }

    fn start(flash: &mut Flash, job: Job) -> Option<Victim> {
        let (sb, slc) = match job {
            Job::Level => flash.ftl.take_least_worn()?,
            Job::Refresh => flash.take_refresh()?,
            Job::Collect | Job::Fold => flash.ftl.take_victim(job == Job::Fold)?,
        };
        let g = flash.ftl.geo();
        let v = flash.ftl.valid(sb) as f64;
        let gain = (g.units_per_sb as f64 - v).max(1.0);
        Some(Victim {
            sb,
            pos: 0,
            end: g.sb_capacity(slc),
            slc,
            cur_pu: NONE,
            pu_ready: 0,
            pace: (v / gain).max(MIN_PACE),
            prefetched: 0,
        })
    }

    /// Relocate up to `n` valid units of `job`'s victim from `t`, starting a victim
    /// if none is being emptied. Stops early when the victim is emptied (it is
    /// then freed) or when there is no victim. Returns the number of units moved.
    fn relocate(&mut self, job: Job, flash: &mut Flash, n: u64, t: u64) -> u64 {
        let mut c = match *self.slot(job) {
            Some(c) => c,
            None => match Self::start(flash, job) {
                Some(c) => c,
                None => return 0,
            },
        };
        let usb = flash.ftl.geo().units_per_sb;
        let upu = flash.ftl.geo().units_per_pu;
        let base = c.sb * usb;
        let mut moved = 0u64;
        Self::prefetch_ahead(flash, &mut c);
        while moved < n {
            // Past the invalid units: the next to move.
            let units = &flash.ftl.valid_units(c.sb)[c.pos as usize..c.end as usize];
            c.pos += units.iter().take_while(|&&l| l == 0).count() as u32;
            if c.pos >= c.end {
                break;
            }
            let pu = flash.ftl.geo().div_pu.div(c.pos);
            let pu_end = ((pu + 1) * upu).min(c.end);
            if pu != c.cur_pu {
                // One read of the source program unit brings all its valid units.
                let units = &flash.ftl.valid_units(c.sb)[(pu * upu) as usize..pu_end as usize];
                let k = units.iter().filter(|&&l| l != 0).count() as u32;
                c.pu_ready = flash.read_own(base + pu * upu, k, t);
                c.cur_pu = pu;
            }
            if !flash.ftl.has_room(Stream::Reloc) {
                let native = flash.open(Stream::Reloc, false, t);
                debug_assert!(native, "a native superblock always opens");
            }
            // The valid units of this program unit that fit the destination's.
            let quota = (n - moved).min(flash.ftl.room_in_pu(Stream::Reloc) as u64) as u32;
            let (next, k) = flash.relocate_valid(c.sb, (c.pos, pu_end), quota, c.pu_ready);
            c.pos = next;
            moved += k as u64;
        }
        flash.journal_relocations(t);
        let a = &mut flash.activity;
        if c.slc {
            a.fold_units += moved
        } else {
            a.gc_units += moved
        }
        if c.pos >= c.end {
            if c.slc {
                a.fold_sbs += 1
            } else {
                a.gc_sbs += 1
            }
            flash.ftl.finish_reclaim(c.sb);
            *self.slot(job) = None;
        } else {
            *self.slot(job) = Some(c);
        }
        moved
    }

    /// Prefetch the mapping entries of the victim's valid units up to [`PREFETCH_UNITS`]
    /// past its position, back to back (see `run::commands`: walks issued together overlap),
    /// so that relocating them later finds them in the CPU's cache.
    #[inline]
    fn prefetch_ahead(flash: &Flash, c: &mut Victim) {
        let to = (c.pos + PREFETCH_UNITS).min(c.end);
        if c.prefetched >= to {
            return;
        }
        let units = flash.ftl.valid_units(c.sb);
        for &l in &units[c.prefetched.max(c.pos) as usize..to as usize] {
            if l != 0 {
                flash.ftl.prefetch((l - 1) as u64);
            }
        }
        c.prefetched = to;
    }

    /// Forced reclaim in step with `host_units` host units written at `t`: while free
    /// superblocks are at or below the floor, or a victim is being emptied, relocate
    /// as many units per host unit as the victim needs to keep free space level.
    pub fn keep_pace(&mut self, flash: &mut Flash, t: u64, host_units: u32) {
        if self.collect.is_none() {
            if flash.ftl.free_sbs() > self.gc_low {
                return;
            }
            match Self::start(flash, Job::Collect) {
                Some(c) => self.collect = Some(c),
                None => return,
            }
        }
        let pace = self.collect.map_or(0.0, |c| c.pace);
        let below_floor = flash.ftl.free_sbs() + 1 < self.gc_low;
        let boost = if below_floor { BELOW_FLOOR_PACE } else { 1.0 };
        self.collect_credit += pace * boost * host_units as f64;
        if self.collect_credit >= FORCED_BATCH_UNITS || (self.collect_credit >= 1.0 && below_floor)
        {
            let n = self.collect_credit as u64;
            self.collect_credit -= n as f64;
            self.relocate(Job::Collect, flash, n, t);
            if self.collect.is_none() {
                self.collect_credit = 0.0;
            }
        }
    }

    /// Background folding in step with `host_units` host units written to native
    /// blocks at `t`, `ratio` SLC units per host unit. While forced reclaim folds too, only
    /// what the policy asks beyond forced reclaim's pace: the cache is folded at the faster
    /// of the two rates. Not while forced reclaim collects native garbage: the drive is
    /// short of space for the host's writes, and folding would not give it any sooner.
    pub fn fold_in_background(&mut self, flash: &mut Flash, ratio: f64, host_units: u32, t: u64) {
        let forced = self
            .collect
            .map_or(0.0, |c| if c.slc { c.pace } else { f64::INFINITY });
        let ratio = ratio - forced;
        if ratio <= 0.0 {
            return;
        }
        self.fold_credit += ratio * host_units as f64;
        if self.fold_credit < FOLD_BATCH_UNITS {
            return;
        }
        let mut left = self.fold_credit as u64;
        self.fold_credit -= left as f64;
        while left > 0 {
            let moved = self.relocate(Job::Fold, flash, left, t);
            if moved == 0 && self.fold.is_none() && !flash.ftl.has_slc_victims() {
                self.fold_credit = 0.0; // nothing left to fold
                return;
            }
            left = left.saturating_sub(moved.max(1));
        }
    }

    /// Make sure a free superblock can be opened at `t`: reclaim synchronously while
    /// free superblocks are at the emergency floor.
    pub fn ensure_free(&mut self, flash: &mut Flash, t: u64) {
        while flash.ftl.free_sbs() <= EMERGENCY_FREE_SBS {
            let was = self.collect.is_some();
            let moved = self.relocate(Job::Collect, flash, u64::MAX, t);
            assert!(
                moved > 0
                    || was
                    || self.collect.is_some()
                    || flash.ftl.free_sbs() > EMERGENCY_FREE_SBS,
                "no space can be reclaimed: the drive is over-committed"
            );
        }
    }

    /// Idle from `t0` to `t1`: fold (if `idle_fold`), collect garbage while free
    /// superblocks are below the idle threshold, then erase freed superblocks ahead
    /// of need. Work is scheduled in chunks while the dies are free before `t1`;
    /// the last chunk may run past `t1` (the host then waits for it, as on a real drive).
    pub fn idle(&mut self, flash: &mut Flash, idle_fold: bool, t0: u64, t1: u64) {
        let g = flash.ftl.geo();
        // Two rows of program units across the dies: the dies stay busy between checks.
        let chunk = (g.dies * g.units_per_pu * 2).max(64) as u64;
        while flash.nand.die_busy_until().max(t0) < t1 {
            let job = if idle_fold && (self.fold.is_some() || flash.ftl.has_slc_victims()) {
                Job::Fold
            } else if self.collect.is_some()
                || (flash.ftl.free_sbs() < self.gc_idle && self.worth_collecting(flash))
            {
                Job::Collect
            } else if flash.refresh_due() {
                Job::Refresh
            } else if flash.ftl.levelling_due() {
                Job::Level
            } else if flash.erase_ahead(t0) {
                continue;
            } else {
                break;
            };
            let was_active = self.slot(job).is_some();
            let moved = self.relocate(job, flash, chunk, t0);
            if moved == 0 && !was_active && self.slot(job).is_none() {
                break; // nothing to relocate
            }
        }
    }

    /// Would idle garbage collection gain space? Not when the best victim is nearly all valid.
    fn worth_collecting(&self, flash: &mut Flash) -> bool {
        let usb = flash.ftl.geo().units_per_sb as u64;
        let (num, den) = IDLE_GC_MAX_VALID;
        flash
            .ftl
            .best_victim_valid()
            .is_some_and(|v| (v as u64) * den < usb * num)
    }
}
