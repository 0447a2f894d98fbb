//! Step execution: a closed loop of `iodepth` outstanding commands in virtual time.
//!
//! Contract: [`Drive::run`] applies one [`Step`] to the drive's persistent
//! state and returns its [`StepResult`]. Commands are generated like fio's
//! (sequential offsets advancing by `bs` and wrapping at the span's end, or
//! uniformly random block-aligned offsets from a seeded PRNG; a mix picks the
//! direction of each command with probability `rwmixread`), issued whenever
//! one of the `iodepth` slots is free, and stop at the byte limit or the time
//! limit, whichever comes first; with `rate_iops`, no closer together than
//! 1 / rate, the gaps given to the drive as idle. With bursts, the drive idles after each burst
//! so that busy / (busy + idle) = duty cycle; then it idles `idle_after`.
//! Idle time is given to the drive for folding and garbage collection.

use crate::bounds;
use crate::config::DriveConfig;
use crate::controller::Controller;
use crate::geometry::UNIT;
use crate::histogram::LatHist;
use crate::rng::Rng;
use crate::step::*;
use crate::time::{ns_from_s, NS_PER_S};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// The most virtual time a drive may live (146 years): far below `u64::MAX` ns, so that
/// adding one step (at most a few times [`bounds::MAX_STEP_S`]) never overflows.
const MAX_DRIVE_AGE_NS: u64 = 1 << 62;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

/// Generates the commands of a step (direction and block index), like fio.
struct Gen {
    random: bool,
    blocks: u64,
    seq_pos: u64,
    mix: u32,
    is_trim: bool,
}

impl Gen {
    #[inline]
    fn next(&mut self, rng: &mut Rng) -> (Dir, u64) {
        let block = if self.random {
            rng.below(self.blocks)
        } else {
            let b = self.seq_pos;
            self.seq_pos = if b + 1 >= self.blocks { 0 } else { b + 1 };
            b
        };
        let dir = if self.is_trim {
            Dir::Trim
        } else if self.mix >= 100 || (self.mix > 0 && rng.below(100) < self.mix as u64) {
            Dir::Read
        } else {
            Dir::Write
        };
        (dir, block)
    }
}

/// Commands generated ahead of issue, so that their mapping entries can be prefetched.
const AHEAD: usize = 16;

/// A simulated drive with persistent state across steps.
pub struct Drive {
    cfg: DriveConfig,
    dev: Controller,
    now: u64,
    rng: Rng,
}

impl Drive {
    /// A fresh-out-of-box drive; the default PRNG seed is 1.
    pub fn new(cfg: DriveConfig) -> Result<Drive, SimError> {
        Self::with_seed(cfg, 1)
    }

    pub fn with_seed(cfg: DriveConfig, seed: u64) -> Result<Drive, SimError> {
        cfg.validate()?;
        let dev = Controller::new(&cfg)?;
        Ok(Drive {
            cfg,
            dev,
            now: 0,
            rng: Rng::new(seed),
        })
    }

    pub fn config(&self) -> &DriveConfig {
        &self.cfg
    }

    /// User capacity, bytes.
    pub fn user_bytes(&self) -> u64 {
        self.dev.geo().user_units * UNIT
    }

    /// The whole drive in whole blocks of `bs` bytes: the span of a whole-drive step.
    pub fn whole_span(&self, bs: u64) -> u64 {
        self.user_bytes() / bs * bs
    }

    /// Virtual time since the drive was created, seconds.
    pub fn now_s(&self) -> f64 {
        self.now as f64 / NS_PER_S
    }

    /// Cumulative counters and current state.
    pub fn counters(&self) -> Counters {
        self.dev.snapshot()
    }

