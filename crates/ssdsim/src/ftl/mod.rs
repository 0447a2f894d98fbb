//! Flash translation layer: page-level mapping at 4 KiB, superblock states,
//! write points per stream and victim bookkeeping.
//!
//! Contract (the FTL invariants, checked by [`Ftl::check`]):
//! - every mapped LBA `l` maps to a page `l2p[l]` of a superblock that is not free,
//!   and the reverse map names `l` there (`p2l[l2p[l]] = l + 1`); every other page's
//!   reverse entry is 0 (exactly one valid page per mapped LBA);
//! - the valid count of each superblock equals its number of valid pages;
//! - free superblocks hold no valid page; full superblocks are in exactly one
//!   victim set (SLC or native) unless being reclaimed.
//!
//! - every free superblock is either erased or waiting for its erase, never both;
//! - a retired superblock (worn out, see `crate::wear`) is in no pool and holds nothing;
//! - every non-zero entry of either table lies in a chunk marked as written (`table`),
//!   so that a purge, or the next drive given the tables, finds them all zero again.
//!
//! The FTL has no notion of time: the controller (`controller`) schedules the
//! NAND work that its placements imply. Only the FTL changes FTL state; the
//! controller reads it through the methods below. An emptied superblock joins
//! the free pool at once but is erased only when it is next opened or in idle
//! time (deferred erases: a TRIM of many gigabytes frees hundreds of superblocks
//! without putting hundreds of erases in front of the host's next writes).

pub mod table;
pub mod victim;

use crate::config::{ConfigError, VictimKind};
use crate::geometry::{Geometry, Ppa, NONE};
use crate::wear::{Aged, Wear};
use std::collections::VecDeque;
use table::{Prefault, Table};
use victim::VictimPolicy;

/// The write streams, each with its own open superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Host writes into the SLC cache.
    HostSlc = 0,
    /// Host writes straight to native (TLC/QLC) blocks.
    HostNative = 1,
    /// Relocations (garbage collection and cache folding) into native blocks.
    Reloc = 2,
}

/// State of a superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SbState {
    Free,
    Open,
    Full,
    /// Picked as a victim, being emptied.
    Reclaiming,
    /// Worn out: never written again.
    Retired,
}

/// An open superblock and the program unit being filled.
#[derive(Debug, Clone)]
pub struct WritePoint {
    pub sb: u32,
    /// Next unit offset to write in the superblock.
    pub next: u32,
    /// Capacity of the superblock in its mode.
    pub cap: u32,
    pub slc: bool,
}

impl WritePoint {
    fn closed(slc: bool) -> WritePoint {
        WritePoint {
            sb: NONE,
            next: 0,
            cap: 0,
            slc,
        }
    }
    #[inline]
    pub fn has_room(&self) -> bool {
        self.next < self.cap
    }
}

/// A superblock handed out for writing; `erase_first` when it still holds old
/// (invalid) data, so its erase must be scheduled before its first program, and the
/// erases that failed on the way (worn-out superblocks retired), which took their time.
#[derive(Debug, Clone, Copy)]
pub struct Opened {
    pub sb: u32,
    pub erase_first: Option<EraseMode>,
    pub failed_erases: u32,
}

/// The cell mode a superblock to erase was last written in (erase times differ by mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EraseMode {
    pub slc: bool,
}

