//! The drive's power: the energy of its work and of its time, and its power states.
//!
//! Contract: the parts of the drive count their [`Work`] (see `work.rs`); [`Power`] is
//! told of every host idle ([`Power::idle`]) and of every command's issue
//! ([`Power::command_at`], which says when the drive is awake to serve it), and at a
//! step's end gives its energy ([`Power::step_energy`]): the drive's power with nothing
//! to do (`active_idle_w`) over the time it is awake, the power of each
//! non-operational state over the time spent in it, and the energy of the work done
//! ([`EnergyModel`]), each over the step's busy time and over its idle time. Which
//! states the drive reaches is the host's choice ([`Platform`], [`ApstPolicy`]); the
//! drive reaches none while it still has work of its own (folding, garbage collection).
//! A drive whose preset has no `[drive.power]` reports no energy and never sleeps.

mod energy;
mod states;
mod work;

pub use energy::{EnergyModel, PerOperation};
pub use states::{ApstPolicy, LinuxApst, NoApst, Tier};
pub use work::Work;

use states::Ladder;

use crate::config::{DriveConfig, PowerConfig};
use crate::step::StepEnergy;
use crate::thermal::{Cooling, DEFAULT_AMBIENT_C};
use crate::time::NS_PER_S;

/// Linux's default `nvme_core.default_ps_max_latency_us`.
pub const DEFAULT_MAX_LATENCY_US: u64 = 100_000;

/// The platform a run is on, not a step's: the host's power management (a real host
/// changes it outside the workload, through sysfs), the features it sets on the drive
/// and the drive's surroundings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Platform {
    /// The device's latency tolerance (`nvme_core.default_ps_max_latency_us`): APST uses
    /// no state whose exit latency is above it; 0 turns APST off.
    pub apst_max_latency_us: u64,
    /// Can the platform let the drive reach its non-operational states (PCIe ASPM
    /// L1.2)? Without, the drive stays in active idle, as the SN850 and the 980 PRO did
    /// in one lab (CALIBRATION.md).
    pub low_power_states: bool,
    /// How the drive is cooled, and the temperature of the air around it, °C.
    pub cooling: Cooling,
    pub ambient_c: f64,
    /// The drive's volatile write cache, as the host set it (NVMe feature 06h, WCE). With
    /// it off, the drive completes a write only when its data is on NAND: each write's
    /// partly filled program units are programmed at once, padded, and the write completes
    /// when those programs end.
    pub volatile_write_cache: bool,
}

impl Default for Platform {
    /// Linux's defaults on a platform that reaches every state, the write cache on (as
    /// drives ship and Linux leaves it); the default cooling and air.
    fn default() -> Platform {
        Platform {
            apst_max_latency_us: DEFAULT_MAX_LATENCY_US,
            low_power_states: true,
            cooling: Cooling::default(),
            ambient_c: DEFAULT_AMBIENT_C,
            volatile_write_cache: true,
        }
    }
}

impl Platform {
    /// The APST table the host programs into the drive (feature 0Ch), None when APST is
    /// off. A platform without low power states still programs it: the drive then never
    /// gets to use it.
    pub fn programmed_apst(&self) -> Option<LinuxApst> {
        (self.apst_max_latency_us > 0).then_some(LinuxApst {
            max_latency_us: self.apst_max_latency_us,
        })
    }

    /// Is the platform within what the simulator models? The message names the field,
    /// its value and its range.
    pub fn check(&self) -> Result<(), String> {
        crate::bounds::AMBIENT_C.check("ambient_c", self.ambient_c)
    }

    /// The APST policy this platform applies.
    fn policy(&self) -> Box<dyn ApstPolicy> {
        match self.programmed_apst() {
            Some(apst) if self.low_power_states => Box::new(apst),
            _ => Box::new(NoApst),
        }
    }
}

/// Which part of a step's time an idle falls in: its busy time (the gaps of a
/// rate-limited step, counted in its runtime as fio counts them) or its idle time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepTime {
    Busy = 0,
    Idle = 1,
}

