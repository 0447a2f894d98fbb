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
//! the loop ([`Stop::TooLong`]); so does a drive that overheats ([`Stop::Overheated`]),
//! and a write to a drive that has gone read-only ([`Stop::ReadOnly`]).

use super::commands::{lba_of, Command, Commands, Dir, Generator};
use super::recorder::Recorder;
use super::steady::Steady;
use crate::bounds;
use crate::controller::Controller;
use crate::geometry::UNIT;
use crate::power::{Power, StepTime};
use crate::rng::Rng;
use crate::step::JobResult;
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
    /// A write found the drive read-only (its spare ran out).
    ReadOnly,
    /// A trace's file could not be read, or held a record out of bounds.
    BadTrace(String),
}

/// One fio job of a step, as the loop runs it.
pub(super) struct Job<'s> {
    step: &'s Step,
    commands: Commands,
    /// Its own figures, when the step reports each job's.
    rec: Option<Recorder>,
    /// Bytes it may issue in all, and has issued.
    limit: u64,
    issued: u64,
    /// Bytes it may have issued by the end of the current burst.
    target: u64,
    /// Its figures start here (after its ramp); it issues nothing at or after `deadline`.
    ramp_end: u64,
    deadline: u64,
    /// Its next command waits for this (rate, think time, the writes a verify follows).
    next_issue: u64,
    /// It waits between its commands (a rate), or after some of them (think time).
    paced: bool,
    thinks: bool,
    /// Commands since it last thought.
    since_think: u64,
    /// When its last command so far completes.
    all_done: u64,
    /// Commands issued, for its flow's share; its flow group's index.
    flow_count: u64,
    flow_group: Option<usize>,
    /// It reads back what it wrote now (fio's verify phase).
    verifying: bool,
    /// Its steady-state judgement, and when it is next due (never without one).
    steady: Option<Steady>,
    steady_due: u64,
    /// It issues no more.
    stopped: bool,
}