/// Mapping tables and block bookkeeping.
pub struct Ftl {
    /// Must stay the first field: dropped (stopped and joined) before the tables.
    prefault: Option<Prefault>,
    geo: Geometry,
    /// Logical-to-physical table, stored as `ppa + 1` (0 = unmapped) so that a
    /// fresh table is zero pages the OS provides lazily. An entry becomes non-zero only
    /// in `place_run` (a relocation moves LBAs already mapped), which marks it.
    l2p: Table,
    /// Physical-to-logical table (the reverse map): the LBA of each valid page plus one,
    /// 0 where the page is not valid. Garbage collection reads a victim's valid units
    /// from it in order; a reverse map that needed `l2p` to tell valid units (a log of
    /// the LBAs written) cost a random table access per unit looked at, the most
    /// expensive part of relocation (BENCHMARKS.md). Entries become non-zero only in an
    /// open superblock, whose range `open` marks.
    p2l: Table,
    valid: Vec<u32>,
    state: Vec<SbState>,
    slc: Vec<bool>,
    wear: Wear,
    /// Static levelling asks for the least worn data to be moved.
    level_due: bool,
    /// Free superblocks that are erased, in the order they were freed.
    erased: VecDeque<u32>,
    /// Free superblocks still holding old data (erase deferred), with the mode it was written in.
    to_erase: VecDeque<(u32, EraseMode)>,
    wps: [WritePoint; 3],
    victims_native: Box<dyn VictimPolicy>,
    victims_slc: Box<dyn VictimPolicy>,
    /// Mapped LBAs.
    mapped: u64,
    /// Valid units held in SLC superblocks.
    slc_valid: u64,
    /// Superblocks currently in SLC mode (open, full or reclaiming).
    slc_sbs: u32,
    /// Units placed so far: the clock by which victims' ages are measured.
    clock: u64,
    /// Per-page version stamp (tests only): the host write sequence number of the data.
    #[cfg(test)]
    pub stamp: Vec<u64>,
}

impl Ftl {
    /// A fresh FTL; ConfigError when its mapping tables do not fit in memory.
    pub fn new(geo: Geometry, victim_policy: VictimKind, wear: Wear) -> Result<Ftl, ConfigError> {
        let n = geo.superblocks as usize;
        let units = geo.user_units as usize;
        let pages = geo.total_units() as usize;
        let tables = Table::zeroed(units).zip(Table::zeroed(pages));
        let (l2p, p2l) = tables.ok_or_else(|| {
            let gib = ((units + pages) * 4) as f64 / (1u64 << 30) as f64;
            ConfigError(format!(
                "the simulated drive needs {gib:.1} GiB of memory for its mapping tables, \
                     more than this process could allocate: simulate a smaller drive \
                     (drive.user_capacity_gb, drive.geometry) or free memory"
            ))
        })?;
        // Both sets score in native units (see `victim`), so both index up to a native superblock.
        let victims = || victim::from_kind(victim_policy, geo.superblocks, geo.units_per_sb);
        Ok(Ftl {
            prefault: None,
            l2p,
            p2l,
            valid: vec![0; n],
            state: vec![SbState::Free; n],
            slc: vec![false; n],
            wear,
            level_due: false,
            erased: (0..geo.superblocks).collect(),
            to_erase: VecDeque::new(),
            wps: Self::closed_write_points(),
            victims_native: victims(),
            victims_slc: victims(),
            mapped: 0,
            slc_valid: 0,
            slc_sbs: 0,
            clock: 0,
            #[cfg(test)]
            stamp: vec![0; geo.total_units() as usize],
            geo,
        })
    }

    fn closed_write_points() -> [WritePoint; 3] {
        [
            WritePoint::closed(true),
            WritePoint::closed(false),
            WritePoint::closed(false),
        ]
    }

    #[inline]
    pub fn geo(&self) -> &Geometry {
        &self.geo
    }

    /// Physical page of `lba`, or `NONE`.
    #[inline]
    pub fn l2p(&self, lba: usize) -> Ppa {
        self.l2p[lba].wrapping_sub(1)
    }

    #[inline]
    fn set_l2p(&mut self, lba: u32, ppa: Ppa) {
        self.l2p[lba as usize] = entry(ppa);
    }

    /// Map the `n` LBAs from `lba` to the pages from `first`, both ways, in one pass over
    /// each table.
    #[inline]
    fn map_run(&mut self, lba: u32, n: u32, first: Ppa) {
        let entries = &mut self.l2p[lba as usize..(lba + n) as usize];
        for (e, ppa) in entries.iter_mut().zip(first..) {
            *e = entry(ppa);
        }
        let pages = &mut self.p2l[first as usize..(first + n) as usize];
        for (p, l) in pages.iter_mut().zip(lba + 1..) {
            *p = l;
        }
    }

    /// Is none of the `n` LBAs from `lba` mapped? (A pass without branches.)
    #[inline]
    fn unmapped(&self, lba: u32, n: u32) -> bool {
        let entries = &self.l2p[lba as usize..(lba + n) as usize];
        entries.iter().fold(0, |any, &e| any | e) == entry(NONE)
    }