    /// Check the FTL invariants (O(capacity)).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.dev.ftl().check()
    }

    /// Run one step.
    pub fn run(&mut self, step: &Step) -> Result<StepResult, SimError> {
        step.validate(self.user_bytes()).map_err(SimError::Step)?;
        if self.now > MAX_DRIVE_AGE_NS {
            return Err(SimError::Step(format!(
                "step {}: the simulated drive has already run for 146 years of drive time, the most it may; start a new drive",
                step.label
            )));
        }
        let t0 = self.now;
        let before = self.dev.snapshot();
        if step.is_purge() {
            let end = self.dev.purge(t0);
            self.now = end;
            return Ok(StepResult {
                label: step.label.clone(),
                start_s: t0 as f64 / NS_PER_S,
                busy_s: (end - t0) as f64 / NS_PER_S,
                idle_s: 0.0,
                bursts: 1,
                read: None,
                write: None,
                trim: None,
                per_second: vec![],
                per_gib: vec![],
                counters: delta(&before, &self.dev.snapshot()),
                notes: vec!["purge: every LBA unmapped, every used block erased".into()],
            });
        }

        // A step that writes a large part of the drive will touch most of the mapping
        // tables: let the kernel provide their pages on another core meanwhile.
        if step.rw != Op::Read
            && step.rw != Op::RandRead
            && step.rw != Op::Trim
            && step.bytes_limit() >= self.user_bytes() / 4
        {
            self.dev.prefault();
        }
        let bs = step.bs;
        let blocks = step.size / bs;
        let random = step.rw.is_random();
        let mix = match step.rw {
            Op::Read | Op::RandRead => 100,
            Op::Write | Op::RandWrite | Op::Trim => 0,
            Op::RandRw | Op::Rw => step.rwmixread.unwrap_or(50),
        };
        let is_trim = step.rw == Op::Trim;
        let mut hist = [LatHist::default(), LatHist::default(), LatHist::default()];
        let mut bytes = [0u64; 3];
        let mut sec: Vec<(u64, u64)> = Vec::new();
        let mut marks: Vec<u64> = Vec::new();
        let mut written = 0u64;
        let mut gen = Gen {
            random,
            blocks,
            seq_pos: 0,
            mix,
            is_trim,
        };
        let mut ahead = [(Dir::Write, 0u64); AHEAD];
        for a in ahead.iter_mut() {
            *a = gen.next(&mut self.rng);
        }
        let mut head = 0usize;
        let lba_of = |b: u64| (step.offset + b * bs) / UNIT;

        let bursts = step.bursts_count();
        let burst_limit = step.burst_bytes.unwrap_or(step.bytes_limit());
        let runtime_ns = step.runtime.map(ns_from_s).unwrap_or(u64::MAX);
        // Like fio's rate_iops, the time waited between commands counts in the step's
        // busy time, so IOPS = commands / runtime comes out at the rate.
        let period_ns = step.rate_iops.map(|r| NS_PER_S as u64 / r);
        // However slow the drive, the step's time axis (and its per-second series) is bounded.
        let step_end = t0 + ns_from_s(bounds::MAX_STEP_S);
        let mut busy_total = 0u64;
        let mut idle_total = 0u64;
        let mut bursts_done = 0;
        let mut t = t0;
        let qd = step.iodepth as usize;
        let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(qd + 1);
        let mut max_done = t0;

        for _ in 0..bursts {
            if busy_total >= runtime_ns {
                break;
            }
            let start = t;
            let deadline = start.saturating_add(runtime_ns - busy_total);
            heap.clear();
            for _ in 0..qd {
                heap.push(Reverse(start));
            }
            let mut issued = 0u64;
            let mut end = start;
            let mut next_issue = start;
            while issued < burst_limit {
                let Reverse(slot) = heap.pop().expect("qd >= 1");
                // A rate-limited step issues no earlier than its next slot in time.
                let ti = slot.max(next_issue);
                if ti >= deadline {
                    heap.push(Reverse(slot));
                    break;
                }
                if ti >= step_end {
                    return Err(self.too_long(step));
                }
                if let Some(period) = period_ns {
                    next_issue = ti + period;
                    if ti > max_done {
                        self.dev.idle(max_done, ti); // nothing outstanding: the drive's own time
                    }
                }
                let (dir, block) = ahead[head];
                let new = gen.next(&mut self.rng);
                ahead[head] = new;
                head = (head + 1) % AHEAD;
                if random {
                    self.dev.prefetch(lba_of(new.1), false);
                    self.dev
                        .prefetch(lba_of(ahead[(head + AHEAD / 2) % AHEAD].1), true);
                }
                let off = step.offset + block * bs;
                let lba = off / UNIT;
                let units = ((off % UNIT + bs).div_ceil(UNIT)) as u32;
                let done = match dir {
                    Dir::Read => self.dev.read(lba, units, bs, ti),
                    Dir::Write => self.dev.write_at(off, bs, ti),
                    Dir::Trim => self.dev.trim(lba, units as u64, ti),
                };
                issued += bs;
                hist[dir as usize].record(done - ti);
                if dir != Dir::Trim {
                    bytes[dir as usize] += bs;
                } else {
                    bytes[2] += bs;
                }
                heap.push(Reverse(done));
                end = end.max(done);
                max_done = max_done.max(done);
                let s = ((done - t0) / 1_000_000_000) as usize;
                if s >= sec.len() {
                    sec.resize(s + 1, (0, 0));
                }
                if dir != Dir::Trim {
                    sec[s].0 += bs;
                }
                sec[s].1 += 1;
                if step.per_gib_series && dir == Dir::Write {
                    written += bs;
                    while written >= (marks.len() as u64 + 1) * MIB {
                        marks.push(max_done);
                    }
                }
            }
            let busy = end - start;
            busy_total += busy;
            bursts_done += 1;
            // At most 999 times the burst (the duty cycle is at least 0.001).
            let idle = match step.duty_cycle {
                Some(d) if d < 1.0 => (busy as f64 * (1.0 / d - 1.0)) as u64,
                _ => 0,
            };
            if end + idle > step_end {
                return Err(self.too_long(step));
            }
            if idle > 0 {
                self.dev.idle(end, end + idle);
            }
            idle_total += idle;
            t = end + idle;
            if issued < burst_limit {
                break; // time limit reached
            }
        }
        let after = ns_from_s(step.idle_after);
        if after > 0 {
            self.dev.idle(t, t + after);
            idle_total += after;
            t += after;
        }
        self.now = t;

        let busy_s = busy_total as f64 / NS_PER_S;
        let dir_result = |i: usize| -> Option<DirectionResult> {
            let h = &hist[i];
            if h.count == 0 {
                return None;
            }
            Some(DirectionResult {
                ios: h.count,
                bytes: bytes[i],
                busy_s,
                latency: Latency {
                    count: h.count,
                    mean_ns: h.mean_ns(),
                    min_ns: h.min_ns,
                    max_ns: h.max_ns,
                    p50_ns: h.percentile(50.0),
                    p99_ns: h.percentile(99.0),
                    p99_9_ns: h.percentile(99.9),
                    p99_99_ns: h.percentile(99.99),
                    histogram: h.nonzero(),
                },
            })
        };
        let span_s = (max_done - t0) as f64 / NS_PER_S;
        let per_second = sec
            .iter()
            .enumerate()
            .map(|(i, &(b, n))| {
                let end = ((i + 1) as f64).min(span_s.max(i as f64 + 1e-9));
                let len = end - i as f64;
                SecondPoint {
                    t_s: end,
                    mbps: b as f64 / len / 1e6,
                    iops: n as f64 / len,
                }
            })
            .collect();
        let per_gib = if step.per_gib_series {
            gib_series(&marks, written, t0)
        } else {
            vec![]
        };
        Ok(StepResult {
            label: step.label.clone(),
            start_s: t0 as f64 / NS_PER_S,
            busy_s,
            idle_s: idle_total as f64 / NS_PER_S,
            bursts: bursts_done.max(1),
            read: dir_result(0),
            write: dir_result(1),
            trim: dir_result(2),
            per_second,
            per_gib,
            counters: delta(&before, &self.dev.snapshot()),
            notes: vec![],
        })
    }

    /// The error of a step that ran past [`bounds::MAX_STEP_S`] of drive time; the
    /// drive's clock moves on to the end of the work already done.
    fn too_long(&mut self, step: &Step) -> SimError {
        self.now = self.dev.quiet_at();
        SimError::Step(format!(
            "step {}: still running after {} s of drive time (the most a step may take); give it a runtime, a smaller io_size or a higher rate_iops",
            step.label,
            bounds::MAX_STEP_S
        ))
    }
}

