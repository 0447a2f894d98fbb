//! Steps in, step results out: the data types of the simulator's boundary.
//!
//! [`Step`] is `ssdlab.model.steps.Step` (fio-shaped; sizes in bytes, times in
//! seconds), deserialized from the JSON that the Python model dumps: the same
//! fields, no other. [`StepResult`] carries what
//! `ssdlab.model.results.StepResult` needs (per-direction totals and fio-binned
//! latency histograms, per-second and per-GiB series, idle time, energy) and the
//! drive's internal counters.

use crate::bounds::{self, Bound};
use crate::pattern::{check_split, Distribution, Flow, SplitSize, SteadyState};
use crate::power::Work;
use crate::wear::age::Age;
use crate::wear::retention::PowerOff;
use serde::Deserialize;
use std::fmt;

/// What a time-based step may move: no limit in practice. The same value as
/// `UNLIMITED_BYTES` in python/ssdlab/model/steps.py, and the most
/// [`bounds::STEP_IO_SIZE`] allows.
pub const UNLIMITED_BYTES: u64 = 1 << 62;

/// I/O pattern, with fio's `rw=` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    /// fio takes `readwrite` for `rw`.
    #[serde(alias = "readwrite")]
    Rw,
    Trim,
    RandTrim,
    /// fio's trimwrite: each block trimmed, then written, in order.
    TrimWrite,
}

impl Op {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Op::RandRead | Op::RandWrite | Op::RandRw | Op::RandTrim
        )
    }
    /// Does a step of this operation write?
    pub fn writes(self) -> bool {
        !matches!(self, Op::Read | Op::RandRead | Op::Trim | Op::RandTrim)
    }
    pub fn is_mixed(self) -> bool {
        matches!(self, Op::RandRw | Op::Rw)
    }
}

/// What a step is for within its test (`ssdlab.model.steps.Phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Return the drive to fresh-out-of-box (full TRIM); the I/O fields are ignored.
    Purge,
    /// Write the data the test needs, not scored.
    Precondition,
    /// The workload whose results are scored.
    Measure,
    /// Age the drive (its `age`); the I/O fields are ignored.
    Age,
    /// Leave the drive powered off (its `power_off`); the I/O fields are ignored.
    Off,
}

/// One workload unit. Closed: a field the simulator does not know is refused.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub label: String,
    pub phase: Phase,
    pub rw: Op,
    /// Block size, bytes (multiple of 512).
    pub bs: u64,
    pub iodepth: u32,
    /// Read share in percent, for `randrw` and `rw`.
    pub rwmixread: Option<u32>,
    /// Start of the span, bytes.
    pub offset: u64,
    /// Span, bytes.
    pub size: u64,
    /// Time limit, virtual seconds of I/O.
    pub runtime: Option<f64>,
    /// Byte limit.
    pub io_size: Option<u64>,
    /// fio's `time_based`: the runtime alone ends the step, over the span again and
    /// again (needs a runtime and no io_size).
    pub time_based: bool,
    /// Issue in bursts of this many bytes (needs `duty_cycle` and `io_size`).
    pub burst_bytes: Option<u64>,
    /// busy / (busy + idle) after each burst (or after the step without bursts).
    pub duty_cycle: Option<f64>,
    /// Further idle after the step, seconds (the drive folds and collects garbage).
    pub idle_after: f64,
    /// Report the throughput of every segment written (whole-drive fill).
    pub per_gib_series: bool,
    /// fio's rate_iops: issue at most this many commands per second, evenly spaced
    /// (a light load); the time between them is host idle the drive may use.
    pub rate_iops: Option<u64>,
    /// The drive's state during the step ("10% filled"): a record, it changes nothing.
    pub fill_state: Option<String>,
    /// fio's bssplit: each command's size drawn from these (shares adding up to 100 %);
    /// empty: every command is `bs` bytes.
    pub bssplit: Vec<SplitSize>,
    /// fio's blockalign: random offsets are multiples of it; None: of the smallest size.
    pub blockalign: Option<u64>,
    /// fio's `rw=read:N`: bytes added to each next sequential offset (holes when
    /// positive, backwards when negative).
    pub offset_delta: i64,
    /// Where random commands fall in the span.
    pub distribution: Distribution,
    /// fio's random map (its default, off with norandommap): a uniform random step
    /// touches every block of its span once per pass, in a random order; without it each
    /// offset is drawn anew.
    pub randommap: bool,
    /// fio's thinktime: after every `thinktime_blocks` commands the job waits for its
    /// outstanding ones, then this many seconds (its time, the drive's idle if no
    /// other job is busy).
    pub thinktime: f64,
    pub thinktime_blocks: u64,
    /// fio's rate: bytes per second at most, commands spaced by their size.
    pub rate_bytes: Option<u64>,
    /// fio's ramp_time: seconds of I/O before the job's figures start.
    pub ramp: f64,
    /// fio's flow: the job's share among jobs of the same flow id.
    pub flow: Option<Flow>,
    /// fio's steadystate: the job ends once its per-second figures are steady.
    pub steadystate: Option<SteadyState>,
    /// fio's verify: after its writes, the job reads every byte it wrote back, in
    /// offset order, at its queue depth.
    pub verify: bool,
    /// Keep every command of the job (completion, latency, direction, size, offset),
    /// for fio's write_lat_log, write_bw_log and write_iops_log.
    pub log_ios: bool,
    /// fio jobs that run at the same time as this one (no stonewall between them), each
    /// with its own commands, queue and figures. They are steps of phase `measure`
    /// without bursts, idle, per-GiB series, fill state or jobs of their own.
    pub concurrent: Vec<Step>,
    /// The wear an `age` step brings the drive to (that phase only).
    pub age: Option<Age>,
    /// How long and how warm an `off` step leaves the drive unpowered (that phase only).
    pub power_off: Option<PowerOff>,
    /// A trace whose records are the step's commands (nothing else shapes them).
    pub trace: Option<TraceReplay>,
}