    /// Hint the CPU to fetch the mapping entry of `lba`.
    #[inline]
    pub fn prefetch(&self, lba: u64) {
        if let Some(entry) = self.l2p.get(lba as usize) {
            prefetch(entry);
        }
    }

    /// Hint the CPU to fetch the reverse entry of the page `lba` maps to (an overwrite
    /// clears it); its mapping entry should be in the cache already (see [`prefetch`](Self::prefetch)).
    #[inline]
    pub fn prefetch_page(&self, lba: u64) {
        if let Some(entry) = self.l2p.get(lba as usize) {
            if let Some(page) = self.p2l.get(entry.wrapping_sub(1) as usize) {
                prefetch(page);
            }
        }
    }

    /// Valid units of superblock `sb`.
    #[inline]
    pub fn valid(&self, sb: u32) -> u32 {
        self.valid[sb as usize]
    }

    /// Is superblock `sb` written in SLC mode?
    #[inline]
    pub fn is_slc(&self, sb: u32) -> bool {
        self.slc[sb as usize]
    }

    /// Superblocks not free (open, full or being reclaimed).
    pub fn used_sbs(&self) -> u32 {
        self.good_sbs() - self.free_sbs()
    }

    /// Superblocks not retired.
    #[inline]
    pub fn good_sbs(&self) -> u32 {
        self.geo.superblocks - self.wear.bad_superblocks()
    }

    /// The drive's wear.
    #[inline]
    pub fn wear(&self) -> &Wear {
        &self.wear
    }

    /// Free superblocks, erased or waiting for their erase.
    #[inline]
    pub fn free_sbs(&self) -> u32 {
        (self.erased.len() + self.to_erase.len()) as u32
    }

    /// Mapped LBAs.
    #[inline]
    pub fn mapped(&self) -> u64 {
        self.mapped
    }

    /// Valid units held in SLC superblocks.
    #[inline]
    pub fn slc_valid(&self) -> u64 {
        self.slc_valid
    }

    /// Superblocks in SLC mode (open, full or reclaiming).
    #[inline]
    pub fn slc_sbs(&self) -> u32 {
        self.slc_sbs
    }

    /// Superblocks in native mode that are not free (they hold native data or are being written).
    pub fn native_sbs(&self) -> u32 {
        self.used_sbs() - self.slc_sbs
    }

    /// The write point of `stream`.
    #[inline]
    pub fn write_point(&self, stream: Stream) -> &WritePoint {
        &self.wps[stream as usize]
    }

    /// Can `stream` take another unit without opening a superblock?
    #[inline]
    pub fn has_room(&self, stream: Stream) -> bool {
        self.wps[stream as usize].has_room()
    }

    /// Units `stream` can take before its program unit or superblock is complete.
    #[inline]
    pub fn room_in_pu(&self, stream: Stream) -> u32 {
        let wp = &self.wps[stream as usize];
        let in_pu = self.geo.units_per_pu - self.geo.div_pu.rem(wp.next);
        in_pu.min(wp.cap - wp.next)
    }

    /// Open a new superblock for `stream` (the caller checked that one is free, and for
    /// SLC mode young enough: [`can_open_slc`](Self::can_open_slc)): the one the
    /// levelling policy picks among the erased ones, else among those to erase first.
    /// A superblock whose erase fails is retired and another one picked. None when SLC
    /// mode is asked for and the superblocks young enough for it all failed.
    pub fn open(&mut self, stream: Stream, slc: bool) -> Option<Opened> {
        let mut failed_erases = 0;
        let (sb, erase_first) = loop {
            if let Some(i) = self.wear.pick(self.erased.iter().copied(), slc) {
                break (self.erased.remove(i).expect("picked"), None);
            }
            let pool = self.to_erase.iter().map(|&(sb, _)| sb);
            let Some(i) = self.wear.pick(pool, slc) else {
                assert!(slc, "no free superblock");
                return None;
            };
            let (sb, mode) = self.to_erase.remove(i).expect("picked");
            if self.free_sbs() == 0 {
                // The last free superblock: worn out or not, the data in flight goes
                // here, and a worn-out one turns the drive read-only (see Wear::erase_last).
                self.wear.erase_last(sb, mode.slc);
                break (sb, Some(mode));
            }
            if self.erased_ok(sb, mode) {
                break (sb, Some(mode));
            }
            failed_erases += 1;
        };
        let s = sb as usize;
        self.state[s] = SbState::Open;
        self.slc[s] = slc;
        let base = (sb * self.geo.units_per_sb) as usize;
        self.p2l.mark(base, self.geo.sb_capacity(slc) as usize);
        if slc {
            self.slc_sbs += 1;
        }
        let wp = &mut self.wps[stream as usize];
        debug_assert!(!wp.has_room());
        *wp = WritePoint {
            sb,
            next: 0,
            cap: self.geo.sb_capacity(slc),
            slc,
        };
        Some(Opened {
            sb,
            erase_first,
            failed_erases,
        })
    }

