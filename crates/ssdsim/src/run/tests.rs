//! Step results on the small test drive: whatever the step, its counts add up and
//! its time is the time the drive's clock moved.

use super::*;
use crate::config::tests::small;
use crate::step::DirectionResult;
use crate::step::Op;

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;

/// `a` and `b` agree to float rounding of sums of seconds or bytes.
fn assert_close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        "{what}: {a} != {b}"
    );
}

fn directions(r: &StepResult) -> impl Iterator<Item = &DirectionResult> {
    [&r.read, &r.write, &r.trim].into_iter().flatten()
}

/// Run `step` and check what holds for every step; returns its result.
fn run_checked(drive: &mut Drive, step: &Step) -> StepResult {
    let clock_before = drive.now_s();
    let r = drive.run(step).unwrap();
    let label = &step.label;
    assert_eq!(
        r.start_s, clock_before,
        "{label}: starts where the last step ended"
    );
    assert_close(
        drive.now_s() - clock_before,
        r.busy_s + r.idle_s,
        &format!("{label}: busy + idle is the time the drive's clock moved"),
    );
    for d in directions(&r) {
        assert_eq!(d.bytes, d.ios * step.bs, "{label}: bytes = ios x bs");
        assert_eq!(d.busy_s, r.busy_s, "{label}");
        let lat = &d.latency;
        assert_eq!(lat.count, d.ios, "{label}");
        let binned: u64 = lat.histogram.iter().map(|&(_, n)| n).sum();
        assert_eq!(binned, d.ios, "{label}: every command in the histogram");
        assert!(lat.min_ns <= lat.max_ns, "{label}");
        assert!(
            lat.p50_ns <= lat.p99_ns && lat.p99_ns <= lat.p99_9_ns && lat.p99_9_ns <= lat.p99_99_ns,
            "{label}: percentiles in order"
        );
    }
    // The per-second series holds every command, and the bytes read and written.
    let (mut bytes, mut ios) = (0.0, 0.0);
    for (i, p) in r.per_second.iter().enumerate() {
        let start = i as f64;
        assert!(
            p.t_s > start && p.t_s <= start + 1.0,
            "{label}: {p:?} in second {i}"
        );
        bytes += p.mbps * 1e6 * (p.t_s - start);
        ios += p.iops * (p.t_s - start);
    }
    let moved: u64 = [&r.read, &r.write]
        .into_iter()
        .flatten()
        .map(|d| d.bytes)
        .sum();
    let commands: u64 = directions(&r).map(|d| d.ios).sum();
    assert_close(bytes, moved as f64, &format!("{label}: per-second bytes"));
    assert_close(
        ios,
        commands as f64,
        &format!("{label}: per-second commands"),
    );
    if let Some(last) = r.per_second.last() {
        assert!(
            last.t_s <= r.busy_s + r.idle_s + 1e-9,
            "{label}: series within the step"
        );
    }
    // Whole 4 KiB blocks: the host wrote exactly the step's write bytes.
    let written = r.write.as_ref().map_or(0, |d| d.bytes);
    assert_eq!(r.counters.host_write_bytes, written, "{label}");
    r
}