/// A prepared trace (python/ssdlab/traces/prepared.py; read by [`crate::run`]'s trace
/// reader) replayed as a step's commands, in their order. Timed: each issued at its time
/// from the step's start (open loop; `iodepth` is the most outstanding at once, as a
/// host's queue is); untimed: as fast as the drive takes them, `iodepth` at a time.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceReplay {
    pub path: String,
    pub records: u64,
    pub timed: bool,
}

impl Step {
    /// A step with fio's defaults: QD1, the span once, no idle.
    pub fn new(label: &str, rw: Op, bs: u64, size: u64) -> Step {
        Step {
            label: label.to_string(),
            phase: Phase::Measure,
            rw,
            bs,
            iodepth: 1,
            rwmixread: None,
            offset: 0,
            size,
            runtime: None,
            io_size: None,
            time_based: false,
            burst_bytes: None,
            duty_cycle: None,
            idle_after: 0.0,
            per_gib_series: false,
            rate_iops: None,
            fill_state: None,
            bssplit: vec![],
            blockalign: None,
            offset_delta: 0,
            distribution: Distribution::Uniform,
            randommap: false,
            thinktime: 0.0,
            thinktime_blocks: 1,
            rate_bytes: None,
            ramp: 0.0,
            flow: None,
            steadystate: None,
            verify: false,
            log_ios: false,
            concurrent: vec![],
            age: None,
            power_off: None,
            trace: None,
        }
    }

    /// The whole-drive-fill shape of METHODOLOGY.md: 128 KiB sequential writes at QD32
    /// over `span`, with the throughput of every segment written.
    pub fn fill(label: &str, span: u64) -> Step {
        Step::new(label, Op::Write, 128 * 1024, span)
            .qd(32)
            .per_gib()
    }

    /// A purge step.
    pub fn purge(label: &str) -> Step {
        Step {
            phase: Phase::Purge,
            ..Step::new(label, Op::Trim, 4096, 4096)
        }
    }

    /// A purge does no I/O: it returns the drive to fresh-out-of-box.
    pub fn is_purge(&self) -> bool {
        self.phase == Phase::Purge
    }

    /// An `off` step: the drive unpowered as `off` says.
    pub fn off(label: &str, off: PowerOff) -> Step {
        Step {
            phase: Phase::Off,
            power_off: Some(off),
            ..Step::new(label, Op::Trim, 4096, 4096)
        }
    }

    /// An `age` step, to `age`.
    pub fn aged(label: &str, age: Age) -> Step {
        Step {
            phase: Phase::Age,
            age: Some(age),
            ..Step::new(label, Op::Trim, 4096, 4096)
        }
    }

    pub fn qd(mut self, qd: u32) -> Step {
        self.iodepth = qd;
        self
    }
    pub fn offset(mut self, o: u64) -> Step {
        self.offset = o;
        self
    }
    pub fn runtime(mut self, s: f64) -> Step {
        self.runtime = Some(s);
        self
    }
    pub fn io_size(mut self, b: u64) -> Step {
        self.io_size = Some(b);
        self
    }
    pub fn mix(mut self, read_pct: u32) -> Step {
        self.rwmixread = Some(read_pct);
        self
    }
    pub fn bursts(mut self, burst_bytes: u64, duty: f64) -> Step {
        self.burst_bytes = Some(burst_bytes);
        self.duty_cycle = Some(duty);
        self
    }
    pub fn idle_after(mut self, s: f64) -> Step {
        self.idle_after = s;
        self
    }
    pub fn per_gib(mut self) -> Step {
        self.per_gib_series = true;
        self
    }
    pub fn rate(mut self, iops: u64) -> Step {
        self.rate_iops = Some(iops);
        self
    }

