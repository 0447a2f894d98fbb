//! The drive's heat: its temperature, heated by the energy of its work and cooled to the
//! air around it, and the thermal management that throttles it.
//!
//! Contract: [`Heat`] is told, as drive time passes, how much energy the drive has spent
//! so far ([`Heat::advance`]); it heats its [`ThermalModel`] with the mean power of each
//! interval, in steps of at most [`TICK_NS`], and every [`TICK_NS`] of drive time asks
//! its [`Throttling`] policy how hard to throttle. Throttled, the drive's power is capped at
//! the maximum of a lower operational power state, held by delaying the fetch of host
//! commands ([`Heat::admit`]): throughput falls because the drive may spend less, not
//! by scaling any result. Past `shutdown_c` the controller drops off the bus
//! ([`Overheated`]). What it did is logged as the health log reports it ([`ThermalLog`]),
//! and each step gets the temperature at every second of its time.
//!
//! The drive's surroundings (the air's temperature and the cooling: bare, heatsink, fan)
//! are the run's, in [`crate::power::Platform`], not the preset's.

mod rc;
mod throttle;

pub use rc::TwoNode;
pub use throttle::{Level, Pacer, Thresholds};

use crate::config::{DriveConfig, ThermalConfig};
use crate::time::NS_PER_S;
use std::fmt;
use std::str::FromStr;

/// The longest interval the model is heated over in one step, and the period at which
/// the firmware looks at its sensor: 100 ms, well under the controller's time constant
/// of about 4 s (CALIBRATION.md) and as often as client firmware polls its sensors.
pub const TICK_NS: u64 = 100_000_000;

/// The air around the drive when a run does not say: inside a desktop case under load,
/// about 10 K above a 25 °C room (typical value, an estimate: not among the published
/// facts). With the SN850's estimated resistances it makes the bare drive throttle within
/// about 20 minutes of sequential writing, and not with a heatsink (CALIBRATION.md, "WD
/// SN850"; tests/thermal.rs).
pub const DEFAULT_AMBIENT_C: f64 = 35.0;

/// How the drive is cooled: which of the preset's board-to-air resistances applies.
/// By default a heatsink: most desktop boards put one over their M.2 slots, and the
/// published throughput figures were measured on drives that did not throttle (the
/// SN850's throttling was found in a separate soak without one, CALIBRATION.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cooling {
    /// A bare M.2 board in a case with little airflow.
    Bare,
    #[default]
    Heatsink,
    /// Air blown over the drive.
    Fan,
}

impl Cooling {
    const ALL: [Cooling; 3] = [Cooling::Bare, Cooling::Heatsink, Cooling::Fan];

    /// The name a run option gives it (`--cooling`).
    pub fn name(self) -> &'static str {
        match self {
            Cooling::Bare => "bare",
            Cooling::Heatsink => "heatsink",
            Cooling::Fan => "fan",
        }
    }
}

impl FromStr for Cooling {
    type Err = String;
    fn from_str(s: &str) -> Result<Cooling, String> {
        Cooling::ALL
            .into_iter()
            .find(|cooling| cooling.name() == s)
            .ok_or_else(|| format!("cooling must be bare, heatsink or fan, not {s:?}"))
    }
}

/// A model of the drive's temperature.
pub trait ThermalModel: Send + Sync {
    /// `dt_s` seconds at a constant `power_w`.
    fn advance(&mut self, dt_s: f64, power_w: f64);
    /// What the drive's sensor reads (its composite temperature), °C.
    fn sensor_c(&self) -> f64;
    /// The drive is cooled through `k_per_w` to air at `ambient_c` from now on.
    fn set_air(&mut self, k_per_w: f64, ambient_c: f64);
}

/// When the firmware throttles.
pub trait Throttling: Send + Sync {
    /// The level for a sensor reading `temp_c`, rising `rise_k_per_s` over the last second.
    fn level(&mut self, temp_c: f64, rise_k_per_s: f64) -> Level;
}

/// The controller passed its shutdown temperature and dropped off the bus.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overheated {
    /// When, ns of drive time.
    pub at: u64,
    pub temp_c: f64,
}

impl fmt::Display for Overheated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the drive stopped responding at {:.0} °C after {:.1} s of drive time: its controller overheated and dropped off the bus (the health log now shows a media error and a critical warning); cool it (--cooling heatsink or fan, a lower --ambient-c) or let it idle before the next step",
            self.temp_c,
            self.at as f64 / NS_PER_S
        )
    }
}