    /// Is there a free superblock young enough for SLC mode?
    pub fn can_open_slc(&self) -> bool {
        let pools = self
            .erased
            .iter()
            .chain(self.to_erase.iter().map(|(sb, _)| sb));
        pools.into_iter().any(|&sb| self.wear.slc_usable(sb))
    }

    /// Erase one free superblock that still holds old data (background work), the one
    /// the levelling policy would open next; returns the mode it was written in, for
    /// the erase's duration (a failed erase, which retires it, takes its time too).
    pub fn erase_one(&mut self) -> Option<EraseMode> {
        let pool = self.to_erase.iter().map(|&(sb, _)| sb);
        let i = self.wear.pick(pool, false)?;
        let (sb, mode) = self.to_erase.remove(i).expect("picked");
        if self.erased_ok(sb, mode) {
            self.erased.push_back(sb);
        }
        Some(mode)
    }

    /// Count the erase of free superblock `sb`, out of the pools; false when it wore
    /// out and is retired. Under static levelling, a spread of wear beyond the policy's
    /// bound asks for the least worn data to move.
    fn erased_ok(&mut self, sb: u32, mode: EraseMode) -> bool {
        if !self.wear.erase(sb, mode.slc) {
            self.state[sb as usize] = SbState::Retired;
            return false;
        }
        if !self.level_due {
            let state = &self.state;
            let full = (0..self.geo.superblocks).filter(|&h| state[h as usize] == SbState::Full);
            self.level_due = self.wear.spread_passed(sb, full);
        }
        true
    }

    /// Is the drive read-only (its spare is gone)?
    #[inline]
    pub fn read_only(&self) -> bool {
        self.wear.read_only()
    }

    /// Does static levelling ask for the least worn data to move?
    pub fn levelling_due(&self) -> bool {
        self.level_due
    }

    /// Age the drive to a mean wear of `target` native P/E cycles, or to where it turns
    /// read-only (see [`Wear::age_until_read_only`]);
    /// free superblocks retired on the way leave the pools.
    pub fn age(&mut self, target: f64) -> Aged {
        let state = &self.state;
        let aged = self
            .wear
            .age_until_read_only(target, |sb| state[sb as usize] != SbState::Free);
        for sb in 0..self.geo.superblocks {
            let s = sb as usize;
            if self.wear.is_bad(sb) && self.state[s] == SbState::Free {
                self.state[s] = SbState::Retired;
                self.erased.retain(|&e| e != sb);
                self.to_erase.retain(|&(e, _)| e != sb);
            }
        }
        aged
    }

    /// Free superblocks waiting for their erase.
    pub fn unerased_sbs(&self) -> u32 {
        self.to_erase.len() as u32
    }

    /// Invalidate the page `ppa` (its LBA was overwritten, trimmed or moved).
    #[inline]
    fn invalidate(&mut self, ppa: Ppa) {
        self.p2l[ppa as usize] = 0;
        let sb = self.geo.superblock_of(ppa);
        let s = sb as usize;
        let old = self.valid[s];
        self.valid[s] = old - 1;
        if self.slc[s] {
            self.slc_valid -= 1;
        }
        match self.state[s] {
            SbState::Full => {
                let victims = if self.slc[s] {
                    &mut self.victims_slc
                } else {
                    &mut self.victims_native
                };
                victims.update(sb, old, old - 1);
                if old == 1 {
                    victims.remove(sb);
                    self.free(sb);
                }
            }
            SbState::Open | SbState::Reclaiming | SbState::Free | SbState::Retired => {}
        }
    }