    /// The same checks as the Python model, every field within its bound
    /// ([`crate::bounds`]), plus "the span fits the drive" and "a step without a
    /// runtime ends in reasonable time". Errors name the step and the field.
    pub fn validate(&self, user_bytes: u64) -> Result<(), String> {
        let l = &self.label;
        if (self.phase == Phase::Age) != self.age.is_some() {
            return Err(format!("step {l}: an age step, and only one, has an age"));
        }
        if (self.phase == Phase::Off) != self.power_off.is_some() {
            return Err(format!(
                "step {l}: an off step, and only one, has a power_off"
            ));
        }
        if let Some(off) = self.power_off {
            off.check().map_err(|e| format!("step {l}: {e}"))?;
        }
        if matches!(self.phase, Phase::Age | Phase::Off) {
            if self.rate_iops.is_some() || self.fill_state.is_some() {
                return Err(format!(
                    "step {l}: an age or off step has no rate and no fill state"
                ));
            }
            return Ok(());
        }
        if self.is_purge() {
            // Its I/O fields are ignored, but a rate or a fill state on a purge is a
            // mistake of the test that made it (the Python model refuses it too).
            if self.rate_iops.is_some() || self.fill_state.is_some() {
                return Err(format!("step {l}: a purge has no rate and no fill state"));
            }
            return Ok(());
        }
        for (key, value, bound) in self.bounded_fields() {
            if let Some(v) = value {
                bound.check(key, v).map_err(|e| format!("step {l}: {e}"))?;
            }
        }
        if !self.bs.is_multiple_of(512) {
            return Err(format!(
                "step {l}: bs = {} is not a multiple of 512 bytes",
                self.bs
            ));
        }
        if !self.offset.is_multiple_of(512) || !self.size.is_multiple_of(512) {
            return Err(format!(
                "step {l}: offset and size must be multiples of 512 bytes"
            ));
        }
        if self.size < self.bs {
            return Err(format!(
                "step {l}: span {} B is smaller than one block of {} B",
                self.size, self.bs
            ));
        }
        let end = self.offset.checked_add(self.size);
        if end.is_none_or(|end| end > user_bytes) {
            return Err(format!(
                "step {l}: span of {} bytes from offset {} exceeds the drive's {user_bytes} bytes",
                self.size, self.offset
            ));
        }
        if self.rw.is_mixed() != self.rwmixread.is_some() {
            return Err(format!(
                "step {l}: rwmixread is required for randrw/rw and only for them"
            ));
        }
        if let Some(b) = self.burst_bytes {
            let (Some(io), Some(_)) = (self.io_size, self.duty_cycle) else {
                return Err(format!(
                    "step {l}: bursts need both a duty cycle and an io_size"
                ));
            };
            if b == 0 || io % b != 0 || b % self.bs != 0 {
                return Err(format!(
                    "step {l}: io_size must be whole bursts, and a burst whole blocks"
                ));
            }
        }
        if self.time_based && (self.runtime.is_none() || self.io_size.is_some()) {
            return Err(format!(
                "step {l}: a time-based step needs a runtime and no io_size: time alone ends it"
            ));
        }
        if self.rate_iops.is_some() && self.burst_bytes.is_some() {
            return Err(format!(
                "step {l}: rate_iops and bursts do not combine: a rate-limited step is its own light load"
            ));
        }
        self.validate_job().map_err(|e| format!("step {l}: {e}"))?;
        if self.trace.is_some() {
            return self.validate_trace().map_err(|e| format!("step {l}: {e}"));
        }
        if !self.concurrent.is_empty() {
            self.validate_concurrent(user_bytes)?;
        }
        let untimed_limit = user_bytes.saturating_mul(bounds::MAX_DRIVE_WRITES_UNTIMED);
        if self.runtime.is_none() && self.bytes_limit() > untimed_limit {
            return Err(format!(
                "step {l}: io_size = {} is more than {} times the drive's {user_bytes} bytes, and no runtime ends the step: give it a runtime or a smaller io_size",
                self.bytes_limit(),
                bounds::MAX_DRIVE_WRITES_UNTIMED
            ));
        }
        Ok(())
    }

