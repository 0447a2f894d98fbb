//! Wear of the NAND: P/E cycles per superblock in native and SLC mode, each superblock's
//! endurance, the superblocks retired when it runs out, the spare they consume, and the
//! drive that goes read-only when none is left. Sources: CALIBRATION.md, "Wear,
//! retention and error correction".
//!
//! Contract of [`Wear`]: the FTL tells it of every erase ([`Wear::erase`]); a cycle in
//! SLC mode wears a block by `rated_pe_cycles / slc_pe_cycles` of a native one (a
//! dynamic SLC cache wears the same blocks as native data). Wear is in native P/E cycles
//! and only grows. An erase that brings a superblock to its endurance fails: the
//! superblock is retired (a grown bad block) and never written again; it was free, so
//! it held no valid data. Superblocks beyond the user capacity and the reclaim reserve
//! are the spare; when retirements eat into that floor the drive is read-only. Blocks
//! worn past `slc_retire_pe_cycles` are no longer written in SLC mode. The levelling
//! policy ([`levelling`]) picks which free superblock is written next. [`Wear::age`]
//! sets the wear a drive would have after a history of writes, as its levelling would
//! have spread it.

pub mod age;
pub mod ecc;
pub mod endurance;
pub mod errors;
pub mod levelling;
pub mod media;
pub mod retention;

use crate::config::WearConfig;
use levelling::Levelling;

/// A drive's wear, per superblock.
pub struct Wear {
    /// Erases in native and in SLC mode, per superblock (ageing adds native ones).
    native: Vec<u32>,
    slc: Vec<u32>,
    /// Native P/E cycles each superblock survives (infinite without a wear model).
    endurance: Vec<f32>,
    bad: Vec<bool>,
    bad_count: u32,
    /// Native cycles one SLC-mode cycle is worth.
    slc_weight: f64,
    /// Wear beyond which a superblock is not written in SLC mode.
    slc_retire: f64,
    /// Good superblocks still young enough for SLC mode.
    slc_capable: u32,
    /// Superblocks the drive needs beyond its spare: the user capacity in native
    /// superblocks and the reclaim reserve.
    floor: u32,
    /// The last free superblock wore out while data was in flight (see [`Wear::erase_last`]).
    exhausted: bool,
    levelling: Box<dyn Levelling>,
}

/// The per-superblock wear, kept to try an age and take it back.
struct WearState {
    native: Vec<u32>,
    slc: Vec<u32>,
    bad: Vec<bool>,
    bad_count: u32,
    slc_capable: u32,
}

impl WearState {
    /// Mean native P/E cycles over the good superblocks, as [`Wear::age`] counts its target.
    fn mean(&self, slc_weight: f64) -> f64 {
        let (sum, n) =
            (0..self.native.len())
                .filter(|&s| !self.bad[s])
                .fold((0.0, 0usize), |(sum, n), s| {
                    (
                        sum + self.native[s] as f64 + self.slc[s] as f64 * slc_weight,
                        n + 1,
                    )
                });
        sum / n.max(1) as f64
    }
}

/// What ageing did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Aged {
    /// Erases added, native.
    pub erases: u64,
    /// Superblocks retired.
    pub retired: u32,
    /// The target ageing stopped at, short of the one asked, where the drive turned read-only.
    pub stopped_at: Option<f64>,
}

/// A summary of the drive's wear, for its counters and health log.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WearSummary {
    /// Native P/E cycles: the least, mean and most worn superblock (retired ones included).
    pub min_pe: f64,
    pub mean_pe: f64,
    pub max_pe: f64,
    /// Superblocks retired (grown bad).
    pub bad_superblocks: u32,
    /// Spare left, % of the spare the drive was made with (0 to 100).
    pub available_spare_pct: f64,
    pub read_only: bool,
}

impl Wear {
    /// A fresh drive of `superblocks` superblocks of `blocks_per_sb` erase blocks, of
    /// which `floor` hold the user capacity and the reclaim reserve.
    pub fn new(cfg: Option<&WearConfig>, superblocks: u32, blocks_per_sb: u32, floor: u32) -> Wear {
        let n = superblocks as usize;
        Wear {
            native: vec![0; n],
            slc: vec![0; n],
            endurance: endurance::draw(cfg, superblocks, blocks_per_sb),
            bad: vec![false; n],
            bad_count: 0,
            slc_weight: cfg.map_or(0.0, WearConfig::slc_weight),
            slc_retire: cfg
                .and_then(|w| w.slc_retire_pe_cycles)
                .map_or(f64::INFINITY, f64::from),
            slc_capable: superblocks,
            floor,
            exhausted: false,
            levelling: levelling::from_config(cfg),
        }
    }

