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
//! Idle time is given to the drive for folding and garbage collection, and to its power
//! model, which may let it sleep (then the next command waits for it to wake). A drive
//! that heats is heated by the energy it spends, and may throttle or overheat. The
//! host's power management, the write cache it sets and the drive's surroundings are the
//! drive's [`Platform`], set when it is built or between steps, not in a step: a real host
//! changes them outside the workload.
//!
//! The parts: `commands` generates the commands, `closed_loop` issues them and
//! spends the step's time, `recorder` turns what they did into the result.

mod closed_loop;
mod commands;
#[cfg(test)]
mod job_tests;
mod prefetch;
mod recorder;
mod replay;
mod spread;
mod steady;
#[cfg(test)]
mod tests;
mod trace;
#[cfg(test)]
mod trace_tests;

pub use trace::check as check_trace;

use crate::bounds;
use crate::config::DriveConfig;
use crate::controller::Controller;
use crate::geometry::UNIT;
use crate::power::{Platform, Power};
use crate::rng::Rng;
use crate::step::{Counters, SimError, Step, StepResult, TraceReplay};
use crate::thermal::{Heat, Overheated, ThermalLimits, ThermalLog};
use crate::time::{ns_from_s, NS_PER_S};
use crate::wear::{age::Age, retention::PowerOff, WearSummary};
use closed_loop::{ClosedLoop, Job, Stop, Timing};
use recorder::Recorder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The most virtual time a drive may live (146 years): far below `u64::MAX` ns, so that
/// adding one step (at most a few times [`bounds::MAX_STEP_S`]) never overflows.
const MAX_DRIVE_AGE_NS: u64 = 1 << 62;

/// A step that writes, with a byte limit of at least 1 / `PREFAULT_FROM_SHARE` of
/// the drive, has the kernel provide all the pages of the mapping tables on another
/// core meanwhile: such a step touches a large part of them anyway (a quarter or
/// more), whereas for a smaller one populating all of them (about 1.9 GiB for 1 TB)
/// would cost more memory and CPU than it saves.
const PREFAULT_FROM_SHARE: u64 = 4;

/// A simulated drive with persistent state across steps.
pub struct Drive {
    cfg: DriveConfig,
    dev: Controller,
    power: Power,
    /// None when the preset has no thermal model.
    heat: Option<Heat>,
    platform: Platform,
    now: u64,
    /// Virtual time spent on host commands (steps' busy time and purges), ns.
    busy_ns: u64,
    seed: u64,
    rng: Rng,
    /// Powered-on time that ageing stands for, seconds (see [`Drive::age`]).
    aged_s: f64,
    power_cycles: u64,
    /// Records of the running trace step issued so far (see [`Drive::progress`]).
    progress: Arc<AtomicU64>,
}

impl Drive {
    /// A fresh-out-of-box drive; the default PRNG seed is 1.
    pub fn new(cfg: DriveConfig) -> Result<Drive, SimError> {
        Self::with_seed(cfg, 1)
    }

    /// A fresh-out-of-box drive on a platform with Linux's default power management.
    pub fn with_seed(cfg: DriveConfig, seed: u64) -> Result<Drive, SimError> {
        Self::with_platform(cfg, seed, Platform::default())
    }

    /// A fresh-out-of-box drive on `platform`, a PRNG seeded with `seed`; an error when
    /// the preset or the platform is out of bounds.
    pub fn with_platform(
        cfg: DriveConfig,
        seed: u64,
        platform: Platform,
    ) -> Result<Drive, SimError> {
        cfg.validate()?;
        platform.check().map_err(platform_error)?;
        let mut dev = Controller::new(&cfg)?;
        dev.set_volatile_write_cache(platform.volatile_write_cache);
        Ok(Drive {
            power: Power::new(&cfg, platform),
            heat: Heat::new(&cfg, platform.cooling, platform.ambient_c),
            platform,
            cfg,
            dev,
            now: 0,
            busy_ns: 0,
            seed,
            rng: Rng::new(seed),
            aged_s: 0.0,
            power_cycles: 1,
            progress: Arc::default(),
        })
    }

    /// The host's power management, the drive's write cache or its surroundings change,
    /// from the next step on; an error (and no change) when the platform is out of bounds.
    pub fn set_platform(&mut self, platform: Platform) -> Result<(), SimError> {
        platform.check().map_err(platform_error)?;
        self.power.set_platform(platform);
        self.dev
            .set_volatile_write_cache(platform.volatile_write_cache);
        if let Some(heat) = &mut self.heat {
            heat.set_surroundings(&self.cfg, platform.cooling, platform.ambient_c);
        }
        self.platform = platform;
        Ok(())
    }

