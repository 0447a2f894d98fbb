//! The controller of the simulated drive: host commands in, NAND work out.
//!
//! Contract: host commands are applied one at a time, in issue order, at a
//! given virtual issue time; each returns its completion time. Resources (the
//! command processor, the link in each direction, channels, dies) are timelines.
//! The parts, each in its own module:
//! - [`host`]: command processing and link timing;
//! - [`write_buffer`]: writes complete when their data is buffered, and the
//!   buffer drains at the speed of the NAND programs (with the host's volatile write
//!   cache off, a write completes when its data is programmed);
//! - [`reclaim`]: garbage collection and folding, forced, background and idle;
//! - [`flash`]: the FTL, the NAND timelines and the activity counters together,
//!   with the mapping table's residency ([`mapping`]) and the firmware's journal
//!   and checkpoints ([`firmware`]);
//! - [`read_ahead`]: sequential reads fetched ahead;
//! - the cache policy (`crate::cache`) decides between SLC and native writes.

pub mod firmware;
pub mod flash;
pub mod host;
pub mod mapping;
pub mod read_ahead;
pub mod reclaim;
pub mod write_buffer;

use crate::cache::{self, CachePolicy, CacheView};
use crate::config::{ConfigError, DriveConfig, Refill};
use crate::ftl::{Ftl, Stream};
use crate::geometry::{Geometry, NONE, UNIT};
use crate::nand::Nand;
use crate::power::Work;
use crate::step::Counters;
use crate::time::ns_from_us;
use crate::wear::{age::History, Aged, Wear};
use flash::{Activity, Flash};
use host::HostInterface;
use read_ahead::ReadAhead;
use reclaim::Reclaim;
use write_buffer::WriteBuffer;

/// When the cache policy refuses the host an SLC superblock, it is asked again only
/// after this many more host units (256 KiB): the answer changes slowly.
const SLC_RECHECK_UNITS: u64 = 64;
/// The cache policy's background folding rate is asked once per this many host units
/// written to native blocks (128 KiB, the batch background folding runs in).
const FOLD_RATE_UNITS: u32 = 32;

/// The drive's controller with its NAND.
/// Offsets of uncorrectable reads a step's result names; the rest are counted.
pub const MAX_LOST: usize = 100;

pub struct Controller {
    host: HostInterface,
    /// Byte offsets of uncorrectable host reads, for the step's result.
    lost: Vec<u64>,
    flash: Flash,
    /// Write buffers of the two host streams (SLC and native).
    buffers: [WriteBuffer; 2],
    reclaim: Reclaim,
    read_ahead: Option<ReadAhead>,
    cache: Box<dyn CachePolicy>,
    /// Host units written when the cache policy may next be asked for an SLC superblock.
    slc_recheck: u64,
    /// The host writes to native blocks until the drive is next idle or trimmed (see `close_cache`).
    slc_closed: bool,
    /// Host units written to native blocks since background folding was last scheduled.
    native_since_fold: u32,
    /// Host idle after which the write buffer is flushed, ns.
    flush_idle_ns: Option<u64>,
    /// The host keeps the volatile write cache on (see
    /// [`Platform::volatile_write_cache`](crate::Platform::volatile_write_cache)).
    volatile_write_cache: bool,
    /// Host write sequence number (version stamp of the data, in tests).
    #[cfg(test)]
    pub seq: u64,
}