    /// Map the `n` LBAs from `lba` to the next pages of `stream`, which has room for them
    /// in its program unit (see [`room_in_pu`](Self::room_in_pu)), invalidating the pages
    /// they mapped to; one update of the write point and the counts for the run. Returns
    /// the first page and whether the program unit is complete.
    pub fn place_run(&mut self, lba: u32, n: u32, stream: Stream) -> (Ppa, bool) {
        debug_assert!(n >= 1 && n <= self.room_in_pu(stream));
        let first = self.next_page(stream);
        if self.unmapped(lba, n) {
            // A first write (as in a fill): no page to invalidate.
            self.mapped += n as u64;
        } else {
            for j in 0..n {
                match self.l2p((lba + j) as usize) {
                    NONE => self.mapped += 1,
                    old => self.invalidate(old),
                }
            }
        }
        self.l2p.mark(lba as usize, n as usize);
        self.map_run(lba, n, first);
        (first, self.advance(stream, n))
    }

    /// Move the valid units of `sb`, which is being reclaimed, from `offset` on, in order,
    /// to the relocation stream, until `quota` are moved or `end` is reached; the
    /// relocation stream has room for `quota` in its program unit. `lbas` gets the LBAs
    /// moved. Returns the first new page, the offset after the last unit looked at (the
    /// last moved, or `end`) and whether the program unit is complete.
    pub fn relocate_valid(
        &mut self,
        sb: u32,
        (offset, end): (u32, u32),
        quota: u32,
        lbas: &mut Vec<u32>,
    ) -> (Ppa, u32, bool) {
        debug_assert!(quota >= 1 && quota <= self.room_in_pu(Stream::Reloc));
        let first = self.next_page(Stream::Reloc);
        let base = (sb * self.geo.units_per_sb) as usize;
        let table = &mut self.p2l[base..base + end as usize];
        #[cfg(test)]
        let before = table[offset as usize..].to_vec();
        lbas.clear();
        let dense = (offset + quota).min(end);
        let next = if table[offset as usize..dense as usize]
            .iter()
            .all(|&l| l != 0)
        {
            // Every unit valid (as in folding a fill): moved in one pass.
            let units = &mut table[offset as usize..dense as usize];
            lbas.extend(units.iter().map(|&l| l - 1));
            units.fill(0); // moved: no longer valid in the victim
            dense
        } else {
            let mut next = end;
            for o in offset..end {
                let unit = &mut table[o as usize];
                if *unit != 0 {
                    lbas.push(*unit - 1);
                    *unit = 0;
                    if lbas.len() as u32 == quota {
                        next = o + 1;
                        break;
                    }
                }
            }
            next
        };
        let n = lbas.len() as u32;
        debug_assert!(n >= 1, "the unit at `offset` is valid");
        #[cfg(test)]
        {
            // The moved units' stamps go with them.
            let looked_at = before[..(next - offset) as usize].iter().enumerate();
            let from = looked_at
                .filter(|&(_, &l)| l != 0)
                .map(|(j, _)| base + offset as usize + j);
            for (to, from) in (first as usize..).zip(from) {
                self.stamp[to] = self.stamp[from];
            }
        }
        if consecutive(lbas) {
            // Folding sequential data: one run.
            self.map_run(lbas[0], n, first);
        } else {
            for (&lba, ppa) in lbas.iter().zip(first..) {
                self.l2p[lba as usize] = entry(ppa);
                self.p2l[ppa as usize] = lba + 1;
            }
        }
        self.valid[sb as usize] -= n;
        if self.slc[sb as usize] {
            self.slc_valid -= n as u64;
        }
        (first, next, self.advance(Stream::Reloc, n))
    }

    /// The page the next unit written to `stream` goes to.
    #[inline]
    fn next_page(&self, stream: Stream) -> Ppa {
        let wp = &self.wps[stream as usize];
        wp.sb * self.geo.units_per_sb + wp.next
    }

    /// `n` units were written to `stream`: its write point, the write clock and the valid
    /// counts move on, and its superblock is closed when full. Returns whether the program
    /// unit is complete.
    #[inline]
    fn advance(&mut self, stream: Stream, n: u32) -> bool {
        let wp = &mut self.wps[stream as usize];
        let (sb, slc) = (wp.sb, wp.slc);
        wp.next += n;
        let pu_done = self.geo.div_pu.rem(wp.next) == 0;
        let full = wp.next == wp.cap;
        self.clock += n as u64;
        self.valid[sb as usize] += n;
        if slc {
            self.slc_valid += n as u64;
        }
        if full {
            self.close(sb, slc);
        }
        pu_done
    }