    /// Wear of superblock `sb`, native P/E cycles.
    #[inline]
    pub fn cycles(&self, sb: u32) -> f64 {
        let s = sb as usize;
        self.native[s] as f64 + self.slc[s] as f64 * self.slc_weight
    }

    #[inline]
    pub fn is_bad(&self, sb: u32) -> bool {
        self.bad[sb as usize]
    }

    /// Superblocks retired.
    #[inline]
    pub fn bad_superblocks(&self) -> u32 {
        self.bad_count
    }

    /// May superblock `sb` be written in SLC mode?
    #[inline]
    pub fn slc_usable(&self, sb: u32) -> bool {
        self.cycles(sb) < self.slc_retire
    }

    /// Good superblocks still young enough for SLC mode.
    #[inline]
    pub fn slc_capable(&self) -> u32 {
        self.slc_capable
    }

    /// Is every spare superblock gone (the drive holds its data but takes no writes)?
    #[inline]
    pub fn read_only(&self) -> bool {
        self.good() < self.floor || self.exhausted
    }

    fn good(&self) -> u32 {
        self.native.len() as u32 - self.bad_count
    }

    /// Count an erase of `sb`, written last in SLC mode when `slc`. False when the erase
    /// failed: the superblock wore out and is retired.
    #[inline]
    pub fn erase(&mut self, sb: u32, slc: bool) -> bool {
        if self.count_erase(sb, slc) {
            self.retire(sb);
            return false;
        }
        true
    }

    /// Count an erase of the last free superblock, `sb`, which must take the data in
    /// flight: worn out, it is written once more (its next erase retires it) and the
    /// drive turns read-only, its spare gone.
    pub fn erase_last(&mut self, sb: u32, slc: bool) {
        if self.count_erase(sb, slc) {
            self.exhausted = true;
        }
    }

    /// Count an erase of `sb`; true when it brought `sb` to its endurance.
    #[inline]
    fn count_erase(&mut self, sb: u32, slc: bool) -> bool {
        self.add_cycles(sb, (!slc) as u32, slc as u32);
        self.cycles(sb) >= self.endurance[sb as usize] as f64
    }

    /// Add `native` and `slc` cycles to `sb`, keeping the count of superblocks young enough
    /// for SLC mode.
    #[inline]
    fn add_cycles(&mut self, sb: u32, native: u32, slc: u32) {
        let was_slc_usable = self.slc_usable(sb);
        let s = sb as usize;
        self.native[s] += native;
        self.slc[s] += slc;
        if was_slc_usable && !self.slc_usable(sb) {
            self.slc_capable -= 1;
        }
    }

    fn retire(&mut self, sb: u32) {
        let s = sb as usize;
        debug_assert!(!self.bad[s]);
        if self.slc_usable(sb) {
            self.slc_capable -= 1;
        }
        self.bad[s] = true;
        self.bad_count += 1;
    }

    /// Index of the free superblock to write next among `free` (in the order freed), by
    /// the levelling policy; `slc`: only those young enough for SLC mode.
    pub fn pick(&self, free: impl Iterator<Item = u32>, slc: bool) -> Option<usize> {
        let mut wear = free.map(|sb| (!slc || self.slc_usable(sb)).then(|| self.cycles(sb)));
        self.levelling.pick(&mut wear)
    }

    /// Static levelling: is the spread from the least worn of `holding` (superblocks
    /// holding data) to `sb`, just erased, beyond the policy's bound?
    pub fn spread_passed(&self, sb: u32, holding: impl Iterator<Item = u32>) -> bool {
        let Some(bound) = self.levelling.spread_bound() else {
            return false;
        };
        let least = holding
            .map(|h| self.cycles(h))
            .fold(f64::INFINITY, f64::min);
        self.cycles(sb) - least > bound
    }

    /// The least worn of `candidates`.
    pub fn least_worn(&self, candidates: impl Iterator<Item = u32>) -> Option<u32> {
        candidates.min_by(|&a, &b| self.cycles(a).total_cmp(&self.cycles(b)))
    }

