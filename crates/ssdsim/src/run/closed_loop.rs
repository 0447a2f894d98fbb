//! The closed loop: `iodepth` outstanding commands, in virtual time.
//!
//! Contract: [`run`] issues a step's commands whenever one of its `iodepth` slots
//! is free (a slot is free again when its command completes) and, with
//! `rate_iops`, no sooner than 1 / rate after the previous one, the gaps in which
//! nothing is outstanding given to the drive as idle. It issues them in bursts
//! (one without bursts); a burst ends at its byte limit or when the step's runtime
//! (the busy time of its bursts) is spent, and the step ends with it in the second
//! case. After each burst the drive idles so that busy / (busy + idle) = duty
//! cycle; after the last one it idles `idle_after`. Every idle goes to the drive and to
//! its [`Power`]; every command waits for the drive to wake from the state its idle left
//! it in, its latency counted from its issue. Every completion goes to the
//! [`Recorder`]. A drive that heats is heated as its time passes, and while it throttles
//! it fetches each command when its [`Heat`] lets it. However slow the drive, the step's
//! time is bounded: work that would end past [`bounds::MAX_STEP_S`] of drive time stops
//! the loop ([`Stop::TooLong`]); so does a drive that overheats ([`Stop::Overheated`]).

use super::commands::{lba_of, Command, Commands, Dir};
use super::recorder::Recorder;
use crate::bounds;
use crate::controller::Controller;
use crate::geometry::UNIT;
use crate::power::{Power, StepTime};
use crate::step::Step;
use crate::thermal::{Heat, Overheated};
use crate::time::{ns_from_s, NS_PER_S};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How a step spent the drive's time.
pub(super) struct Timing {
    /// Time of I/O: the sum of the bursts, from the first issue to the last completion of each.
    pub busy_ns: u64,
    /// Time idle between bursts and after the step.
    pub idle_ns: u64,
    /// Bursts run.
    pub bursts: u64,
    /// When every command of the step had completed.
    pub all_done: u64,
    /// End of the step (its last idle included): the drive's clock afterwards.
    pub end: u64,
}

/// Why a step stopped before its end.
pub(super) enum Stop {
    /// It was still running after [`bounds::MAX_STEP_S`] of drive time.
    TooLong,
    Overheated(Overheated),
}

/// Run the commands of `step` from `t0` on `dev`, recording them in `rec`.
pub(super) fn run(
    dev: &mut Controller,
    power: &mut Power,
    heat: Option<&mut Heat>,
    step: &Step,
    commands: Commands<'_>,
    rec: &mut Recorder,
    t0: u64,
) -> Result<Timing, Stop> {
    let mut lp = ClosedLoop {
        dev,
        power,
        heat,
        commands,
        rec,
        bs: step.bs,
        iodepth: step.iodepth as usize,
        // Like fio's rate_iops, the time waited between commands counts in the step's
        // busy time, so IOPS = commands / runtime comes out at the rate.
        period_ns: step.rate_iops.map(|r| NS_PER_S as u64 / r),
        step_end: t0 + ns_from_s(bounds::MAX_STEP_S),
        slots: BinaryHeap::with_capacity(step.iodepth as usize + 1),
        all_done: t0,
    };
    let burst_bytes = step.burst_bytes.unwrap_or(step.bytes_limit());
    let runtime_ns = step.runtime.map(ns_from_s).unwrap_or(u64::MAX);
    let mut busy_ns = 0u64;
    let mut idle_ns = 0u64;
    let mut bursts = 0;
    let mut t = t0;
    for _ in 0..step.bursts_count() {
        if busy_ns >= runtime_ns {
            break;
        }
        let deadline = t.saturating_add(runtime_ns - busy_ns);
        let burst = lp.burst(t, burst_bytes, deadline)?;
        let busy = burst.end - t;
        busy_ns += busy;
        bursts += 1;
        let idle = idle_after_burst(busy, step.duty_cycle);
        if burst.end + idle > lp.step_end {
            return Err(Stop::TooLong);
        }
        if idle > 0 {
            lp.idle(burst.end, burst.end + idle, StepTime::Idle)?;
        }
        idle_ns += idle;
        t = burst.end + idle;
        if burst.issued < burst_bytes {
            break; // time limit reached
        }
    }
    let after = ns_from_s(step.idle_after);
    if after > 0 {
        lp.idle(t, t + after, StepTime::Idle)?;
        idle_ns += after;
        t += after;
    }
    Ok(Timing {
        busy_ns,
        idle_ns,
        bursts,
        all_done: lp.all_done,
        end: t,
    })
}

/// The idle after a burst that was busy `busy` ns, so that busy / (busy + idle) is
/// the duty cycle: at most 999 times the burst (the duty cycle is at least 0.001).
fn idle_after_burst(busy: u64, duty_cycle: Option<f64>) -> u64 {
    match duty_cycle {
        Some(d) if d < 1.0 => (busy as f64 * (1.0 / d - 1.0)) as u64,
        _ => 0,
    }
}

