//! Retention and error correction: old data on a worn drive reads slower, by the tiers
//! its pages need; a powered-off step at a higher temperature equals a longer one at a
//! lower temperature by the Arrhenius factor; fresh data on a fresh drive decodes at once.
//!
//! The drive is the 16 GB test preset (tests/data/small-tlc.toml), whose [drive.errors]
//! and [drive.ecc] are the TLC estimates of the built-in presets.

use crate::common::{small_tlc_path, KIB};
use ssdsim::wear::age::{Age, AgeUnit};
use ssdsim::wear::retention::PowerOff;
use ssdsim::{Drive, DriveConfig, Op, Step, StepResult};

const HOUR: f64 = 3600.0;
const YEAR: f64 = 365.25 * 24.0 * HOUR;

fn small() -> DriveConfig {
    let p = small_tlc_path();
    DriveConfig::from_file(&p).unwrap()
}

/// A drive aged to `pe` P/E cycles and filled (sequential, then idle so the cache is folded).
fn filled(pe: f64) -> Drive {
    let mut d = Drive::new(small()).unwrap();
    if pe > 0.0 {
        d.run(&Step::aged("age", Age::new(pe, AgeUnit::Pe)))
            .unwrap();
    }
    let span = d.whole_span(128 * KIB);
    d.run(
        &Step::new("fill", Op::Write, 128 * KIB, span)
            .qd(32)
            .idle_after(60.0),
    )
    .unwrap();
    d
}

fn off(d: &mut Drive, seconds: f64, celsius: f64) {
    d.run(&Step::off(
        "off",
        PowerOff {
            seconds,
            temperature_c: celsius,
        },
    ))
    .unwrap();
}

fn read_back(d: &mut Drive) -> StepResult {
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("read", Op::Read, 128 * KIB, span).qd(32))
        .unwrap()
}

fn qd1_reads(d: &mut Drive) -> StepResult {
    let span = d.whole_span(4 * KIB);
    d.run(&Step::new("qd1", Op::RandRead, 4 * KIB, span).io_size(4000 * 4 * KIB))
        .unwrap()
}

#[test]
fn fresh_data_on_a_fresh_drive_decodes_at_once() {
    let mut d = filled(0.0);
    let r = read_back(&mut d);
    let c = r.counters;
    assert_eq!(
        (c.read_retries, c.soft_decodes, c.uncorrectable_reads),
        (0, 0, 0)
    );
}

#[test]
fn old_data_on_a_worn_drive_reads_slower_by_the_tiers_it_needs() {
    let mut young = filled(0.0);
    let mut worn = filled(3000.0);
    let fresh = [read_back(&mut young), read_back(&mut worn)];
    for d in [&mut young, &mut worn] {
        off(d, YEAR, 30.0);
    }
    let old = [read_back(&mut young), read_back(&mut worn)];
    let qd1 = [qd1_reads(&mut young), qd1_reads(&mut worn)];
    for r in fresh.iter().chain(&old).chain(&qd1) {
        assert_eq!(r.counters.uncorrectable_reads, 0, "{:?}", r.counters);
    }
    // a young drive's year-old data still decodes at once; the worn one's needs retries
    assert_eq!(old[0].counters.read_retries, 0);
    let pages = old[1].read.as_ref().unwrap().bytes / (32 * KIB);
    let retries_per_page = old[1].counters.read_retries as f64 / pages as f64;
    assert!(
        retries_per_page > 3.0,
        "{retries_per_page} retries per page"
    );
    assert!(
        old[1].mbps() < 0.8 * fresh[1].mbps(),
        "{} vs {} MB/s",
        old[1].mbps(),
        fresh[1].mbps()
    );
    // at QD1 each read waits for its own retries: a latency the young drive never shows
    let mean_us = |r: &StepResult| r.read.as_ref().unwrap().latency.mean_ns / 1e3;
    assert!(
        mean_us(&qd1[1]) > 2.0 * mean_us(&qd1[0]),
        "{} vs {} µs",
        mean_us(&qd1[1]),
        mean_us(&qd1[0])
    );
}

#[test]
fn a_hotter_shelf_equals_a_longer_one_by_the_arrhenius_factor() {
    let mut hot = filled(3000.0);
    let mut long = filled(3000.0);
    // 1.1 eV from 30 °C: 70 °C is about 190 times, 40 °C about 3.8 times faster
    let factor = |c: f64| (1.1 / 8.617_333_262e-5 * (1.0 / 303.15 - 1.0 / (c + 273.15))).exp();
    off(&mut hot, 100.0 * HOUR, 70.0);
    off(&mut long, 100.0 * HOUR * factor(70.0) / factor(40.0), 40.0);
    let (a, b) = (read_back(&mut hot), read_back(&mut long));
    assert!(a.counters.read_retries > 0);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.mbps(), b.mbps());
}

#[test]
fn idle_time_refreshes_old_data_and_its_reads_are_fast_again() {
    let mut d = filled(3000.0);
    off(&mut d, YEAR, 30.0);
    let old = read_back(&mut d);
    // an hour of powered idle: the drive rewrites what is older than its refresh age
    let idle = Step::new("idle", Op::Read, 4 * KIB, 4 * KIB).idle_after(3600.0);
    let refreshed = d.run(&idle).unwrap().counters;
    let superblocks_of_data =
        d.user_bytes() / (d.config().geometry.pages_per_block as u64 * 32 * 16 * KIB * 2);
    assert!(
        refreshed.refreshed_superblocks >= superblocks_of_data,
        "{refreshed:?}"
    );
    // the data is written again (all but the superblock still open for writes), and read
    // with the retries it needs
    let rewritten = refreshed.nand_write_bytes as f64 / refreshed.mapped_bytes as f64;
    assert!(
        rewritten > 0.9,
        "the refresh writes the data again: {refreshed:?}"
    );
    assert!(refreshed.read_retries > 0);
    let after = read_back(&mut d);
    // (the superblock still open for writes keeps its old data, and its retries)
    assert!(
        after.counters.read_retries * 20 < old.counters.read_retries,
        "{:?}",
        after.counters
    );
    assert!(
        after.mbps() > 5.0 * old.mbps(),
        "{} vs {} MB/s",
        after.mbps(),
        old.mbps()
    );
}

#[test]
fn a_block_read_often_is_moved_before_its_disturbed_errors_grow() {
    let mut d = filled(0.0);
    // the first MiB lies on every die of one superblock: 4 M reads of it are 125 000 of
    // each of its blocks, past the preset's 1e5 (read reclaim); its data moves in the idle
    let first = Step::new("hot", Op::RandRead, 4 * KIB, 1 << 20)
        .qd(8)
        .io_size(4_000_000 * 4 * KIB);
    let r = d.run(&first.idle_after(10.0)).unwrap();
    assert!(r.counters.refreshed_superblocks >= 1, "{:?}", r.counters);
    assert_eq!(r.counters.uncorrectable_reads, 0);
}
