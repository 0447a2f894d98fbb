//! The memory of the mapping tables.
//!
//! A table is zeroed `u32`s whose pages the OS provides lazily, on transparent huge
//! pages where it can. It remembers which 2 MiB chunks may have been written since it was
//! last all zero, so that zeroing it again (a purge, or a drive of the same size built
//! after this one is dropped) rewrites only those chunks, memory the process already
//! holds, and leaves the others lazy. Freeing a table and asking the OS for a new one
//! instead costs a page fault and a page zeroing per page the next drive touches: on a
//! virtual machine whose host takes freed memory back, about 2 s per GiB (BENCHMARKS.md),
//! a fifth of a quick run at scale 0.1.
//!
//! A dropped table goes to a process-wide pool, which hands it to the next table of the
//! same length. The pool never raises a process's peak: a table of a length the pool
//! does not hold frees the whole pool before it is allocated. What it holds between
//! drives is the last drives' tables, until the next drive or [`release`].
//!
//! The owner marks what it writes ([`Table::mark`]); the FTL's invariant checks verify
//! that every non-zero entry lies in a marked chunk.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

/// Entries per chunk: 2 MiB of `u32`s, a transparent huge page. Tests use chunks of 16
/// entries, so that the small drives of the property tests span many of them and a
/// write their owner did not mark is found.
#[cfg(not(test))]
const CHUNK_SHIFT: u32 = 19;
#[cfg(test)]
const CHUNK_SHIFT: u32 = 4;
const HUGE: usize = 2 << 20;

/// Tables dropped and not yet handed on: their entries and marks.
pub struct Pool(Mutex<Vec<(Vec<u32>, Vec<bool>)>>);

/// The process's pool, which every FTL's tables come from and go back to.
static POOL: Pool = Pool::new();

