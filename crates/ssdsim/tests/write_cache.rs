//! The host's volatile write cache (NVMe feature 06h, `Platform::volatile_write_cache`):
//! with it off, as the SNIA PTS enterprise variant asks, a write completes only when its
//! data is on NAND. Each write's partly filled program unit is programmed at once, padded:
//! on the 16 GB test preset (tests/data/small-tlc.toml: program units of 2 planes x 16 KiB,
//! SLC programs of 212 us) a lone 4 KiB write waits for a whole SLC program and costs a
//! whole 32 KiB program unit of NAND, while writes of whole program units lose no space and
//! keep the dies as busy as the write buffer did.
use crate::common::*;
use ssdsim::{Drive, DriveConfig, Op, Platform, Step, StepResult};

/// The test preset's SLC program time, ns.
const SLC_PROG_NS: f64 = 212_000.0;
/// Its program unit: 2 planes x 16 KiB.
const PROGRAM_UNIT: u64 = 32 * KIB;

fn small_tlc() -> DriveConfig {
    let p = small_tlc_path();
    DriveConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// The test preset, fresh, with the host's write cache `on` or off.
fn drive(on: bool) -> Drive {
    let platform = Platform {
        volatile_write_cache: on,
        ..Platform::default()
    };
    Drive::with_platform(small_tlc(), 1, platform).unwrap()
}

/// QD1 4 KiB random writes over the whole drive for 0.2 s.
fn random_4k_qd1(d: &mut Drive) -> StepResult {
    let span = d.user_bytes() / (4 * KIB) * (4 * KIB);
    d.run(&Step::new("4 KiB QD1", Op::RandWrite, 4 * KIB, span).runtime(0.2))
        .unwrap()
}

/// 1 GiB of 128 KiB sequential writes at QD32.
fn sequential_128k_qd32(d: &mut Drive) -> StepResult {
    d.run(&Step::new("128 KiB QD32", Op::Write, 128 * KIB, GIB).qd(32))
        .unwrap()
}

fn mean_us(r: &StepResult) -> f64 {
    r.write.as_ref().unwrap().latency.mean_ns / 1e3
}

/// NAND bytes written per host byte.
fn nand_per_host(r: &StepResult) -> f64 {
    r.counters.nand_write_bytes as f64 / r.counters.host_write_bytes as f64
}

// A lone small write with the cache off waits for the SLC program of its program unit, and
// its unit is padded: many times the latency of a write the buffer acknowledges, and a
// whole program unit of NAND per 4 KiB written.
#[test]
fn without_the_cache_a_small_write_waits_for_a_padded_program() {
    let (on, off) = (
        random_4k_qd1(&mut drive(true)),
        random_4k_qd1(&mut drive(false)),
    );
    let (on_us, off_us) = (mean_us(&on), mean_us(&off));
    let (on_wa, off_wa) = (nand_per_host(&on), nand_per_host(&off));
    eprintln!(
        "4 KiB QD1 random writes: mean {on_us:.1} us with the cache, {off_us:.1} us without; \
         NAND/host bytes {on_wa:.2} with, {off_wa:.2} without"
    );
    assert!(
        off_us * 1e3 >= SLC_PROG_NS,
        "{off_us:.1} us without the cache"
    );
    assert!(off_us > 10.0 * on_us, "{off_us:.1} vs {on_us:.1} us");
    // Padding: each 4 KiB write programs a whole program unit (8 x 4 KiB) of NAND.
    let padding = (PROGRAM_UNIT / (4 * KIB)) as f64;
    assert!(on_wa < 1.1, "{on_wa:.2} with the cache");
    assert!(
        (off_wa - padding).abs() < 0.1 * padding,
        "{off_wa:.2} without the cache, {padding} expected"
    );
}

// 128 KiB writes fill whole program units (4 each): nothing is padded, and 32 of them in
// flight keep 128 programs under way, as many as the write buffer's 4 MiB held: the dies
// stay as busy as with the cache, and a sustained stream runs at their speed either way
// (writes with the cache wait for a buffer slot, that is for a program, too). The
// throughput falls by a few percent at most, while a lone 4 KiB write's latency rises
// twentyfold.
#[test]
fn without_the_cache_whole_program_units_lose_little_throughput() {
    let (on, off) = (
        sequential_128k_qd32(&mut drive(true)),
        sequential_128k_qd32(&mut drive(false)),
    );
    let (on_mbps, off_mbps) = (on.mbps(), off.mbps());
    let (on_wa, off_wa) = (nand_per_host(&on), nand_per_host(&off));
    let (on_us, off_us) = (mean_us(&on), mean_us(&off));
    eprintln!(
        "128 KiB QD32 sequential writes: {on_mbps:.0} MB/s (mean {on_us:.0} us) with the cache, \
         {off_mbps:.0} MB/s (mean {off_us:.0} us) without; NAND/host bytes {on_wa:.3} with, \
         {off_wa:.3} without"
    );
    // No padding: the NAND writes what the host wrote (the cache-on step leaves its last
    // program unit in the buffer).
    assert!(
        (off_wa - 1.0).abs() < 0.001,
        "{off_wa:.4} without the cache"
    );
    assert!(off_wa >= on_wa);
    // Each write waits for its programs, but the programs of the writes in flight overlap
    // on the dies as the buffer's did.
    assert!(
        off_mbps > 0.95 * on_mbps,
        "{off_mbps:.0} vs {on_mbps:.0} MB/s"
    );
    assert!(
        off_mbps <= on_mbps * 1.001,
        "{off_mbps:.0} vs {on_mbps:.0} MB/s"
    );
    // ... and a write's latency holds an SLC program.
    assert!(off_us * 1e3 >= SLC_PROG_NS, "{off_us:.0} us");
    let small = {
        let (on, off) = (
            random_4k_qd1(&mut drive(true)),
            random_4k_qd1(&mut drive(false)),
        );
        mean_us(&off) / mean_us(&on)
    };
    let slowdown = on_mbps / off_mbps;
    eprintln!("128 KiB QD32 {slowdown:.3}x slower, 4 KiB QD1 latency {small:.1}x longer");
    assert!(
        slowdown * 10.0 < small,
        "128 KiB QD32 {slowdown:.2}x slower, 4 KiB QD1 latency {small:.1}x longer"
    );
}

// With the cache on (the default), the drive is exactly the drive built without saying.
#[test]
fn with_the_cache_on_nothing_differs() {
    let steps = |d: &Drive| {
        let span4 = d.user_bytes() / (4 * KIB) * (4 * KIB);
        vec![
            Step::new("seq", Op::Write, 128 * KIB, GIB).qd(32),
            Step::new("rand QD1", Op::RandWrite, 4 * KIB, span4).runtime(0.05),
            Step::new("rand QD32", Op::RandWrite, 4 * KIB, span4)
                .qd(32)
                .io_size(256 * MIB),
            Step::new("read", Op::RandRead, 4 * KIB, GIB).io_size(64 * MIB),
        ]
    };
    let mut plain = Drive::new(small_tlc()).unwrap();
    let mut on = drive(true);
    for step in steps(&plain) {
        assert_eq!(plain.run(&step).unwrap(), on.run(&step).unwrap());
    }
}

// The host may turn the cache off between steps (as a test harness sets feature 06h before
// its run): the drive then behaves as one built with it off, and again as before when it
// is turned back on.
#[test]
fn the_cache_follows_set_platform() {
    let mut built_off = drive(false);
    let mut turned_off = drive(true);
    turned_off
        .set_platform(Platform {
            volatile_write_cache: false,
            ..turned_off.platform()
        })
        .unwrap();
    assert!(!turned_off.platform().volatile_write_cache);
    assert_eq!(
        random_4k_qd1(&mut built_off),
        random_4k_qd1(&mut turned_off)
    );
    turned_off
        .set_platform(Platform {
            volatile_write_cache: true,
            ..turned_off.platform()
        })
        .unwrap();
    let again = random_4k_qd1(&mut turned_off);
    assert!(
        mean_us(&again) * 1e3 < SLC_PROG_NS / 5.0,
        "{:.1} us",
        mean_us(&again)
    );
}

// On a full drive, random writes without the cache pad every program unit they program:
// superblocks fill eight times as fast, mostly with padding, and garbage collection takes
// them back (they hold little valid data). The FTL stays consistent, and the NAND writes at
// least the padding's eight bytes per host byte.
#[test]
fn without_the_cache_a_full_drive_collects_padded_superblocks() {
    let run = |on: bool| {
        let mut d = drive(on);
        let span = d.whole_span(128 * KIB);
        d.run(&Step::fill("fill", span)).unwrap();
        let span4 = d.user_bytes() / (4 * KIB) * (4 * KIB);
        let random = Step::new("4 KiB QD32", Op::RandWrite, 4 * KIB, span4).qd(32);
        let r = d.run(&random.io_size(4 * GIB)).unwrap();
        d.check_invariants().unwrap();
        r
    };
    let (on, off) = (run(true), run(false));
    eprintln!(
        "full drive, 4 KiB QD32 random writes: {:.0} IOPS, NAND/host bytes {:.2} with the \
         cache; {:.0} IOPS, {:.2} without",
        on.iops(),
        nand_per_host(&on),
        off.iops(),
        nand_per_host(&off)
    );
    assert!(off.counters.gc_bytes > 0, "garbage collection ran");
    assert!(nand_per_host(&off) > (PROGRAM_UNIT / (4 * KIB)) as f64);
    assert!(off.iops() < on.iops());
}