    /// A superblock written to its end becomes a victim candidate (or free, if nothing in it is valid).
    fn close(&mut self, sb: u32, slc: bool) {
        let s = sb as usize;
        self.state[s] = SbState::Full;
        if self.valid[s] == 0 {
            self.free(sb);
        } else if slc {
            self.victims_slc.insert(sb, self.valid[s], self.clock);
        } else {
            self.victims_native.insert(sb, self.valid[s], self.clock);
        }
    }

    /// Close the program unit `stream` is filling, padding its unwritten units (a
    /// write-buffer flush: the data is programmed before the unit is full); returns a
    /// page of the padded unit, or None when no unit is partly filled.
    pub fn pad_program_unit(&mut self, stream: Stream) -> Option<Ppa> {
        let upu = self.geo.units_per_pu;
        let wp = &mut self.wps[stream as usize];
        if !wp.has_room() || wp.next.is_multiple_of(upu) {
            return None;
        }
        let ppa = wp.sb * self.geo.units_per_sb + wp.next - 1;
        wp.next = wp.next.div_ceil(upu) * upu;
        if wp.next == wp.cap {
            let (sb, slc) = (wp.sb, wp.slc);
            self.close(sb, slc);
        }
        Some(ppa)
    }

    /// Unmap `lba` (TRIM). Returns whether it was mapped.
    #[inline]
    pub fn trim(&mut self, lba: u32) -> bool {
        let old = self.l2p(lba as usize);
        if old == NONE {
            return false;
        }
        self.invalidate(old);
        self.set_l2p(lba, NONE);
        self.mapped -= 1;
        true
    }

    /// The best victim, SLC or native (`slc_only`: SLC, for folding), taken out of
    /// the victim sets to be reclaimed; with whether it is in SLC mode.
    pub fn take_victim(&mut self, slc_only: bool) -> Option<(u32, bool)> {
        let (sb, in_slc) = self.best_victim(slc_only)?;
        Some(self.take(sb, in_slc))
    }

    /// Is superblock `sb` written to its end and holding data (not open, free or reclaimed)?
    #[inline]
    pub fn is_full(&self, sb: u32) -> bool {
        self.state[sb as usize] == SbState::Full
    }

    /// Full superblock `sb` (its data to be rewritten: refresh), taken out of the victim sets.
    pub fn take_full(&mut self, sb: u32) -> (u32, bool) {
        debug_assert!(self.is_full(sb));
        self.take(sb, self.slc[sb as usize])
    }

    /// The least worn full superblock (static levelling: its cold data moves off it, so
    /// that it takes its share of the erases), taken out of the victim sets.
    pub fn take_least_worn(&mut self) -> Option<(u32, bool)> {
        self.level_due = false;
        let state = &self.state;
        let full = (0..self.geo.superblocks).filter(|&sb| state[sb as usize] == SbState::Full);
        let sb = self.wear.least_worn(full)?;
        Some(self.take(sb, self.slc[sb as usize]))
    }

    /// Take full superblock `sb` out of its victim set, to be reclaimed.
    fn take(&mut self, sb: u32, in_slc: bool) -> (u32, bool) {
        let s = sb as usize;
        debug_assert_eq!(self.state[s], SbState::Full);
        if in_slc {
            self.victims_slc.remove(sb)
        } else {
            self.victims_native.remove(sb)
        }
        self.state[s] = SbState::Reclaiming;
        (sb, in_slc)
    }

    /// The valid units of superblock `sb` by offset (up to its capacity in its mode): the
    /// LBA plus one, or 0 where the unit is not valid.
    #[inline]
    pub fn valid_units(&self, sb: u32) -> &[u32] {
        let base = (sb * self.geo.units_per_sb) as usize;
        &self.p2l[base..base + self.geo.sb_capacity(self.slc[sb as usize]) as usize]
    }