impl Pool {
    const fn new() -> Pool {
        Pool(Mutex::new(Vec::new()))
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<(Vec<u32>, Vec<bool>)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `n` zero entries: a pooled table of that length, else a fresh lazy one.
    fn take(&'static self, n: usize) -> Option<Table> {
        let pooled = {
            let mut held = self.held();
            match held.iter().position(|(e, _)| e.len() == n) {
                Some(i) => Some(held.swap_remove(i)),
                None => {
                    held.clear(); // freed before the new table is asked for
                    None
                }
            }
        };
        let table = match pooled {
            Some((entries, written)) => {
                let mut t = Table {
                    entries,
                    written,
                    pool: self,
                };
                t.clear();
                t
            }
            None => Table {
                entries: lazy_zeroed(n)?,
                written: vec![false; n.div_ceil(1 << CHUNK_SHIFT)],
                pool: self,
            },
        };
        Some(table)
    }

    fn release(&self) {
        let freed = std::mem::take(&mut *self.held());
        drop(freed);
    }
}

/// A zeroed table the OS provides lazily. None when the memory cannot be had: a drive
/// within the preset bounds may still need more than the machine (or the process's
/// memory limit) gives, and that is the user's to hear, not an abort.
pub fn lazy_zeroed(n: usize) -> Option<Vec<u32>> {
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
        let start = v.as_ptr() as usize;
        let end = start + n * 4;
        let a = start.div_ceil(HUGE) * HUGE;
        if end > a + HUGE {
            // SAFETY: the range lies inside the vector's allocation; MADV_HUGEPAGE is only
            // advice (fewer page faults and TLB misses on the tables' random accesses).
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

/// A mapping table: all zero when made, with the chunks written since then marked.
pub struct Table {
    entries: Vec<u32>,
    written: Vec<bool>,
    pool: &'static Pool,
}

impl Table {
    /// `n` zero entries: a pooled table of that length, else a fresh lazy one.
    pub fn zeroed(n: usize) -> Option<Table> {
        POOL.take(n)
    }

    /// The entries from `from` to `from + n` are about to be written.
    #[inline]
    pub fn mark(&mut self, from: usize, n: usize) {
        debug_assert!(n >= 1 && from + n <= self.entries.len());
        let (first, last) = (from >> CHUNK_SHIFT, (from + n - 1) >> CHUNK_SHIFT);
        if let Some(chunks) = self.written.get_mut(first..=last) {
            chunks.fill(true);
        }
    }

    /// Every entry back to zero, rewriting only the chunks marked.
    pub fn clear(&mut self) {
        let chunk = 1usize << CHUNK_SHIFT;
        for (c, w) in self.written.iter_mut().enumerate().filter(|(_, w)| **w) {
            let end = ((c + 1) * chunk).min(self.entries.len());
            self.entries[c * chunk..end].fill(0);
            *w = false;
        }
    }

    /// The first non-zero entry outside the marked chunks (the owner's marking missed it).
    pub fn unmarked_entry(&self) -> Option<usize> {
        self.entries
            .iter()
            .enumerate()
            .find(|&(i, &e)| e != 0 && !self.written[i >> CHUNK_SHIFT])
            .map(|(i, _)| i)
    }
}

impl Deref for Table {
    type Target = [u32];
    #[inline]
    fn deref(&self) -> &[u32] {
        &self.entries
    }
}

impl DerefMut for Table {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u32] {
        &mut self.entries
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        if !self.entries.is_empty() {
            let kept = (
                std::mem::take(&mut self.entries),
                std::mem::take(&mut self.written),
            );
            self.pool.held().push(kept);
        }
    }
}

/// Free the tables the pool holds (a process done with simulated drives for now).
pub fn release() {
    POOL.release();
}

/// Background population of the pages of the mapping tables (Linux
/// `MADV_POPULATE_WRITE`): the kernel's page faults and page zeroing then run
/// on another core while the simulation runs, instead of stalling it on first
/// touch. Contents are never changed. Dropping it stops and joins the thread,
/// so it never outlives the tables (it is the first field of the FTL, dropped first).
pub struct Prefault {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Prefault {
    #[cfg(target_os = "linux")]
    pub fn start(tables: &[&Table]) -> Option<Prefault> {
        const MADV_POPULATE_WRITE: libc::c_int = 23;
        const STRIDE: usize = 32 << 20;
        let ranges: Vec<(usize, usize)> = tables
            .iter()
            .map(|t| {
                let page = 4096;
                let a = (t.as_ptr() as usize).div_ceil(page) * page;
                let e = (t.as_ptr() as usize + t.len() * 4) / page * page;
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
                        let n = STRIDE.min(e - p);
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
    pub fn start(_: &[&Table]) -> Option<Prefault> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pooled_table_comes_back_zero_with_its_marks_cleared() {
        static POOL: Pool = Pool::new();
        let n = 3 << CHUNK_SHIFT | 17; // three chunks and a partial fourth
        let mut t = POOL.take(n).unwrap();
        for at in [5, (2 << CHUNK_SHIFT) + 9, n - 1] {
            t.mark(at, 1);
            t[at] = 7;
        }
        let at = t.as_ptr();
        drop(t);
        let again = POOL.take(n).unwrap();
        assert_eq!(again.as_ptr(), at, "the dropped table is handed on");
        assert!(again.iter().all(|&e| e == 0));
        assert!(again.written.iter().all(|&w| !w));
    }

    #[test]
    fn a_table_of_another_length_frees_the_pool_first() {
        static POOL: Pool = Pool::new();
        drop(POOL.take(1 << CHUNK_SHIFT).unwrap());
        assert_eq!(POOL.held().len(), 1);
        let other = POOL.take(3).unwrap();
        assert!(POOL.held().is_empty());
        drop(other);
        assert_eq!(POOL.held().len(), 1);
        POOL.release();
        assert!(POOL.held().is_empty());
    }

    #[test]
    fn a_write_outside_the_marks_is_found() {
        static POOL: Pool = Pool::new();
        let mut t = POOL.take(2 << CHUNK_SHIFT).unwrap();
        t.mark(1, 2);
        t[2] = 1;
        assert_eq!(t.unmarked_entry(), None);
        t[(1 << CHUNK_SHIFT) + 4] = 1;
        assert_eq!(t.unmarked_entry(), Some((1 << CHUNK_SHIFT) + 4));
    }
}