/// The drive's thermal thresholds, as Identify Controller (WCTEMP, CCTEMP) and the host
/// controlled thermal management feature (TMT1, TMT2) declare them, °C.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThermalLimits {
    pub wctemp_c: f64,
    pub cctemp_c: f64,
    pub tmt1_c: f64,
    pub tmt2_c: f64,
}

/// What the drive's thermal management has logged since the drive was made, as its
/// SMART / health log reports it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThermalLog {
    /// The temperature the drive reports now (its composite temperature), °C.
    pub composite_c: f64,
    /// Entries into light (TMT1) and heavy (TMT2) throttling.
    pub light_entries: u64,
    pub heavy_entries: u64,
    /// Seconds spent throttled lightly and heavily.
    pub light_s: f64,
    pub heavy_s: f64,
    /// Seconds at or above WCTEMP and at or above CCTEMP.
    pub warning_s: f64,
    pub critical_s: f64,
    /// Times the controller overheated past its shutdown temperature and dropped off the
    /// bus (each leaves a media error in the health log, and the critical warning's
    /// temperature bit set from then on).
    pub shutdowns: u64,
}

/// Sensor readings kept for the rate of rise: one second of ticks.
const RISE_TICKS: usize = (NS_PER_S as u64 / TICK_NS) as usize;

/// The heat of a drive whose preset has a thermal model.
pub struct Heat {
    model: Box<dyn ThermalModel>,
    throttling: Box<dyn Throttling>,
    limits: ThermalLimits,
    shutdown_c: f64,
    /// Power caps of light and heavy throttling, W.
    caps_w: [f64; 2],
    level: Level,
    /// Holds the drive at the cap while throttled.
    pacer: Option<Pacer>,
    log: ThermalLog,
    /// Until when the model has been heated, and the drive's energy then.
    at: u64,
    energy_j: f64,
    /// When the firmware next reads its sensor (every [`TICK_NS`] of drive time).
    next_poll: u64,
    /// The sensor at the end of each of the last [`RISE_TICKS`] ticks, oldest first.
    recent_c: std::collections::VecDeque<f64>,
    /// The current step's per-second readings (the sensor, and the transition count), and
    /// when the next is due.
    seconds: Vec<(f64, u64)>,
    next_second: u64,
}

impl Heat {
    /// The heat of a drive built from `cfg` (None when it does not heat), in air at
    /// `ambient_c` with `cooling`.
    pub fn new(cfg: &DriveConfig, cooling: Cooling, ambient_c: f64) -> Option<Heat> {
        let thermal: &ThermalConfig = cfg.thermal.as_ref()?;
        let (rc, throttle) = thermal.model()?;
        let power = cfg.power.as_ref()?;
        let table = power.table();
        let model = TwoNode::new(rc, rc.cooling_k_per_w(cooling), ambient_c);
        Some(Heat {
            recent_c: std::iter::repeat_n(model.sensor_c(), RISE_TICKS).collect(),
            log: ThermalLog::default(),
            model: Box::new(model),
            throttling: Box::new(Thresholds::new(thermal.tmt1_c, thermal.tmt2_c, throttle)),
            limits: thermal.limits()?,
            shutdown_c: thermal.shutdown_c?,
            caps_w: [
                table[throttle.light_state as usize].max_w,
                table[throttle.heavy_state as usize].max_w,
            ],
            level: Level::None,
            pacer: None,
            at: 0,
            energy_j: 0.0,
            next_poll: TICK_NS,
            seconds: Vec::new(),
            next_second: 0,
        })
    }

    /// The run's surroundings change (between steps): the drive keeps its temperature.
    pub fn set_surroundings(&mut self, cfg: &DriveConfig, cooling: Cooling, ambient_c: f64) {
        if let Some(rc) = cfg.thermal.as_ref().and_then(|t| t.rc.as_ref()) {
            self.model.set_air(rc.cooling_k_per_w(cooling), ambient_c);
        }
    }

    /// The drive was off for `seconds`: it cooled toward the air with no power (an hour
    /// brings any preset's drive to it; longer changes nothing).
    pub fn cool_off(&mut self, seconds: f64) {
        const STEP_S: f64 = 10.0;
        let mut left = seconds.clamp(0.0, 3600.0);
        while left > 0.0 {
            let dt = left.min(STEP_S);
            self.model.advance(dt, 0.0);
            left -= dt;
        }
        let now = self.model.sensor_c();
        self.recent_c.iter_mut().for_each(|c| *c = now);
    }

