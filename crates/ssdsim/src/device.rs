//! The simulated device: FTL + NAND timelines + controller, link and cache policy.
//!
//! Contract: host commands are applied one at a time, in issue order, at a
//! given virtual issue time; each returns its completion time. Resources
//! (controller, link in each direction, channels, dies) are timelines served
//! first-come first-served. Writes complete when their data is in the write
//! buffer; a buffer of `write_buffer_kib` per host stream holds data until its
//! NAND program ends, so sustained writes run at the speed of the NAND.
//! Reads complete when their data has crossed the die, the channel and the link.
//! Space is reclaimed by one mechanism, relocation of a victim superblock's
//! valid units into native blocks (garbage collection of a native victim,
//! folding of an SLC victim), run
//! - by force while host writes find free space short (proportionally, so
//!   that reclaim keeps pace with the host),
//! - in the background while the host writes to native blocks (folding, if
//!   the cache policy asks for it),
//! - while the host is idle (folding, and garbage collection while free space
//!   is below the idle threshold).

use crate::cache::{self, CachePolicy, CacheView};
use crate::config::{ConfigError, DriveConfig};
use crate::ftl::{Ftl, SbState, Stream};
use crate::geometry::{Geometry, Ppa, NONE, UNIT};
use crate::nand::Nand;
use crate::step::Counters;
use crate::time::{ns_from_us, ps_from_ns, ps_to_move};
use crate::timeline::GapTimeline;

const FORCED: usize = 0;
const FOLD: usize = 1;

/// A victim being emptied.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    sb: u32,
    /// Next unit offset to look at.
    pos: u32,
    /// End of the written area (capacity of the superblock in its mode).
    end: u32,
    slc: bool,
    /// Source program unit whose read is scheduled, and when its data is ready.
    cur_pu: u32,
    pu_ready: u64,
    /// Relocations per host unit needed to keep pace (forced mode).
    ratio: f64,
}

/// The drive.
pub struct Device {
    pub ftl: Ftl,
    pub nand: Nand,
    cache: Box<dyn CachePolicy>,
    gc_low: u32,
    gc_idle: u32,
    ctrl_free: u64,
    link_in_free: u64,
    link_out: GapTimeline,
    /// Link time per byte, ps.
    link_ps_per_byte: u64,
    read_cmd_ns: u64,
    write_cmd_ns: u64,
    read_lat_ns: u64,
    write_lat_ns: u64,
    trim_cmd_ns: u64,
    trim_unit_ps: u64,
    /// Per host stream: ring of program end times (write buffer) and the slot of the program unit being filled.
    ring: [Vec<u64>; 2],
    ring_seq: [usize; 2],
    /// Victims being emptied: [`FORCED`] (garbage collection) and [`FOLD`] (cache folding).
    cursors: [Cursor; 2],
    active: [bool; 2],
    forced_credit: f64,
    fold_credit: f64,
    busy_fold_ratio: f64,
    slc_recheck: u64,
    pub counters: Raw,
    /// Host write sequence number (version stamp of the data, in tests).
    #[cfg(test)]
    pub seq: u64,
}

/// Raw cumulative counters (units).
#[derive(Debug, Clone, Copy, Default)]
pub struct Raw {
    pub host_units: u64,
    pub nand_units: u64,
    pub gc_units: u64,
    pub fold_units: u64,
    pub gc_sbs: u64,
    pub fold_sbs: u64,
    pub erases: u64,
    pub rmw_reads: u64,
}

