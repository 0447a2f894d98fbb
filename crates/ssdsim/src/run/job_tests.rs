//! fio jobs in one step: concurrent jobs, flow, verify, think time, ramp and logs, on
//! the small test drive.

use super::*;
use crate::config::tests::small;
use crate::pattern::Flow;
use crate::step::{JobResult, Op};

const KIB: u64 = 1024;

fn drive() -> Drive {
    Drive::new(small(0.8)).unwrap()
}

/// A drive whose every block holds data, so that reads go to the NAND.
fn written() -> Drive {
    let mut d = drive();
    d.run(&Step::fill("fill", d.whole_span(128 * KIB))).unwrap();
    d
}

/// A time-based job: it runs its whole runtime, over its span again and again.
fn timed(step: Step, runtime: f64) -> Step {
    Step {
        time_based: true,
        ..step.runtime(runtime)
    }
}

fn ios(j: &JobResult) -> u64 {
    [&j.read, &j.write, &j.trim]
        .into_iter()
        .flatten()
        .map(|d| d.ios)
        .sum()
}

fn job(label: &str, rw: Op, span: u64) -> Step {
    Step::new(label, rw, 4 * KIB, span)
}

#[test]
fn concurrent_jobs_share_the_drive_each_with_its_own_figures() {
    let mut d = drive();
    let span = d.whole_span(4 * KIB);
    let reads = job("reads", Op::RandRead, span).io_size(400 * KIB);
    let writes = job("writes", Op::RandWrite, span).io_size(400 * KIB);
    let alone_r = drive().run(&reads).unwrap().busy_s;
    let alone_w = drive().run(&writes).unwrap().busy_s;
    let both = d
        .run(&Step {
            concurrent: vec![writes],
            ..reads
        })
        .unwrap();
    assert_eq!(both.jobs.len(), 2);
    let (r, w) = (&both.jobs[0], &both.jobs[1]);
    assert_eq!((r.label.as_str(), w.label.as_str()), ("reads", "writes"));
    assert!(r.write.is_none() && w.read.is_none());
    assert_eq!(r.read.as_ref().unwrap().bytes, 400 * KIB);
    assert_eq!(w.write.as_ref().unwrap().bytes, 400 * KIB);
    // The step's figures are the sum of its jobs'.
    assert_eq!(
        both.read.as_ref().unwrap().ios + both.write.as_ref().unwrap().ios,
        ios(r) + ios(w)
    );
    // At once, not one after the other: the step takes less than the two alone.
    assert!(
        both.busy_s < alone_r + alone_w,
        "{} vs {alone_r} + {alone_w}",
        both.busy_s
    );
    assert!(both.busy_s >= alone_r.max(alone_w) * 0.99);
}

#[test]
fn four_jobs_at_qd1_keep_four_commands_in_flight_as_one_at_qd4() {
    let span = drive().whole_span(4 * KIB);
    let reads = || timed(job("r", Op::RandRead, span), 0.02);
    let iops = |step: &Step| written().run(step).unwrap().iops();
    let single = iops(&reads());
    let qd4 = iops(&reads().qd(4));
    let four = iops(&Step {
        concurrent: vec![reads(); 3],
        ..reads()
    });
    assert!(
        (qd4 - four).abs() < 0.1 * qd4,
        "QD4 {qd4} vs 4 x QD1 {four}"
    );
    assert!(four > 1.5 * single, "4 x QD1 {four} vs QD1 {single}");
}

#[test]
fn jobs_in_a_flow_issue_in_proportion_to_their_weights() {
    // fio's butterfly: one job reads forwards, one backwards, paced by their flow.
    let mut d = written();
    let span = d.whole_span(4 * KIB);
    let flow = |weight| Some(Flow { id: 1, weight });
    let forward = Step {
        flow: flow(2),
        ..timed(job("fwd", Op::Read, span), 0.01)
    };
    let backward = Step {
        flow: flow(1),
        offset_delta: -8 * KIB as i64,
        ..timed(job("back", Op::Read, span).qd(8), 0.01)
    };
    let r = d
        .run(&Step {
            concurrent: vec![backward],
            ..forward
        })
        .unwrap();
    let (f, b) = (ios(&r.jobs[0]) as f64, ios(&r.jobs[1]) as f64);
    assert!((f / b - 2.0).abs() < 0.05, "{f} : {b}");
}

#[test]
fn verify_reads_back_what_the_job_wrote_after_its_writes() {
    let mut d = drive();
    let span = 256 * KIB;
    let step = Step {
        verify: true,
        log_ios: true,
        ..job("v", Op::RandWrite, span).qd(4)
    };
    let r = d.run(&step).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.write.as_ref().unwrap().bytes, span);
    assert_eq!(j.read.as_ref().unwrap().bytes, span);
    // Every read is issued after every write has completed, in offset order.
    let last_write = j
        .io_log
        .iter()
        .filter(|c| c.dir == 1)
        .map(|c| c.done_ns)
        .max()
        .unwrap();
    let reads: Vec<_> = j.io_log.iter().filter(|c| c.dir == 0).collect();
    assert!(reads.iter().all(|c| c.done_ns - c.latency_ns >= last_write));
    let mut offsets: Vec<u64> = reads.iter().map(|c| c.offset).collect();
    offsets.sort_unstable();
    assert_eq!(offsets, (0..64).map(|i| i * 4 * KIB).collect::<Vec<_>>());
}