impl<'s> Job<'s> {
    /// Job `step` of a step starting at `t0`, its commands from `rng`.
    pub(super) fn new(step: &'s Step, t0: u64, rng: &mut Rng, reports: bool) -> Job<'s> {
        let ramp_end = t0 + ns_from_s(step.ramp);
        let deadline = match step.runtime {
            Some(r) => ramp_end.saturating_add(ns_from_s(r)),
            None => u64::MAX,
        };
        Job {
            step,
            commands: Commands::new(Generator::new(step, rng), rng),
            rec: reports.then(|| Recorder::new(step, ramp_end)),
            limit: step.bytes_limit(),
            issued: 0,
            target: 0,
            ramp_end,
            deadline,
            next_issue: t0,
            paced: step.rate_iops.is_some() || step.rate_bytes.is_some(),
            thinks: step.thinktime > 0.0,
            since_think: 0,
            all_done: t0,
            flow_count: 0,
            flow_group: None,
            verifying: false,
            steady_due: step
                .steadystate
                .map_or(u64::MAX, |_| ramp_end + NS_PER_S as u64),
            steady: step.steadystate.map(|cfg| Steady::new(cfg, ramp_end)),
            stopped: false,
        }
    }

    /// Its figures, as fio reports a job.
    pub(super) fn result(self) -> Option<JobResult> {
        let end = self.all_done.max(self.ramp_end);
        let steady = self.steady.map(Steady::report);
        self.rec.map(|rec| rec.job_result(end, steady))
    }
}

/// Jobs of one flow id: their weights (of jobs still issuing) and commands.
struct FlowGroup {
    id: u32,
    weight: u64,
    count: u64,
}

/// Run the commands of `step`'s jobs from `t0` on `dev`, recording them in `rec` (the
/// step's figures) and in each job's own.
#[allow(clippy::too_many_arguments)]
pub(super) fn run<'s>(
    dev: &mut Controller,
    power: &mut Power,
    heat: Option<&mut Heat>,
    rng: &mut Rng,
    step: &Step,
    mut jobs: Vec<Job<'s>>,
    rec: &mut Recorder,
    t0: u64,
) -> Result<(Timing, Vec<Job<'s>>), Stop> {
    let mut groups: Vec<FlowGroup> = Vec::new();
    for job in &mut jobs {
        if let Some(flow) = job.step.flow {
            let g = match groups.iter().position(|g| g.id == flow.id) {
                Some(g) => g,
                None => {
                    groups.push(FlowGroup {
                        id: flow.id,
                        weight: 0,
                        count: 0,
                    });
                    groups.len() - 1
                }
            };
            groups[g].weight += u64::from(flow.weight);
            job.flow_group = Some(g);
        }
    }
    let slots: usize = jobs.iter().map(|j| j.step.iodepth as usize).sum();
    let mut lp = ClosedLoop::new(dev, power, heat, rng, jobs, rec, t0, slots);
    lp.groups = groups;
    // Bursts are a single job's (checked by Step::validate); its runtime is the busy
    // time of all of them.
    let bursts = step.bursts_count();
    let burst_bytes = step.burst_bytes;
    let runtime_ns = match (bursts, step.runtime) {
        (1, _) | (_, None) => u64::MAX,
        (_, Some(r)) => ns_from_s(r),
    };
    let mut busy_ns = 0u64;
    let mut idle_ns = 0u64;
    let mut ran = 0;
    let mut t = t0;
    for _ in 0..bursts {
        if busy_ns >= runtime_ns {
            break;
        }
        if runtime_ns != u64::MAX {
            // what is left of the runtime (busy_ns < runtime_ns: checked above)
            lp.jobs[0].deadline = t.saturating_add(runtime_ns - busy_ns);
        }
        let burst = lp.burst(t, burst_bytes)?;
        let busy = burst.end - t;
        busy_ns += busy;
        ran += 1;
        let idle = idle_after_burst(busy, step.duty_cycle);
        if burst.end + idle > lp.step_end {
            return Err(Stop::TooLong);
        }
        if idle > 0 {
            lp.idle(burst.end, burst.end + idle, StepTime::Idle)?;
        }
        idle_ns += idle;
        t = burst.end + idle;
        if burst_bytes.is_some_and(|b| burst.issued < b) {
            break; // time limit reached
        }
    }
    let after = ns_from_s(step.idle_after);
    if after > 0 {
        lp.idle(t, t + after, StepTime::Idle)?;
        idle_ns += after;
        t += after;
    }
    let timing = Timing {
        busy_ns,
        idle_ns,
        bursts: ran,
        all_done: lp.all_done,
        end: t,
    };
    Ok((timing, lp.jobs))
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

/// The free slots of the jobs' queues, earliest first: each a time and a job packed in
/// one word (the time since the step's start above [`JOB_BITS`] bits of job), so that the
/// heap compares one integer per step of a sift, as it did with one job.
struct Events {
    heap: BinaryHeap<Reverse<u64>>,
    t0: u64,
}

/// Bits of an event that hold its job: more than [`bounds::MAX_JOBS`] jobs.
const JOB_BITS: u32 = 11;
/// The latest event time an event holds, ns after the step's start (104 days, far past
/// [`bounds::MAX_STEP_S`]: a later one is as late, and the step stops as too long).
const LATEST: u64 = (1 << (64 - JOB_BITS)) - 1;
const _: () = assert!(
    bounds::MAX_JOBS < 1 << JOB_BITS && (bounds::MAX_STEP_S as u64) * 1_000_000_000 < LATEST
);

impl Events {
    fn new(t0: u64, slots: usize) -> Events {
        Events {
            heap: BinaryHeap::with_capacity(slots + 1),
            t0,
        }
    }

    #[inline]
    fn key(&self, t: u64, j: usize) -> Reverse<u64> {
        Reverse(((t - self.t0).min(LATEST) << JOB_BITS) | j as u64)
    }

    #[inline]
    fn peek(&self) -> Option<(u64, usize)> {
        self.heap.peek().map(|&Reverse(k)| {
            (
                self.t0 + (k >> JOB_BITS),
                (k & ((1 << JOB_BITS) - 1)) as usize,
            )
        })
    }

    fn push(&mut self, t: u64, j: usize) {
        let key = self.key(t, j);
        self.heap.push(key);
    }

    /// The earliest slot is free again at `t` (one sift, not a pop and a push).
    #[inline]
    fn set_top(&mut self, t: u64, j: usize) {
        let key = self.key(t, j);
        *self.heap.peek_mut().expect("a slot to set") = key;
    }

    fn pop(&mut self) {
        self.heap.pop();
    }

    fn clear(&mut self) {
        self.heap.clear();
    }
}

/// What a job does with a free slot of its queue.
enum Turn {
    /// Issue its next command now.
    Issue,
    /// Not before this time.
    Wait(u64),
    /// Wait until another job of its flow issues.
    Park,
    /// Nothing more: the slot closes.
    Close,
}

/// The state of the loop across the bursts of a step.
pub(super) struct ClosedLoop<'a, 's> {
    pub(super) dev: &'a mut Controller,
    pub(super) power: &'a mut Power,
    heat: Option<&'a mut Heat>,
    rng: &'a mut Rng,
    jobs: Vec<Job<'s>>,
    groups: Vec<FlowGroup>,
    /// Jobs waiting for their flow's share, a slot each.
    parked: Vec<usize>,
    /// The step's figures.
    pub(super) rec: &'a mut Recorder,
    /// No work of the step may end after this ([`bounds::MAX_STEP_S`] from its start).
    pub(super) step_end: u64,
    /// When each slot of each job's queue is free, earliest first.
    events: Events,
    /// When every command issued so far has completed.
    pub(super) all_done: u64,
}

impl<'a, 's> ClosedLoop<'a, 's> {
    /// The loop of a step starting at `t0` on `dev`, recording its figures in `rec`, its
    /// jobs' queues holding `slots` commands in all.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        dev: &'a mut Controller,
        power: &'a mut Power,
        heat: Option<&'a mut Heat>,
        rng: &'a mut Rng,
        jobs: Vec<Job<'s>>,
        rec: &'a mut Recorder,
        t0: u64,
        slots: usize,
    ) -> ClosedLoop<'a, 's> {
        ClosedLoop {
            dev,
            power,
            heat,
            rng,
            jobs,
            groups: Vec::new(),
            parked: Vec::new(),
            rec,
            step_end: t0.saturating_add(ns_from_s(bounds::MAX_STEP_S)),
            events: Events::new(t0, slots),
            all_done: t0,
        }
    }
}