/// Segments of a fill: 1 GiB when the step wrote at least 16 GiB, else
/// bytes_written / 16 rounded down to 1 MiB (at least 1 MiB).
fn gib_series(marks: &[u64], written: u64, t0: u64) -> Vec<GibPoint> {
    let seg_mib = if written >= 16 * GIB {
        GIB / MIB
    } else {
        (written / 16 / MIB).max(1)
    } as usize;
    let mut out = Vec::new();
    let mut prev = t0;
    let mut i = seg_mib;
    while i <= marks.len() {
        let t = marks[i - 1];
        let dt = (t - prev).max(1) as f64 / NS_PER_S;
        out.push(GibPoint {
            gib: (i as u64 * MIB) as f64 / GIB as f64,
            mbps: (seg_mib as u64 * MIB) as f64 / dt / 1e6,
        });
        prev = t;
        i += seg_mib;
    }
    out
}

/// Flows between two snapshots; states from the later one.
fn delta(a: &Counters, b: &Counters) -> Counters {
    let host = b.host_write_bytes - a.host_write_bytes;
    let nand = b.nand_write_bytes - a.nand_write_bytes;
    Counters {
        host_write_bytes: host,
        nand_write_bytes: nand,
        write_amplification: if host > 0 {
            nand as f64 / host as f64
        } else {
            0.0
        },
        gc_bytes: b.gc_bytes - a.gc_bytes,
        fold_bytes: b.fold_bytes - a.fold_bytes,
        gc_superblocks: b.gc_superblocks - a.gc_superblocks,
        rmw_reads: b.rmw_reads - a.rmw_reads,
        fold_superblocks: b.fold_superblocks - a.fold_superblocks,
        erases: b.erases - a.erases,
        ..*b
    }
}

/// Run `steps` in order on a fresh drive built from `cfg`: the coarse entry point.
pub fn simulate(cfg: &DriveConfig, steps: &[Step]) -> Result<Vec<StepResult>, SimError> {
    let mut d = Drive::new(cfg.clone())?;
    steps.iter().map(|s| d.run(s)).collect()
}
