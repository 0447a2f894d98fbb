//! The back end every part of the controller schedules on: the FTL's state, the
//! NAND timelines, the mapping table's residency, the firmware's metadata work
//! and the activity counters, kept consistent with each other.
//!
//! Contract: a placement that completes a program unit schedules its program at
//! the time the last of its data is ready; a superblock opened without an erase
//! behind it is erased first (deferred erase); every mapping change is
//! journaled and every map page access goes through the mapping cache, their
//! NAND work scheduled at once and their controller time owed to the command
//! that caused them ([`take_owed_ns`](Flash::take_owed_ns)); the counters count
//! every unit the host wrote and the NAND programmed (metadata included), and
//! every relocation and erase. On a drive whose preset models its raw errors, every
//! read of a native-mode page is decoded in the tiers it needs (`crate::wear::media`):
//! its retries and soft senses are more reads of the same page on its die, the soft
//! decode waits for the drive's one soft decoder, a parity rebuild reads the page's
//! program unit on every other die, and the counters count each tier.

use super::firmware::{Due, Firmware};
use super::mapping::MappingCache;
use crate::config::DriveConfig;
use crate::ftl::{consecutive, EraseMode, Ftl, Stream};
use crate::geometry::{FastDiv, Ppa};
use crate::nand::Nand;
use crate::time::ns_from_us;
use crate::wear::ecc::Decode;
use crate::wear::media::Media;

/// Cumulative activity, in 4 KiB units and operations.
#[derive(Debug, Clone, Copy, Default)]
pub struct Activity {
    pub host_units: u64,
    /// Host commands and the bytes the host read and wrote, for the health log (its data
    /// units count what the host sent: a 512 B write is 512 B, not the 4 KiB unit it changes).
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub nand_units: u64,
    pub gc_units: u64,
    pub fold_units: u64,
    pub gc_sbs: u64,
    pub fold_sbs: u64,
    pub erases: u64,
    pub rmw_reads: u64,
    /// Units read for the host (or ahead of it) that were never written, or were trimmed:
    /// answered as zeroes without a NAND read, as real drives answer deallocated blocks.
    pub unwritten_read_units: u64,
    /// Page reads decoded by each tier beyond the first hard decode: reads again at
    /// shifted voltages, soft decodes, parity rebuilds, and uncorrectable (media errors).
    pub read_retries: u64,
    pub soft_decodes: u64,
    pub parity_rebuilds: u64,
    pub uncorrectable_reads: u64,
    /// Superblocks whose data was rewritten because it aged or was read often.
    pub refreshed_sbs: u64,
}

pub struct Flash {
    pub ftl: Ftl,
    pub nand: Nand,
    pub activity: Activity,
    /// Per stream: the latest time at which data of its program unit being filled is ready.
    pu_ready: [u64; 3],
    mapping: MappingCache,
    /// Map page of an LBA: division by the entries of a map page.
    map_page_of: FastDiv,
    firmware: Option<Firmware>,
    /// Is there metadata work to account for (firmware work, or a mapping table that
    /// is not all in DRAM)? Without, mapping changes cost nothing beyond the FTL's.
    tracks_metadata: bool,
    /// Units relocated since the relocations were last journaled.
    relocated_unjournaled: u64,
    /// Controller time owed to metadata work since it was last taken, ps.
    owed_ps: u64,
    /// Die of the next metadata program (journal and map pages), in turn.
    next_meta_die: u32,
    /// The LBAs of the run being relocated (a buffer kept between runs).
    relocated_lbas: Vec<u32>,
    /// Raw errors and decoding (None: every read decodes at once).
    pub media: Option<Media>,
    /// When the drive's one soft decoder is free.
    soft_decoder_free: u64,
}

impl Flash {
    pub fn new(cfg: &DriveConfig, ftl: Ftl, nand: Nand) -> Flash {
        let mapping = MappingCache::new(cfg, ftl.geo());
        let units_per_page = mapping.units_per_page();
        let map_pages = ftl.geo().user_units.div_ceil(units_per_page as u64);
        let firmware = Firmware::new(cfg, ftl.geo(), map_pages);
        Flash {
            media: Media::new(cfg, ftl.geo().superblocks, ftl.geo().dies),
            soft_decoder_free: 0,
            tracks_metadata: firmware.is_some() || mapping.hit_ps() > 0 || !mapping.holds_all(),
            firmware,
            map_page_of: FastDiv::new(units_per_page),
            mapping,
            ftl,
            nand,
            activity: Activity::default(),
            pu_ready: [0; 3],
            owed_ps: 0,
            relocated_unjournaled: 0,
            next_meta_die: 0,
            relocated_lbas: Vec::new(),
        }
    }