impl ClosedLoop<'_, '_> {
    /// One burst from `start`: each job's commands until it has issued `burst_bytes`
    /// more (without bursts: its byte limit), reaches its deadline or stops.
    fn burst(&mut self, start: u64, burst_bytes: Option<u64>) -> Result<Burst, Stop> {
        self.events.clear();
        let mut issued_before = 0;
        for (j, job) in self.jobs.iter_mut().enumerate() {
            job.target = match burst_bytes {
                Some(b) => (job.issued + b).min(job.limit),
                None => job.limit,
            };
            issued_before += job.issued;
            job.next_issue = job.next_issue.max(start);
            for _ in 0..job.step.iodepth {
                self.events.push(start, j);
            }
        }
        self.all_done = self.all_done.max(start);
        let mut end = start;
        loop {
            let Some((t, j)) = self.events.peek() else {
                if self.parked.is_empty() {
                    break;
                }
                // Cannot happen (the job furthest behind its share is never parked), but a
                // parked slot must never be lost.
                self.unpark(None, self.all_done);
                continue;
            };
            match self.turn(t, j) {
                Turn::Close => {
                    self.events.pop();
                    continue;
                }
                Turn::Wait(at) => {
                    self.events.set_top(at, j);
                    continue;
                }
                Turn::Park => {
                    self.events.pop();
                    self.parked.push(j);
                    continue;
                }
                Turn::Issue => {}
            }
            if t >= self.step_end {
                return Err(Stop::TooLong);
            }
            if self.jobs[j].paced {
                self.pace(j, t);
            }
            if t > self.all_done {
                // Nothing outstanding: the drive's own time, within the step's.
                self.idle(self.all_done, t, StepTime::Busy)?;
            }
            let ti = self.fetched_at(t)?;
            if ti >= self.jobs[j].deadline {
                self.held_past_deadline(ti, j);
                continue;
            }
            let job = &mut self.jobs[j];
            let command = job.commands.next(self.dev, self.rng);
            if command.dir == Dir::Write && self.dev.read_only() {
                return Err(Stop::ReadOnly);
            }
            let done = issue(self.dev, command, self.power.command_at(ti));
            job.issued += command.bs;
            job.all_done = job.all_done.max(done);
            self.all_done = self.all_done.max(done);
            end = end.max(done);
            if ti >= job.ramp_end {
                self.rec.record(command, ti, done, self.all_done);
                if let Some(rec) = &mut job.rec {
                    rec.record(command, ti, done, job.all_done);
                }
            }
            self.events.set_top(done, j);
            if job.thinks || job.flow_group.is_some() {
                self.after_issue(j, ti);
            }
        }
        let issued = self.jobs.iter().map(|j| j.issued).sum::<u64>() - issued_before;
        Ok(Burst { end, issued })
    }