    /// Age the drive to a mean wear of `target` native P/E cycles over its good
    /// superblocks, as evenly as levelling keeps wear at best: whole cycles within one of
    /// each other, summing to the target. A superblock already past its share keeps its wear. A free superblock
    /// whose endurance runs out on the way is retired at it (its erase failed) and its
    /// share of the cycles goes to the others; one holding data (`holding(sb)`) stops one
    /// cycle short, to fail at its next erase (its data, written after its last good
    /// erase, is intact).
    pub fn age(&mut self, target: f64, holding: impl Fn(u32) -> bool) -> Aged {
        let mut aged = Aged::default();
        let mut owed = 0.0; // cycles of retired superblocks, for the others
        for _ in 0..8 {
            let good: Vec<u32> = (0..self.native.len() as u32)
                .filter(|&sb| !self.is_bad(sb))
                .collect();
            let n = good.len() as f64;
            let goal = target + owed / n.max(1.0);
            owed = 0.0;
            let mut retired_now = 0;
            let (mut wanted, mut given) = (0.0, 0.0);
            for &sb in &good {
                // whole cycles by running rounding: floor or ceil of the goal each
                wanted += (goal - self.cycles(sb)).max(0.0);
                let add = (wanted - given).round().max(0.0);
                given += add;
                if add < 1.0 {
                    continue;
                }
                let s = sb as usize;
                let last_good = (self.endurance[s] as f64).ceil() - 1.0;
                let room = (last_good - self.cycles(sb)).floor().max(0.0);
                let (cycles, retires) = if add <= room {
                    (add, false)
                } else if holding(sb) {
                    (room, false)
                } else {
                    (room + 1.0, true)
                };
                self.add_cycles(sb, cycles as u32, 0);
                aged.erases += cycles as u64;
                owed += add - cycles;
                if retires {
                    self.retire(sb);
                    retired_now += 1;
                }
            }
            aged.retired += retired_now;
            if retired_now == 0 || owed < 0.5 {
                break;
            }
        }
        aged
    }

    /// Age the drive towards `target` as [`Wear::age`] does, stopping where its spare runs
    /// out: ageing stands for a history of writes, and a read-only drive takes none. Returns
    /// what ageing did, with the target it stopped at when the drive turned read-only on
    /// the way (within half a cycle, found by bisection on copies of the wear).
    pub fn age_until_read_only(&mut self, target: f64, holding: impl Fn(u32) -> bool) -> Aged {
        let fresh = self.state();
        if self.read_only() {
            return Aged {
                stopped_at: Some(fresh.mean(self.slc_weight)),
                ..Aged::default()
            };
        }
        let aged = self.age(target, &holding);
        if !self.read_only() {
            return aged;
        }
        let (mut low, mut high) = (fresh.mean(self.slc_weight), target);
        while high - low > 0.5 {
            let mid = 0.5 * (low + high);
            self.restore(&fresh);
            self.age(mid, &holding);
            if self.read_only() {
                high = mid;
            } else {
                low = mid;
            }
        }
        self.restore(&fresh);
        Aged {
            stopped_at: Some(high),
            ..self.age(high, &holding)
        }
    }

    fn state(&self) -> WearState {
        WearState {
            native: self.native.clone(),
            slc: self.slc.clone(),
            bad: self.bad.clone(),
            bad_count: self.bad_count,
            slc_capable: self.slc_capable,
        }
    }

    fn restore(&mut self, state: &WearState) {
        self.native.clone_from(&state.native);
        self.slc.clone_from(&state.slc);
        self.bad.clone_from(&state.bad);
        self.bad_count = state.bad_count;
        self.slc_capable = state.slc_capable;
    }

    /// The drive's wear in figures.
    pub fn summary(&self) -> WearSummary {
        let n = self.native.len().max(1) as f64;
        let cycles = (0..self.native.len() as u32).map(|sb| self.cycles(sb));
        let (min, max, sum) = cycles.fold((f64::INFINITY, 0.0f64, 0.0), |(lo, hi, s), c| {
            (lo.min(c), hi.max(c), s + c)
        });
        let spare_made = self.native.len() as f64 - self.floor as f64;
        let spare_left = self.good() as f64 - self.floor as f64;
        WearSummary {
            min_pe: if min.is_finite() { min } else { 0.0 },
            mean_pe: sum / n,
            max_pe: max,
            bad_superblocks: self.bad_count,
            // a drive whose last free superblock wore out has no spare it can use
            available_spare_pct: if self.exhausted {
                0.0
            } else if spare_made > 0.0 {
                (100.0 * spare_left / spare_made).clamp(0.0, 100.0)
            } else if self.read_only() {
                0.0
            } else {
                100.0
            },
            read_only: self.read_only(),
        }
    }
}
