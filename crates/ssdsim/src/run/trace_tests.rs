//! Trace replay on the small test drive: a trace replays as the same commands a
//! generated step issues, open-loop arrivals let the queue depth follow the drive, idle
//! between records is the drive's, and a bad file is refused naming what is wrong.

use super::*;
use crate::config::tests::small;
use crate::step::{Op, StepResult, TraceReplay};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;

/// (time µs, offset, length, op: 0 read, 1 write, 2 trim, 3 flush)
type Rec = (u64, u64, u32, u8);

/// A prepared trace of `records` in a fresh temporary file (prepared.py's layout).
fn prepared(records: &[Rec]) -> TraceReplay {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path: PathBuf = std::env::temp_dir().join(format!(
        "ssdsim-trace-{}-{}.bin",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut bytes = b"SSDLTRC\x01".to_vec();
    bytes.extend((records.len() as u64).to_le_bytes());
    bytes.extend([0u8; 16]);
    for &(t, offset, length, op) in records {
        bytes.extend(t.to_le_bytes());
        bytes.extend(offset.to_le_bytes());
        bytes.extend(length.to_le_bytes());
        bytes.extend([op, 0, 0, 0]);
    }
    std::fs::write(&path, bytes).unwrap();
    TraceReplay {
        path: path.to_string_lossy().into_owned(),
        records: records.len() as u64,
        timed: true,
    }
}

fn trace_step(drive: &Drive, trace: TraceReplay, iodepth: u32) -> Step {
    Step {
        trace: Some(trace),
        ..Step::new("trace", Op::RandRw, 4096, drive.whole_span(4096))
            .mix(50)
            .qd(iodepth)
    }
}

fn replayed(records: &[Rec], timed: bool, iodepth: u32) -> StepResult {
    let mut drive = Drive::new(small(0.7)).unwrap();
    let trace = TraceReplay {
        timed,
        ..prepared(records)
    };
    let r = drive.run(&trace_step(&drive, trace, iodepth)).unwrap();
    assert!(
        (drive.now_s() - (r.busy_s + r.idle_s)).abs() < 1e-9,
        "busy + idle is the time the drive's clock moved"
    );
    r
}

#[test]
fn an_untimed_trace_of_a_steps_commands_replays_as_that_step() {
    // 3 MiB of sequential 128 KiB writes at QD32 (the test drive holds 4.4 MB): the
    // closed loop's commands exactly.
    let n = (3 * MIB / (128 * KIB)) as usize;
    let records: Vec<Rec> = (0..n)
        .map(|i| (0, i as u64 * 128 * KIB, 128 * KIB as u32, 1))
        .collect();
    let traced = replayed(&records, false, 32);
    let mut drive = Drive::new(small(0.7)).unwrap();
    let generated = drive
        .run(&Step::new("gen", Op::Write, 128 * KIB, 3 * MIB).qd(32))
        .unwrap();
    let (t, g) = (traced.write.unwrap(), generated.write.unwrap());
    assert_eq!(t.ios, g.ios);
    assert_eq!(t.latency, g.latency, "the same commands at the same times");
    assert!((traced.busy_s - generated.busy_s).abs() < 1e-9);
    assert_eq!(traced.counters, generated.counters);
}

#[test]
fn timed_records_arrive_at_their_times_and_the_gaps_are_idle() {
    // A 4 KiB read every 10 ms: each completes long before the next, so the drive is
    // busy only while one is outstanding and idle the rest of the 990 ms.
    let records: Vec<Rec> = (0..100)
        .map(|i| (i * 10_000, i % 500 * 4096, 4096, 0))
        .collect();
    let r = replayed(&records, true, 1023);
    let read = r.read.as_ref().unwrap();
    assert_eq!(read.ios, 100);
    let busy_from_latency = read.latency.mean_ns * 100.0 / 1e9;
    assert!(
        (r.busy_s - busy_from_latency).abs() < 1e-6,
        "busy = the sum of the latencies when they never overlap: {} vs {busy_from_latency}",
        r.busy_s
    );
    assert!(r.idle_s > 0.98 && r.busy_s + r.idle_s >= 0.99, "{r:?}");
}

#[test]
fn the_queue_depth_of_an_open_loop_follows_the_drive() {
    // 2000 random 4 KiB reads of written data, all arriving at once: a host queue of 1023
    // lets the drive work on many at once (its dies in parallel); a queue of 1 holds each
    // until the one before completes.
    let mut rng = crate::rng::Rng::new(7);
    let records: Vec<Rec> = (0..2000)
        .map(|_| (0, rng.below(1000) * 4 * KIB, 4096, 0))
        .collect();
    let on_written = |iodepth: u32| {
        let mut drive = Drive::new(small(0.7)).unwrap();
        let span = drive.whole_span(4096);
        drive
            .run(
                &Step::new(
                    "fill",
                    Op::Write,
                    128 * KIB,
                    span / (128 * KIB) * (128 * KIB),
                )
                .qd(8),
            )
            .unwrap();
        drive
            .run(&trace_step(&drive, prepared(&records), iodepth))
            .unwrap()
    };
    let (deep, shallow) = (on_written(1023), on_written(1));
    let (d, s) = (deep.read.unwrap(), shallow.read.unwrap());
    assert!(
        shallow.busy_s > 2.0 * deep.busy_s,
        "QD1 {} s vs deep {} s",
        shallow.busy_s,
        deep.busy_s
    );
    assert!(
        d.latency.mean_ns > 10.0 * s.latency.mean_ns,
        "commands queued at once wait for each other: {} vs {}",
        d.latency.mean_ns,
        s.latency.mean_ns
    );
}

#[test]
fn a_flush_waits_for_the_buffered_writes_to_be_programmed() {
    // One 4 KiB write sits in the write buffer; a flush right after it programs it.
    let records = [(0, 0, 4096, 1), (1, 0, 0, 3), (1_000_000, 8192, 4096, 0)];
    let r = replayed(&records, true, 1023);
    let write = r.write.unwrap();
    assert_eq!(write.ios, 1);
    // The flush kept the drive busy past the write's own completion: a program's time.
    assert!(
        r.busy_s * 1e9 > write.latency.max_ns as f64 + 50_000.0,
        "busy {} s, write {} ns",
        r.busy_s,
        write.latency.max_ns
    );
}

#[test]
fn the_same_trace_replays_to_the_same_results() {
    let mut rng = crate::rng::Rng::new(3);
    let mut t = 0;
    let records: Vec<Rec> = (0..5000)
        .map(|_| {
            t += rng.below(300);
            let op = rng.below(2) as u8;
            (
                t,
                rng.below(900) * 4 * KIB,
                4096 * (1 + rng.below(8) as u32),
                op,
            )
        })
        .collect();
    assert_eq!(replayed(&records, true, 64), replayed(&records, true, 64));
}

#[test]
fn the_records_issued_are_counted_for_another_thread_to_read() {
    let mut drive = Drive::new(small(0.7)).unwrap();
    let progress = drive.progress();
    let records: Vec<Rec> = (0..10_000).map(|i| (i, i % 900 * 4096, 4096, 0)).collect();
    drive
        .run(&trace_step(&drive, prepared(&records), 8))
        .unwrap();
    assert_eq!(progress.load(std::sync::atomic::Ordering::Relaxed), 10_000);
}

#[test]
fn a_bad_trace_is_refused_naming_the_record() {
    let drive = Drive::new(small(0.7)).unwrap();
    let span = drive.whole_span(4096);
    let cases: [(&[Rec], &str); 4] = [
        (
            &[(5, 0, 4096, 0), (4, 0, 4096, 0)],
            "record 2 refused: its time 4 µs is before",
        ),
        (&[(0, 0, 4096, 9)], "operation 9"),
        (
            &[(0, span, 4096, 1)],
            "not whole 512-byte sectors within the span",
        ),
        (&[(0, 100, 4096, 0)], "record 1 refused"),
    ];
    for (records, expected) in cases {
        let mut drive = Drive::new(small(0.7)).unwrap();
        let step = trace_step(&drive, prepared(records), 8);
        let err = drive.run(&step).unwrap_err().to_string();
        assert!(err.contains(expected), "{err}");
    }
    // A file that is not a prepared trace, or holds another count, is refused before
    // anything runs.
    let mut drive = Drive::new(small(0.7)).unwrap();
    let mut trace = prepared(&[(0, 0, 4096, 0)]);
    trace.records = 2;
    let err = drive
        .run(&trace_step(&drive, trace.clone(), 8))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("holding 1 records, where the step expects 2"),
        "{err}"
    );
    std::fs::write(&trace.path, b"time,op\n").unwrap();
    let err = drive
        .run(&trace_step(&drive, trace, 8))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a prepared trace"), "{err}");
    assert_eq!(drive.now_s(), 0.0, "nothing ran");
}

#[test]
fn a_trace_step_takes_nothing_that_would_shape_its_records() {
    let mut drive = Drive::new(small(0.7)).unwrap();
    let step = Step {
        runtime: Some(1.0),
        rate_iops: Some(10),
        ..trace_step(&drive, prepared(&[(0, 0, 4096, 0)]), 8)
    };
    let err = drive.run(&step).unwrap_err().to_string();
    assert!(err.contains("it takes no rate_iops, runtime"), "{err}");
}
