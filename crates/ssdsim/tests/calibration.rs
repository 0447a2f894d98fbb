//! Calibration against the published figures listed in docs/simulator.md (tags CAL:...). Each test states its tolerance.
//! The drives are on the platform of the measurements (`MEASURING_PLATFORM`): awake after every idle.
use crate::common::*;
use ssdsim::{Drive, Op, Step};

fn within(what: &str, got: f64, want: f64, tol: f64) {
    let err = (got - want).abs() / want;
    eprintln!(
        "{what}: {got:.1} vs {want:.1} ({:+.1} %)",
        (got - want) / want * 100.0
    );
    assert!(
        err <= tol,
        "{what}: {got:.1} vs {want:.1} ({:.1} % off, tolerance {:.0} %)",
        err * 100.0,
        tol * 100.0
    );
}

/// The lab's "10 % filled" state: the first 10 % written sequentially, then a minute idle.
fn ten_percent(name: &str) -> (Drive, u64) {
    let mut d = measured(name);
    let filled = fill_to(&mut d, 0.10, 60.0);
    (d, filled)
}

fn seq_write_mbps(d: &mut Drive, offset: u64) -> f64 {
    seq_write_len(d, offset, 8 * GIB)
}

fn seq_write_len(d: &mut Drive, offset: u64, len: u64) -> f64 {
    let r = d
        .run(
            &Step::new("seq write", Op::Write, 128 * KIB, len)
                .offset(offset)
                .qd(32)
                .idle_after(60.0),
        )
        .unwrap();
    r.mbps()
}

fn rand_write_iops(d: &mut Drive) -> f64 {
    let span = d.whole_span(4 * KIB);
    let r = d
        .run(
            &Step::new("rand write", Op::RandWrite, 4 * KIB, span)
                .qd(32)
                .runtime(1.0)
                .idle_after(60.0),
        )
        .unwrap();
    r.iops()
}

// CALIBRATION.md, "Measured: sequential and random write at 10 % filled". Tolerance 10 %.
#[test]
fn sn850_at_10_percent_filled() {
    let (mut d, off) = ten_percent("wd-sn850-1tb");
    within(
        "SN850 128 KiB seq write QD32 MB/s",
        seq_write_mbps(&mut d, off),
        4834.0,
        0.10,
    );
    within(
        "SN850 4 KiB random write QD32 IOPS",
        rand_write_iops(&mut d),
        280e3,
        0.10,
    );
}

#[test]
fn samsung_980pro_at_10_percent_filled() {
    let (mut d, off) = ten_percent("samsung-980pro-1tb");
    within(
        "980 PRO 128 KiB seq write QD32 MB/s",
        seq_write_mbps(&mut d, off),
        3066.0,
        0.10,
    );
    within(
        "980 PRO 4 KiB random write QD32 IOPS",
        rand_write_iops(&mut d),
        387e3,
        0.10,
    );
}

#[test]
fn crucial_p5plus_at_10_percent_filled() {
    let (mut d, off) = ten_percent("crucial-p5plus-1tb");
    within(
        "P5 Plus 128 KiB seq write QD32 MB/s",
        seq_write_mbps(&mut d, off),
        3675.0,
        0.10,
    );
    within(
        "P5 Plus 4 KiB random write QD32 IOPS",
        rand_write_iops(&mut d),
        558e3,
        0.10,
    );
}

// CALIBRATION.md, WD Black NVMe 2018, "1 TB | 3400 | 2800 | 500 k | 400 k". Tolerance 10 %.
// Sequential at 128 KiB QD32; random 4 KiB writes at QD32; random reads at QD256 (32 x 8
// threads, the spec-sheet setting) over 16 GiB of data present.
#[test]
fn wd_black_2018_spec_sheet() {
    let (mut d, off) = ten_percent("wd-black-2018-1tb");
    within(
        "WD Black seq write MB/s",
        seq_write_mbps(&mut d, off),
        2800.0,
        0.10,
    );
    within(
        "WD Black random write IOPS",
        rand_write_iops(&mut d),
        400e3,
        0.10,
    );
    let r = d
        .run(&Step::new("seq read", Op::Read, 128 * KIB, 16 * GIB).qd(32))
        .unwrap();
    within("WD Black seq read MB/s", r.mbps(), 3400.0, 0.10);
    let r = d
        .run(
            &Step::new("rand read", Op::RandRead, 4 * KIB, 16 * GIB)
                .qd(256)
                .runtime(0.5),
        )
        .unwrap();
    within("WD Black random read IOPS", r.iops(), 500e3, 0.10);
}