impl Device {
    /// The drive of a validated preset; an error only when its geometry cannot be addressed.
    pub fn new(cfg: &DriveConfig) -> Result<Device, ConfigError> {
        let geo = Geometry::new(cfg)?;
        let nand = Nand::new(cfg, &geo);
        let cache = cache::from_config(cfg, &geo);
        let pu_bytes = geo.units_per_pu as u64 * UNIT;
        let k = ((cfg.controller.write_buffer_kib as u64 * 1024) / pu_bytes).max(1) as usize;
        let c = &cfg.controller;
        Ok(Device {
            nand,
            gc_low: cfg.ftl.gc_low_superblocks,
            gc_idle: cfg.ftl.gc_idle_superblocks,
            ctrl_free: 0,
            link_in_free: 0,
            link_out: GapTimeline::new(64),
            link_ps_per_byte: ps_to_move(1, cfg.host.link_mbps()),
            read_cmd_ns: ns_from_us(c.read_cmd_us),
            write_cmd_ns: ns_from_us(c.write_cmd_us),
            read_lat_ns: ns_from_us(c.read_latency_us),
            write_lat_ns: ns_from_us(c.write_latency_us),
            trim_cmd_ns: ns_from_us(c.trim_cmd_us),
            trim_unit_ps: ps_from_ns(c.trim_unit_ns),
            ring: [vec![0; k], vec![0; k]],
            ring_seq: [0; 2],
            cursors: [Cursor::default(); 2],
            active: [false; 2],
            forced_credit: 0.0,
            fold_credit: 0.0,
            busy_fold_ratio: cache.busy_fold_ratio(),
            slc_recheck: 0,
            cache,
            counters: Raw::default(),
            ftl: Ftl::new(geo)?,
            #[cfg(test)]
            seq: 0,
        })
    }

    pub fn geo(&self) -> &Geometry {
        &self.ftl.geo
    }

    fn view(&self) -> CacheView {
        let g = &self.ftl.geo;
        CacheView {
            user_units: g.user_units,
            mapped: self.ftl.mapped,
            slc_valid: self.ftl.slc_valid,
            slc_sbs: self.ftl.slc_sbs,
            free_sbs: self.ftl.free_sbs(),
            superblocks: g.superblocks,
            units_per_sb: g.units_per_sb,
            units_per_sb_slc: g.units_per_sb_slc,
            native_bits: g.native_bits,
        }
    }

    /// Link time of `bytes`, ns.
    #[inline]
    fn link_ns(&self, bytes: u64) -> u64 {
        (bytes * self.link_ps_per_byte).div_ceil(1000)
    }

    // ---------------------------------------------------------------- host commands

    /// Write `units` 4 KiB units from `lba`, `bytes` over the link, issued at `t`; returns the completion time.
    pub fn write(&mut self, lba: u64, units: u32, bytes: u64, t: u64) -> u64 {
        let c0 = self.ctrl_free.max(t);
        self.ctrl_free = c0 + self.write_cmd_ns;
        let l0 = self.link_in_free.max(self.ctrl_free);
        self.link_in_free = l0 + self.link_ns(bytes);
        let arrival = self.link_in_free;
        let mut done = arrival;
        let mut i = 0u32;
        while i < units {
            let (n, accept) = self.write_run((lba + i as u64) as u32, units - i, arrival);
            done = done.max(accept);
            i += n;
        }
        self.erase_pending(arrival);
        done + self.write_lat_ns
    }

    /// Write `bytes` at byte offset `off`, issued at `t`; returns the completion time.
    /// A mapping unit the write covers only in part must be merged with its current
    /// data before the whole unit is programmed again: when that data is on NAND it is
    /// read first (a read-modify-write), so such a write completes after a NAND read.
    pub fn write_at(&mut self, off: u64, bytes: u64, t: u64) -> u64 {
        let (first, end) = (off / UNIT, off + bytes);
        let last = end.div_ceil(UNIT) - 1;
        let mut ready = t;
        if !off.is_multiple_of(UNIT) || end < (first + 1) * UNIT {
            ready = ready.max(self.merge_read(first, t));
        }
        if !end.is_multiple_of(UNIT) && last != first {
            ready = ready.max(self.merge_read(last, t));
        }
        self.write(first, (last + 1 - first) as u32, bytes, ready)
    }

    /// When the old data of a unit about to be partly overwritten is ready to merge:
    /// after a NAND read when it is on NAND; at once when the unit is unmapped (zeroes)
    /// or still in the write buffer.
    fn merge_read(&mut self, lba: u64, t: u64) -> u64 {
        let ppa = self.ftl.l2p(lba as usize);
        if ppa == NONE || self.ftl.in_open_pu(ppa) {
            return t;
        }
        self.counters.rmw_reads += 1;
        self.nand.prune(t);
        self.nand_read(ppa, 1, t)
    }

