//! Steps in, step results out: the data types of the simulator's boundary.
//!
//! [`Step`] mirrors `ssdlab.model.steps.Step` (fio-shaped; sizes in bytes,
//! times in seconds), plus `purge`. [`StepResult`] carries what
//! `ssdlab.model.results.StepResult` needs (per-direction totals and fio-binned
//! latency histograms, per-second and per-GiB series, idle time) and the
//! drive's internal counters.

use std::fmt;

/// I/O pattern, with fio's `rw=` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    Rw,
    Trim,
}

impl Op {
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "read" => Op::Read,
            "write" => Op::Write,
            "randread" => Op::RandRead,
            "randwrite" => Op::RandWrite,
            "randrw" => Op::RandRw,
            "rw" | "readwrite" => Op::Rw,
            "trim" => Op::Trim,
            _ => return None,
        })
    }
    pub fn is_random(self) -> bool {
        matches!(self, Op::RandRead | Op::RandWrite | Op::RandRw)
    }
    pub fn is_mixed(self) -> bool {
        matches!(self, Op::RandRw | Op::Rw)
    }
}

/// One workload unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub label: String,
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
    /// Purge instead of I/O: return the drive to fresh-out-of-box (full TRIM); I/O fields are ignored.
    pub purge: bool,
}

impl Step {
    /// A step with fio's defaults: QD1, the span once, no idle.
    pub fn new(label: &str, rw: Op, bs: u64, size: u64) -> Step {
        Step {
            label: label.to_string(),
            rw,
            bs,
            iodepth: 1,
            rwmixread: None,
            offset: 0,
            size,
            runtime: None,
            io_size: None,
            burst_bytes: None,
            duty_cycle: None,
            idle_after: 0.0,
            per_gib_series: false,
            rate_iops: None,
            purge: false,
        }
    }

    /// The whole-drive-fill shape of METHODOLOGY.md: 128 KiB sequential writes at QD32
    /// over `span`, with the throughput of every segment written.
    pub fn fill(label: &str, span: u64) -> Step {
        Step::new(label, Op::Write, 128 * 1024, span).qd(32).per_gib()
    }

    /// A purge step.
    pub fn purge(label: &str) -> Step {
        Step {
            purge: true,
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

    /// The same checks as the Python model, plus "the span fits the drive".
    pub fn validate(&self, user_bytes: u64) -> Result<(), String> {
        if self.purge {
            return Ok(());
        }
        let l = &self.label;
        if self.bs == 0 || !self.bs.is_multiple_of(512) {
            return Err(format!(
                "step {l}: bs={} is not a positive multiple of 512 bytes",
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
        if self.offset + self.size > user_bytes {
            return Err(format!(
                "step {l}: span {}..{} exceeds the drive's {} bytes",
                self.offset,
                self.offset + self.size,
                user_bytes
            ));
        }
        if self.iodepth == 0 || self.iodepth > 4096 {
            return Err(format!("step {l}: iodepth must be in 1..=4096"));
        }
        if self.rw.is_mixed() != self.rwmixread.is_some() {
            return Err(format!(
                "step {l}: rwmixread is required for randrw/rw and only for them"
            ));
        }
        if let Some(m) = self.rwmixread {
            if m > 100 {
                return Err(format!("step {l}: rwmixread must be 0..=100"));
            }
        }
        if let Some(r) = self.runtime {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!("step {l}: runtime must be > 0"));
            }
        }
        if let Some(d) = self.duty_cycle {
            if !(d > 0.0 && d <= 1.0) {
                return Err(format!("step {l}: duty_cycle must be in (0, 1]"));
            }
        }
        if self.rate_iops == Some(0) {
            return Err(format!("step {l}: rate_iops must be > 0"));
        }
        if !(self.idle_after.is_finite() && self.idle_after >= 0.0) {
            return Err(format!("step {l}: idle_after must be >= 0"));
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
        if self.io_size == Some(0) {
            return Err(format!("step {l}: io_size must be > 0"));
        }
        Ok(())
    }

    /// Number of bursts (1 without bursts).
    pub fn bursts_count(&self) -> u64 {
        match (self.burst_bytes, self.io_size) {
            (Some(b), Some(io)) => io / b,
            _ => 1,
        }
    }

    /// The most bytes the step transfers: `io_size`, else the span once in whole
    /// blocks (fio rounds a span down to a multiple of the block size).
    pub fn bytes_limit(&self) -> u64 {
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
    /// Free superblocks and their total.
    pub free_superblocks: u32,
    pub superblocks: u32,
    /// Mapped user data, bytes.
    pub mapped_bytes: u64,
    /// NAND reads of old data to merge writes smaller than a 4 KiB mapping unit.
    pub rmw_reads: u64,
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
    pub counters: Counters,
    pub notes: Vec<String>,
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
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(e) => write!(f, "{e}"),
            SimError::Step(e) => f.write_str(e),
        }
    }
}
impl std::error::Error for SimError {}

impl From<crate::config::ConfigError> for SimError {
    fn from(e: crate::config::ConfigError) -> Self {
        SimError::Config(e)
    }
}