// CALIBRATION.md: WD Black "a fixed-size SLC cache, about 20 GB on the 1 TB model".
// Measured as METHODOLOGY.md reads a whole-drive fill: GB written before the first sustained
// drop. Tolerance 10 %. "Fixed": the same on a half-full drive (tolerance 10 %).
#[test]
fn wd_black_cache_is_about_20_gb_and_fixed() {
    let mut d = measured("wd-black-2018-1tb");
    let span = d.whole_span(128 * KIB);
    let r = d.run(&Step::fill("fill", span)).unwrap();
    within(
        "WD Black cache GB (empty drive)",
        cache_estimate_gb(&r),
        20.0,
        0.10,
    );
    // Phase 2: straight to TLC at TLC speed, no collapse (at least 40 % of cache speed on average).
    let first = r.per_gib[0].mbps;
    let after: Vec<f64> = r.per_gib[30..].iter().map(|p| p.mbps).collect();
    let mean_after = after.iter().sum::<f64>() / after.len() as f64;
    assert!(
        mean_after > 0.4 * first && mean_after < 0.7 * first,
        "post-cache mean {mean_after} vs {first}"
    );

    d.run(&Step::purge("purge")).unwrap();
    let half = fill_to(&mut d, 0.5, 120.0);
    let r = d.run(&Step::fill("fill", 64 * GIB).offset(half)).unwrap();
    within(
        "WD Black cache GB (half-full drive)",
        cache_estimate_gb(&r),
        20.0,
        0.10,
    );
}

// CALIBRATION.md, whole-drive fill: SN850 "about 281 GB" of cache at 128 KiB QD32, "a bit
// over 5 GB/s" in it, "never below 1 GB/s" after it (AT). Cache size: tolerance 10 %. The fill's
// three phases must emerge: cache speed; native speed with bursts back towards cache speed as
// background folding frees SLC superblocks; and, once native data leaves no free superblocks,
// a slower phase where forced folding shrinks the cache while the host writes.
#[test]
fn sn850_whole_drive_fill_has_its_three_phases() {
    let mut d = measured("wd-sn850-1tb");
    let span = d.whole_span(128 * KIB);
    let r = d.run(&Step::fill("fill", span)).unwrap();
    within(
        "SN850 cache GB (empty drive)",
        cache_estimate_gb(&r),
        281.0,
        0.10,
    );
    let first = r.per_gib[0].mbps;
    assert!(first > 4800.0, "cache speed {first}");
    let post = segments_after_cache(&r);
    // Phase 2, native with bursts: of the first 64 segments after the cache, at least 10 are
    // lifted 10 % above the lowest of them by bursts at cache speed.
    let phase2: Vec<f64> = post.iter().take(64).copied().collect();
    let lo = phase2.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        phase2.iter().filter(|&&m| m > 1.1 * lo).count() >= 10,
        "no bursts: {phase2:?}"
    );
    // Phase 3, shrinking cache: the last 128 segments are slower than phase 2 on average, and
    // folding ran as garbage collection picked SLC victims.
    let phase3: Vec<f64> = post.iter().rev().take(128).copied().collect();
    assert!(
        mean(&phase3) < 0.9 * mean(&phase2),
        "phase 3 {} vs phase 2 {}",
        mean(&phase3),
        mean(&phase2)
    );
    assert!(r.counters.fold_bytes > 100_000_000_000);
    d.check_invariants().unwrap();
}

// Lab report: all three drives lose sequential-write speed when nearly full and recover it
// after TRIM (CALIBRATION.md). Measured as the lab does (METHODOLOGY.md section 2): 1 minute of
// 128 KiB QD32 sequential writes in each state. 90 % filled is much slower than 10 % filled
// (the dynamic cache is bounded by the free superblocks), and trimming half of the LBA space
// gives most of the speed back.
#[test]
fn sn850_recovers_after_trim() {
    let (mut d, off) = ten_percent("wd-sn850-1tb");
    let minute = |d: &mut Drive, offset: u64| {
        let span = d.whole_span(128 * KIB) - offset;
        let step = Step::new("seq write", Op::Write, 128 * KIB, span)
            .offset(offset)
            .qd(32);
        d.run(&step.runtime(60.0).io_size(1 << 62).idle_after(60.0))
            .unwrap()
            .mbps()
    };
    let fresh = minute(&mut d, off);
    d.run(&Step::purge("purge")).unwrap();
    let full = fill_to(&mut d, 0.9, 600.0);
    let nearly_full = minute(&mut d, full - 64 * GIB);
    assert!(
        nearly_full < 0.75 * fresh,
        "90 % filled {nearly_full} vs 10 % filled {fresh}"
    );
    let half = d.whole_span(GIB) / 2 / GIB * GIB;
    d.run(
        &Step::new("trim half", Op::Trim, GIB, half)
            .offset(half)
            .qd(1)
            .idle_after(600.0),
    )
    .unwrap();
    let trimmed = minute(&mut d, 0);
    assert!(
        trimmed > 1.5 * nearly_full,
        "after TRIM {trimmed} vs 90 % filled {nearly_full} (10 %: {fresh})"
    );
}