    /// Sense `n` units of the program unit holding `ppa` on its die, in the cell mode
    /// its superblock was written in, from `t`; returns when the data is out.
    #[inline]
    fn nand_read(&mut self, ppa: Ppa, n: u32, t: u64) -> u64 {
        let sb = self.ftl.geo.superblock_of(ppa);
        let die = self.ftl.geo.die_of_pu(self.ftl.geo.pu_of(ppa));
        self.nand.read(die, self.ftl.slc[sb as usize], n, t)
    }

    /// Read `units` units from `lba`; returns the completion time.
    pub fn read(&mut self, lba: u64, units: u32, bytes: u64, t: u64) -> u64 {
        self.nand.prune(t);
        self.link_out.prune(t);
        let c0 = self.ctrl_free.max(t);
        self.ctrl_free = c0 + self.read_cmd_ns;
        let tr = self.ctrl_free + self.read_lat_ns;
        let mut ready = tr;
        let upu = self.ftl.geo.units_per_pu;
        let mut i = 0u64;
        while i < units as u64 {
            let ppa = self.ftl.l2p((lba + i) as usize);
            i += 1;
            if ppa == NONE {
                continue; // unmapped: zeroes, no NAND access
            }
            // Units of the same program unit that follow are read with it.
            let pu_addr = ppa / upu;
            let mut n = 1;
            while i < units as u64 {
                let p2 = self.ftl.l2p((lba + i) as usize);
                if p2 == NONE || p2 / upu != pu_addr {
                    break;
                }
                n += 1;
                i += 1;
            }
            if self.ftl.in_open_pu(ppa) {
                continue; // still in the write buffer
            }
            let r = self.nand_read(ppa, n, tr);
            ready = ready.max(r);
        }
        let d = self.link_ns(bytes);
        self.link_out.reserve(ready, d) + d
    }

    /// Unmap `units` units from `lba`; returns the completion time.
    pub fn trim(&mut self, lba: u64, units: u64, t: u64) -> u64 {
        let c0 = self.ctrl_free.max(t);
        for l in lba..lba + units {
            self.ftl.trim(l as u32);
        }
        self.ctrl_free = c0 + self.trim_cmd_ns + (units * self.trim_unit_ps).div_ceil(1000);
        let done = self.ctrl_free;
        self.erase_pending(done);
        done
    }

    /// Return to fresh-out-of-box at time `t`: everything unmapped, every used superblock erased.
    pub fn purge(&mut self, t: u64) -> u64 {
        let g = self.ftl.geo.clone();
        let used = (0..g.superblocks)
            .filter(|&s| self.ftl.state[s as usize] != SbState::Free)
            .count() as u64;
        self.ftl.purge();
        self.active = [false; 2];
        self.forced_credit = 0.0;
        self.fold_credit = 0.0;
        self.slc_recheck = 0;
        let start = t.max(self.nand.all_free()).max(self.ctrl_free);
        let per_die = used * self.nand.native.erase;
        self.nand.block_dies_until(start + per_die);
        self.nand.erases += used;
        self.counters.erases += used;
        start + per_die
    }

    // ---------------------------------------------------------------- write path

