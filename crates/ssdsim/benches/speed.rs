//! Speed benchmark of the simulator core (prints figures; `cargo bench -p ssdsim`).
//! Targets are issue 11's, on the 2-core machine of BENCHMARKS.md.
//!
//! 1. This machine's own speed, to compare figures measured on different days of a
//!    shared machine: random updates of a 1 GiB table (the mapping table of a 1 TB
//!    drive), 16 prefetched ahead, and a chain of dependent integer operations.
//! 2. Whole-drive fill of a 1 TB preset (128 KiB sequential writes, QD32): wall time.
//!    Target: at most 3 s.
//! 3. 4 KiB random writes at QD32 on a full 1 TB TLC preset in steady state with GC active
//!    (after a fill and 256 GiB of random writes): simulated commands per CPU-second.
//!    Target: at least 5 million.
//! 4. Random reads at QD1 and QD32 and a 70/30 random mix at QD4 on the filled drive:
//!    simulated commands per CPU-second.
//! 5. Peak memory (max RSS from getrusage): target at most 1.5 GiB per TB simulated.
//!
//! Each scenario runs in its own child process so that its max RSS is its own.
//! Optional argument: a preset name (default: wd-sn850-1tb), or `--child <scenario> <preset>`.
use ssdsim::wear::age::{Age, AgeUnit};
use ssdsim::wear::retention::PowerOff;
use ssdsim::{Drive, DriveConfig, Op, Step};
use std::time::Instant;

const KIB: u64 = 1024;
const GIB: u64 = 1 << 30;

fn max_rss_bytes() -> u64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    u.ru_maxrss as u64 * 1024
}

/// CPU seconds (user + system) used by this process so far.
fn cpu_s() -> f64 {
    let (u, s) = cpu_us();
    u + s
}

/// CPU seconds (user, system) used by this process so far.
fn cpu_us() -> (f64, f64) {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(u.ru_utime), tv(u.ru_stime))
}

fn drive(preset: &str) -> Drive {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../drives")
        .join(format!("{preset}.toml"));
    Drive::new(DriveConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

fn fill(preset: &str) {
    let mut d = drive(preset);
    let span = d.whole_span(128 * KIB);
    let w = Instant::now();
    let (u0, s0) = cpu_us();
    let r = d.run(&Step::fill("fill", span)).unwrap();
    let wall = w.elapsed().as_secs_f64();
    let (u1, s1) = cpu_us();
    let (user, sys) = (u1 - u0, s1 - s0);
    let tb = d.user_bytes() as f64 / 1e12;
    println!(
        "fill      {preset}: {:.0} GB, {} commands in {wall:.2} s wall (target <= 3 s; CPU {user:.2} s user + {sys:.2} s system, system time is mostly the kernel providing zeroed pages for the mapping tables, overlapped by a prefault thread; in a VM, memory its host took back costs seconds per GiB at first touch) -> {:.2} M commands/s; virtual {:.0} s at {:.0} MB/s; max RSS {:.2} GiB = {:.2} GiB/TB (target <= 2)",
        span as f64 / 1e9,
        r.write.as_ref().unwrap().ios,
        r.write.as_ref().unwrap().ios as f64 / wall / 1e6,
        r.busy_s,
        r.mbps(),
        max_rss_bytes() as f64 / GIB as f64,
        max_rss_bytes() as f64 / GIB as f64 / tb
    );
}

fn steady(preset: &str) {
    let mut d = drive(preset);
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("fill", Op::Write, 128 * KIB, span).qd(32))
        .unwrap();
    let span4 = d.user_bytes() / (4 * KIB) * (4 * KIB);
    d.run(
        &Step::new("warm-up", Op::RandWrite, 4 * KIB, span4)
            .qd(32)
            .io_size(256 * GIB),
    )
    .unwrap();
    let w = Instant::now();
    let c0 = cpu_s();
    let r = d
        .run(
            &Step::new("steady", Op::RandWrite, 4 * KIB, span4)
                .qd(32)
                .io_size(64 * GIB),
        )
        .unwrap();
    let wall = w.elapsed().as_secs_f64();
    let cpu = cpu_s() - c0;
    let n = r.write.as_ref().unwrap().ios;
    let c = &r.counters;
    assert!(c.gc_bytes > 0, "GC must be active in the measured window");
    println!(
        "randwrite {preset}: {n} commands (4 KiB, QD32, full drive, GC active: WA {:.2}, {:.0} GB relocated) in {wall:.2} s wall = {:.2} M commands/s ({:.2} M per CPU-second, target >= 5); virtual {:.0} K IOPS; max RSS {:.2} GiB",
        c.write_amplification,
        c.gc_bytes as f64 / 1e9,
        n as f64 / wall / 1e6,
        n as f64 / cpu / 1e6,
        r.iops() / 1e3,
        max_rss_bytes() as f64 / GIB as f64
    );
}

/// Random reads (and a 70/30 mix) on the filled drive: simulated commands per CPU-second.
fn reads(preset: &str) {
    let mut d = drive(preset);
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("fill", Op::Write, 128 * KIB, span).qd(32))
        .unwrap();
    let span4 = d.user_bytes() / (4 * KIB) * (4 * KIB);
    let cases = [
        ("randread QD1", Op::RandRead, 1, 2 * GIB, None),
        ("randread QD32", Op::RandRead, 32, 16 * GIB, None),
        ("randrw 70/30 QD4", Op::RandRw, 4, 8 * GIB, Some(70)),
    ];
    for (label, op, qd, bytes, mix) in cases {
        let mut step = Step::new(label, op, 4 * KIB, span4).qd(qd).io_size(bytes);
        if let Some(m) = mix {
            step = step.mix(m);
        }
        let c0 = cpu_s();
        let r = d.run(&step).unwrap();
        let cpu = cpu_s() - c0;
        let n = r.read.as_ref().map_or(0, |x| x.ios) + r.write.as_ref().map_or(0, |x| x.ios);
        println!(
            "{label:<17} {preset}: {n} commands in {cpu:.2} CPU-s = {:.2} M commands per CPU-second; virtual {:.0} K IOPS",
            n as f64 / cpu / 1e6,
            r.iops() / 1e3
        );
    }
}