    /// The best victim now, SLC or native (`slc_only`: SLC), with whether it is in SLC mode.
    fn best_victim(&mut self, slc_only: bool) -> Option<(u32, bool)> {
        let now = self.clock;
        let slc = self.victims_slc.best(now);
        let native = if slc_only {
            None
        } else {
            self.victims_native.best(now)
        };
        match (slc, native) {
            (Some(s), Some(n)) if n.1 > s.1 => Some((n.0, false)),
            (Some(s), _) => Some((s.0, true)),
            (None, Some(n)) => Some((n.0, false)),
            (None, None) => None,
        }
    }

    /// Are there SLC superblocks to fold?
    pub fn has_slc_victims(&self) -> bool {
        !self.victims_slc.is_empty()
    }

    /// The valid units of the best victim now (without taking it).
    pub fn best_victim_valid(&mut self) -> Option<u32> {
        self.best_victim(false)
            .map(|(sb, _)| self.valid[sb as usize])
    }

    /// A reclaimed superblock, now empty, joins the free pool (its erase deferred).
    pub fn finish_reclaim(&mut self, sb: u32) {
        debug_assert_eq!(self.valid[sb as usize], 0);
        debug_assert_eq!(self.state[sb as usize], SbState::Reclaiming);
        self.free(sb);
    }

    fn free(&mut self, sb: u32) {
        let s = sb as usize;
        let slc = self.slc[s];
        if slc {
            self.slc_sbs -= 1;
        }
        self.state[s] = SbState::Free;
        self.slc[s] = false;
        self.to_erase.push_back((sb, EraseMode { slc }));
    }

    /// Start populating the mapping tables' pages in the background (for steps that
    /// will touch most of them, such as a whole-drive fill). Idempotent.
    pub fn prefault(&mut self) {
        if self.prefault.is_none() {
            self.prefault = Prefault::start(&[&self.l2p, &self.p2l]);
        }
    }

    /// Reset to fresh-out-of-box: everything unmapped, free and erased (the caller
    /// schedules the erases); erase counts go on. Returns the superblocks erased.
    pub fn purge(&mut self) -> u64 {
        self.prefault = None; // stop it before the tables are rewritten
        self.l2p.clear();
        self.p2l.clear();
        let state = &self.state;
        let used = (0..self.geo.superblocks)
            .filter(|&sb| !matches!(state[sb as usize], SbState::Free | SbState::Retired));
        let holding_data: Vec<(u32, EraseMode)> = used
            .map(|sb| {
                (
                    sb,
                    EraseMode {
                        slc: self.slc[sb as usize],
                    },
                )
            })
            .chain(self.to_erase.iter().copied())
            .collect();
        self.to_erase.clear();
        for &(sb, _) in &holding_data {
            self.victims_native.remove(sb);
            self.victims_slc.remove(sb);
            self.state[sb as usize] = SbState::Free;
        }
        for &(sb, mode) in &holding_data {
            self.erased_ok(sb, mode);
        }
        self.valid.fill(0);
        self.slc.fill(false);
        let state = &self.state;
        self.erased = (0..self.geo.superblocks)
            .filter(|&sb| state[sb as usize] == SbState::Free)
            .collect();
        self.level_due = false;
        self.wps = Self::closed_write_points();
        self.mapped = 0;
        self.slc_valid = 0;
        self.slc_sbs = 0;
        holding_data.len() as u64
    }

    /// Is `ppa` in a program unit that is still being filled (data only in the write buffer)?
    #[inline]
    pub fn in_open_pu(&self, ppa: Ppa) -> bool {
        let g = &self.geo;
        let pu = g.program_unit(ppa);
        self.wps.iter().any(|w| {
            w.sb != NONE
                && w.has_room()
                && g.div_pu.rem(w.next) != 0
                && g.program_unit(w.sb * g.units_per_sb + w.next) == pu
        })
    }