    /// The fields of a fio job beyond the workload's shape.
    fn validate_job(&self) -> Result<(), String> {
        check_split(&self.bssplit)?;
        for size in self.bssplit.iter().map(|s| s.bs).chain(self.blockalign) {
            if size > self.size {
                return Err(format!(
                    "span {} B is smaller than one block of {size} B",
                    self.size
                ));
            }
        }
        if let Some(align) = self.blockalign {
            bounds::STEP_BS.check("blockalign", align as f64)?;
            if !align.is_multiple_of(512) {
                return Err(format!(
                    "blockalign = {align} is not a multiple of 512 bytes"
                ));
            }
        }
        if self.offset_delta != 0 {
            if self.rw.is_random() {
                return Err("offset_delta moves sequential offsets: a random step has none".into());
            }
            if self.offset_delta.unsigned_abs() > self.size
                || !self.offset_delta.unsigned_abs().is_multiple_of(512)
            {
                return Err(format!(
                    "offset_delta = {} must be whole 512-byte sectors, at most the span",
                    self.offset_delta
                ));
            }
        }
        if self.distribution != Distribution::Uniform && !self.rw.is_random() {
            return Err("a random distribution needs a random rw".into());
        }
        self.distribution.check(self.size)?;
        bounds::STEP_IDLE_S.check("thinktime", self.thinktime)?;
        bounds::STEP_THINKTIME_BLOCKS.check("thinktime_blocks", self.thinktime_blocks as f64)?;
        bounds::STEP_IDLE_S.check("ramp", self.ramp)?;
        if let Some(rate) = self.rate_bytes {
            bounds::STEP_RATE_BYTES.check("rate_bytes", rate as f64)?;
            if self.rate_iops.is_some() {
                return Err("rate_bytes and rate_iops do not combine: give one".into());
            }
            if self.burst_bytes.is_some() {
                return Err("rate_bytes and bursts do not combine".into());
            }
        }
        if let Some(flow) = self.flow {
            flow.check()?;
        }
        if let Some(steady) = self.steadystate {
            steady.check()?;
        }
        if self.verify && !self.rw.writes() {
            return Err("verify reads back what the step writes: it needs a writing rw".into());
        }
        Ok(())
    }

    /// A trace's records are the whole workload: nothing may shape them further (the
    /// Python model's rule too); its file is checked before anything runs.
    fn validate_trace(&self) -> Result<(), String> {
        let shaping = [
            ("bursts", self.burst_bytes.is_some()),
            ("rate_iops", self.rate_iops.is_some()),
            ("rate_bytes", self.rate_bytes.is_some()),
            ("runtime", self.runtime.is_some()),
            ("io_size", self.io_size.is_some()),
            ("time_based", self.time_based),
            ("bssplit", !self.bssplit.is_empty()),
            ("thinktime", self.thinktime > 0.0),
            ("ramp", self.ramp > 0.0),
            ("flow", self.flow.is_some()),
            ("steadystate", self.steadystate.is_some()),
            ("verify", self.verify),
            ("concurrent", !self.concurrent.is_empty()),
            ("per_gib_series", self.per_gib_series),
            ("offset_delta", self.offset_delta != 0),
        ];
        let given: Vec<&str> = shaping.iter().filter(|s| s.1).map(|s| s.0).collect();
        if self.phase != Phase::Measure || !given.is_empty() {
            return Err(format!(
                "a trace step is a measured step whose records are its whole workload: it takes no {}",
                if given.is_empty() { "other phase".to_string() } else { given.join(", ") }
            ));
        }
        let trace = self.trace.as_ref().expect("a trace step");
        crate::run::check_trace(trace)
    }

    /// The jobs that run at once with this one: each a valid step of its own, of phase
    /// measure, without what only a whole step has (bursts, idle after it, a per-GiB
    /// series, a fill state) or jobs of its own; at most [`bounds::MAX_JOBS`] in all.
    fn validate_concurrent(&self, user_bytes: u64) -> Result<(), String> {
        let l = &self.label;
        if self.concurrent.len() + 1 > bounds::MAX_JOBS {
            return Err(format!(
                "step {l}: {} jobs at once; at most {}",
                self.concurrent.len() + 1,
                bounds::MAX_JOBS
            ));
        }
        if self.burst_bytes.is_some() || self.per_gib_series || self.is_purge() {
            return Err(format!(
                "step {l}: a step with concurrent jobs has no bursts and no per-GiB series, and is no purge"
            ));
        }
        for job in &self.concurrent {
            job.validate(user_bytes)?;
            if job.phase != Phase::Measure
                || job.burst_bytes.is_some()
                || job.idle_after != 0.0
                || job.per_gib_series
                || job.fill_state.is_some()
                || !job.concurrent.is_empty()
            {
                return Err(format!(
                    "step {l}: its concurrent job {} must be a plain measured job (no phase, bursts, idle after it, per-GiB series, fill state or jobs of its own)",
                    job.label
                ));
            }
        }
        Ok(())
    }