    /// The log, with the sensor's reading now.
    pub fn log(&self) -> ThermalLog {
        ThermalLog {
            composite_c: self.model.sensor_c(),
            ..self.log
        }
    }

    /// Is the model due to be heated at `t` (the firmware reads its sensor)?
    #[inline]
    pub fn due(&self, t: u64) -> bool {
        t >= self.next_poll
    }

    /// Is the drive throttled (its commands paced)?
    #[inline]
    pub fn throttled(&self) -> bool {
        self.pacer.is_some()
    }

    /// A step starts at `t0`: its per-second readings start.
    pub fn begin_step(&mut self, t0: u64) {
        self.seconds.clear();
        self.next_second = t0 + NS_PER_S as u64;
    }

    /// The readings of the step begun last, the last at its end `end` (when that is not a
    /// whole second): the sensor, and the thermal-transition count.
    pub fn step_seconds(&mut self, end: u64) -> Vec<(f64, u64)> {
        if end + NS_PER_S as u64 > self.next_second {
            self.seconds.push(self.reading());
        }
        std::mem::take(&mut self.seconds)
    }

    /// The sensor now, and the transitions so far.
    fn reading(&self) -> (f64, u64) {
        (
            self.model.sensor_c(),
            self.log.light_entries + self.log.heavy_entries,
        )
    }

    /// Drive time has reached `t`, the drive having spent `energy_j` since it was made:
    /// heat the model with the mean power since it was last heated, and throttle as the
    /// sensor says.
    pub fn advance(&mut self, t: u64, energy_j: f64) -> Result<(), Overheated> {
        if t <= self.at {
            return Ok(());
        }
        let (from, from_j) = (self.at, self.energy_j);
        let power_w = (energy_j - from_j) / ((t - from) as f64 / NS_PER_S);
        let energy_at = |end: u64| from_j + power_w * (end - from) as f64 / NS_PER_S;
        while self.at < t {
            let end = self.next_poll.min(t);
            let dt_s = (end - self.at) as f64 / NS_PER_S;
            self.model.advance(dt_s, power_w);
            let temp_c = self.model.sensor_c();
            self.log_interval(dt_s, temp_c);
            while self.next_second <= end {
                self.seconds.push(self.reading());
                self.next_second += NS_PER_S as u64;
            }
            self.at = end;
            if temp_c >= self.shutdown_c {
                self.log.shutdowns += 1;
                self.energy_j = energy_at(end);
                return Err(Overheated { at: end, temp_c });
            }
            if end == self.next_poll {
                self.throttle(end, temp_c, energy_at(end));
                self.next_poll += TICK_NS;
            }
        }
        self.energy_j = energy_j;
        Ok(())
    }

    /// The time spent at the level and above the thresholds, and the reading.
    fn log_interval(&mut self, dt_s: f64, temp_c: f64) {
        let log = &mut self.log;
        match self.level {
            Level::Light => log.light_s += dt_s,
            Level::Heavy => log.heavy_s += dt_s,
            Level::None => {}
        }
        if temp_c >= self.limits.wctemp_c {
            log.warning_s += dt_s;
        }
        if temp_c >= self.limits.cctemp_c {
            log.critical_s += dt_s;
        }
    }

    /// The firmware reads its sensor at `t` and throttles as its policy says.
    fn throttle(&mut self, t: u64, temp_c: f64, energy_j: f64) {
        let oldest = self.recent_c.pop_front().unwrap_or(temp_c);
        self.recent_c.push_back(temp_c);
        let level = self.throttling.level(temp_c, temp_c - oldest);
        if level == self.level {
            return;
        }
        match level {
            Level::Light if self.level == Level::None => self.log.light_entries += 1,
            Level::Heavy => self.log.heavy_entries += 1,
            _ => {}
        }
        self.level = level;
        self.pacer = match level {
            Level::None => None,
            Level::Light => Some(Pacer::new(self.caps_w[0], t, energy_j)),
            Level::Heavy => Some(Pacer::new(self.caps_w[1], t, energy_j)),
        };
    }

    /// A command the host issues at `t`, the drive having spent `energy_j`: when the
    /// throttled firmware fetches it (at once when not throttled).
    #[inline]
    pub fn admit(&mut self, t: u64, energy_j: f64) -> u64 {
        match &mut self.pacer {
            Some(p) => p.admit(t, energy_j),
            None => t,
        }
    }
}