impl Controller {
    /// The drive of a validated preset; an error only when its mapping tables cannot be had.
    pub fn new(cfg: &DriveConfig) -> Result<Controller, ConfigError> {
        let geo = Geometry::new(cfg)?;
        let nand = Nand::new(cfg, &geo);
        let pu_bytes = geo.units_per_pu as u64 * UNIT;
        let slots = (cfg.controller.write_buffer_kib as u64 * 1024 / pu_bytes) as usize;
        let user_sbs = geo.user_units.div_ceil(geo.units_per_sb as u64) as u32;
        let blocks_per_sb = geo.dies * cfg.geometry.planes_per_die;
        let floor = user_sbs + cfg.reserve_superblocks();
        let wear = Wear::new(cfg.wear.as_ref(), geo.superblocks, blocks_per_sb, floor);
        Ok(Controller {
            host: HostInterface::new(cfg),
            lost: Vec::new(),
            buffers: [WriteBuffer::new(slots), WriteBuffer::new(slots)],
            reclaim: Reclaim::new(cfg),
            read_ahead: ReadAhead::new(cfg),
            cache: cache::from_config(cfg),
            slc_recheck: 0,
            slc_closed: false,
            native_since_fold: 0,
            flush_idle_ns: cfg.controller.flush_idle_us.map(ns_from_us),
            volatile_write_cache: true,
            flash: Flash::new(cfg, Ftl::new(geo, cfg.ftl.victim_policy, wear)?, nand),
            #[cfg(test)]
            seq: 0,
        })
    }

    pub fn geo(&self) -> &Geometry {
        self.flash.ftl.geo()
    }

    /// The host turns the volatile write cache on or off (NVMe feature 06h), from the next
    /// write on. Off, every write is made durable before it completes (see [`Self::write`]).
    pub fn set_volatile_write_cache(&mut self, on: bool) {
        self.volatile_write_cache = on;
    }

    /// The FTL, to read (tests and invariant checks).
    pub fn ftl(&self) -> &Ftl {
        &self.flash.ftl
    }

    /// Cumulative activity counters.
    pub fn activity(&self) -> &Activity {
        &self.flash.activity
    }

    /// The work done so far, for the drive's energy.
    pub fn work(&self) -> Work {
        self.flash.nand.work + self.host.work
    }

    fn view(&self) -> CacheView {
        let ftl = &self.flash.ftl;
        let native_units = ftl.mapped() - ftl.slc_valid();
        CacheView {
            slc_valid: ftl.slc_valid(),
            slc_sbs: ftl.slc_sbs(),
            native_sbs: ftl.native_sbs(),
            native_data_sbs: native_units.div_ceil(ftl.geo().units_per_sb as u64) as u32,
            superblocks: ftl.good_sbs(),
            reserve_sbs: self.reclaim.gc_low() + 1,
            units_per_sb_slc: ftl.geo().units_per_sb_slc,
            slc_capable_sbs: ftl.wear().slc_capable(),
        }
    }

    // ---------------------------------------------------------------- host commands

    /// Write `units` 4 KiB units from `lba`, `bytes` over the link, issued at `t`; returns the
    /// completion time. With the volatile write cache off, the write completes only when its
    /// data is on NAND (see [`Self::write_through`]).
    pub fn write(&mut self, lba: u64, units: u32, bytes: u64, t: u64) -> u64 {
        self.flash.activity.host_writes += 1;
        self.flash.activity.host_write_bytes += bytes;
        let arrival = self.host.receive_write(t, bytes);
        let done = if self.volatile_write_cache {
            self.buffer_units::<false>(lba, units, arrival).0
        } else {
            self.write_through(lba, units, arrival)
        };
        if let Some(ra) = &mut self.read_ahead {
            ra.forget();
        }
        // Reclaim and metadata work done in this command's path, on the controller right
        // after the command itself (overlapping its data transfer): it completes after them.
        let done = done.max(self.pay_owed(t));
        self.host.complete_write(done)
    }

    /// Place `units` units from `lba`, their data arriving at `arrival`, into the write
    /// buffers; returns when all of it is in, and (counted only when `PROGRAMS`, else 0)
    /// when the last program of a program unit they completed ends.
    #[inline(always)]
    fn buffer_units<const PROGRAMS: bool>(
        &mut self,
        lba: u64,
        units: u32,
        arrival: u64,
    ) -> (u64, u64) {
        let mut buffered = arrival;
        let mut programmed = 0;
        let mut i = 0u32;
        while i < units {
            let (n, accepted, end) = self.write_run((lba + i as u64) as u32, units - i, arrival);
            buffered = buffered.max(accepted);
            if PROGRAMS {
                programmed = programmed.max(end.unwrap_or(0));
            }
            i += n;
        }
        (buffered, programmed)
    }

