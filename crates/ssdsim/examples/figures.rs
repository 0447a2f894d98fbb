//! Prints speed and calibration figures. Run in release:
//!   cargo run -p ssdsim --release --example figures -- fill drives/wd-sn850-1tb.toml
//!   cargo run -p ssdsim --release --example figures -- randwrite drives/wd-sn850-1tb.toml
//!   cargo run -p ssdsim --release --example figures -- calib drives/wd-sn850-1tb.toml
//!   cargo run -p ssdsim --release --example figures -- steady drives/wd-sn850-1tb.toml 64   (GiB of random writes after a fill)
//! `EVERY=1` prints every segment of the fill curve.
use ssdsim::{Drive, DriveConfig, Op, Step};
use std::time::Instant;

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn max_rss_mib() -> f64 {
    // VmHWM from /proc/self/status (peak resident set size).
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    for l in s.lines() {
        if let Some(v) = l.strip_prefix("VmHWM:") {
            let kb: f64 = v
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0.0);
            return kb / 1024.0;
        }
    }
    0.0
}

fn fill(d: &mut Drive) {
    let span = d.whole_span(128 * KIB);
    let w = Instant::now();
    let r = d.run(&Step::fill("fill", span)).unwrap();
    let wall = w.elapsed().as_secs_f64();
    let c = &r.counters;
    println!(
        "whole-drive fill: {:.1} GB in {:.2} s wall ({:.1} s virtual), mean {:.0} MB/s, WA {:.3}, folded {:.1} GB, gc {:.1} GB",
        span as f64 / 1e9, wall, r.busy_s, r.mbps(), c.write_amplification, c.fold_bytes as f64 / 1e9, c.gc_bytes as f64 / 1e9
    );
    let pts = &r.per_gib;
    let first = pts.iter().take(4).map(|p| p.mbps).sum::<f64>() / 4.0;
    // cache size: GiB written before the first sustained drop (3 segments below 70 % of the start)
    let mut cache = 0.0;
    for i in 0..pts.len().saturating_sub(3) {
        if pts[i..i + 3].iter().all(|p| p.mbps < 0.7 * first) {
            cache = if i == 0 { 0.0 } else { pts[i - 1].gib };
            break;
        }
    }
    let last16: f64 = pts.iter().rev().take(16).map(|p| p.mbps).sum::<f64>() / 16.0;
    println!("  start {first:.0} MB/s, cache estimate {:.1} GB ({cache:.1} GiB), last 16 GiB {last16:.0} MB/s", cache * GIB as f64 / 1e9);
    let step = std::env::var("EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((pts.len() / 40).max(1));
    for p in pts.iter().step_by(step) {
        println!("  {:7.1} GiB {:7.0} MB/s", p.gib, p.mbps);
    }
}

fn calib(d: &mut Drive) {
    let user = d.user_bytes();
    let ten = user / 10 / (128 * KIB) * (128 * KIB);
    d.run(
        &Step::new("fill 10%", Op::Write, 128 * KIB, ten)
            .qd(32)
            .idle_after(120.0),
    )
    .unwrap();
    let sw = d
        .run(
            &Step::new("seq write", Op::Write, 128 * KIB, 8 * GIB)
                .offset(ten)
                .qd(32)
                .idle_after(60.0),
        )
        .unwrap();
    let rw = d
        .run(
            &Step::new("rand write", Op::RandWrite, 4 * KIB, d.whole_span(4 * KIB))
                .qd(32)
                .runtime(1.0)
                .idle_after(60.0),
        )
        .unwrap();
    let sr = d
        .run(&Step::new("seq read", Op::Read, 128 * KIB, 16 * GIB).qd(32))
        .unwrap();
    let rr32 = d
        .run(
            &Step::new("rand read", Op::RandRead, 4 * KIB, 16 * GIB)
                .qd(32)
                .runtime(0.5),
        )
        .unwrap();
    let rr = d
        .run(
            &Step::new("rand read", Op::RandRead, 4 * KIB, 16 * GIB)
                .qd(256)
                .runtime(0.5),
        )
        .unwrap();
    let q1 = d
        .run(&Step::new("rand read qd1", Op::RandRead, 4 * KIB, 16 * GIB).runtime(0.2))
        .unwrap();
    println!(
        "10% filled: seq write {:.0} MB/s, rand write {:.0} K IOPS, seq read {:.0} MB/s, rand read QD32 {:.0} K, QD256 {:.0} K IOPS, QD1 {:.1} us mean",
        sw.mbps(), rw.iops() / 1e3, sr.mbps(), rr32.iops() / 1e3, rr.iops() / 1e3,
        q1.read.as_ref().unwrap().latency.mean_ns / 1e3
    );
}

fn randwrite(d: &mut Drive) {
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("fill", Op::Write, 128 * KIB, span).qd(32))
        .unwrap();
    let span4 = d.whole_span(4 * KIB);
    // reach steady state: a full drive's worth of random writes
    let w = Instant::now();
    let warm = d
        .run(
            &Step::new("warm", Op::RandWrite, 4 * KIB, span4)
                .qd(32)
                .io_size(span4 / 2),
        )
        .unwrap();
    println!(
        "warm-up: {} cmds in {:.2} s wall, {:.0} K IOPS virtual, WA {:.2}",
        warm.write.as_ref().unwrap().ios,
        w.elapsed().as_secs_f64(),
        warm.iops() / 1e3,
        warm.counters.write_amplification
    );
    let w = Instant::now();
    let r = d
        .run(
            &Step::new("steady", Op::RandWrite, 4 * KIB, span4)
                .qd(32)
                .io_size(64 * GIB),
        )
        .unwrap();
    let wall = w.elapsed().as_secs_f64();
    let n = r.write.as_ref().unwrap().ios;
    println!(
        "steady random 4K write QD32: {n} commands in {wall:.2} s wall = {:.2} M commands/s; virtual {:.0} K IOPS, WA {:.2}, gc {:.1} GB",
        n as f64 / wall / 1e6, r.iops() / 1e3, r.counters.write_amplification, r.counters.gc_bytes as f64 / 1e9
    );
}

