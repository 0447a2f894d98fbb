//! The simulator's inputs at and beyond their bounds: every shipped preset
//! loads, absurd steps are refused by name, and no step runs for ever.
use crate::common::*;
use ssdsim::{Drive, DriveConfig, Op, Step};
use std::path::Path;

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn every_shipped_preset_and_the_test_presets_load() {
    let drives = std::fs::read_dir(repository().join("drives")).unwrap();
    let mut paths: Vec<_> = drives
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    assert!(paths.len() >= 5, "{paths:?}");
    paths.push(repository().join("tests/data/small-tlc.toml"));
    for p in paths {
        let cfg = DriveConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"));
        Drive::new(cfg).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    for cache in [NO_CACHE, SLC_KEEP, SLC_FOLD] {
        Drive::new(tiny(cache)).unwrap();
    }
}

#[test]
fn absurd_steps_are_refused_by_drive_run_and_the_drive_still_works() {
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    let span = d.whole_span(4 * KIB);
    let absurd = [
        Step::new("huge bs", Op::Write, u64::MAX, span),
        Step::new("huge span", Op::Write, 4 * KIB, u64::MAX / 512 * 512),
        Step::new("huge io", Op::Write, 4 * KIB, span).io_size(u64::MAX),
        Step::new("no depth", Op::Write, 4 * KIB, span).qd(0),
        Step::new("no time", Op::Write, 4 * KIB, span).runtime(0.0),
        Step::new("no rate", Op::Write, 4 * KIB, span).rate(0),
        Step::new("forever", Op::Write, 4 * KIB, span).idle_after(f64::INFINITY),
    ];
    for step in absurd {
        let e = d.run(&step).unwrap_err().to_string();
        assert!(e.starts_with(&format!("step {}: ", step.label)), "{e}");
    }
    let r = d
        .run(&Step::new("w", Op::RandWrite, 4 * KIB, span).io_size(MIB))
        .unwrap();
    assert_eq!(r.write.unwrap().bytes, MIB);
}

#[test]
fn a_step_that_would_run_for_more_than_a_million_seconds_stops_with_an_error() {
    // One command a second with no runtime: the byte limit would take 13 days.
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    let span = d.whole_span(4 * KIB);
    let slow = Step::new("slow", Op::RandRead, 4 * KIB, span)
        .io_size(1_100_000 * 4 * KIB)
        .rate(1);
    let e = d.run(&slow).unwrap_err().to_string();
    assert!(
        e.starts_with("step slow: still running after 1000000 s of drive time"),
        "{e}"
    );
    assert!(d.now_s() > 999_999.0, "{}", d.now_s());
    let r = d
        .run(&Step::new("next", Op::RandRead, 4 * KIB, span).io_size(MIB))
        .unwrap();
    assert!(r.start_s > 999_999.0);
}