/// An aged drive (issue 25): ageing it to 3000 P/E cycles (target under 10 s for 1 TB),
/// and whole-drive read-backs (128 KiB QD32) on it against a fresh drive's, in CPU time
/// per command (target: at least half the fresh speed): of data just written, and of the
/// same data a year later (the worst case: most pages need several read retries).
fn aged(preset: &str) {
    let year = PowerOff {
        seconds: 365.25 * 24.0 * 3600.0,
        temperature_c: 30.0,
    };
    let mut per_command = Vec::new();
    for pe in [0.0, 3000.0] {
        let mut d = drive(preset);
        let w = Instant::now();
        d.run(&Step::aged("age", Age::new(pe, AgeUnit::Pe)))
            .unwrap();
        let age_s = w.elapsed().as_secs_f64();
        println!("aged {pe:.0} P/E {preset}: aged in {age_s:.3} s wall (target < 10)");
        let span = d.whole_span(128 * KIB);
        d.run(
            &Step::new("fill", Op::Write, 128 * KIB, span)
                .qd(32)
                .idle_after(600.0),
        )
        .unwrap();
        for data in ["just written", "a year old"] {
            if data == "a year old" {
                d.run(&Step::off("year", year)).unwrap();
            }
            let c0 = cpu_s();
            let r = d
                .run(&Step::new("read", Op::Read, 128 * KIB, span).qd(32))
                .unwrap();
            let cpu = cpu_s() - c0;
            let n = r.read.as_ref().unwrap().ios;
            per_command.push(cpu / n as f64);
            let c = r.counters;
            println!(
                "  read-back of data {data}: {n} commands in {cpu:.2} CPU-s = {:.2} M commands per CPU-second; virtual {:.0} MB/s, {} retries, {} soft decodes, {} uncorrectable",
                n as f64 / cpu / 1e6,
                r.mbps(),
                c.read_retries,
                c.soft_decodes,
                c.uncorrectable_reads
            );
        }
    }
    println!(
        "aged drive's read-back at {:.2} (data just written) and {:.2} (a year old) of the fresh drive's speed in CPU time per command (target >= 0.5)",
        per_command[0] / per_command[2],
        per_command[1] / per_command[3]
    );
}

/// The machine's memory and compute speed, as references for the figures above.
fn machine() {
    const AHEAD: usize = 16;
    let n = (GIB / 4) as usize;
    let mut table = ssdsim::ftl::table::lazy_zeroed(n).expect("1 GiB for the reference table");
    table
        .iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = i as u32); // fault every page in
    let mut rng = ssdsim::rng::Rng::new(1);
    let mut ahead = [0usize; AHEAD];
    ahead
        .iter_mut()
        .for_each(|a| *a = rng.below(n as u64) as usize);
    let updates = 50_000_000usize;
    let w = Instant::now();
    for i in 0..updates {
        let slot = &mut ahead[i % AHEAD];
        table[*slot] = table[*slot].wrapping_add(1);
        *slot = rng.below(n as u64) as usize;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch of an element of the table; it has no effect on the program's state.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch(table.as_ptr().add(*slot) as *const i8, _MM_HINT_T0);
        }
    }
    let update_ns = w.elapsed().as_secs_f64() / updates as f64 * 1e9;
    let steps = 500_000_000u64;
    let w = Instant::now();
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box((x, &table));
    let step_ns = w.elapsed().as_secs_f64() / steps as f64 * 1e9;
    println!(
        "machine: {update_ns:.1} ns per random update of a 1 GiB table ({AHEAD} prefetched ahead); {step_ns:.2} ns per step of a dependent xorshift chain"
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        match args[1].as_str() {
            "fill" => fill(&args[2]),
            "steady" => steady(&args[2]),
            "reads" => reads(&args[2]),
            "machine" => machine(),
            "aged" => aged(&args[2]),
            other => panic!("unknown scenario {other}"),
        }
        return;
    }
    let preset = args
        .first()
        .cloned()
        .unwrap_or_else(|| "wd-sn850-1tb".into());
    let me = std::env::current_exe().unwrap();
    for scenario in ["machine", "fill", "steady", "reads", "aged"] {
        let st = std::process::Command::new(&me)
            .args(["--child", scenario, &preset])
            .status()
            .unwrap();
        assert!(st.success(), "{scenario} failed");
    }
}