    /// A write with the host's volatile write cache off (NVMe feature 06h, WCE = 0): the
    /// drive may not acknowledge data it could lose. Its data goes into the write buffer as
    /// usual, then the partly filled program units of the host streams are programmed at
    /// once, padded, as a host Flush programs them; the write completes when its data is
    /// in the buffer, the program units it completed are programmed and those padded
    /// programs end. Returns that time.
    #[inline(never)]
    fn write_through(&mut self, lba: u64, units: u32, arrival: u64) -> u64 {
        let (buffered, programmed) = self.buffer_units::<true>(lba, units, arrival);
        let padded = self.flush_write_buffers(buffered);
        buffered.max(programmed).max(padded)
    }

    /// The controller time owed to metadata and reclaim work done for the command just
    /// handled, from `t` on: later commands wait for it. Returns when it is done.
    #[inline]
    fn pay_owed(&mut self, t: u64) -> u64 {
        match self.flash.take_owed_ns() {
            0 => t,
            owed => self.host.stall(t, owed),
        }
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
        let ppa = self.flash.ftl.l2p(lba as usize);
        if ppa == NONE || self.flash.ftl.in_open_pu(ppa) {
            return t;
        }
        self.flash.activity.rmw_reads += 1;
        self.flash.nand.prune(t);
        self.flash.read_own(ppa, 1, t)
    }

    /// Read `units` units from `lba`; returns the completion time.
    #[inline]
    pub fn read(&mut self, lba: u64, units: u32, bytes: u64, t: u64) -> u64 {
        self.flash.activity.host_reads += 1;
        self.flash.activity.host_read_bytes += bytes;
        self.flash.nand.prune(t);
        let processed = self.host.start_read(t);
        let looked_up = self.flash.look_up(lba, units as u64, processed);
        let owed = self.flash.take_owed_ns();
        if owed > 0 {
            self.host.stall(t, owed);
        }
        let start = looked_up.max(processed + owed);
        let (fetched, fetch) = match &mut self.read_ahead {
            Some(ra) => ra.on_read(lba, units as u64),
            None => (None, None),
        };
        let ready = match fetched {
            Some(ready) => ready.max(start),
            None => self.read_nand(lba, units as u64, start),
        };
        if let Some((first, end)) = fetch {
            let end = end.min(self.geo().user_units);
            if first < end {
                let ahead = self.read_nand(first, end - first, start);
                if let Some(ra) = &mut self.read_ahead {
                    ra.fetched(first, end, ahead);
                }
            }
        }
        self.host.send_read(ready, bytes)
    }

    /// Read the data of `units` units from `lba` out of the NAND from `t`; returns when
    /// all of it is in the controller. Unmapped units (zeroes) and units still in the
    /// write buffer need no NAND read; units of one program unit are read together.
    fn read_nand(&mut self, lba: u64, units: u64, t: u64) -> u64 {
        let mut ready = t;
        let mut i = 0u64;
        while i < units {
            let ftl = &self.flash.ftl;
            let ppa = ftl.l2p((lba + i) as usize);
            i += 1;
            if ppa == NONE {
                self.flash.activity.unwritten_read_units += 1;
                continue;
            }
            let pu = ftl.geo().program_unit(ppa);
            let mut n = 1;
            while i < units {
                let p2 = ftl.l2p((lba + i) as usize);
                if p2 == NONE || ftl.geo().program_unit(p2) != pu {
                    break;
                }
                n += 1;
                i += 1;
            }
            if ftl.in_open_pu(ppa) {
                continue;
            }
            let lost_before = self.flash.activity.uncorrectable_reads;
            ready = ready.max(self.flash.read_for_host(ppa, n, t));
            if self.flash.activity.uncorrectable_reads > lost_before && self.lost.len() < MAX_LOST {
                self.lost.push((lba + i - n as u64) * UNIT);
            }
        }
        ready
    }