#[test]
fn results_add_up_on_varied_steps() {
    let mut drive = Drive::new(small(0.7)).unwrap();
    let span = drive.whole_span(4 * KIB);

    // Sequential fill with the per-segment series: a drive this small writes less
    // than 16 segments of a MiB, so its segments are of 1 MiB.
    let fill_span = drive.whole_span(16 * KIB);
    let fill = Step::new("fill", Op::Write, 16 * KIB, fill_span)
        .qd(4)
        .per_gib();
    let r = run_checked(&mut drive, &fill);
    let w = r.write.as_ref().unwrap();
    assert_eq!(w.bytes, fill_span);
    assert_eq!(r.per_gib.len() as u64, fill_span / MIB);
    let mut segments_s = 0.0;
    for (i, p) in r.per_gib.iter().enumerate() {
        assert_eq!(p.gib, (i + 1) as f64 / 1024.0);
        segments_s += MIB as f64 / (p.mbps * 1e6);
    }
    assert!(
        segments_s <= r.busy_s + 1e-9,
        "the segments were written within the step"
    );

    // Random writes over a full drive, limited by bytes: garbage collection.
    let random = Step::new("random write", Op::RandWrite, 4 * KIB, span)
        .qd(8)
        .io_size(2 * span);
    let r = run_checked(&mut drive, &random);
    assert_eq!(r.write.as_ref().unwrap().bytes, 2 * span);
    assert!(r.counters.gc_bytes > 0 && r.counters.write_amplification > 1.0);

    // A random mix, 70 % reads.
    let mixed = Step::new("mixed", Op::RandRw, 4 * KIB, span)
        .mix(70)
        .qd(4)
        .io_size(span);
    let r = run_checked(&mut drive, &mixed);
    let (reads, writes) = (r.read.as_ref().unwrap().ios, r.write.as_ref().unwrap().ios);
    assert_eq!(reads + writes, span / (4 * KIB));
    let share = reads as f64 / (reads + writes) as f64;
    assert!((0.65..0.75).contains(&share), "read share {share}");

    // A sequential mix of larger blocks.
    let seq_mix = Step::new("sequential mix", Op::Rw, 8 * KIB, drive.whole_span(8 * KIB))
        .mix(30)
        .qd(2);
    let r = run_checked(&mut drive, &seq_mix);
    assert!(r.read.is_some() && r.write.is_some());

    // Bursts with a duty cycle of 25 %: each burst is followed by three times its busy
    // time of idle (rounded down to the ns), then the idle after the step.
    let burst = span / 8 / (4 * KIB) * (4 * KIB);
    let bursts = Step::new("bursts", Op::RandWrite, 4 * KIB, span)
        .io_size(8 * burst)
        .bursts(burst, 0.25)
        .idle_after(0.5);
    let r = run_checked(&mut drive, &bursts);
    assert_eq!(r.bursts, 8);
    assert_eq!(r.write.as_ref().unwrap().bytes, 8 * burst);
    let duty_idle = r.idle_s - 0.5;
    assert!(
        duty_idle <= 3.0 * r.busy_s + 1e-12 && duty_idle >= 3.0 * r.busy_s - 8e-9,
        "idle {duty_idle} s after {} s busy",
        r.busy_s
    );

    // A rate-limited step issues runtime x rate commands, evenly spaced.
    let rate = Step::new("rate", Op::RandRead, 4 * KIB, span)
        .qd(4)
        .rate(2000)
        .runtime(0.5);
    let r = run_checked(&mut drive, &rate);
    assert_eq!(r.read.as_ref().unwrap().ios, 1000);
    assert!((r.iops() / 2000.0 - 1.0).abs() < 0.01, "{} IOPS", r.iops());

    // A time-based step runs for its runtime, plus at most its slowest command.
    let timed = Step {
        time_based: true,
        ..Step::new("time based", Op::RandWrite, 4 * KIB, span)
            .qd(8)
            .runtime(0.02)
    };
    let r = run_checked(&mut drive, &timed);
    let slowest = r.write.as_ref().unwrap().latency.max_ns as f64 / NS_PER_S;
    assert!(
        r.busy_s >= 0.02 && r.busy_s <= 0.02 + slowest,
        "busy {} s",
        r.busy_s
    );

    // Trimming the whole drive unmaps it; trims move no bytes in the series.
    let trim = Step::new("trim", Op::Trim, 4 * KIB, span).qd(2);
    let r = run_checked(&mut drive, &trim);
    assert!(r.read.is_none() && r.write.is_none());
    assert_eq!(r.trim.as_ref().unwrap().ios, span / (4 * KIB));
    assert_eq!(r.counters.mapped_bytes, 0);

    // Written again, then purged: fresh out of box, its erases the step's busy time.
    run_checked(
        &mut drive,
        &Step::new("rewrite", Op::Write, 4 * KIB, span).qd(4),
    );
    let r = run_checked(&mut drive, &Step::purge("purge"));
    assert!(directions(&r).next().is_none() && r.per_second.is_empty());
    assert_eq!(r.counters.mapped_bytes, 0);
    assert!(r.busy_s > 0.0 && r.counters.erases > 0);

    drive.check_invariants().unwrap();
}