    /// Verify the FTL invariants (O(capacity)); returns a description of the first violation.
    pub fn check(&self) -> Result<(), String> {
        let mapped = (0..self.l2p.len()).filter(|&l| self.l2p(l) != NONE).count() as u64;
        if mapped != self.mapped {
            return Err(format!("mapped count {} != {}", self.mapped, mapped));
        }
        for lba in (0..self.l2p.len()).filter(|&l| self.l2p(l) != NONE) {
            let named = self.p2l[self.l2p(lba) as usize];
            if named != lba as u32 + 1 {
                return Err(format!("LBA {lba}'s page names {}", named as i64 - 1));
            }
        }
        let mut slc_valid = 0u64;
        let mut valid_seen = 0u64;
        let mut free_seen = 0;
        for sb in 0..self.geo.superblocks as usize {
            let v = self
                .valid_units(sb as u32)
                .iter()
                .filter(|&&l| l != 0)
                .count() as u32;
            valid_seen += v as u64;
            if v != self.valid[sb] {
                return Err(format!(
                    "superblock {sb}: valid count {} but {v} valid pages",
                    self.valid[sb]
                ));
            }
            if self.slc[sb] {
                slc_valid += v as u64;
            }
            let in_sets = self.victims_native.contains(sb as u32) as u32
                + self.victims_slc.contains(sb as u32) as u32;
            match self.state[sb] {
                SbState::Free => {
                    free_seen += 1;
                    if v != 0 || in_sets != 0 {
                        return Err(format!(
                            "free superblock {sb} has {v} valid pages or is a victim"
                        ));
                    }
                }
                SbState::Retired if v != 0 || in_sets != 0 => {
                    return Err(format!("retired superblock {sb} holds data or is a victim"))
                }
                SbState::Full if in_sets != 1 => {
                    return Err(format!("full superblock {sb} is in {in_sets} victim sets"))
                }
                SbState::Open | SbState::Reclaiming if in_sets != 0 => {
                    return Err(format!(
                        "superblock {sb} ({:?}) is a victim",
                        self.state[sb]
                    ))
                }
                _ => {}
            }
        }
        let named = self.p2l.iter().filter(|&&l| l != 0).count() as u64;
        if valid_seen != mapped || named != mapped {
            return Err(format!(
                "{mapped} LBAs are mapped but their superblocks name {valid_seen} \
                 and the reverse map {named}"
            ));
        }
        for (name, table) in [("mapping", &self.l2p), ("reverse", &self.p2l)] {
            if let Some(i) = table.unmarked_entry() {
                return Err(format!(
                    "the {name} table's entry {i} is set in a chunk not marked as written"
                ));
            }
        }
        if slc_valid != self.slc_valid {
            return Err(format!("slc valid count {} != {slc_valid}", self.slc_valid));
        }
        if free_seen != self.free_sbs() as usize {
            return Err(format!(
                "free pools have {} entries, {free_seen} free superblocks",
                self.free_sbs()
            ));
        }
        let mut pooled = vec![false; self.geo.superblocks as usize];
        let pools = self
            .erased
            .iter()
            .chain(self.to_erase.iter().map(|(sb, _)| sb));
        for &sb in pools {
            if std::mem::replace(&mut pooled[sb as usize], true) {
                return Err(format!("superblock {sb} is in the free pools twice"));
            }
            if self.state[sb as usize] == SbState::Retired {
                return Err(format!("retired superblock {sb} is in a free pool"));
            }
        }
        Ok(())
    }
}

/// Hint the CPU to fetch `entry` into its cache.
#[inline]
fn prefetch(entry: &u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of a valid reference; it has no effect on the program's state.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(entry as *const u32 as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = entry;
}

/// The table's entry for page `ppa`: `ppa + 1`, so that 0 is unmapped (`NONE`).
#[inline]
fn entry(ppa: Ppa) -> u32 {
    ppa.wrapping_add(1)
}

/// Does each of `values` follow the one before it by one? (A pass without branches.)
#[inline]
pub(crate) fn consecutive(values: &[u32]) -> bool {
    let Some(&first) = values.first() else {
        return true;
    };
    let apart =
        (values.iter().enumerate()).fold(0, |d, (j, &v)| d | (v ^ first.wrapping_add(j as u32)));
    apart == 0
}

#[cfg(test)]
mod tests {
    use super::consecutive;

    #[test]
    fn consecutive_values_are_told_from_others() {
        assert!(consecutive(&[]));
        assert!(consecutive(&[7]));
        assert!(consecutive(&[5, 6, 7, 8]));
        assert!(!consecutive(&[5, 7]));
        assert!(!consecutive(&[5, 6, 6]));
        assert!(!consecutive(&[6, 5]));
        // The last value of the type ends a run without overflowing.
        assert!(consecutive(&[u32::MAX - 1, u32::MAX]));
    }
}