    /// Byte offsets of the host's reads that no decoding tier corrected since the last
    /// call (the first [`MAX_LOST`]).
    pub fn take_lost(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.lost)
    }

    /// `seconds` pass at `celsius` for the data's charge (powered or not).
    pub fn age_data(&mut self, seconds: f64, celsius: f64) {
        if let Some(media) = &mut self.flash.media {
            media.advance(seconds, celsius);
        }
    }

    /// Unmap `units` units from `lba`; returns the completion time: the controller walks
    /// the range's entries, with its map pages in memory, and deallocates each mapped unit
    /// (firmware work: the host's later commands wait behind it). The superblocks it
    /// empties are erased later, when they are next needed or in idle time.
    pub fn trim(&mut self, lba: u64, units: u64, t: u64) -> u64 {
        let held = self.flash.trim(lba, units, t);
        self.slc_closed = false; // the space it frees may hold cache again
        if let Some(ra) = &mut self.read_ahead {
            ra.forget();
        }
        let walked = self.host.process_trim(held, units);
        walked.max(self.pay_owed(held))
    }

    /// Return to fresh-out-of-box at time `t`: everything unmapped, every used
    /// superblock erased (a sanitize, not a TRIM: the erases happen now).
    pub fn purge(&mut self, t: u64) -> u64 {
        let start = t.max(self.quiet_at());
        let erased = self.flash.ftl.purge();
        self.flash.forget_pending();
        self.reclaim.reset();
        if let Some(ra) = &mut self.read_ahead {
            ra.forget();
        }
        self.slc_recheck = 0;
        self.slc_closed = false;
        self.native_since_fold = 0;
        self.flash.activity.erases += erased;
        self.flash.nand.erase_in_turn(erased, start)
    }

    // ---------------------------------------------------------------- write path

    /// The host stream the next unit goes to, opening a superblock for it if needed.
    #[inline]
    fn host_stream(&mut self, t: u64) -> Stream {
        if self.flash.ftl.has_room(Stream::HostSlc) {
            return Stream::HostSlc;
        }
        // (an SLC open fails when the superblocks young enough for it all failed their erase)
        if !self.slc_closed
            && self.flash.activity.host_units >= self.slc_recheck
            && self.slc_allowed()
            && self.flash.open(Stream::HostSlc, true, t)
        {
            return Stream::HostSlc;
        }
        if !self.flash.ftl.has_room(Stream::HostNative) {
            self.reclaim.ensure_free(&mut self.flash, t);
            let native = self.flash.open(Stream::HostNative, false, t);
            debug_assert!(native, "a native superblock always opens");
        }
        Stream::HostNative
    }

    /// May the host open an SLC superblock: a free one beyond the reclaim reserve,
    /// and the cache policy agrees? When not, it is asked again only later, and a cache
    /// that refills only when idle is closed until then.
    fn slc_allowed(&mut self) -> bool {
        let view = self.view();
        let ok = self.flash.ftl.free_sbs() > view.reserve_sbs
            && self.cache.may_open_slc(&view)
            && self.flash.ftl.can_open_slc();
        if !ok {
            self.slc_recheck = self.flash.activity.host_units + SLC_RECHECK_UNITS;
            if self.cache.refill() == Refill::Idle {
                self.close_cache(); // the cache ran out: the host has it back after a pause
            }
        }
        ok
    }

    /// Place up to `max` consecutive units from `lba` into one program unit of
    /// one host stream; returns how many were placed, when their data is in
    /// the write buffer and, when they completed the program unit, its program's end.
    #[inline]
    fn write_run(&mut self, lba: u32, max: u32, t: u64) -> (u32, u64, Option<u64>) {
        let stream = self.host_stream(t);
        let s = stream as usize;
        let n = max.min(self.flash.ftl.room_in_pu(stream));
        let accepted = self.buffers[s].accept(t);
        let (_first, program_end) = self.flash.place_run(lba, n, stream, accepted);
        #[cfg(test)]
        for ppa in _first.._first + n {
            self.seq += 1;
            self.flash.ftl.stamp[ppa as usize] = self.seq;
        }
        if let Some(end) = program_end {
            self.buffers[s].programmed(end);
        }
        self.flash.activity.host_units += n as u64;
        self.flash.note_changes(lba, lba + n - 1, n as u64, t);
        self.reclaim.keep_pace(&mut self.flash, t, n);
        if stream == Stream::HostNative {
            self.native_since_fold += n;
            if self.native_since_fold >= FOLD_RATE_UNITS {
                let view = self.view();
                if self.cache.squeezed(&view) {
                    self.close_cache();
                }
                let ratio = self.cache.background_fold_ratio(&view);
                let units = std::mem::take(&mut self.native_since_fold);
                self.reclaim
                    .fold_in_background(&mut self.flash, ratio, units, t);
            }
        }
        (n, accepted, program_end)
    }

    /// Close the cache to the host until the drive is next idle: the cache holds more
    /// than the free space now allows, so it must be folded. Superblocks that folding
    /// frees now would only be folded again at once if the host wrote them in SLC mode:
    /// the host writes to native blocks while the cache drains into them, and gets the
    /// cache back after a pause or a TRIM.
    fn close_cache(&mut self) {
        self.slc_closed = true;
    }

    // ---------------------------------------------------------------- idle

    /// Idle from `t0` to `t1`: the drive's own background work (see [`Reclaim::idle`]).
    pub fn idle(&mut self, t0: u64, t1: u64) {
        self.slc_closed = false;
        if let Some(after) = self.flush_idle_ns.filter(|&after| t1 - t0 >= after) {
            self.flush_write_buffers(t0 + after);
        }
        self.reclaim
            .idle(&mut self.flash, self.cache.idle_fold(), t0, t1);
        // The controller does the work's share from the start of the idle on.
        self.pay_owed(t0);
    }

    /// A host Flush at `t`: the data in the write buffers made durable (the partly filled
    /// program units programmed, padded); returns when the last of their programs ends.
    pub fn flush(&mut self, t: u64) -> u64 {
        self.flush_write_buffers(t);
        self.buffers
            .iter()
            .map(WriteBuffer::drained_at)
            .fold(t, u64::max)
    }

    /// Program the partly filled program units of both host streams, padded, from `t`;
    /// returns when the last of those programs ends (`t` when there were none).
    fn flush_write_buffers(&mut self, t: u64) -> u64 {
        let mut last = t;
        for (s, stream) in [Stream::HostSlc, Stream::HostNative]
            .into_iter()
            .enumerate()
        {
            if let Some(end) = self.flash.flush_program_unit(stream, t) {
                self.buffers[s].programmed(end);
                last = last.max(end);
            }
        }
        last
    }

    /// Age the drive to a mean wear of `target` native P/E cycles, or to where it turns
    /// read-only (see [`crate::wear::Wear::age_until_read_only`]): the counters take the
    /// writes it stands for.
    pub fn age(&mut self, target: f64, wa: Option<f64>, cfg: &DriveConfig) -> (Aged, History) {
        let aged = self.flash.ftl.age(target);
        if let Some(media) = &mut self.flash.media {
            media.forget(); // wear moved under data already written
        }
        let history = History::of(aged.erases, wa, cfg, self.geo());
        let a = &mut self.flash.activity;
        a.erases += aged.erases;
        a.nand_units += history.nand_bytes / UNIT;
        a.host_units += history.host_bytes / UNIT;
        a.host_write_bytes += history.host_bytes;
        (aged, history)
    }

    /// Has the drive gone read-only (its spare ran out)?
    #[inline]
    pub fn read_only(&self) -> bool {
        self.flash.ftl.read_only()
    }

    /// Snapshot of the counters.
    pub fn snapshot(&self) -> Counters {
        let a = &self.flash.activity;
        let ftl = &self.flash.ftl;
        Counters {
            host_write_bytes: a.host_write_bytes,
            host_read_bytes: a.host_read_bytes,
            host_read_commands: a.host_reads,
            host_write_commands: a.host_writes,
            nand_write_bytes: a.nand_units * UNIT,
            write_amplification: if a.host_write_bytes > 0 {
                (a.nand_units * UNIT) as f64 / a.host_write_bytes as f64
            } else {
                0.0
            },
            gc_bytes: a.gc_units * UNIT,
            fold_bytes: a.fold_units * UNIT,
            gc_superblocks: a.gc_sbs,
            fold_superblocks: a.fold_sbs,
            erases: a.erases,
            slc_used_bytes: ftl.slc_valid() * UNIT,
            slc_limit_bytes: self.cache.limit_units(&self.view()) * UNIT,
            free_superblocks: ftl.free_sbs(),
            superblocks: ftl.good_sbs(),
            bad_superblocks: ftl.wear().bad_superblocks(),
            mean_pe_cycles: ftl.wear().summary().mean_pe,
            mapped_bytes: ftl.mapped() * UNIT,
            rmw_reads: a.rmw_reads,
            unwritten_read_bytes: a.unwritten_read_units * UNIT,
            read_retries: a.read_retries,
            soft_decodes: a.soft_decodes,
            parity_rebuilds: a.parity_rebuilds,
            uncorrectable_reads: a.uncorrectable_reads,
            refreshed_superblocks: a.refreshed_sbs,
        }
    }

    /// Prefetch the mapping of an upcoming command (see [`Ftl::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lba: u64) {
        self.flash.ftl.prefetch(lba);
    }

    /// Prefetch the reverse entry of the page an upcoming command's LBA maps to (see
    /// [`Ftl::prefetch_page`]).
    #[inline]
    pub fn prefetch_page(&self, lba: u64) {
        self.flash.ftl.prefetch_page(lba);
    }

    /// Start populating the mapping tables in the background (see [`Ftl::prefault`]).
    pub fn prefault(&mut self) {
        self.flash.ftl.prefault();
    }

    /// Time at which everything in the drive is idle.
    pub fn quiet_at(&self) -> u64 {
        self.flash.nand.all_free().max(self.host.quiet_at())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::small;

    // B1: among equally attractive victims the oldest goes first. A sequential fill that
    // must fold part of its cache folds the data written first: the start of the drive ends
    // up in native blocks while later cache data is still in SLC (last-in-first-out would
    // keep the start in SLC, and rewriting it would then run at cache speed).
    #[test]
    fn folding_takes_the_oldest_cache_first() {
        let mut c = Controller::new(&small(0.6)).unwrap();
        let n = c.geo().user_units;
        let mut t = 0;
        for lba in 0..n {
            t = c.write(lba, 1, 4096, t);
        }
        let ftl = c.ftl();
        let in_slc = |lba: u64| ftl.is_slc(ftl.geo().superblock_of(ftl.l2p(lba as usize)));
        let slc: Vec<u64> = (0..n).filter(|&l| in_slc(l)).collect();
        assert!(
            !slc.is_empty() && c.activity().fold_units > 0,
            "the test needs a partly folded cache"
        );
        let first_slc = slc[0];
        assert!(first_slc > 0, "the first data written is still in SLC");
        let cached_prefix = ftl.geo().units_per_sb_slc as u64 * 8;
        assert!(
            (0..first_slc).all(|l| !in_slc(l)) && first_slc < cached_prefix,
            "SLC holds {slc:?}"
        );
        ftl.check().unwrap();
    }
}