fn steady(d: &mut Drive, gib: u64) {
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("fill", Op::Write, 128 * KIB, span).qd(32))
        .unwrap();
    let span4 = d.whole_span(4 * KIB);
    let w = Instant::now();
    let r = d
        .run(
            &Step::new("steady", Op::RandWrite, 4 * KIB, span4)
                .qd(32)
                .io_size(gib * GIB),
        )
        .unwrap();
    let wall = w.elapsed().as_secs_f64();
    let n = r.write.as_ref().unwrap().ios;
    println!(
        "random 4K write QD32 after a full fill: {n} commands in {wall:.2} s wall = {:.2} M commands/s; virtual {:.0} K IOPS, WA {:.2}, gc {:.1} GB",
        n as f64 / wall / 1e6, r.iops() / 1e3, r.counters.write_amplification, r.counters.gc_bytes as f64 / 1e9
    );
}

/// A few client-suite steps on a drive with 64 GiB of data (sanity of QD1 and mixed figures).
fn client(d: &mut Drive) {
    d.run(
        &Step::new("pre", Op::Write, 128 * KIB, 64 * GIB)
            .qd(32)
            .idle_after(120.0),
    )
    .unwrap();
    let steps = [
        Step::new("rand read QD1", Op::RandRead, 4 * KIB, 16 * GIB).runtime(0.5),
        Step::new("rand read QD4", Op::RandRead, 4 * KIB, 64 * GIB)
            .qd(4)
            .runtime(0.5),
        Step::new("rand write QD1 burst", Op::RandWrite, 4 * KIB, 16 * GIB)
            .io_size(128 * MIB)
            .bursts(4 * MIB, 0.2),
        Step::new("seq read QD1", Op::Read, 128 * KIB, 16 * GIB).io_size(GIB),
        Step::new("seq write QD1", Op::Write, 128 * KIB, 16 * GIB)
            .io_size(GIB)
            .idle_after(10.0),
        Step::new("mixed 70% read QD4", Op::RandRw, 4 * KIB, 64 * GIB)
            .mix(70)
            .qd(4)
            .runtime(1.0),
        Step::new("mixed seq 50% QD1", Op::Rw, 128 * KIB, 64 * GIB)
            .mix(50)
            .runtime(1.0),
    ];
    for s in steps {
        let r = d.run(&s).unwrap();
        let lat = |x: &Option<ssdsim::DirectionResult>| {
            x.as_ref()
                .map(|d| {
                    format!(
                        "mean {:.1} us p99 {:.1} us max {:.1} us",
                        d.latency.mean_ns / 1e3,
                        d.latency.p99_ns as f64 / 1e3,
                        d.latency.max_ns as f64 / 1e3
                    )
                })
                .unwrap_or_default()
        };
        println!(
            "{:22} {:8.0} MB/s {:9.0} IOPS  read[{}] write[{}]",
            s.label,
            r.mbps(),
            r.iops(),
            lat(&r.read),
            lat(&r.write)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("fill");
    let path = args
        .get(2)
        .map(String::as_str)
        .unwrap_or("drives/wd-sn850-1tb.toml");
    let cfg = DriveConfig::from_file(path).unwrap_or_else(|e| panic!("{e}"));
    let w = Instant::now();
    let mut d = Drive::new(cfg).unwrap();
    println!(
        "{}: drive built in {:.2} s",
        path,
        w.elapsed().as_secs_f64()
    );
    let _ = MIB;
    match what {
        "fill" => fill(&mut d),
        "calib" => calib(&mut d),
        "randwrite" => randwrite(&mut d),
        "client" => client(&mut d),
        "steady" => steady(
            &mut d,
            args.get(3).and_then(|s| s.parse().ok()).unwrap_or(32),
        ),
        other => panic!("unknown figure {other}"),
    }
    let ok = d.check_invariants();
    println!(
        "invariants: {:?}; max RSS {:.0} MiB",
        ok.map(|_| "ok"),
        max_rss_mib()
    );
}