    /// The step's jobs: itself, then those that run at once with it.
    pub fn jobs(&self) -> impl Iterator<Item = &Step> {
        std::iter::once(self).chain(&self.concurrent)
    }

    /// Does the result list each job's own figures? When there are several, or when a
    /// job's figures differ from the step's (a ramp left out, every command logged).
    pub fn reports_jobs(&self) -> bool {
        !self.concurrent.is_empty()
            || self
                .jobs()
                .any(|j| j.ramp > 0.0 || j.log_ios || j.steadystate.is_some())
    }

    /// The smallest size of a command.
    pub fn min_bs(&self) -> u64 {
        self.bssplit
            .iter()
            .map(|s| s.bs)
            .min()
            .unwrap_or(self.bs)
            .min(self.bs)
    }

    /// Every numeric field with its bound; optional fields are checked when present.
    fn bounded_fields(&self) -> [(&'static str, Option<f64>, &'static Bound); 8] {
        // Exact below 2^53; above, rounding moves a value by less than 2^-52 of it.
        let float = |v: u64| v as f64;
        [
            ("bs", Some(float(self.bs)), &bounds::STEP_BS),
            ("iodepth", Some(self.iodepth.into()), &bounds::STEP_IODEPTH),
            (
                "rwmixread",
                self.rwmixread.map(f64::from),
                &bounds::STEP_RWMIXREAD,
            ),
            ("runtime", self.runtime, &bounds::STEP_RUNTIME_S),
            ("io_size", self.io_size.map(float), &bounds::STEP_IO_SIZE),
            ("duty_cycle", self.duty_cycle, &bounds::STEP_DUTY_CYCLE),
            ("idle_after", Some(self.idle_after), &bounds::STEP_IDLE_S),
            (
                "rate_iops",
                self.rate_iops.map(float),
                &bounds::STEP_RATE_IOPS,
            ),
        ]
    }

    /// Number of bursts (1 without bursts).
    pub fn bursts_count(&self) -> u64 {
        match (self.burst_bytes, self.io_size) {
            (Some(b), Some(io)) => io / b,
            _ => 1,
        }
    }

    /// The most bytes the step transfers: [`UNLIMITED_BYTES`] when time-based,
    /// `io_size`, else the span once in whole blocks (fio rounds a span down to a
    /// multiple of the block size).
    pub fn bytes_limit(&self) -> u64 {
        if self.time_based {
            return UNLIMITED_BYTES;
        }
        self.io_size.unwrap_or(self.size / self.bs * self.bs)
    }
}

/// Latency summary of one direction (ns) with its fio-binned histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub p99_99_ns: u64,
    /// (bin value ns as fio's json+ prints it, count), ascending, non-empty bins only.
    pub histogram: Vec<(u64, u64)>,
}

/// Totals of one direction.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectionResult {
    pub ios: u64,
    pub bytes: u64,
    /// Seconds the direction was measured (the step's I/O time).
    pub busy_s: f64,
    pub latency: Latency,
}

impl DirectionResult {
    pub fn iops(&self) -> f64 {
        if self.busy_s > 0.0 {
            self.ios as f64 / self.busy_s
        } else {
            0.0
        }
    }
    /// MB/s (10^6 bytes per second).
    pub fn mbps(&self) -> f64 {
        if self.busy_s > 0.0 {
            self.bytes as f64 / self.busy_s / 1e6
        } else {
            0.0
        }
    }
}

/// Throughput over one interval; `t_s` is its end, seconds since the step started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecondPoint {
    pub t_s: f64,
    pub mbps: f64,
    pub iops: f64,
}

/// Throughput over one segment of written data; `gib` is the amount written at its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GibPoint {
    pub gib: f64,
    pub mbps: f64,
}