/// The power model of a drive with a `[drive.power]`.
struct Model {
    config: PowerConfig,
    energy: Box<dyn EnergyModel>,
    ladder: Ladder,
    /// Power idling in each state, by number, W.
    state_w: Vec<f64>,
}

/// What a step has spent so far beyond the power of an awake drive.
struct StepLog {
    /// Per state, ns spent in it during the step's busy and idle time ([`StepTime`]).
    low_ns: Vec<[u64; 2]>,
    /// The work the drive did in the step's idle time.
    idle_work: Work,
    /// Commands that waited for the drive to wake, by the state it woke from (None:
    /// active idle): how many, and the longest wait, ns.
    wakes: Vec<(Option<usize>, u64, u64)>,
}

impl StepLog {
    fn new(states: usize) -> StepLog {
        StepLog {
            low_ns: vec![[0; 2]; states],
            idle_work: Work::default(),
            wakes: Vec::new(),
        }
    }
}

/// The drive's power across steps.
pub struct Power {
    model: Option<Model>,
    /// When the current host idle began (the drive quiet), until a command comes.
    idle_from: Option<u64>,
    /// A command issued before this waits for the drive to wake, from this state (None:
    /// active idle).
    awake_at: u64,
    woken_from: Option<usize>,
    log: StepLog,
    /// Since the drive was made: ns spent in non-operational states, and their energy.
    asleep_ns: u64,
    asleep_j: f64,
}

impl Power {
    pub fn new(cfg: &DriveConfig, platform: Platform) -> Power {
        let model = cfg.power.as_ref().map(|p| Model {
            energy: Box::new(PerOperation::new(cfg, p)),
            ladder: Ladder::new(p, platform.policy().as_ref()),
            state_w: p.table().iter().map(|s| s.idle_w()).collect(),
            config: p.clone(),
        });
        Power {
            log: StepLog::new(model.as_ref().map_or(0, |m| m.state_w.len())),
            model,
            idle_from: None,
            awake_at: 0,
            woken_from: None,
            asleep_ns: 0,
            asleep_j: 0.0,
        }
    }

    /// The host's power management changes (between steps, as `disable_apst` does on a
    /// real host).
    pub fn set_platform(&mut self, platform: Platform) {
        if let Some(m) = &mut self.model {
            m.ladder = Ladder::new(&m.config, platform.policy().as_ref());
        }
    }

    /// A command issued at `t`: when the drive is awake to process it.
    #[inline]
    pub fn command_at(&mut self, t: u64) -> u64 {
        self.idle_from = None;
        if t < self.awake_at {
            self.waited(self.awake_at - t);
        }
        t.max(self.awake_at)
    }

    /// A command waited `ns` for the drive to wake: logged by the state it woke from.
    #[cold]
    fn waited(&mut self, ns: u64) {
        let from = self.woken_from;
        match self.log.wakes.iter_mut().find(|w| w.0 == from) {
            Some(w) => {
                w.1 += 1;
                w.2 = w.2.max(ns);
            }
            None => self.log.wakes.push((from, 1, ns)),
        }
    }

    /// What the step begun last waited for the drive to wake, in words; None when nothing
    /// waited. A command's latency counts from its issue, so the step's maximum latency
    /// holds these waits: this says where they come from.
    pub fn wake_note(&self) -> Option<String> {
        if self.log.wakes.is_empty() {
            return None;
        }
        let count: u64 = self.log.wakes.iter().map(|w| w.1).sum();
        let mut parts: Vec<(Option<usize>, u64, u64)> = self.log.wakes.clone();
        parts.sort_by_key(|w| std::cmp::Reverse(w.2));
        let each: Vec<String> = parts
            .iter()
            .map(|&(from, n, max_ns)| {
                let state = from.map_or("active idle".to_string(), |s| format!("PS{s}"));
                format!("{n} from {state} (up to {:.3} ms)", max_ns as f64 / 1e6)
            })
            .collect();
        Some(format!(
            "{count} command(s) waited for the drive to wake after host idle, as under the host's APST: {}; their latency, counted from their issue, holds that wait (the step's maximum latency among them)",
            each.join(", ")
        ))
    }