    /// Controller time owed to metadata work since the last call, ns.
    #[inline]
    pub fn take_owed_ns(&mut self) -> u64 {
        std::mem::take(&mut self.owed_ps).div_ceil(1000)
    }

    /// Map page of `lba`.
    #[inline]
    fn map_page(&self, lba: u32) -> u64 {
        self.map_page_of.div(lba) as u64
    }

    /// Look up the map pages of `units` units from `lba` for a read from `t` on;
    /// returns when their entries are known (after NAND reads of pages not held).
    pub fn look_up(&mut self, lba: u64, units: u64, t: u64) -> u64 {
        if !self.tracks_metadata {
            return t;
        }
        let (first, last) = (
            self.map_page(lba as u32),
            self.map_page((lba + units - 1) as u32),
        );
        (first..=last)
            .map(|page| self.touch_map(page, false, t))
            .max()
            .unwrap_or(t)
    }

    /// Access map page `page` at `t` (changing it when `update`); returns when it is in memory.
    #[inline]
    fn touch_map(&mut self, page: u64, update: bool, t: u64) -> u64 {
        self.owed_ps += self.mapping.hit_ps();
        if self.mapping.holds_all() {
            return t;
        }
        let access = self.mapping.access(page, update);
        if access.write_back {
            self.program_metadata(self.mapping.page_units(), t);
        }
        if !access.miss {
            return t;
        }
        // Map pages are kept in SLC mode, spread over the dies.
        let die = (page % self.nand.dies() as u64) as u32;
        self.nand.read(die, true, 0, self.mapping.page_units(), t)
    }

    /// Record `changes` mapping changes of the units from `lba` to `last` at `t`:
    /// their map pages are updated in memory and the journal grows.
    #[inline]
    pub fn note_changes(&mut self, lba: u32, last: u32, changes: u64, t: u64) {
        if !self.tracks_metadata {
            return;
        }
        self.mark_changed(lba, last, t);
        self.journal(changes, t);
    }

    /// The map pages of the units from `lba` to `last` change at `t`; returns when the last
    /// of them is in memory (a DRAM-less drive reads those it does not hold from NAND).
    #[inline]
    fn mark_changed(&mut self, lba: u32, last: u32, t: u64) -> u64 {
        let (first_page, last_page) = (self.map_page(lba), self.map_page(last));
        let mut held = t;
        for page in first_page..=last_page {
            held = held.max(self.touch_map(page, true, t));
            if let Some(fw) = &mut self.firmware {
                fw.mark(page);
            }
        }
        held
    }

    /// The map page of each of `lbas` changes at `t`, one after another.
    #[inline]
    fn mark_each_changed(&mut self, lbas: &[u32], t: u64) {
        if !self.mapping.holds_all() {
            lbas.iter().for_each(|&lba| {
                self.mark_changed(lba, lba, t);
            });
            return;
        }
        // Every map page in memory: each access costs its hit time, and a page marked
        // again in a row changes nothing.
        self.owed_ps += self.mapping.hit_ps() * lbas.len() as u64;
        let Some(fw) = &mut self.firmware else {
            return;
        };
        if let (true, Some(&first), Some(&last)) = (consecutive(lbas), lbas.first(), lbas.last()) {
            // A run of LBAs changes the map pages from its first's to its last's.
            let pages = self.map_page_of.div(first)..=self.map_page_of.div(last);
            pages.for_each(|page| fw.mark(page as u64));
            return;
        }
        let mut marked = None;
        for &lba in lbas {
            let page = self.map_page_of.div(lba) as u64;
            if marked != Some(page) {
                fw.mark(page);
                marked = Some(page);
            }
        }
    }

    /// `changes` mapping changes go into the journal at `t`.
    #[inline]
    fn journal(&mut self, changes: u64, t: u64) {
        if let Some(fw) = &mut self.firmware {
            let due = fw.append(changes);
            if due != Due::default() {
                self.do_metadata_work(due, t);
            }
        }
    }