#[test]
fn think_time_paces_a_job_and_the_drive_idles_in_it() {
    let span = drive().whole_span(4 * KIB);
    let plain = job("t", Op::RandRead, span).io_size(64 * KIB).qd(4);
    let thinking = Step {
        thinktime: 0.001,
        thinktime_blocks: 4,
        ..plain.clone()
    };
    let a = drive().run(&plain).unwrap();
    let b = drive().run(&thinking).unwrap();
    // 16 commands: 4 think periods of 1 ms after each 4 (the last one too, as fio).
    assert!(b.busy_s >= a.busy_s + 0.003, "{} vs {}", b.busy_s, a.busy_s);
    assert!(b.busy_s < a.busy_s + 0.0045);
}

#[test]
fn a_ramp_runs_but_is_left_out_of_the_jobs_figures() {
    let span = drive().whole_span(4 * KIB);
    let timed = Step {
        time_based: true,
        ..job("r", Op::RandRead, span).runtime(0.01)
    };
    let ramped = Step {
        ramp: 0.005,
        ..timed.clone()
    };
    let r = drive().run(&ramped).unwrap();
    let j = &r.jobs[0];
    assert!((j.busy_s - 0.01).abs() < 0.001, "{}", j.busy_s);
    assert!((r.busy_s - 0.015).abs() < 0.001, "{}", r.busy_s);
    let plain = drive().run(&timed).unwrap();
    let n = plain.read.unwrap().ios as f64;
    assert!((ios(j) as f64 - n).abs() < 0.1 * n);
}

#[test]
fn a_logged_job_keeps_every_command() {
    let mut d = drive();
    let step = Step {
        log_ios: true,
        ..job("l", Op::RandRw, 512 * KIB).mix(50).qd(8)
    };
    let r = d.run(&step).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.io_log.len() as u64, ios(j));
    assert!(!j.log_truncated);
    assert!(j
        .io_log
        .iter()
        .all(|c| c.bs == 4 * KIB && c.latency_ns > 0 && c.dir < 2));
    assert!(j
        .io_log
        .windows(2)
        .all(|w| w[0].done_ns - w[0].latency_ns <= w[1].done_ns - w[1].latency_ns));
}

#[test]
fn what_only_a_whole_step_has_is_refused_on_its_jobs() {
    let d = drive();
    let span = d.whole_span(4 * KIB);
    let plain = job("j", Op::RandRead, span).io_size(64 * KIB);
    let cases = [
        (
            Step {
                concurrent: vec![plain.clone().idle_after(1.0)],
                ..plain.clone()
            },
            "plain measured job",
        ),
        (
            Step {
                concurrent: vec![plain.clone()],
                ..plain.clone().io_size(64 * KIB).bursts(16 * KIB, 0.5)
            },
            "no bursts",
        ),
        (
            Step {
                concurrent: vec![plain.clone(); bounds::MAX_JOBS],
                ..plain.clone()
            },
            "jobs at once; at most",
        ),
        (
            Step {
                verify: true,
                ..plain.clone()
            },
            "needs a writing rw",
        ),
        (
            Step {
                offset_delta: 4096,
                ..plain.clone()
            },
            "a random step has none",
        ),
    ];
    for (step, expected) in cases {
        let msg = step.validate(d.user_bytes()).unwrap_err();
        assert!(msg.contains(expected), "{msg}");
    }
}

#[test]
fn a_steady_job_ends_when_its_last_seconds_are_steady_and_an_unsteady_one_runs_on() {
    use crate::pattern::SteadyState;
    let span = drive().whole_span(4 * KIB);
    let steady = |limit| Step {
        steadystate: Some(SteadyState {
            iops: true,
            slope: false,
            limit,
            pct: true,
            dur_s: 2,
            ramp_s: 1.0,
        }),
        ..timed(job("ss", Op::RandRead, span).qd(4), 10.0)
    };
    // Reads of a filled drive at a constant queue: steady within 5 % as soon as judged.
    // fio records from one second after the ramp (1 s) on, the second that ended then
    // being the first sample: a window of two is full, and judged, at 3 s.
    let r = written().run(&steady(5.0)).unwrap();
    let report = r.jobs[0].steady.as_ref().unwrap();
    assert!(report.attained && report.criterion < 5.0, "{report:?}");
    assert!(
        (r.jobs[0].busy_s - 3.0).abs() < 0.01,
        "{}",
        r.jobs[0].busy_s
    );
    assert_eq!(report.iops.len(), 2);
    let ios = ios(&r.jobs[0]) as f64;
    assert!(report
        .iops
        .iter()
        .all(|&n| (n as f64 - ios / 3.0).abs() < 0.05 * ios / 3.0));
    // A limit of 0 is never met: the job runs its whole time.
    let r = written().run(&steady(0.0)).unwrap();
    let report = r.jobs[0].steady.as_ref().unwrap();
    assert!(!report.attained && (r.jobs[0].busy_s - 10.0).abs() < 0.01);
}