/// Internal counters of the drive. In a [`StepResult`], flows (writes, relocations,
/// erases) are for the step and states (cache, free space) are at its end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Bytes the host wrote (whole 4 KiB units).
    pub host_write_bytes: u64,
    /// Bytes the host read.
    pub host_read_bytes: u64,
    /// Read and write commands the host issued (a write merged from parts of 4 KiB
    /// units counts once).
    pub host_read_commands: u64,
    pub host_write_commands: u64,
    /// Bytes programmed into NAND (host data, garbage collection and folding).
    pub nand_write_bytes: u64,
    /// NAND bytes / host bytes (0 when the host wrote nothing).
    pub write_amplification: f64,
    /// Bytes moved by garbage collection of native blocks.
    pub gc_bytes: u64,
    /// Bytes folded from SLC into native blocks.
    pub fold_bytes: u64,
    /// Superblocks reclaimed by garbage collection (native victims).
    pub gc_superblocks: u64,
    /// SLC superblocks folded.
    pub fold_superblocks: u64,
    /// Superblocks erased.
    pub erases: u64,
    /// Host data currently in SLC, bytes.
    pub slc_used_bytes: u64,
    /// Current cache limit, bytes of host data.
    pub slc_limit_bytes: u64,
    /// Free superblocks and their total (retired ones not counted).
    pub free_superblocks: u32,
    pub superblocks: u32,
    /// Superblocks retired, worn out (grown bad blocks).
    pub bad_superblocks: u32,
    /// Mean wear of the superblocks, native P/E cycles (an SLC-mode cycle counts by the
    /// preset's ratio of endurances).
    pub mean_pe_cycles: f64,
    /// Mapped user data, bytes.
    pub mapped_bytes: u64,
    /// NAND reads of old data to merge writes smaller than a 4 KiB mapping unit.
    pub rmw_reads: u64,
    /// Bytes of 4 KiB units never written since the purge, or trimmed, that the drive
    /// read for the host (or read ahead of it): answered without a NAND read.
    pub unwritten_read_bytes: u64,
    /// Page reads (the host's and the drive's own) that needed each decoding tier beyond
    /// the first hard decode: reads again at shifted voltages, soft decodes, parity
    /// rebuilds; and those no tier corrected (media errors).
    pub read_retries: u64,
    pub soft_decodes: u64,
    pub parity_rebuilds: u64,
    pub uncorrectable_reads: u64,
    /// Superblocks whose data the drive rewrote in idle time because it aged or was read
    /// often (refresh and read reclaim; their writes are among the NAND's).
    pub refreshed_superblocks: u64,
}

/// What a step cost in energy, and where its time went among the power states.
#[derive(Debug, Clone, PartialEq)]
pub struct StepEnergy {
    /// Joules over the step's busy time (its I/O, with the gaps of a rate-limited step),
    /// as a power meter beside the drive would measure them.
    pub busy_j: f64,
    /// Joules over its idle time (between bursts and after it).
    pub idle_j: f64,
    /// The work the drive did in the step.
    pub work: Work,
    /// Seconds in each power state, by number: the top state's are all the step's time
    /// not spent in a non-operational one.
    pub state_s: Vec<f64>,
}

/// The outcome of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepResult {
    pub label: String,
    /// Virtual time at which the step started, seconds since the drive was created.
    pub start_s: f64,
    /// Seconds of I/O (sum over bursts).
    pub busy_s: f64,
    /// Seconds the drive was left idle after I/O.
    pub idle_s: f64,
    pub bursts: u64,
    pub read: Option<DirectionResult>,
    pub write: Option<DirectionResult>,
    pub trim: Option<DirectionResult>,
    pub per_second: Vec<SecondPoint>,
    pub per_gib: Vec<GibPoint>,
    /// The temperature the drive reports at the end of each second of drive time since the
    /// step started (its idle too), °C; the last at the step's end. Empty when the preset
    /// has no thermal model.
    pub temperature_c: Vec<f64>,
    /// The drive's thermal-transition count (entries into light and heavy throttling since
    /// it was made, as its health log counts them) at each of those seconds.
    pub thermal_transitions: Vec<u64>,
    pub counters: Counters,
    /// None when the preset has no power model.
    pub energy: Option<StepEnergy>,
    pub notes: Vec<String>,
    /// Each job's own figures, when the step reports them ([`Step::reports_jobs`]): the
    /// step's first, then its concurrent ones in order.
    pub jobs: Vec<JobResult>,
}

/// One command of a job's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRecord {
    /// Completion, ns since the job's figures started (after its ramp).
    pub done_ns: u64,
    pub latency_ns: u64,
    /// 0 read, 1 write, 2 trim (fio's numbers).
    pub dir: u8,
    pub bs: u64,
    /// Byte offset on the drive.
    pub offset: u64,
}

/// The figures of one fio job of a step, as fio reports a job: over its own time, from
/// the end of its ramp to its last completion.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    pub label: String,
    pub busy_s: f64,
    pub read: Option<DirectionResult>,
    pub write: Option<DirectionResult>,
    pub trim: Option<DirectionResult>,
    pub per_second: Vec<SecondPoint>,
    /// Every command, for a job that logs them (at most the first
    /// `run::recorder::MAX_LOGGED_IOS`).
    pub io_log: Vec<IoRecord>,
    /// The job made more commands than its log keeps.
    pub log_truncated: bool,
    /// What its steady-state judgement saw, for a job that asks for one.
    pub steady: Option<SteadyReport>,
}