// Samsung 980 PRO 1 TB whole-drive fill as TechPowerUp measured it (CAL:FILL, 1 MiB
// sequential from one thread): "about 1.5 GB/s [after the cache], rising as the drive
// fills; 1.9 GB/s averaged over the whole fill". Input, tolerance 10 %: the average (the
// TLC program time). Predictions: the first 50 GiB after the cache within 10 % of 1.5 GB/s,
// and the rise (the cache refills only after a pause, so folding drains it meanwhile).
#[test]
fn samsung_980pro_fill_rises_after_the_cache() {
    let mut d = measured("samsung-980pro-1tb");
    let span = d.whole_span(MIB);
    let r = d
        .run(&Step::new("fill", Op::Write, MIB, span).qd(1).per_gib())
        .unwrap();
    within(
        "980 PRO whole-fill MB/s (1 MiB QD1)",
        r.mbps(),
        1900.0,
        0.10,
    );
    let post = segments_after_cache(&r);
    let q = post.len() / 4;
    let (start, first, last) = (
        mean(&post[..50]),
        mean(&post[..q]),
        mean(&post[post.len() - q..]),
    );
    within(
        "980 PRO MB/s just after the cache (prediction)",
        start,
        1500.0,
        0.10,
    );
    assert!(
        last > 1.15 * first,
        "no rise: first quarter {first:.0}, last {last:.0}"
    );
}

// CALIBRATION.md, "More public facts". Spec-sheet figures are measured in the spec-sheet state
// (tests/common: a purged drive with 16 GiB written just before, the data still in the SLC
// cache): 128 KiB QD32 sequential, 4 KiB QD32 random, and the QD1 figures at QD1.

// Samsung 980 PRO 1 TB: "QD1: 22 k/60 k" (4 KiB random read / write at QD1, CAL:QD1), which
// read_latency_us and write_latency_us are calibrated to; and its cache "about 170 GB on
// PCIe 4.0" measured by AnandTech with 128 KiB QD32 writes, ssdlab's method (CAL:FILL),
// which max_cell_share is calibrated to. Tolerance 10 %.
#[test]
fn samsung_980pro_qd1_and_cache() {
    let mut d = measured("samsung-980pro-1tb");
    let span = spec_state(&mut d);
    let read = iops_4k(&mut d, Op::RandRead, span, 1);
    let write = iops_4k(&mut d, Op::RandWrite, span, 1);
    within("980 PRO QD1 4 KiB random read IOPS", read, 22e3, 0.10);
    within("980 PRO QD1 4 KiB random write IOPS", write, 60e3, 0.10);

    d.run(&Step::purge("purge")).unwrap();
    let span = d.whole_span(128 * KIB);
    let r = d.run(&Step::fill("fill", span)).unwrap();
    within(
        "980 PRO cache GB (empty drive, 128 KiB QD32)",
        cache_estimate_gb(&r),
        170.0,
        0.10,
    );
}

// Samsung 980 1 TB (DRAM-less, CAL:980NP): spec "3500/3000" MB/s, "500 k/480 k" IOPS, "QD1
// 17 k/54 k" (CAL:QD1). Inputs, tolerance 10 %: the random write (write_cmd_us), the QD1
// read and write (read_latency_us, write_latency_us); the sequential read is the PCIe 3.0
// link's ceiling. Prediction, asserted within 25 %: the sequential write, which follows the
// 2.5 GB/s measured in the cache of a fill (ssdlab's method) and lands about 15 % under the
// specified 3000 MB/s. Not asserted: the random read at QD32 (about 340 K against the
// specified 500 K: at QD32 the 16 dies are not all busy).
#[test]
fn samsung_980_spec_sheet() {
    let mut d = measured("samsung-980-1tb");
    let span = spec_state(&mut d);
    let r = d
        .run(&Step::new("seq read", Op::Read, 128 * KIB, span).qd(32))
        .unwrap();
    within("980 seq read MB/s", r.mbps(), 3500.0, 0.10);
    within(
        "980 QD1 4 KiB random read IOPS",
        iops_4k(&mut d, Op::RandRead, span, 1),
        17e3,
        0.10,
    );
    within(
        "980 QD1 4 KiB random write IOPS",
        iops_4k(&mut d, Op::RandWrite, span, 1),
        54e3,
        0.10,
    );
    within(
        "980 QD32 4 KiB random write IOPS",
        iops_4k(&mut d, Op::RandWrite, span, 32),
        480e3,
        0.10,
    );
    let r = d
        .run(
            &Step::new("seq write", Op::Write, 128 * KIB, 8 * GIB)
                .offset(span)
                .qd(32),
        )
        .unwrap();
    within("980 seq write MB/s (prediction)", r.mbps(), 3000.0, 0.25);
}