/// What a burst did.
struct Burst {
    /// When its last command completed (its start, when it issued none).
    end: u64,
    /// Bytes issued.
    issued: u64,
}

/// The state of the loop across the bursts of a step.
struct ClosedLoop<'a> {
    dev: &'a mut Controller,
    power: &'a mut Power,
    heat: Option<&'a mut Heat>,
    commands: Commands<'a>,
    rec: &'a mut Recorder,
    bs: u64,
    iodepth: usize,
    /// Time between issues of a rate-limited step.
    period_ns: Option<u64>,
    /// No work of the step may end after this ([`bounds::MAX_STEP_S`] from its start).
    step_end: u64,
    /// When each of the `iodepth` slots is free, earliest first.
    slots: BinaryHeap<Reverse<u64>>,
    /// When every command issued so far has completed.
    all_done: u64,
}

impl ClosedLoop<'_> {
    /// One burst from `start`: commands until `limit` bytes are issued or the next
    /// would be issued at or after `deadline`.
    fn burst(&mut self, start: u64, limit: u64, deadline: u64) -> Result<Burst, Stop> {
        self.slots.clear();
        for _ in 0..self.iodepth {
            self.slots.push(Reverse(start));
        }
        let mut issued = 0u64;
        let mut end = start;
        let mut next_issue = start;
        while issued < limit {
            let Reverse(slot) = *self.slots.peek().expect("iodepth >= 1");
            // A rate-limited step issues no earlier than its next slot in time.
            let ti = slot.max(next_issue);
            if ti >= deadline {
                break;
            }
            if ti >= self.step_end {
                return Err(Stop::TooLong);
            }
            if let Some(period) = self.period_ns {
                next_issue = ti + period;
                if ti > self.all_done {
                    // Nothing outstanding: the drive's own time.
                    self.idle(self.all_done, ti, StepTime::Busy)?;
                }
            }
            let ti = self.fetched_at(ti)?;
            if ti >= deadline {
                break; // held back by throttling past the step's time
            }
            let command = self.commands.next(self.dev);
            let done = issue(self.dev, command, self.bs, self.power.command_at(ti));
            issued += self.bs;
            // The slot now frees when this command completes (one sift, not a pop and a push).
            *self.slots.peek_mut().expect("iodepth >= 1") = Reverse(done);
            end = end.max(done);
            self.all_done = self.all_done.max(done);
            self.rec.record(command.dir, ti, done, self.all_done);
        }
        Ok(Burst { end, issued })
    }

    /// The host idles from `t0` to `t1`, in the step's `time`: the drive does its own work
    /// and may fall to a lower power state.
    fn idle(&mut self, t0: u64, t1: u64, time: StepTime) -> Result<(), Stop> {
        let before = self.dev.work();
        self.dev.idle(t0, t1);
        let dev = &*self.dev;
        self.power
            .idle(t0, t1, time, dev.work() - before, || dev.quiet_at());
        if let Some(heat) = self.heat.as_deref_mut() {
            if heat.due(t1) {
                let energy = drive_energy(self.power, self.dev, t1);
                heat.advance(t1, energy).map_err(Stop::Overheated)?;
            }
        }
        Ok(())
    }

    /// A command the host issues at `t`: when the drive fetches it. A drive that heats is
    /// heated up to `t` when a tick has passed, and fetches later while it throttles.
    #[inline]
    fn fetched_at(&mut self, t: u64) -> Result<u64, Stop> {
        let Some(heat) = self.heat.as_deref_mut() else {
            return Ok(t);
        };
        let due = heat.due(t);
        if !due && !heat.throttled() {
            return Ok(t);
        }
        let energy = drive_energy(self.power, self.dev, t);
        if due {
            heat.advance(t, energy).map_err(Stop::Overheated)?;
        }
        Ok(heat.admit(t, energy))
    }
}

/// The energy the drive has spent up to `t` (a drive that heats has a power model).
pub(super) fn drive_energy(power: &Power, dev: &Controller, t: u64) -> f64 {
    power
        .energy_at(t, &dev.work())
        .expect("a drive that heats has a power model (checked by its preset's validation)")
}

/// Issue `command` of `bs` bytes to the drive at `t`; returns its completion time.
#[inline]
fn issue(dev: &mut Controller, command: Command, bs: u64, t: u64) -> u64 {
    let lba = lba_of(command);
    // The 4 KiB units the command touches, from the one it starts in.
    let units = (command.offset % UNIT + bs).div_ceil(UNIT);
    match command.dir {
        Dir::Read => dev.read(lba, units as u32, bs, t),
        Dir::Write => dev.write_at(command.offset, bs, t),
        Dir::Trim => dev.trim(lba, units, t),
    }
}