/// A job's steady-state judgement at its end, as fio reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyReport {
    pub attained: bool,
    /// The last criterion computed (0 before the window first filled).
    pub criterion: f64,
    pub max_deviation: f64,
    pub slope: f64,
    /// The window's samples, oldest first: I/Os and bytes per second.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

impl StepResult {
    /// Read plus write MB/s over the busy time.
    pub fn mbps(&self) -> f64 {
        let b: u64 = [&self.read, &self.write]
            .iter()
            .filter_map(|d| d.as_ref())
            .map(|d| d.bytes)
            .sum();
        if self.busy_s > 0.0 {
            b as f64 / self.busy_s / 1e6
        } else {
            0.0
        }
    }
    /// All directions' IOPS over the busy time.
    pub fn iops(&self) -> f64 {
        let n: u64 = [&self.read, &self.write, &self.trim]
            .iter()
            .filter_map(|d| d.as_ref())
            .map(|d| d.ios)
            .sum();
        if self.busy_s > 0.0 {
            n as f64 / self.busy_s
        } else {
            0.0
        }
    }
}

/// Errors of the simulator's entry points.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    Config(crate::config::ConfigError),
    Step(String),
    /// The drive failed as a real one would (it overheated and dropped off the bus).
    DriveFailed(String),
}

impl SimError {
    /// The error of a write to a drive whose spare ran out.
    pub fn read_only(step: &str) -> SimError {
        SimError::DriveFailed(format!(
            "step {step}: the drive is read-only: its worn-out blocks used up its spare (critical warning bit 3); \
             writes fail with a media error (Write Fault) while reads go on"
        ))
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(e) => write!(f, "{e}"),
            SimError::Step(e) | SimError::DriveFailed(e) => f.write_str(e),
        }
    }
}
impl std::error::Error for SimError {}

