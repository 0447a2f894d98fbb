//! Flash translation layer: page-level mapping at 4 KiB, superblock states,
//! write points per stream and victim bookkeeping.
//!
//! Contract (the FTL invariants, checked by [`Ftl::check`]):
//! - every mapped LBA `l` maps to a page `p` with `p2l[p] == l`, and every
//!   page with `p2l[p] == l` is the page `l2p[l]` (exactly one valid page per
//!   mapped LBA);
//! - the valid count of each superblock equals its number of valid pages;
//! - free superblocks hold no valid page; full superblocks are in exactly one
//!   victim set (SLC or native) unless being reclaimed.
//!
//! The FTL has no notion of time: the device (`device`) schedules the NAND
//! work that its placements imply.

pub mod victim;

use crate::config::ConfigError;
use crate::geometry::{Geometry, Ppa, NONE};
use std::collections::VecDeque;
use victim::{Greedy, VictimPolicy};

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
}

/// An open superblock and the program unit being filled.
#[derive(Debug, Clone)]
pub struct WritePoint {
    pub sb: u32,
    pub next: u32,
    pub cap: u32,
    pub slc: bool,
    /// Latest time at which data of the program unit being filled is ready.
    pub pu_ready: u64,
}

impl WritePoint {
    fn closed(slc: bool) -> WritePoint {
        WritePoint {
            sb: NONE,
            next: 0,
            cap: 0,
            slc,
            pu_ready: 0,
        }
    }
    #[inline]
    pub fn has_room(&self) -> bool {
        self.next < self.cap
    }
}