    /// Place up to `max` consecutive units from `lba` into one program unit of
    /// one host stream; returns how many were placed and when their data is in
    /// the write buffer.
    #[inline]
    fn write_run(&mut self, lba: u32, max: u32, t: u64) -> (u32, u64) {
        let stream = if self.ftl.wps[0].has_room() {
            Stream::HostSlc
        } else if self.counters.host_units >= self.slc_recheck && self.slc_allowed() {
            self.ftl.open(Stream::HostSlc, true);
            Stream::HostSlc
        } else {
            if !self.ftl.wps[1].has_room() {
                self.ensure_free(t);
                self.ftl.open(Stream::HostNative, false);
            }
            Stream::HostNative
        };
        let s = stream as usize;
        let upu = self.ftl.geo.units_per_pu;
        let wp = &self.ftl.wps[s];
        let in_pu = upu - self.ftl.geo.div_pu.rem(wp.next);
        let n = max.min(in_pu).min(wp.cap - wp.next);
        let accept = t.max(self.ring[s][self.ring_seq[s]]);
        let mut last = (0, false);
        for j in 0..n {
            last = self.ftl.place(lba + j, stream);
            #[cfg(test)]
            {
                self.seq += 1;
                self.ftl.stamp[last.0 as usize] = self.seq;
            }
        }
        let (ppa, pu_done) = last;
        self.counters.host_units += n as u64;
        let wp = &mut self.ftl.wps[s];
        wp.pu_ready = wp.pu_ready.max(accept);
        if pu_done {
            let ready = wp.pu_ready;
            let slc = wp.slc;
            wp.pu_ready = 0;
            let end = self.program(ppa, slc, ready);
            let slot = self.ring_seq[s];
            self.ring[s][slot] = end;
            self.ring_seq[s] = if slot + 1 == self.ring[s].len() {
                0
            } else {
                slot + 1
            };
        }
        // Reclaim in step with the host when free space is short.
        if self.ftl.free_sbs() <= self.gc_low || self.active[FORCED] {
            self.forced_step(t, n);
        }
        // Background folding while writing to native blocks, in batches of 32 units (128 KiB).
        if stream == Stream::HostNative && self.busy_fold_ratio > 0.0 {
            self.fold_credit += self.busy_fold_ratio * n as f64;
            if self.fold_credit >= 32.0 {
                self.busy_fold_step(t);
            }
        }
        (n, accept)
    }

    /// May the host open an SLC superblock? When the answer is no, it is asked
    /// again only after 64 more host units (256 KiB), not on every unit.
    fn slc_allowed(&mut self) -> bool {
        let ok = self.ftl.free_sbs() > self.gc_low + 1 && self.cache.may_open_slc(&self.view());
        if !ok {
            self.slc_recheck = self.counters.host_units + 64;
        }
        ok
    }

    /// Schedule the program of the program unit containing `ppa`.
    #[inline]
    fn program(&mut self, ppa: Ppa, slc: bool, ready: u64) -> u64 {
        let g = &self.ftl.geo;
        let die = g.die_of_pu(g.pu_of(ppa));
        let upu = g.units_per_pu;
        self.counters.nand_units += upu as u64;
        self.nand.program(die, slc, upu, ready)
    }

    /// Make sure a free superblock can be opened: reclaim synchronously while
    /// free superblocks are at the emergency floor.
    fn ensure_free(&mut self, t: u64) {
        while self.ftl.free_sbs() <= 2 {
            let was = self.active[FORCED];
            let moved = self.relocate_batch(FORCED, u64::MAX, t);
            assert!(
                moved > 0
                    || was
                    || self.active[FORCED]
                    || self.ftl.free_sbs() > 2
                    || !self.ftl.pending_erase.is_empty(),
                "no space can be reclaimed: the drive is over-committed"
            );
            self.erase_pending(t);
        }
    }

    fn erase_pending(&mut self, t: u64) {
        while let Some(sb) = self.ftl.pending_erase.pop() {
            let slc = self.ftl.slc[sb as usize];
            if slc {
                self.counters.fold_sbs += 0; // emptied by the host, not folded
            }
            self.nand.erase_all(slc, t);
            self.counters.erases += 1;
            self.ftl.release(sb);
        }
    }

    // ---------------------------------------------------------------- reclaim

    /// Best victim overall: the superblock with the fewest valid units, SLC or native.
    fn pick_victim(&mut self, slc_only: bool) -> Option<(u32, bool)> {
        let s = self.ftl.victims_slc.peek();
        if slc_only {
            return s.map(|sb| (sb, true));
        }
        let n = self.ftl.victims_native.peek();
        match (s, n) {
            (Some(a), Some(b)) => {
                if self.ftl.valid[a as usize] <= self.ftl.valid[b as usize] {
                    Some((a, true))
                } else {
                    Some((b, false))
                }
            }
            (Some(a), None) => Some((a, true)),
            (None, Some(b)) => Some((b, false)),
            (None, None) => None,
        }
    }