impl From<crate::config::ConfigError> for SimError {
    fn from(e: crate::config::ConfigError) -> Self {
        SimError::Config(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVE_BYTES: u64 = 1 << 30;

    fn valid() -> Step {
        Step::new("s", Op::RandWrite, 4096, 1 << 20)
    }

    #[test]
    fn absurd_step_values_are_refused_naming_the_field() {
        let cases = [
            (
                Step { bs: 0, ..valid() },
                "bs = 0 is outside 512..1073741824 (bytes)",
            ),
            (
                Step {
                    bs: u64::MAX,
                    ..valid()
                },
                "bs = 18446744073709551615 is outside",
            ),
            (
                Step {
                    bs: 1000,
                    ..valid()
                },
                "bs = 1000 is not a multiple of 512",
            ),
            (valid().qd(0), "iodepth = 0 is outside 1..4096"),
            (valid().qd(u32::MAX), "iodepth = 4294967295 is outside"),
            (
                Step { size: 0, ..valid() },
                "span 0 B is smaller than one block",
            ),
            (
                Step {
                    size: u64::MAX / 512 * 512,
                    ..valid()
                },
                "span of",
            ),
            (
                valid().offset(u64::MAX / 512 * 512),
                "span of 1048576 bytes from offset",
            ),
            (
                valid().runtime(0.0),
                "runtime = 0 is outside 1e-6..1000000 (s)",
            ),
            (valid().runtime(-1.0), "runtime = -1 is outside"),
            (valid().runtime(f64::NAN), "runtime = NaN is outside"),
            (valid().runtime(f64::INFINITY), "runtime = inf is outside"),
            (valid().runtime(1e300), "runtime = 1e300 is outside"),
            (
                valid().idle_after(-1.0),
                "idle_after = -1 is outside 0..1000000 (s)",
            ),
            (
                valid().idle_after(f64::INFINITY),
                "idle_after = inf is outside",
            ),
            (valid().io_size(0), "io_size = 0 is outside"),
            (
                valid().io_size(u64::MAX),
                "io_size = 18446744073709551615 is outside",
            ),
            (
                valid().io_size(DRIVE_BYTES * 101),
                "is more than 100 times the drive's",
            ),
            (
                valid().rate(0),
                "rate_iops = 0 is outside 1..100000000 (IOPS)",
            ),
            (
                valid().rate(u64::MAX),
                "rate_iops = 18446744073709551615 is outside",
            ),
            (
                valid().io_size(1 << 20).bursts(1 << 16, 0.0),
                "duty_cycle = 0 is outside 0.001..1",
            ),
            (
                valid().io_size(1 << 20).bursts(1 << 16, f64::NAN),
                "duty_cycle = NaN",
            ),
            (
                Step::new("s", Op::RandRw, 4096, 1 << 20).mix(150),
                "rwmixread = 150 is outside 0..100 (%)",
            ),
        ];
        for (step, expected) in cases {
            let msg = step.validate(DRIVE_BYTES).unwrap_err();
            assert!(
                msg.starts_with("step s: ") && msg.contains(expected),
                "{msg}"
            );
        }
    }

    #[test]
    fn a_runtime_allows_an_unlimited_io_size_as_fio_time_based() {
        let step = valid().runtime(1.0).io_size(1 << 62);
        assert_eq!(step.validate(DRIVE_BYTES), Ok(()));
    }

    #[test]
    fn a_time_based_step_has_no_byte_limit_and_needs_a_runtime_alone() {
        let timed = Step {
            time_based: true,
            ..valid().runtime(1.0)
        };
        assert_eq!(timed.validate(DRIVE_BYTES), Ok(()));
        assert_eq!(timed.bytes_limit(), UNLIMITED_BYTES);
        assert_eq!(bounds::STEP_IO_SIZE.max, UNLIMITED_BYTES as f64);
        for step in [
            Step {
                runtime: None,
                ..timed.clone()
            },
            timed.clone().io_size(1 << 20),
        ] {
            let msg = step.validate(DRIVE_BYTES).unwrap_err();
            assert!(msg.contains("needs a runtime and no io_size"), "{msg}");
        }
    }

    #[test]
    fn the_python_models_combination_rules_are_kept() {
        let cases = [
            (
                valid().io_size(1 << 20).bursts(1 << 16, 0.5).rate(1000),
                "rate_iops and bursts do not combine",
            ),
            (Step::purge("s").rate(1000), "a purge has no rate"),
            (
                Step {
                    fill_state: Some("full".into()),
                    ..Step::purge("s")
                },
                "no fill state",
            ),
        ];
        for (step, expected) in cases {
            let msg = step.validate(DRIVE_BYTES).unwrap_err();
            assert!(msg.contains(expected), "{msg}");
        }
        assert!(Step::purge("s").is_purge() && !valid().is_purge());
    }

    /// A step as `Step.model_dump_json()` writes it, every field set.
    const EVERY_FIELD: &str = r#"{"label": "s", "phase": "precondition", "rw": "readwrite",
        "bs": 4096, "iodepth": 8, "rwmixread": 70, "offset": 8192, "size": 1048576,
        "runtime": 2.5, "io_size": 524288, "time_based": false, "burst_bytes": 65536,
        "duty_cycle": 0.5, "idle_after": 1.0, "per_gib_series": true, "rate_iops": 1000,
        "fill_state": "half full", "bssplit": [{"bs": 4096, "pct": 100.0}],
        "blockalign": 4096, "offset_delta": 0, "distribution": {"kind": "zipf", "theta": 0.5}, "randommap": true,
        "thinktime": 0.001, "thinktime_blocks": 4, "rate_bytes": null, "ramp": 0.5,
        "flow": {"id": 1, "weight": 2}, "steadystate": null, "verify": true, "log_ios": true, "concurrent": []}"#;

    #[test]
    fn every_field_of_the_python_step_deserializes() {
        let step: Step = serde_json::from_str(EVERY_FIELD).unwrap();
        let expected = Step {
            phase: Phase::Precondition,
            fill_state: Some("half full".into()),
            ..Step::new("s", Op::Rw, 4096, 1 << 20)
                .qd(8)
                .mix(70)
                .offset(8192)
                .runtime(2.5)
                .io_size(1 << 19)
                .bursts(1 << 16, 0.5)
                .idle_after(1.0)
                .per_gib()
                .rate(1000)
        };
        let expected = Step {
            bssplit: vec![SplitSize {
                bs: 4096,
                pct: 100.0,
            }],
            blockalign: Some(4096),
            distribution: Distribution::Zipf { theta: 0.5 },
            randommap: true,
            thinktime: 0.001,
            thinktime_blocks: 4,
            ramp: 0.5,
            flow: Some(Flow { id: 1, weight: 2 }),
            verify: true,
            log_ios: true,
            ..expected
        };
        assert_eq!(step, expected);
        let purge = EVERY_FIELD.replace(r#""precondition""#, r#""purge""#);
        assert!(serde_json::from_str::<Step>(&purge).unwrap().is_purge());
        let timed = EVERY_FIELD.replace(r#""time_based": false"#, r#""time_based": true"#);
        assert!(serde_json::from_str::<Step>(&timed).unwrap().time_based);
    }

    #[test]
    fn a_field_the_simulator_does_not_know_is_refused_naming_it() {
        let unknown = EVERY_FIELD.replace(r#""label""#, r#""numjobs": 4, "label""#);
        let msg = serde_json::from_str::<Step>(&unknown)
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("unknown field `numjobs`"), "{msg}");
    }
}