/// A zeroed table whose pages the OS provides lazily, backed by transparent
/// huge pages where available (fewer page faults and TLB misses on the random
/// accesses of the mapping tables). None when the memory cannot be had: a drive
/// within the preset bounds may still need more than the machine (or the
/// process's memory limit) gives, and that is the user's to hear, not an abort.
pub fn zeroed_table(n: usize) -> Option<Vec<u32>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u32>(n).ok()?;
    // SAFETY: the layout has a non-zero size. alloc_zeroed (calloc: pages stay lazy)
    // returns null or `n` zeroed u32s, which the Vec then owns and frees with the same
    // global allocator and layout (capacity n, align of u32).
    let v = unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut u32;
        if ptr.is_null() {
            return None;
        }
        Vec::from_raw_parts(ptr, n, n)
    };
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + n * 4;
        let a = start.div_ceil(HUGE) * HUGE;
        if end > a + HUGE {
            // SAFETY: the range lies inside the vector's allocation; MADV_HUGEPAGE is only advice.
            unsafe {
                libc::madvise(
                    a as *mut libc::c_void,
                    (end - a) / HUGE * HUGE,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    Some(v)
}

/// Background population of the pages of the mapping tables (Linux
/// `MADV_POPULATE_WRITE`): the kernel's page faults and page zeroing then run
/// on another core while the simulation runs, instead of stalling it on first
/// touch. Contents are never changed. Dropping it stops and joins the thread,
/// so it never outlives the tables (it is the first field of [`Ftl`], dropped first).
struct Prefault {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Prefault {
    #[cfg(target_os = "linux")]
    fn start(tables: &[&Vec<u32>]) -> Option<Prefault> {
        const MADV_POPULATE_WRITE: libc::c_int = 23;
        const CHUNK: usize = 32 << 20;
        let ranges: Vec<(usize, usize)> = tables
            .iter()
            .map(|v| {
                let page = 4096;
                let a = (v.as_ptr() as usize).div_ceil(page) * page;
                let e = (v.as_ptr() as usize + v.len() * 4) / page * page;
                (a, e.max(a))
            })
            .collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("ssdsim-prefault".into())
            .spawn(move || {
                for (a, e) in ranges {
                    let mut p = a;
                    while p < e {
                        if flag.load(std::sync::atomic::Ordering::Relaxed) {
                            return;
                        }
                        let n = CHUNK.min(e - p);
                        // SAFETY: [p, p + n) lies inside a live table (the owner joins this thread
                        // before freeing it); MADV_POPULATE_WRITE only faults pages in, it never
                        // changes their contents. Errors (old kernels) just end the prefault.
                        if unsafe { libc::madvise(p as *mut libc::c_void, n, MADV_POPULATE_WRITE) }
                            != 0
                        {
                            return;
                        }
                        p += n;
                    }
                }
            })
            .ok()?;
        Some(Prefault {
            stop,
            handle: Some(handle),
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn start(_: &[&Vec<u32>]) -> Option<Prefault> {
        None
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Mapping tables and block bookkeeping.
pub struct Ftl {
    /// Must stay the first field: dropped (stopped and joined) before the tables.
    prefault: Option<Prefault>,
    pub geo: Geometry,
    /// Logical-to-physical table, stored as `ppa + 1` (0 = unmapped) so that a
    /// fresh table is zero pages the OS provides lazily.
    l2p: Vec<u32>,
    /// Physical-to-logical table, stored as `lba + 1` (0 = no valid data).
    p2l: Vec<u32>,
    pub valid: Vec<u32>,
    pub state: Vec<SbState>,
    pub slc: Vec<bool>,
    pub erase_count: Vec<u32>,
    free: VecDeque<u32>,
    pub wps: [WritePoint; 3],
    pub victims_native: Box<dyn VictimPolicy>,
    pub victims_slc: Box<dyn VictimPolicy>,
    /// Superblocks whose valid count fell to zero while full: to erase.
    pub pending_erase: Vec<u32>,
    /// Mapped LBAs.
    pub mapped: u64,
    /// Valid units held in SLC superblocks.
    pub slc_valid: u64,
    /// Superblocks currently in SLC mode (open, full or reclaiming).
    pub slc_sbs: u32,
    /// Per-page version stamp (tests only): the host write sequence number of the data.
    #[cfg(test)]
    pub stamp: Vec<u64>,
}

impl Ftl {
    /// A fresh FTL; ConfigError when its mapping tables do not fit in memory.
    pub fn new(geo: Geometry) -> Result<Ftl, ConfigError> {
        let total = geo.total_units() as usize;
        let n = geo.superblocks as usize;
        let units = geo.user_units as usize;
        let (l2p, p2l) = zeroed_table(units)
            .zip(zeroed_table(total))
            .ok_or_else(|| {
                let gib = ((units + total) * 4) as f64 / (1u64 << 30) as f64;
                ConfigError(format!(
                    "the simulated drive needs {gib:.1} GiB of memory for its mapping tables, \
                     more than this process could allocate: simulate a smaller drive \
                     (drive.user_capacity_gb, drive.geometry) or free memory"
                ))
            })?;
        let vn = Box::new(Greedy::new(geo.superblocks, geo.units_per_sb));
        let vs = Box::new(Greedy::new(geo.superblocks, geo.units_per_sb_slc));
        Ok(Ftl {
            prefault: None,
            l2p,
            p2l,
            valid: vec![0; n],
            state: vec![SbState::Free; n],
            slc: vec![false; n],
            erase_count: vec![0; n],
            free: (0..geo.superblocks).collect(),
            wps: [
                WritePoint::closed(true),
                WritePoint::closed(false),
                WritePoint::closed(false),
            ],
            victims_native: vn,
            victims_slc: vs,
            pending_erase: Vec::new(),
            mapped: 0,
            slc_valid: 0,
            slc_sbs: 0,
            #[cfg(test)]
            stamp: vec![0; total],
            geo,
        })
    }

    /// Physical page of `lba`, or `NONE`.
    #[inline]
    pub fn l2p(&self, lba: usize) -> Ppa {
        self.l2p[lba].wrapping_sub(1)
    }

    /// LBA held by page `ppa`, or `NONE`.
    #[inline]
    pub fn p2l(&self, ppa: usize) -> u32 {
        self.p2l[ppa].wrapping_sub(1)
    }

    #[inline]
    fn set_l2p(&mut self, lba: u32, ppa: Ppa) {
        self.l2p[lba as usize] = ppa.wrapping_add(1);
    }

    #[inline]
    fn set_p2l(&mut self, ppa: Ppa, lba: u32) {
        self.p2l[ppa as usize] = lba.wrapping_add(1);
    }

    /// Hint the CPU to fetch the mapping entry of `lba` (and, if already cached, its page's reverse entry).
    #[inline]
    pub fn prefetch(&self, lba: u64, deep: bool) {
        #[cfg(target_arch = "x86_64")]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let i = lba as usize;
            if i < self.l2p.len() {
                _mm_prefetch(self.l2p.as_ptr().add(i) as *const i8, _MM_HINT_T0);
                if deep {
                    let p = self.l2p[i].wrapping_sub(1) as usize;
                    if p < self.p2l.len() {
                        _mm_prefetch(self.p2l.as_ptr().add(p) as *const i8, _MM_HINT_T0);
                    }
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (lba, deep);
    }

    /// Free superblocks.
    #[inline]
    pub fn free_sbs(&self) -> u32 {
        self.free.len() as u32
    }

    /// Open a new superblock for `stream` (the caller checked that one is free).
    pub fn open(&mut self, stream: Stream, slc: bool) {
        let sb = self.free.pop_front().expect("no free superblock");
        let s = sb as usize;
        self.state[s] = SbState::Open;
        self.slc[s] = slc;
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
            pu_ready: 0,
        };
    }

    /// Invalidate the page `ppa` (its LBA was overwritten, trimmed or moved).
    #[inline]
    fn invalidate(&mut self, ppa: Ppa) {
        self.set_p2l(ppa, NONE);
        let sb = self.geo.superblock_of(ppa);
        let s = sb as usize;
        let old = self.valid[s];
        self.valid[s] = old - 1;
        if self.slc[s] {
            self.slc_valid -= 1;
            self.victims_slc.update(sb, old, old - 1);
        } else {
            self.victims_native.update(sb, old, old - 1);
        }
        if old == 1 && self.state[s] == SbState::Full {
            if self.slc[s] {
                self.victims_slc.remove(sb)
            } else {
                self.victims_native.remove(sb)
            }
            self.state[s] = SbState::Reclaiming;
            self.pending_erase.push(sb);
        }
    }

    /// Map `lba` to the next page of `stream` (which must have room); returns
    /// the page and whether it completed a program unit.
    #[inline]
    pub fn place(&mut self, lba: u32, stream: Stream) -> (Ppa, bool) {
        let old = self.l2p(lba as usize);
        if old != NONE {
            self.invalidate(old);
        } else {
            self.mapped += 1;
        }
        self.place_unmapped(lba, stream)
    }

    #[inline]
    fn place_unmapped(&mut self, lba: u32, stream: Stream) -> (Ppa, bool) {
        let usb = self.geo.units_per_sb;
        let wp = &mut self.wps[stream as usize];
        let sb = wp.sb;
        let ppa = sb * usb + wp.next;
        wp.next += 1;
        let pu_done = self.geo.div_pu.rem(wp.next) == 0;
        let full = wp.next == wp.cap;
        let slc = wp.slc;
        self.set_l2p(lba, ppa);
        self.set_p2l(ppa, lba);
        let s = sb as usize;
        self.valid[s] += 1;
        if slc {
            self.slc_valid += 1;
        }
        if full {
            self.state[s] = SbState::Full;
            if self.valid[s] == 0 {
                self.state[s] = SbState::Reclaiming;
                self.pending_erase.push(sb);
            } else if slc {
                self.victims_slc.insert(sb, self.valid[s]);
            } else {
                self.victims_native.insert(sb, self.valid[s]);
            }
        }
        (ppa, pu_done)
    }

    /// Move the valid page `ppa` to the relocation stream; returns the new page and whether it completed a program unit.
    #[inline]
    pub fn relocate(&mut self, ppa: Ppa) -> (Ppa, bool) {
        let lba = self.p2l(ppa as usize);
        debug_assert_ne!(lba, NONE);
        self.invalidate(ppa);
        let r = self.place_unmapped(lba, Stream::Reloc);
        #[cfg(test)]
        {
            self.stamp[r.0 as usize] = self.stamp[ppa as usize];
        }
        r
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

    /// Take a superblock out of the victim sets to reclaim it.
    pub fn start_reclaim(&mut self, sb: u32) {
        let s = sb as usize;
        debug_assert_eq!(self.state[s], SbState::Full);
        if self.slc[s] {
            self.victims_slc.remove(sb)
        } else {
            self.victims_native.remove(sb)
        }
        self.state[s] = SbState::Reclaiming;
    }

    /// Return an emptied superblock to the free pool (the caller scheduled the erase).
    pub fn release(&mut self, sb: u32) {
        let s = sb as usize;
        debug_assert_eq!(self.valid[s], 0);
        debug_assert_eq!(self.state[s], SbState::Reclaiming);
        if self.slc[s] {
            self.slc_sbs -= 1;
        }
        self.state[s] = SbState::Free;
        self.slc[s] = false;
        self.erase_count[s] += 1;
        self.free.push_back(sb);
    }

    /// Start populating the mapping tables' pages in the background (for steps that
    /// will touch most of them, such as a whole-drive fill). Idempotent.
    pub fn prefault(&mut self) {
        if self.prefault.is_none() {
            self.prefault = Prefault::start(&[&self.l2p, &self.p2l]);
        }
    }

    /// Reset to fresh-out-of-box: everything unmapped and free (erase counts kept).
    pub fn purge(&mut self) {
        self.prefault = None; // stop it before the tables are replaced
                              // Fresh zeroed tables (lazily provided by the OS) instead of rewriting 2 GiB.
        self.l2p = Vec::new();
        self.p2l = Vec::new();
        // the old tables are freed just above: the same sizes fit again
        self.l2p = zeroed_table(self.geo.user_units as usize).expect("fitted when built");
        self.p2l = zeroed_table(self.geo.total_units() as usize).expect("fitted when built");
        self.valid.fill(0);
        self.state.fill(SbState::Free);
        self.slc.fill(false);
        self.free = (0..self.geo.superblocks).collect();
        for sb in 0..self.geo.superblocks {
            self.victims_native.remove(sb);
            self.victims_slc.remove(sb);
        }
        self.wps = [
            WritePoint::closed(true),
            WritePoint::closed(false),
            WritePoint::closed(false),
        ];
        self.pending_erase.clear();
        self.mapped = 0;
        self.slc_valid = 0;
        self.slc_sbs = 0;
    }

    /// Is `ppa` in a program unit that is still being filled (data only in the write buffer)?
    #[inline]
    pub fn in_open_pu(&self, ppa: Ppa) -> bool {
        let upu = self.geo.units_per_pu;
        let usb = self.geo.units_per_sb;
        self.wps.iter().any(|w| {
            w.sb != NONE
                && w.has_room()
                && ppa / upu == (w.sb * usb + w.next) / upu
                && w.next % upu != 0
        })
    }

    /// Verify the FTL invariants (O(capacity)); returns a description of the first violation.
    pub fn check(&self) -> Result<(), String> {
        let mut mapped = 0u64;
        for l in 0..self.l2p.len() {
            let p = self.l2p(l);
            if p != NONE {
                mapped += 1;
                if self.p2l(p as usize) != l as u32 {
                    return Err(format!(
                        "lba {l} maps to page {p} which holds {}",
                        self.p2l(p as usize)
                    ));
                }
            }
        }
        if mapped != self.mapped {
            return Err(format!("mapped count {} != {}", self.mapped, mapped));
        }
        let usb = self.geo.units_per_sb as usize;
        let mut slc_valid = 0u64;
        let mut free_seen = 0;
        for sb in 0..self.geo.superblocks as usize {
            let mut v = 0u32;
            for p in sb * usb..(sb + 1) * usb {
                let l = self.p2l(p);
                if l != NONE {
                    if self.l2p(l as usize) != p as u32 {
                        return Err(format!(
                            "page {p} claims lba {l} which maps to {}",
                            self.l2p(l as usize)
                        ));
                    }
                    v += 1;
                }
            }
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
        if slc_valid != self.slc_valid {
            return Err(format!("slc valid count {} != {slc_valid}", self.slc_valid));
        }
        if free_seen != self.free.len() {
            return Err(format!(
                "free list has {} entries, {free_seen} free superblocks",
                self.free.len()
            ));
        }
        Ok(())
    }
}