    /// The host idles from `t0` to `t1`, in the step's `time`; the drive did `work` in it
    /// and is `quiet()` from then on. The idle continues the previous one when no command
    /// came between them and the drive had no new work.
    pub fn idle(
        &mut self,
        t0: u64,
        t1: u64,
        time: StepTime,
        work: Work,
        quiet: impl FnOnce() -> u64,
    ) {
        let Some(m) = &self.model else {
            return;
        };
        if time == StepTime::Idle {
            self.log.idle_work = self.log.idle_work + work;
        }
        let q = quiet().max(t0);
        let from = match self.idle_from {
            Some(from) if q == t0 => from,
            _ => q,
        };
        self.idle_from = Some(from);
        let offset = |t: u64| t.saturating_sub(from);
        let (low_ns, asleep_ns, asleep_j) = (
            &mut self.log.low_ns,
            &mut self.asleep_ns,
            &mut self.asleep_j,
        );
        m.ladder
            .residency(offset(t0), offset(t1), from, |state, ns| {
                low_ns[state][time as usize] += ns;
                *asleep_ns += ns;
                *asleep_j += ns as f64 * m.state_w[state] / NS_PER_S;
            });
        let (woken_from, wake) = if t1 > from {
            m.ladder.wake(t1 - from, from)
        } else {
            (None, 0)
        };
        self.awake_at = t1 + wake;
        self.woken_from = woken_from;
    }

    /// The energy the drive has spent from when it was made to `t`, having done `work`
    /// (None without a power model): what heats it.
    #[inline]
    pub fn energy_at(&self, t: u64, work: &Work) -> Option<f64> {
        let m = self.model.as_ref()?;
        let awake_ns = t.saturating_sub(self.asleep_ns);
        Some(
            awake_ns as f64 * m.config.active_idle_w / NS_PER_S
                + self.asleep_j
                + m.energy.joules(work),
        )
    }

    /// A step starts: nothing spent yet.
    pub fn begin_step(&mut self) {
        self.log = StepLog::new(self.log.low_ns.len());
    }

    /// The energy of the step begun last, which was busy `busy_ns` and idle `idle_ns` and
    /// did `work` (None without a power model).
    pub fn step_energy(&self, busy_ns: u64, idle_ns: u64, work: Work) -> Option<StepEnergy> {
        let m = self.model.as_ref()?;
        let low_ns = &self.log.low_ns;
        // The power of an awake drive over the part's time, less what it spent in lower states.
        let spent = |time: StepTime, ns: u64| -> f64 {
            let t = time as usize;
            let low: u64 = low_ns.iter().map(|s| s[t]).sum();
            let low_j: f64 = low_ns
                .iter()
                .zip(&m.state_w)
                .map(|(s, w)| s[t] as f64 * w)
                .sum();
            (ns.saturating_sub(low) as f64 * m.config.active_idle_w + low_j) / NS_PER_S
        };
        let asleep_ns: u64 = low_ns.iter().map(|s| s[0] + s[1]).sum();
        let mut state_s: Vec<f64> = low_ns
            .iter()
            .map(|s| (s[0] + s[1]) as f64 / NS_PER_S)
            .collect();
        state_s[0] = (busy_ns + idle_ns).saturating_sub(asleep_ns) as f64 / NS_PER_S;
        Some(StepEnergy {
            busy_j: spent(StepTime::Busy, busy_ns) + m.energy.joules(&(work - self.log.idle_work)),
            idle_j: spent(StepTime::Idle, idle_ns) + m.energy.joules(&self.log.idle_work),
            work,
            state_s,
        })
    }
}