    /// What job `j` does with its slot free at `t`.
    #[inline]
    fn turn(&mut self, t: u64, j: usize) -> Turn {
        let job = &mut self.jobs[j];
        if job.stopped {
            return Turn::Close;
        }
        if job.next_issue > t {
            return Turn::Wait(job.next_issue);
        }
        if job.issued >= job.limit || t >= job.deadline {
            return self.writes_done(t, j);
        }
        if job.issued >= job.target {
            return Turn::Close; // the end of a burst
        }
        let flows = job.flow_group.is_some();
        if t >= job.steady_due && self.steady(j, t) {
            self.stop(j);
            return Turn::Close;
        }
        if flows && self.over_share(j) {
            return Turn::Park;
        }
        Turn::Issue
    }

    /// Is job `j` of a flow ahead of its weight's share? fio's test: its share of the
    /// flow's commands above its weight's share of the flow's weights.
    #[inline(never)]
    fn over_share(&self, j: usize) -> bool {
        let job = &self.jobs[j];
        let (Some(g), Some(flow)) = (job.flow_group, job.step.flow) else {
            return false;
        };
        let group = &self.groups[g];
        u128::from(job.flow_count) * u128::from(group.weight)
            > u128::from(flow.weight) * u128::from(group.count)
    }

    /// Job `j`'s steady-state judgement of the seconds that ended by `t`: is it steady?
    #[inline(never)]
    fn steady(&mut self, j: usize, t: u64) -> bool {
        let job = &mut self.jobs[j];
        let (Some(steady), Some(rec)) = (&mut job.steady, &job.rec) else {
            return false;
        };
        let attained = steady.judge(t, rec);
        job.steady_due = steady.due();
        attained
    }

    /// A rate-limited job `j` issuing at `t`: its next command waits its turn.
    #[inline(never)]
    fn pace(&mut self, j: usize, t: u64) {
        let job = &mut self.jobs[j];
        let bs = job.commands.peek().bs;
        // Like fio's rate, the time waited counts in the job's busy time, so IOPS =
        // commands / runtime comes out at the rate.
        job.next_issue = t + match (job.step.rate_iops, job.step.rate_bytes) {
            (Some(iops), _) => NS_PER_S as u64 / iops,
            (None, Some(bytes)) => (bs as u128 * NS_PER_S as u128 / bytes as u128) as u64,
            (None, None) => 0,
        };
    }