// Samsung 980 1 TB whole-drive fill (CAL:FILL, TPU): "about 160 GB" of cache at "2.5 GB/s",
// "about 500 MB/s" after it, "about 600 MB/s over the whole fill". Inputs, tolerance 10 %:
// the cache size (max_cell_share), the speed in it (SLC t_prog_us) and after it (TLC
// t_prog_us). Prediction, asserted within 25 %: the whole fill's mean, which the model puts
// about 16 % lower (the cache must be folded while the host writes the last quarter of the
// drive).
#[test]
fn samsung_980_whole_drive_fill() {
    let mut d = measured("samsung-980-1tb");
    let span = d.whole_span(128 * KIB);
    let r = d.run(&Step::fill("fill", span)).unwrap();
    within("980 cache GB", cache_estimate_gb(&r), 160.0, 0.10);
    within("980 MB/s in the cache", cache_speed_mbps(&r), 2500.0, 0.10);
    within(
        "980 MB/s after the cache",
        after_cache_mbps(&r),
        500.0,
        0.10,
    );
    within("980 whole-fill MB/s (prediction)", r.mbps(), 600.0, 0.25);
}

// Crucial P1 1 TB (CAL:P1): spec "2000/1700" MB/s, "170 k/240 k" IOPS. Inputs, tolerance
// 10 %: the sequential read (channel_mbps: 4 channels' ceiling just above it), the random
// write (write_cmd_us). Predictions that land within 10 %: the sequential write (the SLC
// program time follows the 1.6 GB/s of a fill) and the random read (eight dies reading SLC
// at QD32).
#[test]
fn crucial_p1_spec_sheet() {
    let mut d = measured("crucial-p1-1tb");
    let span = spec_state(&mut d);
    let r = d
        .run(&Step::new("seq read", Op::Read, 128 * KIB, span).qd(32))
        .unwrap();
    within("P1 seq read MB/s", r.mbps(), 2000.0, 0.10);
    within(
        "P1 QD32 4 KiB random read IOPS (prediction)",
        iops_4k(&mut d, Op::RandRead, span, 32),
        170e3,
        0.10,
    );
    within(
        "P1 QD32 4 KiB random write IOPS",
        iops_4k(&mut d, Op::RandWrite, span, 32),
        240e3,
        0.10,
    );
    let r = d
        .run(
            &Step::new("seq write", Op::Write, 128 * KIB, 8 * GIB)
                .offset(span)
                .qd(32),
        )
        .unwrap();
    within("P1 seq write MB/s (prediction)", r.mbps(), 1700.0, 0.10);
}

// Crucial P1 1 TB whole-drive fill (CAL:FILL, TPU): "about 140 GB" of cache at "1.6 GB/s",
// "about 150 MB/s straight to QLC" after it, "recovers after idle". Inputs, tolerance 10 %:
// the cache size (max_cell_share), the speeds in it (SLC t_prog_us) and after it (QLC
// t_prog_us). The recovery: 200 GB written (the cache full, then QLC), 30 minutes idle, and
// the next 8 GiB are written at cache speed again (at least 90 % of it), where without the
// idle they go to QLC.
#[test]
fn crucial_p1_whole_drive_fill_and_recovery() {
    let mut d = measured("crucial-p1-1tb");
    let span = d.whole_span(128 * KIB);
    let r = d.run(&Step::fill("fill", span)).unwrap();
    let cache_speed = cache_speed_mbps(&r);
    within("P1 cache GB", cache_estimate_gb(&r), 140.0, 0.10);
    within("P1 MB/s in the cache", cache_speed, 1600.0, 0.10);
    within("P1 MB/s after the cache", after_cache_mbps(&r), 150.0, 0.10);

    let eight = |d: &mut Drive, offset: u64, idle_s: f64| {
        d.run(
            &Step::new("8 GiB", Op::Write, 128 * KIB, 8 * GIB)
                .offset(offset)
                .qd(32)
                .idle_after(idle_s),
        )
        .unwrap()
        .mbps()
    };
    d.run(&Step::purge("purge")).unwrap();
    let past_cache = 200 * GIB;
    d.run(&Step::new("past the cache", Op::Write, 128 * KIB, past_cache).qd(32))
        .unwrap();
    let busy = eight(&mut d, past_cache, 1800.0);
    let rested = eight(&mut d, past_cache + 8 * GIB, 0.0);
    eprintln!(
        "P1 8 GiB past the cache: {busy:.0} MB/s at once, {rested:.0} MB/s after 30 minutes idle"
    );
    assert!(
        busy < 0.2 * cache_speed && rested > 0.9 * cache_speed,
        "8 GiB past the cache: {busy:.0} MB/s at once, {rested:.0} MB/s after 30 minutes idle (cache {cache_speed:.0})"
    );
}