    /// Program the journal and map pages that fell due at `t`; a checkpoint stalls the controller.
    fn do_metadata_work(&mut self, due: Due, t: u64) {
        let journal_units = self.ftl.geo().units_per_pu;
        for _ in 0..due.journal_pages {
            self.program_metadata(journal_units, t);
        }
        for _ in 0..due.map_pages {
            self.program_metadata(self.mapping.page_units(), t);
        }
        if due.checkpoint {
            let fw = self.firmware.as_ref().expect("due only with firmware work");
            self.owed_ps += fw.checkpoint_ns() * 1000;
        }
    }

    /// Program `units` units of metadata in SLC mode on the next die in turn, from `t`.
    fn program_metadata(&mut self, units: u32, t: u64) {
        let die = self.next_meta_die;
        self.next_meta_die = (die + 1) % self.nand.dies();
        self.activity.nand_units += units as u64;
        self.nand.program(die, true, units, t);
    }

    /// Open a superblock for `stream` at `t`, erasing it first if it still holds old data;
    /// false when SLC mode was asked for and no superblock young enough for it is left.
    pub fn open(&mut self, stream: Stream, slc: bool, t: u64) -> bool {
        let Some(opened) = self.ftl.open(stream, slc) else {
            return false;
        };
        if let Some(media) = &mut self.media {
            media.programmed(opened.sb);
        }
        // Erases that failed (worn-out superblocks, retired) took a native erase's time.
        for _ in 0..opened.failed_erases {
            self.erase(EraseMode { slc: false }, t);
        }
        if let Some(mode) = opened.erase_first {
            self.erase(mode, t);
        }
        true
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

    /// Write the `n` units from `lba` to `stream`, which has room for them in its program
    /// unit, with their data ready at `ready`; returns the first page and, when they
    /// completed the program unit, the program's end.
    #[inline]
    pub fn place_run(
        &mut self,
        lba: u32,
        n: u32,
        stream: Stream,
        ready: u64,
    ) -> (Ppa, Option<u64>) {
        let (ppa, pu_done) = self.ftl.place_run(lba, n, stream);
        (ppa, self.after_placement(ppa, stream, pu_done, ready))
    }

    /// Move the valid units of `sb`, which is being reclaimed, from `offset` on, to the
    /// relocation stream, until `quota` are moved (it has room for them in its program unit)
    /// or `end` is reached, their data ready at `ready`: mapping changes, and controller
    /// time owed for the relocations. Returns the offset after the last unit looked at and
    /// the units moved.
    #[inline]
    pub fn relocate_valid(
        &mut self,
        sb: u32,
        span: (u32, u32),
        quota: u32,
        ready: u64,
    ) -> (u32, u32) {
        let mut lbas = std::mem::take(&mut self.relocated_lbas);
        let (first, next, pu_done) = self.ftl.relocate_valid(sb, span, quota, &mut lbas);
        if let (true, Some((&last, before))) = (self.tracks_metadata, lbas.split_last()) {
            // In the order of unit-by-unit relocation: the program, if the units complete
            // their program unit, comes after every unit but the last.
            self.mark_each_changed(before, ready);
            self.after_placement(first, Stream::Reloc, pu_done, ready);
            self.mark_changed(last, last, ready);
            self.relocated_unjournaled += lbas.len() as u64;
        } else {
            self.after_placement(first, Stream::Reloc, pu_done, ready);
        }
        let moved = lbas.len() as u32;
        self.relocated_lbas = lbas;
        (next, moved)
    }

    /// The relocations since the last call go into the journal at `t`, and their
    /// controller time is owed (one call per batch of relocations, not per unit).
    pub fn journal_relocations(&mut self, t: u64) {
        let n = std::mem::take(&mut self.relocated_unjournaled);
        if n == 0 {
            return;
        }
        if let Some(fw) = &self.firmware {
            self.owed_ps += fw.relocate_unit_ps() * n;
        }
        self.journal(n, t);
    }

    /// Unmap `units` units from `lba` at `t` (TRIM): the range's map pages read (the walk
    /// looks at every entry), each mapped unit deallocated (controller time and a journal
    /// record each) and the map pages changed. Returns when the map pages are in memory.
    pub fn trim(&mut self, lba: u64, units: u64, t: u64) -> u64 {
        let walked = self.look_up(lba, units, t);
        let mapped = (lba..lba + units)
            .filter(|&l| self.ftl.trim(l as u32))
            .count() as u64;
        if !self.tracks_metadata || mapped == 0 {
            return walked; // nothing was mapped: no entry changed
        }
        let held = self.mark_changed(lba as u32, (lba + units - 1) as u32, walked);
        if let Some(fw) = &self.firmware {
            self.owed_ps += fw.deallocate_unit_ps() * mapped;
        }
        self.journal(mapped, t);
        held
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

    /// Flush the program unit `stream` is filling: program it now (from `t`, or when its
    /// data is in), padded; returns the program's end, or None when none was partly filled.
    pub fn flush_program_unit(&mut self, stream: Stream, t: u64) -> Option<u64> {
        let ppa = self.ftl.pad_program_unit(stream)?;
        self.after_placement(ppa, stream, true, t)
    }

    /// Where `ppa` lies: its die, whether its superblock was written in SLC mode, and
    /// its wordline row (the page type, hence the read time, depends on it).
    #[inline]
    fn locate(&self, ppa: Ppa) -> (u32, bool, u32) {
        let g = self.ftl.geo();
        let pu = g.pu_of(ppa);
        (
            g.die_of_pu(pu),
            self.ftl.is_slc(g.superblock_of(ppa)),
            g.row_of_pu(pu),
        )
    }

    /// Sense `n` units of the program unit holding `ppa` for the drive's own work, from `t`.
    #[inline]
    pub fn read_own(&mut self, ppa: Ppa, n: u32, t: u64) -> u64 {
        let (die, slc, row) = self.locate(ppa);
        let out = self.nand.read(die, slc, row, n, t);
        self.decoded(ppa, n, out)
    }

    /// Sense `n` units of the program unit holding `ppa` for the host, from `t`.
    #[inline]
    pub fn read_for_host(&mut self, ppa: Ppa, n: u32, t: u64) -> u64 {
        let (die, slc, row) = self.locate(ppa);
        let out = self.nand.host_read(die, slc, row, n, t);
        self.decoded(ppa, n, out)
    }

    /// The `n` units of the program unit holding `ppa`, sensed and out at `out`, decoded:
    /// when the data is corrected (or found uncorrectable).
    #[inline]
    fn decoded(&mut self, ppa: Ppa, n: u32, out: u64) -> u64 {
        let Some(media) = &mut self.media else {
            return out;
        };
        let ftl = &self.ftl;
        let sb = ftl.geo().superblock_of(ppa);
        match media.decode(sb, || ftl.wear().cycles(sb), || ftl.is_slc(sb)) {
            None => out,
            Some(d) => self.decode_tiers(ppa, n, d, out),
        }
    }

    /// Is the data of a full superblock due to be rewritten (refresh, read reclaim)?
    pub fn refresh_due(&mut self) -> bool {
        let ftl = &self.ftl;
        let media = self.media.as_mut();
        media.is_some_and(|m| m.due(|sb| ftl.is_full(sb)).is_some())
    }

    /// The next full superblock whose data is due to be rewritten, taken out of the victim
    /// sets to be reclaimed.
    pub fn take_refresh(&mut self) -> Option<(u32, bool)> {
        let ftl = &self.ftl;
        let sb = self.media.as_mut()?.take_due(|sb| ftl.is_full(sb))?;
        self.activity.refreshed_sbs += 1;
        Some(self.ftl.take_full(sb))
    }

    /// Schedule the tiers a read needed beyond its first decode (see the module docs).
    #[cold]
    #[inline(never)]
    fn decode_tiers(&mut self, ppa: Ppa, n: u32, d: Decode, out: u64) -> u64 {
        let media = self.media.as_ref().expect("decoded with a media model");
        debug_assert!(!self.ftl.is_slc(self.ftl.geo().superblock_of(ppa)));
        let (failed, cfg) = (media.ecc().failed_ns(), media.ecc().config());
        let (senses, soft_ns) = (cfg.soft_senses, ns_from_us(cfg.soft_decode_us));
        let cfg_parity = cfg.parity_limit_rber.is_some();
        let (die, slc, row) = self.locate(ppa);
        let mut t = self
            .nand
            .read_again(die, slc, row, n, out, d.retries, failed);
        self.activity.read_retries += d.retries as u64;
        if !d.soft {
            return t + d.extra_ns;
        }
        t += failed; // the last retry failed too
        t = self.nand.read_again(die, slc, row, n, t, senses, 0);
        let start = t.max(self.soft_decoder_free);
        self.soft_decoder_free = start + soft_ns;
        t = self.soft_decoder_free;
        self.activity.soft_decodes += 1;
        if d.parity || (d.uncorrectable && cfg_parity) {
            // the page's program unit on every other die, read at once: XOR rebuilds it
            // (or fails to, when more than one of them is beyond correction too)
            let dies = self.nand.dies();
            t = (0..dies)
                .filter(|&other| other != die)
                .map(|other| self.nand.read(other, slc, row, n, t))
                .max()
                .unwrap_or(t);
            self.activity.parity_rebuilds += d.parity as u64;
        }
        if d.uncorrectable {
            self.activity.uncorrectable_reads += 1;
        }
        t
    }

    /// Forget the write points' pending data times and the metadata state (purge).
    pub fn forget_pending(&mut self) {
        self.pu_ready = [0; 3];
        self.mapping.clear();
        if let Some(fw) = &mut self.firmware {
            fw.clear();
        }
        self.owed_ps = 0;
        self.relocated_unjournaled = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::small;
    use crate::config::{Levelling, WearConfig};
    use crate::ftl::Ftl;
    use crate::geometry::Geometry;
    use crate::wear::Wear;

    /// The small test drive with the TLC error model and decoding tiers, nothing written.
    fn flash() -> Flash {
        let mut cfg = small(0.5);
        cfg.wear = Some(WearConfig {
            rated_pe_cycles: 3000,
            slc_pe_cycles: 30000,
            slc_retire_pe_cycles: None,
            endurance_median: 2.0,
            endurance_sigma: 0.0,
            levelling: Levelling::Dynamic,
            static_spread_pe: None,
            rated_tbw: None,
        });
        cfg.errors = Some(crate::wear::errors::tests::tlc());
        cfg.ecc = Some(crate::wear::ecc::tests::ecc());
        cfg.validate().unwrap();
        let geo = Geometry::new(&cfg).unwrap();
        let wear = Wear::new(cfg.wear.as_ref(), geo.superblocks, geo.dies, 0);
        let nand = Nand::new(&cfg, &geo);
        Flash::new(
            &cfg,
            Ftl::new(geo, cfg.ftl.victim_policy, wear).unwrap(),
            nand,
        )
    }

    /// How long a read of one unit at page 0 takes on an idle drive when it needs `d`.
    fn latency(d: Decode) -> u64 {
        let mut f = flash();
        let out = f.nand.read(0, false, 0, 1, 0);
        f.decode_tiers(0, 1, d, out)
    }

    #[test]
    fn a_read_that_needs_more_tiers_takes_longer_by_exactly_their_costs() {
        let f = flash();
        let m = f.media.as_ref().unwrap();
        let (failed, tr, x) = (
            m.ecc().failed_ns(),
            f.nand.mode(false).read_ns(0),
            f.nand.xfer_ns(1),
        );
        let soft_ns = ns_from_us(m.ecc().config().soft_decode_us);
        let senses = m.ecc().config().soft_senses as u64;
        let first = tr + x;
        let plain = latency(Decode {
            extra_ns: 3_000,
            ..Decode::default()
        });
        assert_eq!(plain, first + 3_000);
        let retried = latency(Decode {
            retries: 3,
            extra_ns: 2_000,
            ..Decode::default()
        });
        assert_eq!(retried, first + 3 * (failed + tr + x) + 2_000);
        let soft = Decode {
            retries: 8,
            soft: true,
            ..Decode::default()
        };
        let soft_latency = first + 8 * (failed + tr + x) + failed + senses * (tr + x) + soft_ns;
        assert_eq!(latency(soft), soft_latency);
        // parity: the page's program unit read on every other die at once, after the soft
        // decode; of the 4 dies on 2 channels, dies 1 and 3 share channel 1: two transfers
        assert_eq!(f.nand.dies(), 4);
        let parity = latency(Decode {
            parity: true,
            ..soft
        });
        assert_eq!(parity, soft_latency + tr + 2 * x);
    }
}