    fn start(&mut self, slc_only: bool) -> Option<Cursor> {
        let (sb, slc) = self.pick_victim(slc_only)?;
        self.ftl.start_reclaim(sb);
        let v = self.ftl.valid[sb as usize] as f64;
        let gain = (self.ftl.geo.units_per_sb as f64 - v).max(1.0);
        Some(Cursor {
            sb,
            pos: 0,
            end: self.ftl.geo.sb_capacity(slc),
            slc,
            cur_pu: NONE,
            pu_ready: 0,
            ratio: (v / gain).max(0.05),
        })
    }

    /// Relocate up to `n` valid units from the victim of cursor `which`
    /// (`FORCED`: garbage collection of the best victim, SLC or native; `FOLD`:
    /// folding of SLC victims), starting a victim if none is active. Stops early
    /// when the victim is emptied (it is then erased and freed) or when there is
    /// no victim. Returns the number of units moved.
    fn relocate_batch(&mut self, which: usize, n: u64, t: u64) -> u64 {
        if !self.active[which] {
            match self.start(which == FOLD) {
                Some(c) => {
                    self.cursors[which] = c;
                    self.active[which] = true;
                }
                None => return 0,
            }
        }
        let mut c = self.cursors[which];
        let usb = self.ftl.geo.units_per_sb;
        let upu = self.ftl.geo.units_per_pu;
        let base = c.sb * usb;
        let mut moved = 0u64;
        while moved < n && c.pos < c.end {
            let ppa = base + c.pos;
            c.pos += 1;
            if self.ftl.p2l(ppa as usize) == NONE {
                continue;
            }
            // Prefetch the mapping entry of a unit further on in the victim.
            if c.pos + 16 < c.end {
                let ahead = self.ftl.p2l((ppa + 16) as usize);
                if ahead != NONE {
                    self.ftl.prefetch(ahead as u64, false);
                }
            }
            let pu = (c.pos - 1) / upu;
            if pu != c.cur_pu {
                // One read of the source program unit brings all its valid units.
                let first = base + pu * upu;
                let k = (first..first + upu)
                    .filter(|&p| self.ftl.p2l(p as usize) != NONE)
                    .count() as u32;
                let die = self.ftl.geo.die_of_pu(pu);
                c.pu_ready = self.nand.read(die, c.slc, k, t);
                c.cur_pu = pu;
            }
            if !self.ftl.wps[Stream::Reloc as usize].has_room() {
                self.ftl.open(Stream::Reloc, false);
            }
            let (np, done) = self.ftl.relocate(ppa);
            moved += 1;
            let wp = &mut self.ftl.wps[Stream::Reloc as usize];
            wp.pu_ready = wp.pu_ready.max(c.pu_ready);
            if done {
                let ready = wp.pu_ready;
                wp.pu_ready = 0;
                self.program(np, false, ready);
            }
        }
        if c.slc {
            self.counters.fold_units += moved
        } else {
            self.counters.gc_units += moved
        }
        self.cursors[which] = c;
        if c.pos >= c.end {
            // Emptied: erase and free it.
            self.active[which] = false;
            if c.slc {
                self.counters.fold_sbs += 1
            } else {
                self.counters.gc_sbs += 1
            }
            debug_assert_eq!(self.ftl.valid[c.sb as usize], 0);
            self.nand.erase_all(c.slc, t);
            self.counters.erases += 1;
            self.ftl.release(c.sb);
        }
        moved
    }

    /// Proportional forced reclaim: per host unit, relocate as many units as the victim needs to keep pace.
    fn forced_step(&mut self, t: u64, host_units: u32) {
        if !self.active[FORCED] && self.ftl.free_sbs() > self.gc_low {
            return;
        }
        if !self.active[FORCED] {
            match self.start(false) {
                Some(c) => {
                    self.cursors[FORCED] = c;
                    self.active[FORCED] = true;
                }
                None => return,
            }
        }
        // Below the floor, go faster.
        let boost = if self.ftl.free_sbs() + 1 < self.gc_low {
            2.0
        } else {
            1.0
        };
        self.forced_credit += self.cursors[FORCED].ratio * boost * host_units as f64;
        // Relocate in batches of at least 8 units (or at once below the floor).
        if self.forced_credit >= 8.0 || (self.forced_credit >= 1.0 && boost > 1.0) {
            let n = self.forced_credit as u64;
            self.forced_credit -= n as f64;
            self.relocate_batch(FORCED, n, t);
            if !self.active[FORCED] {
                self.forced_credit = 0.0;
            }
        }
        self.erase_pending(t);
    }

