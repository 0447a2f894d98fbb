//! Trace replay: a step whose commands are a trace's records, in their order.
//!
//! Contract: [`replay`] issues each record when the host would. Timed (open loop), at the
//! record's time from the step's start, or later when `iodepth` commands are already
//! outstanding (a host's queue is full: the record waits for the first completion);
//! untimed (closed loop, fio's `replay_no_stall`), as soon as one of `iodepth` slots is
//! free. The queue depth of a timed replay is the drive's doing: a slow drive has more
//! commands outstanding. A flush completes when the data the drive's write buffers held
//! is programmed. Whenever nothing is outstanding until the next record, the drive idles
//! (its own work, its power states); the step's busy time is the time at least one
//! command is outstanding, the rest of its time idle, so rates over busy time are the
//! reviews' "data rate over busy time". Every completion goes to the [`Recorder`], as in
//! the closed loop (a drive that heats is heated, may throttle and overheat; a write to a
//! read-only drive stops the step).

use super::closed_loop::{issue, ClosedLoop, Stop, Timing};
use super::commands::Dir;
use super::prefetch::Prefetches;
use super::trace::TraceReader;
use crate::power::StepTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Records ahead of issue whose mapping is fetched into the CPU's cache (as the closed
/// loop's generator does for random commands).
const LOOK_AHEAD: usize = 16;

/// Replay `trace` from `t0`, at most `iodepth` commands outstanding; then idle `idle_after` ns.
pub(super) fn replay(
    lp: &mut ClosedLoop,
    trace: &mut TraceReader,
    timed: bool,
    iodepth: u32,
    t0: u64,
    idle_after: u64,
) -> Result<Timing, Stop> {
    // Completion times of the commands outstanding, earliest first.
    let mut outstanding: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(iodepth as usize + 1);
    let (mut busy_ns, mut idle_ns) = (0u64, 0u64);
    let mut last_issue = t0;
    let mut prefetches = Prefetches::new();
    while let Some(record) = trace.next().map_err(Stop::BadTrace)? {
        let mut t = if timed {
            t0.saturating_add(record.at).max(last_issue)
        } else {
            last_issue
        };
        if outstanding.len() >= iodepth as usize {
            let Reverse(first) = outstanding.pop().expect("a full queue");
            t = t.max(first);
        }
        while outstanding.peek().is_some_and(|&Reverse(done)| done <= t) {
            outstanding.pop();
        }
        if t >= lp.step_end {
            return Err(Stop::TooLong);
        }
        if t > lp.all_done {
            // Nothing outstanding until this record: the host is idle.
            lp.idle(lp.all_done, t, StepTime::Idle)?;
            idle_ns += t - lp.all_done;
        }
        let ti = lp.fetched_at(t)?;
        if let Some(ahead) = trace.offset_ahead(LOOK_AHEAD) {
            prefetches.add(ahead / crate::geometry::UNIT, lp.dev);
        }
        let done = match record.command {
            Some(command) => {
                if command.dir == Dir::Write && lp.dev.read_only() {
                    return Err(Stop::ReadOnly);
                }
                let done = issue(lp.dev, command, lp.power.command_at(ti));
                lp.rec.record(command, ti, done, lp.all_done.max(done));
                done
            }
            None => {
                lp.power.command_at(ti);
                lp.dev.flush(ti)
            }
        };
        // The union of the commands' [issue, completion]: issues come in time order.
        busy_ns += done.saturating_sub(t.max(lp.all_done));
        lp.all_done = lp.all_done.max(done);
        outstanding.push(Reverse(done));
        last_issue = t;
    }
    let end = lp.all_done + idle_after;
    if end >= lp.step_end {
        return Err(Stop::TooLong);
    }
    if idle_after > 0 {
        lp.idle(lp.all_done, end, StepTime::Idle)?;
    }
    Ok(Timing {
        busy_ns,
        idle_ns: idle_ns + idle_after,
        bursts: 1,
        all_done: lp.all_done,
        end,
    })
}
