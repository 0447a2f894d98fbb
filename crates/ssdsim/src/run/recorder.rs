//! Recording: what a step's commands did, turned into its [`StepResult`].
//!
//! Contract: [`Recorder::record`] is told of every command when it completes;
//! [`Recorder::finish`] builds the result: per direction the commands, bytes and
//! latency histogram over the step's busy time; the per-second series (bytes read
//! and written and commands completed in each second since the step started, the
//! last interval ending at the last completion); for a step that asks for it, the
//! per-segment series of the data written ([`fill_curve`]); the counters'
//! flows over the step ([`delta`]); and the step's energy, as the drive's power
//! model gives it.

use super::closed_loop::Timing;
use super::commands::{Command, Dir};
use crate::histogram::LatHist;
use crate::step::{
    Counters, DirectionResult, GibPoint, IoRecord, JobResult, Latency, SecondPoint, SteadyReport,
    Step, StepEnergy, StepResult,
};
use crate::time::NS_PER_S;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Written data is marked every MiB (with the time by which every command so far
/// had completed): the finest segment of a fill curve.
const MARK_BYTES: u64 = MIB;
/// Segments of a fill curve are 1 GiB, the unit in which docs/methodology.md reads
/// the curve (the SLC cache size, the mean of the last 16 GiB), when the step wrote
/// at least [`MIN_SEGMENTS`] of them.
const SEGMENT_BYTES: u64 = GIB;
/// A step that wrote less has this many segments (of whole MiB), so that a
/// small-scale fill still has a curve of as many points.
const MIN_SEGMENTS: u64 = 16;

/// The last interval of the per-second series ends at the last completion, which
/// may fall on a whole second: it lasts at least 1 ns, a tick of the drive's clock,
/// so that its rates are finite.
const SHORTEST_INTERVAL_S: f64 = 1e-9;

/// The record of one step's I/O, as it runs.
pub(super) struct Recorder {
    label: String,
    /// Start of the figures, ns of drive time: the step's start (a job's, after its ramp).
    t0: u64,
    /// Per direction ([`Dir`] as index): latencies and bytes.
    latency: [LatHist; 3],
    bytes: [u64; 3],
    /// Bytes read and written, and commands, completed in each second of the step.
    per_second: Vec<(u64, u64)>,
    /// For a step that asks for the per-segment series: the data written so far.
    written: Option<WriteMarks>,
    /// For a job that logs its commands: each of them, in completion order of record.
    log: Option<Vec<IoRecord>>,
}

/// The most commands a job's log keeps (32 bytes each): fio logs of more are rare
/// and this bounds the memory of one job's log to about 160 MB.
pub const MAX_LOGGED_IOS: usize = 5_000_000;

/// Bytes written, and when every command had completed as each MiB of them was done.
#[derive(Default)]
struct WriteMarks {
    bytes: u64,
    marks: Vec<u64>,
}

impl Recorder {
    /// The record of `step`, its figures starting at `t0`.
    pub(super) fn new(step: &Step, t0: u64) -> Recorder {
        Recorder {
            label: step.label.clone(),
            t0,
            latency: Default::default(),
            bytes: [0; 3],
            per_second: Vec::new(),
            written: step.per_gib_series.then(WriteMarks::default),
            log: step.log_ios.then(Vec::new),
        }
    }

    /// `command`, issued at `issued`, completed at `done`; `all_done` is when every
    /// command issued so far (this one too) has completed.
    #[inline(always)]
    pub(super) fn record(&mut self, command: Command, issued: u64, done: u64, all_done: u64) {
        let (dir, bs) = (command.dir, command.bs);
        self.latency[dir as usize].record(done - issued);
        self.bytes[dir as usize] += bs;
        if let Some(log) = &mut self.log {
            log_command(log, command, issued - self.t0, done - self.t0);
        }
        let s = ((done - self.t0) / NS_PER_S as u64) as usize;
        if s >= self.per_second.len() {
            self.per_second.resize(s + 1, (0, 0));
        }
        if dir != Dir::Trim {
            self.per_second[s].0 += bs;
        }
        self.per_second[s].1 += 1;
        if dir == Dir::Write {
            if let Some(w) = &mut self.written {
                w.bytes += bs;
                while w.bytes >= (w.marks.len() as u64 + 1) * MARK_BYTES {
                    w.marks.push(all_done);
                }
            }
        }
    }

    /// Bytes read and written, and commands, completed in second `second` of the record.
    pub(super) fn completed_in(&self, second: usize) -> (u64, u64) {
        self.per_second.get(second).copied().unwrap_or((0, 0))
    }

    /// The figures of one direction over `busy_s` seconds; None when it had no command.
    fn direction(&self, dir: Dir, busy_s: f64) -> Option<DirectionResult> {
        let h = &self.latency[dir as usize];
        if h.count == 0 {
            return None;
        }
        Some(DirectionResult {
            ios: h.count,
            bytes: self.bytes[dir as usize],
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
    }

    /// The per-second series, the last interval ending at `all_done`.
    fn per_second(&self, all_done: u64) -> Vec<SecondPoint> {
        let span_s = all_done.saturating_sub(self.t0) as f64 / NS_PER_S;
        self.per_second
            .iter()
            .enumerate()
            .map(|(i, &(bytes, commands))| {
                let end = ((i + 1) as f64).min(span_s.max(i as f64 + SHORTEST_INTERVAL_S));
                let len = end - i as f64;
                SecondPoint {
                    t_s: end,
                    mbps: bytes as f64 / len / 1e6,
                    iops: commands as f64 / len,
                }
            })
            .collect()
    }

    /// The step's result, the drive's counters being `before` and `after` it, with the
    /// figures of each of its `jobs` when it reports them.
    pub(super) fn finish(
        self,
        timing: &Timing,
        (before, after): (&Counters, &Counters),
        energy: Option<StepEnergy>,
        jobs: Vec<JobResult>,
    ) -> StepResult {
        let busy_s = timing.busy_ns as f64 / NS_PER_S;
        let per_gib = match &self.written {
            Some(w) => fill_curve(&w.marks, w.bytes, self.t0),
            None => vec![],
        };
        StepResult {
            start_s: self.t0 as f64 / NS_PER_S,
            busy_s,
            idle_s: timing.idle_ns as f64 / NS_PER_S,
            bursts: timing.bursts.max(1),
            read: self.direction(Dir::Read, busy_s),
            write: self.direction(Dir::Write, busy_s),
            trim: self.direction(Dir::Trim, busy_s),
            per_second: self.per_second(timing.all_done),
            per_gib,
            temperature_c: vec![],
            thermal_transitions: vec![],
            counters: delta(before, after),
            energy,
            notes: vec![],
            jobs,
            label: self.label,
        }
    }

    /// One job's figures, its last command having completed at `end` (its time from the
    /// end of its ramp, think time included).
    pub(super) fn job_result(self, end: u64, steady: Option<SteadyReport>) -> JobResult {
        let busy_s = end.saturating_sub(self.t0) as f64 / NS_PER_S;
        let recorded: u64 = self.latency.iter().map(|h| h.count).sum();
        JobResult {
            read: self.direction(Dir::Read, busy_s),
            write: self.direction(Dir::Write, busy_s),
            trim: self.direction(Dir::Trim, busy_s),
            per_second: self.per_second(end),
            busy_s,
            log_truncated: self
                .log
                .as_ref()
                .is_some_and(|l| (l.len() as u64) < recorded),
            io_log: self.log.unwrap_or_default(),
            steady,
            label: self.label,
        }
    }
}

/// `command`, issued and completed at these times since the job's figures started, into
/// its log (out of line: most steps keep none, and the loop stays small).
#[inline(never)]
fn log_command(log: &mut Vec<IoRecord>, command: Command, issued: u64, done: u64) {
    if log.len() < MAX_LOGGED_IOS {
        log.push(IoRecord {
            done_ns: done,
            latency_ns: done - issued,
            dir: command.dir as u8,
            bs: command.bs,
            offset: command.offset,
        });
    }
}

/// The result of a purge of `step` from `t0` to `end`, the drive's counters being
/// `before` and `after` it: no I/O, all busy.
pub(super) fn purge_result(
    step: &Step,
    t0: u64,
    end: u64,
    before: &Counters,
    after: &Counters,
    energy: Option<StepEnergy>,
) -> StepResult {
    StepResult {
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
        temperature_c: vec![],
        thermal_transitions: vec![],
        counters: delta(before, after),
        energy,
        notes: vec!["purge: every LBA unmapped, every used block erased".into()],
        jobs: vec![],
    }
}

/// The per-segment series of a step that wrote `written` bytes from `t0`, `marks`
/// holding when every command had completed as each MiB was written: segments of
/// [`SEGMENT_BYTES`] when the step wrote at least [`MIN_SEGMENTS`] of them, else
/// `written / MIN_SEGMENTS` rounded down to whole MiB (at least 1 MiB).
fn fill_curve(marks: &[u64], written: u64, t0: u64) -> Vec<GibPoint> {
    let seg_mib = if written >= MIN_SEGMENTS * SEGMENT_BYTES {
        SEGMENT_BYTES / MARK_BYTES
    } else {
        (written / MIN_SEGMENTS / MARK_BYTES).max(1)
    } as usize;
    let mut out = Vec::new();
    let mut prev = t0;
    let mut i = seg_mib;
    while i <= marks.len() {
        let t = marks[i - 1];
        let dt = (t - prev).max(1) as f64 / NS_PER_S;
        out.push(GibPoint {
            gib: (i as u64 * MARK_BYTES) as f64 / GIB as f64,
            mbps: (seg_mib as u64 * MARK_BYTES) as f64 / dt / 1e6,
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
        host_read_bytes: b.host_read_bytes - a.host_read_bytes,
        host_read_commands: b.host_read_commands - a.host_read_commands,
        host_write_commands: b.host_write_commands - a.host_write_commands,
        gc_bytes: b.gc_bytes - a.gc_bytes,
        fold_bytes: b.fold_bytes - a.fold_bytes,
        gc_superblocks: b.gc_superblocks - a.gc_superblocks,
        rmw_reads: b.rmw_reads - a.rmw_reads,
        unwritten_read_bytes: b.unwritten_read_bytes - a.unwritten_read_bytes,
        fold_superblocks: b.fold_superblocks - a.fold_superblocks,
        erases: b.erases - a.erases,
        read_retries: b.read_retries - a.read_retries,
        soft_decodes: b.soft_decodes - a.soft_decodes,
        parity_rebuilds: b.parity_rebuilds - a.parity_rebuilds,
        uncorrectable_reads: b.uncorrectable_reads - a.uncorrectable_reads,
        refreshed_superblocks: b.refreshed_superblocks - a.refreshed_superblocks,
        ..*b
    }
}