    /// Background folding while the host writes to native blocks.
    fn busy_fold_step(&mut self, t: u64) {
        let n = self.fold_credit as u64;
        self.fold_credit -= n as f64;
        let mut left = n;
        while left > 0 {
            let m = self.relocate_batch(FOLD, left, t);
            if m == 0 && !self.active[FOLD] && self.ftl.victims_slc.is_empty() {
                self.fold_credit = 0.0;
                break;
            }
            left = left.saturating_sub(m.max(1));
        }
        self.erase_pending(t);
    }

    /// Idle from `t0` to `t1`: fold the cache (if the policy folds when idle) and
    /// collect garbage while free space is below the idle threshold. Work is
    /// scheduled in chunks while the dies are free before `t1`; the last chunk may
    /// run past `t1` (the host then waits for it, as on a real drive).
    pub fn idle(&mut self, t0: u64, t1: u64) {
        let chunk = (self.ftl.geo.dies * self.ftl.geo.units_per_pu * 2).max(64) as u64;
        loop {
            if self.nand.die_busy_until().max(t0) >= t1 {
                break;
            }
            let fold =
                self.cache.idle_fold() && (self.active[FOLD] || !self.ftl.victims_slc.is_empty());
            let gc = self.active[FORCED] || self.ftl.free_sbs() < self.gc_idle;
            let which = if fold {
                FOLD
            } else if gc {
                FORCED
            } else {
                break;
            };
            if which == FORCED && !self.active[FORCED] {
                // Idle GC only where it gains space: a native victim at least 95 % valid
                // would cost a superblock of writes to free one.
                match self.pick_victim(false) {
                    None => break,
                    Some((sb, false))
                        if self.ftl.valid[sb as usize] as u64 * 20
                            > self.ftl.geo.units_per_sb as u64 * 19 =>
                    {
                        break
                    }
                    _ => {}
                }
            }
            let was_active = self.active[which];
            let moved = self.relocate_batch(which, chunk, t0);
            self.erase_pending(t0);
            if moved == 0
                && !was_active
                && !self.active[which]
                && which == FORCED
                && self.ftl.free_sbs() >= self.gc_idle
            {
                break;
            }
            if moved == 0 && !self.active[which] && !was_active {
                // Nothing to relocate (e.g. no victim at all).
                let any = if which == FOLD {
                    !self.ftl.victims_slc.is_empty()
                } else {
                    !self.ftl.victims_native.is_empty() || !self.ftl.victims_slc.is_empty()
                };
                if !any {
                    break;
                }
            }
        }
    }

    /// Snapshot of the counters.
    pub fn snapshot(&self) -> Counters {
        let v = self.view();
        let r = &self.counters;
        Counters {
            host_write_bytes: r.host_units * UNIT,
            nand_write_bytes: r.nand_units * UNIT,
            write_amplification: if r.host_units > 0 {
                r.nand_units as f64 / r.host_units as f64
            } else {
                0.0
            },
            gc_bytes: r.gc_units * UNIT,
            fold_bytes: r.fold_units * UNIT,
            gc_superblocks: r.gc_sbs,
            fold_superblocks: r.fold_sbs,
            erases: r.erases,
            slc_used_bytes: self.ftl.slc_valid * UNIT,
            slc_limit_bytes: self.cache.limit_units(&v) * UNIT,
            free_superblocks: self.ftl.free_sbs(),
            superblocks: self.ftl.geo.superblocks,
            mapped_bytes: self.ftl.mapped * UNIT,
            rmw_reads: r.rmw_reads,
        }
    }

    /// Prefetch the mapping of an upcoming command (see [`Ftl::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lba: u64, deep: bool) {
        self.ftl.prefetch(lba, deep);
    }

    /// Time at which everything in the drive is idle.
    pub fn quiet_at(&self) -> u64 {
        self.nand
            .all_free()
            .max(self.ctrl_free)
            .max(self.link_in_free)
            .max(self.link_out.free_at())
    }
}