    /// How far the running step is, read from another thread while it runs: the records of
    /// a trace step issued so far, counted a block of records at a time (0 for other steps).
    pub fn progress(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.progress)
    }

    /// The platform the drive is on now: the host's power management, the write cache it
    /// set, the drive's surroundings.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The seed the drive was made with.
    pub fn seed(&self) -> u64 {
        self.seed
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

    /// Virtual time spent on host commands since the drive was created, seconds.
    pub fn busy_s(&self) -> f64 {
        self.busy_ns as f64 / NS_PER_S
    }

    /// Cumulative counters and current state.
    pub fn counters(&self) -> Counters {
        self.dev.snapshot()
    }

    /// The drive's thermal thresholds (None when the preset has no thermal model).
    pub fn thermal_limits(&self) -> Option<ThermalLimits> {
        self.cfg.thermal.as_ref().and_then(|t| t.limits())
    }

    /// What the drive's thermal management has logged so far (None when the preset has no
    /// thermal model).
    pub fn thermal_log(&self) -> Option<ThermalLog> {
        self.heat.as_ref().map(Heat::log)
    }

    /// The drive's wear in figures.
    pub fn wear(&self) -> WearSummary {
        self.dev.ftl().wear().summary()
    }

    /// Seconds the drive has been powered on: its virtual time and the time its ageing
    /// stands for.
    pub fn power_on_s(&self) -> f64 {
        self.now_s() + self.aged_s
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
        let work_before = self.dev.work();
        self.power.begin_step();
        if let Some(heat) = &mut self.heat {
            heat.begin_step(t0);
        }
        if let Some(age) = step.age {
            return self.age(step, age, &before);
        }
        if let Some(off) = step.power_off {
            return Ok(self.power_off(step, off, &before));
        }
        if step.is_purge() {
            self.power.command_at(t0); // a sanitize is a command: the drive wakes for it
            self.now = self.dev.purge(t0);
            self.heat_until(self.now).map_err(|o| self.overheated(o))?;
            self.busy_ns += self.now - t0;
            let after = self.dev.snapshot();
            let energy = self
                .power
                .step_energy(self.now - t0, 0, self.dev.work() - work_before);
            let mut result = recorder::purge_result(step, t0, self.now, &before, &after, energy);
            self.add_temperatures(&mut result);
            self.powered(t0, &mut result);
            return Ok(result);
        }
        if step
            .jobs()
            .any(|j| j.rw.writes() && j.bytes_limit() >= self.user_bytes() / PREFAULT_FROM_SHARE)
        {
            self.dev.prefault();
        }
        let mut rec = Recorder::new(step, t0);
        let ran = match &step.trace {
            Some(trace) => self
                .replay(step, trace, &mut rec, t0)
                .map(|timing| (timing, vec![])),
            None => {
                let reports = step.reports_jobs();
                let jobs = step
                    .jobs()
                    .map(|j| Job::new(j, t0, &mut self.rng, reports))
                    .collect();
                closed_loop::run(
                    &mut self.dev,
                    &mut self.power,
                    self.heat.as_mut(),
                    &mut self.rng,
                    step,
                    jobs,
                    &mut rec,
                    t0,
                )
            }
        };
        match ran {
            Ok((timing, jobs)) => {
                self.now = timing.end;
                self.heat_until(self.now).map_err(|o| self.overheated(o))?;
                self.busy_ns += timing.busy_ns;
                let energy = self.power.step_energy(
                    timing.busy_ns,
                    timing.idle_ns,
                    self.dev.work() - work_before,
                );
                let jobs = jobs.into_iter().filter_map(Job::result).collect();
                let after = self.dev.snapshot();
                let mut result = rec.finish(&timing, (&before, &after), energy, jobs);
                result.notes.extend(self.power.wake_note());
                self.add_temperatures(&mut result);
                self.powered(t0, &mut result);
                Ok(result)
            }
            Err(Stop::TooLong) => Err(self.too_long(step)),
            Err(Stop::Overheated(o)) => Err(self.overheated(o)),
            Err(Stop::ReadOnly) => {
                self.now = self.dev.quiet_at();
                Err(SimError::read_only(&step.label))
            }
            Err(Stop::BadTrace(why)) => {
                self.now = self.dev.quiet_at();
                Err(SimError::Step(format!("step {}: {why}", step.label)))
            }
        }
    }

    /// The records of `trace` as the commands of `step`, from `t0` (see [`replay`]).
    fn replay(
        &mut self,
        step: &Step,
        trace: &TraceReplay,
        rec: &mut Recorder,
        t0: u64,
    ) -> Result<Timing, Stop> {
        self.progress.store(0, Ordering::Relaxed);
        let progress = Arc::clone(&self.progress);
        let mut reader = trace::TraceReader::open(trace, step.offset, step.size, progress)
            .map_err(Stop::BadTrace)?;
        let mut lp = ClosedLoop::new(
            &mut self.dev,
            &mut self.power,
            self.heat.as_mut(),
            &mut self.rng,
            vec![],
            rec,
            t0,
            0, // the replay keeps its own queue
        );
        let idle_after = ns_from_s(step.idle_after);
        replay::replay(
            &mut lp,
            &mut reader,
            trace.timed,
            step.iodepth,
            t0,
            idle_after,
        )
    }

    /// An `age` step: the drive's wear set as a history of writes would have left it, and
    /// its powered-on time advanced by the time of those writes; its clock stays (the
    /// history is the drive's past, not the run's time).
    fn age(&mut self, step: &Step, age: Age, before: &Counters) -> Result<StepResult, SimError> {
        let target = age
            .target(self.cfg.wear.as_ref())
            .map_err(|e| SimError::Step(format!("step {}: {e}", step.label)))?;
        let from = self.wear().mean_pe;
        let (aged, history) = self.dev.age(target, age.write_amplification, &self.cfg);
        self.aged_s += history.seconds;
        let after = self.dev.snapshot();
        let mut result = recorder::purge_result(step, self.now, self.now, before, &after, None);
        let w = self.wear();
        result.notes = vec![format!(
            "aged from {from:.0} to {:.0} P/E cycles (least {:.0}, most {:.0}): {} superblocks retired, {:.1} TB written by the host and {:.1} TB by the NAND in {:.0} powered-on hours; spare {:.0} %{}",
            w.mean_pe,
            w.min_pe,
            w.max_pe,
            aged.retired,
            history.host_bytes as f64 / 1e12,
            history.nand_bytes as f64 / 1e12,
            history.seconds / 3600.0,
            w.available_spare_pct,
            match aged.stopped_at {
                Some(_) => format!(
                    ", read-only: its spare ran out short of the {target:.0} P/E cycles asked, and a read-only drive takes no more writes"
                ),
                None if w.read_only => ", read-only".to_string(),
                None => String::new(),
            },
        )];
        Ok(result)
    }

    /// An `off` step: the data's charge leaks for its time at its temperature; the drive's
    /// clock and powered-on time stay (it was off), and it is powered on again after.
    fn power_off(&mut self, step: &Step, off: PowerOff, before: &Counters) -> StepResult {
        self.dev.age_data(off.seconds, off.temperature_c);
        if let Some(heat) = &mut self.heat {
            heat.cool_off(off.seconds);
        }
        self.power_cycles += 1;
        let after = self.dev.snapshot();
        let mut result = recorder::purge_result(step, self.now, self.now, before, &after, None);
        result.notes = vec![format!(
            "powered off {:.1} h at {:.1} °C, and on again",
            off.seconds / 3600.0,
            off.temperature_c
        )];
        result
    }

    /// The step that began at `t0` and just ended at `self.now` was powered time: the
    /// data aged at the drive's mean temperature over it (the air's without a thermal
    /// model), and its reads that no tier corrected are named.
    fn powered(&mut self, t0: u64, result: &mut StepResult) {
        let seconds = (self.now - t0) as f64 / NS_PER_S;
        let temps = &result.temperature_c;
        let celsius = if temps.is_empty() {
            self.platform.ambient_c
        } else {
            temps.iter().sum::<f64>() / temps.len() as f64
        };
        self.dev.age_data(seconds, celsius);
        let lost = self.dev.take_lost();
        if let Some(first) = lost.first() {
            let n = result.counters.uncorrectable_reads;
            let shown: Vec<String> = lost.iter().take(10).map(u64::to_string).collect();
            result.notes.push(format!(
                "{n} page reads found data no decoding tier corrected (media errors the host sees), the first at byte offset {first}; host reads at offsets {}{}",
                shown.join(", "),
                if lost.len() > shown.len() { ", ..." } else { "" }
            ));
        }
    }

    /// Times the drive has been powered on: when it was made, and after each `off` step.
    pub fn power_cycles(&self) -> u64 {
        self.power_cycles
    }

    /// Heat the drive up to `t`.
    fn heat_until(&mut self, t: u64) -> Result<(), Overheated> {
        match &mut self.heat {
            Some(heat) => heat.advance(t, closed_loop::drive_energy(&self.power, &self.dev, t)),
            None => Ok(()),
        }
    }

    /// The temperature and the thermal-transition count at every second of the step that
    /// just ended at `self.now`, into its result.
    fn add_temperatures(&mut self, result: &mut StepResult) {
        if let Some(heat) = &mut self.heat {
            (result.temperature_c, result.thermal_transitions) =
                heat.step_seconds(self.now).into_iter().unzip();
        }
    }

    /// The error of a step in which the drive overheated and dropped off the bus; its
    /// clock moves on to the end of the work already done.
    fn overheated(&mut self, o: Overheated) -> SimError {
        self.now = self.dev.quiet_at().max(o.at);
        SimError::DriveFailed(o.to_string())
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

/// A platform out of bounds: refused as a preset field out of bounds is.
fn platform_error(message: String) -> SimError {
    SimError::Config(crate::config::ConfigError(message))
}

/// Run `steps` in order on a fresh drive built from `cfg`: the coarse entry point.
pub fn simulate(cfg: &DriveConfig, steps: &[Step]) -> Result<Vec<StepResult>, SimError> {
    let mut d = Drive::new(cfg.clone())?;
    steps.iter().map(|s| d.run(s)).collect()
}