    /// Job `j`, fetched at `ti` past its deadline (held back by throttling): its writes are
    /// done.
    #[inline(never)]
    fn held_past_deadline(&mut self, ti: u64, j: usize) {
        match self.writes_done(ti, j) {
            Turn::Wait(at) => self.events.set_top(at, j),
            _ => self.events.pop(),
        }
    }

    /// After job `j` issued a command at `ti`: its think time, and its flow's count (whose
    /// parked jobs may go on).
    #[inline(never)]
    fn after_issue(&mut self, j: usize, ti: u64) {
        let job = &mut self.jobs[j];
        if job.thinks {
            job.since_think += 1;
            if job.since_think >= job.step.thinktime_blocks {
                // fio waits for the job's commands in flight, then thinks.
                job.since_think = 0;
                job.next_issue = job.all_done + ns_from_s(job.step.thinktime);
            }
        }
        if let Some(g) = job.flow_group {
            job.flow_count += 1;
            self.groups[g].count += 1;
            self.unpark(Some(g), ti);
        }
    }

    /// Job `j` has issued all it may, at `t`: it reads back what it wrote (fio's verify,
    /// once its writes have completed), or stops.
    #[inline(never)]
    fn writes_done(&mut self, t: u64, j: usize) -> Turn {
        let job = &mut self.jobs[j];
        if !job.step.verify || job.verifying {
            self.stop(j);
            return Turn::Close;
        }
        job.verifying = true;
        let written = job.issued.min(job.step.size / job.step.bs * job.step.bs);
        job.commands = Commands::new(Generator::verify(job.step, self.rng), self.rng);
        job.limit = job.issued + written;
        job.target = job.limit;
        job.deadline = u64::MAX;
        job.next_issue = job.all_done.max(t);
        Turn::Wait(job.next_issue)
    }

    /// Job `j` issues no more: its weight leaves its flow, whose parked jobs may go on.
    #[inline(never)]
    fn stop(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        if job.stopped {
            return;
        }
        job.stopped = true;
        if let Some(g) = job.flow_group {
            let weight = u64::from(
                job.step
                    .flow
                    .expect("a job in a flow group has a flow")
                    .weight,
            );
            self.groups[g].weight -= weight;
            let at = job.all_done;
            self.unpark(Some(g), at);
        }
    }

    /// The parked slots of flow group `group` (all, with None) free again at `t`.
    #[inline(never)]
    fn unpark(&mut self, group: Option<usize>, t: u64) {
        let jobs = &self.jobs;
        let events = &mut self.events;
        self.parked.retain(|&j| {
            let free = group.is_none() || jobs[j].flow_group == group;
            if free {
                events.push(t, j);
            }
            !free
        });
    }

    /// The host idles from `t0` to `t1`, in the step's `time`: the drive does its own work
    /// and may fall to a lower power state.
    pub(super) fn idle(&mut self, t0: u64, t1: u64, time: StepTime) -> Result<(), Stop> {
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
    pub(super) fn fetched_at(&mut self, t: u64) -> Result<u64, Stop> {
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

/// Issue `command` to the drive at `t`; returns its completion time.
#[inline(always)]
pub(super) fn issue(dev: &mut Controller, command: Command, t: u64) -> u64 {
    let (lba, bs) = (lba_of(command), command.bs);
    // The 4 KiB units the command touches, from the one it starts in.
    let units = (command.offset % UNIT + bs).div_ceil(UNIT);
    match command.dir {
        Dir::Read => dev.read(lba, units as u32, bs, t),
        Dir::Write => dev.write_at(command.offset, bs, t),
        Dir::Trim => dev.trim(lba, units, t),
    }
}
