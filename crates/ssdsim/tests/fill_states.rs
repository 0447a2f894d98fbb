//! What reviews see on real drives, emerging from the model's mechanisms (nothing
//! here is scripted in the simulator): a nearly full drive writes slower, TRIM gives
//! the speed back, writes smaller than the 4 KiB mapping unit pay a read-modify-write,
//! a full drive's random writes pay for garbage collection, and a light rate-limited
//! load sees an idle drive. On the 16 GB test preset (tests/data/small-tlc.toml, the
//! SN850's NAND and dynamic cache at a small capacity).
use crate::common::*;
use ssdsim::{Drive, DriveConfig, Op, Step, StepResult};

fn small_tlc() -> Drive {
    let p = small_tlc_path();
    Drive::new(DriveConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// Purge, then fill the first `frac` of the drive sequentially (128 KiB QD32).
fn state(frac: f64) -> (Drive, u64) {
    let mut d = small_tlc();
    d.run(&Step::purge("purge")).unwrap();
    let filled = fill_to(&mut d, frac, 0.0);
    (d, filled)
}

fn seq_write(d: &mut Drive, span: u64, bytes: u64) -> StepResult {
    d.run(
        &Step::new("seq write", Op::Write, 128 * KIB, span)
            .qd(32)
            .io_size(bytes),
    )
    .unwrap()
}

fn mbps(r: &StepResult) -> f64 {
    r.write.as_ref().unwrap().bytes as f64 / r.busy_s / 1e6
}

#[test]
fn a_nearly_full_drive_writes_slower() {
    let (mut ten, span10) = state(0.10);
    let (mut ninety, span90) = state(0.90);
    let at10 = mbps(&seq_write(&mut ten, span10, 2 * GIB));
    let at90 = mbps(&seq_write(&mut ninety, span90, 2 * GIB));
    eprintln!(
        "128 KiB QD32 sequential write: {at10:.0} MB/s at 10 % filled, {at90:.0} MB/s at 90 %"
    );
    assert!(
        at90 < 0.7 * at10,
        "90 % filled {at90:.0} MB/s vs 10 % filled {at10:.0} MB/s"
    );
}

#[test]
fn trim_gives_the_speed_back() {
    let (mut d, full) = state(1.0);
    let half = full / 2 / (64 * MIB) * (64 * MIB);
    let before = mbps(&seq_write(&mut d, half, 2 * GIB));
    let trim = d
        .run(&Step::new("trim", Op::Trim, 64 * MIB, half).offset(full - half))
        .unwrap();
    let t = trim.trim.as_ref().unwrap();
    let after = mbps(&seq_write(&mut d, half, 2 * GIB));
    eprintln!(
        "full drive {before:.0} MB/s; TRIM of {} ranges of 64 MiB, mean {:.1} us; then {after:.0} MB/s",
        t.ios,
        t.latency.mean_ns / 1e3
    );
    assert_eq!(t.ios, half / (64 * MIB));
    assert!(
        after > 1.5 * before,
        "after TRIM {after:.0} MB/s vs full {before:.0} MB/s"
    );
}

fn random_writes(d: &mut Drive, bs: u64, span: u64, ios: u64) -> StepResult {
    d.run(&Step::new("random write", Op::RandWrite, bs, span).io_size(bs * ios))
        .unwrap()
}

#[test]
fn writes_smaller_than_the_mapping_unit_read_modify_write() {
    let (mut d, span) = state(0.5);
    let small = random_writes(&mut d, 512, span, 20_000);
    let unit = random_writes(&mut d, 4 * KIB, span, 20_000);
    let (s, u) = (small.write.as_ref().unwrap(), unit.write.as_ref().unwrap());
    eprintln!(
        "QD1 random write over data: 512 B mean {:.1} us ({} merge reads), 4 KiB mean {:.1} us",
        s.latency.mean_ns / 1e3,
        small.counters.rmw_reads,
        u.latency.mean_ns / 1e3
    );
    assert!(
        small.counters.rmw_reads > 19_000,
        "{} merge reads",
        small.counters.rmw_reads
    );
    assert_eq!(unit.counters.rmw_reads, 0);
    assert!(s.latency.mean_ns > 2.0 * u.latency.mean_ns);

    // Over unmapped LBAs there is nothing to merge (zeroes), except where a random
    // write lands on a unit an earlier one wrote (about 0.1 % here).
    let mut empty = small_tlc();
    let r = random_writes(&mut empty, 512, span, 10_000);
    assert!(
        r.counters.rmw_reads < 50,
        "{} merge reads",
        r.counters.rmw_reads
    );
}

#[test]
fn a_full_drives_random_writes_pay_for_garbage_collection() {
    // Past the free space (the test preset keeps 45 % of its NAND spare), every write
    // needs a block reclaimed by GC: 24 GiB to get there, then 8 GiB measured.
    let random_qd32 = |d: &mut Drive, span: u64, bytes: u64| {
        d.run(
            &Step::new("rw", Op::RandWrite, 4 * KIB, span)
                .qd(32)
                .io_size(bytes),
        )
        .unwrap()
    };
    let (mut full, span) = state(1.0);
    let fresh = random_qd32(&mut small_tlc(), span, 2 * GIB);
    random_qd32(&mut full, span, 24 * GIB);
    let steady = random_qd32(&mut full, span, 8 * GIB);
    let iops = |r: &StepResult| r.write.as_ref().unwrap().ios as f64 / r.busy_s;
    eprintln!(
        "4 KiB QD32 random write: {:.0} IOPS empty (WA {:.2}), {:.0} IOPS full (WA {:.2}, {} MiB moved by GC)",
        iops(&fresh),
        fresh.counters.write_amplification,
        iops(&steady),
        steady.counters.write_amplification,
        steady.counters.gc_bytes >> 20
    );
    assert!(fresh.counters.gc_bytes == 0);
    assert!(iops(&steady) < 0.8 * iops(&fresh));
    assert!(steady.counters.write_amplification > 1.5 && steady.counters.gc_bytes > 0);
}

#[test]
fn a_light_rate_limited_load_sees_an_idle_drive() {
    let (mut d, span) = state(0.1);
    let light = d
        .run(
            &Step::new("light", Op::RandWrite, 4 * KIB, span)
                .rate(10)
                .runtime(10.0),
        )
        .unwrap();
    let w = light.write.as_ref().unwrap();
    let iops = w.ios as f64 / light.busy_s;
    let idle_qd1 = random_writes(&mut d, 4 * KIB, span, 1_000);
    let base = idle_qd1.write.as_ref().unwrap().latency.mean_ns;
    eprintln!(
        "10 IOPS for 10 s: {} writes, {iops:.2} IOPS, mean {:.1} us, max {:.1} us (unpaced QD1 mean {:.1} us)",
        w.ios,
        w.latency.mean_ns / 1e3,
        w.latency.max_ns as f64 / 1e3,
        base / 1e3
    );
    assert!((99..=101).contains(&w.ios), "{} writes", w.ios);
    assert!((9.5..=10.5).contains(&iops));
    // An idle drive's latency: an unpaced write's, plus the wake-up from active idle that
    // 100 ms between commands always leave time for.
    let wake_ns = d.config().power.as_ref().unwrap().active_idle_exit_us * 1e3;
    assert!(w.latency.mean_ns < 1.5 * base + wake_ns);
    assert!(w.latency.max_ns as f64 > wake_ns);
}

/// Reads of blocks never written, or trimmed, are answered without NAND (zeroes, as real
/// drives answer deallocated blocks): the drive counts them, and they are faster.
#[test]
fn reads_of_unwritten_blocks_are_counted_and_need_no_nand() {
    let mut d = small_tlc();
    d.run(&Step::purge("purge")).unwrap();
    let span = 256 * MIB;
    let reads = |d: &mut Drive| {
        d.run(
            &Step::new("random reads", Op::RandRead, 4 * KIB, span)
                .qd(1)
                .io_size(16 * MIB),
        )
        .unwrap()
    };
    let fresh = reads(&mut d);
    assert_eq!(fresh.counters.unwritten_read_bytes, 16 * MIB);
    seq_write(&mut d, span, span);
    let written = reads(&mut d);
    assert_eq!(written.counters.unwritten_read_bytes, 0);
    let (zeroes, nand) = (fresh.read.as_ref().unwrap(), written.read.as_ref().unwrap());
    assert!(
        zeroes.latency.mean_ns * 2.0 < nand.latency.mean_ns,
        "unwritten {:.1} us, written {:.1} us",
        zeroes.latency.mean_ns / 1e3,
        nand.latency.mean_ns / 1e3
    );
    d.run(&Step::new("trim", Op::Trim, 64 * MIB, span)).unwrap();
    assert_eq!(reads(&mut d).counters.unwritten_read_bytes, 16 * MIB);
}
