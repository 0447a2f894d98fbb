//! Ageing: a worn drive as a state (`age`) agrees with one worn by simulated writes, and
//! a drive whose spare runs out goes read-only while its data stays readable.
//!
//! The drive is a small TLC drive (160 superblocks of 25 MB, 2 GB for the user) rated
//! for 20 P/E cycles, so that it wears out within a test; its SLC cache is retired
//! beyond 10 cycles, well before its blocks wear out (from about 19).

use crate::common::{small_tlc_path, KIB};
use ssdsim::health::SmartLog;
use ssdsim::wear::age::{Age, AgeUnit};
use ssdsim::{Drive, DriveConfig, Op, SimError, Step, StepResult};

fn worn_out_preset() -> DriveConfig {
    let path = small_tlc_path();
    let mut doc: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    let drive = doc["drive"].as_table_mut().unwrap();
    drive.insert("user_capacity_gb".into(), 2.0.into());
    let geometry = drive["geometry"].as_table_mut().unwrap();
    geometry.insert("blocks_per_plane".into(), 160.into());
    geometry.insert("pages_per_block".into(), 24.into());
    let wear = drive["wear"].as_table_mut().unwrap();
    wear.insert("rated_pe_cycles".into(), 20.into());
    wear.insert("slc_retire_pe_cycles".into(), 10.into());
    wear.insert("endurance_median".into(), 1.5.into());
    wear.insert("endurance_sigma".into(), 0.2.into());
    wear.insert("static_spread_pe".into(), 2.into());
    wear.remove("rated_tbw");

    DriveConfig::from_toml_str(&toml::to_string(&doc).unwrap()).unwrap()
}

fn whole(d: &Drive, op: Op) -> Step {
    Step::new("pass", op, 128 * KIB, d.whole_span(128 * KIB)).qd(32)
}

fn mbps(d: &mut Drive, op: Op) -> f64 {
    d.run(&whole(d, op)).unwrap().mbps()
}

/// Wear `written` by `workload` until ten superblocks are retired, then age a fresh
/// drive to its mean wear with the `age` step: wear, retirements, health log and the
/// speed of the next fill and read pass agree. Returns the aged drive's fill.
fn agree(workload: impl Fn(&Drive) -> Step) -> StepResult {
    let cfg = worn_out_preset();
    let mut written = Drive::new(cfg.clone()).unwrap();
    written.run(&whole(&written, Op::Write)).unwrap();
    while written.wear().bad_superblocks < 10 {
        written.run(&workload(&written)).unwrap();
    }
    written.run(&Step::purge("purge")).unwrap();
    let mut aged = Drive::new(cfg).unwrap();
    let mean = written.wear().mean_pe;
    let step = Step::aged("age", Age::new(mean, AgeUnit::Pe));
    aged.run(&step).unwrap();
    aged.run(&Step::purge("purge")).unwrap();

    let (a, b) = (written.wear(), aged.wear());
    assert!(
        (a.mean_pe - b.mean_pe).abs() < 0.05 * a.mean_pe,
        "{a:?}\n{b:?}"
    );
    // the age step levels wear as evenly as levelling can: within the written drive's spread
    assert!(
        b.max_pe - b.min_pe <= a.max_pe - a.min_pe + 0.01,
        "{a:?}\n{b:?}"
    );
    // Which superblocks take the last cycles before the mean is reached is chance: at a
    // mean wear where the weakest superblocks die, a few more or fewer of them do.
    let tolerance = 4 + a.bad_superblocks / 2;
    assert!(
        a.bad_superblocks.abs_diff(b.bad_superblocks) <= tolerance,
        "{a:?}\n{b:?}"
    );
    let [la, lb] = [&written, &aged].map(SmartLog::of);
    assert!(
        la.percent_used.abs_diff(lb.percent_used) <= 3,
        "{la:?}\n{lb:?}"
    );
    let spare_tolerance = (100 * tolerance / 73) as u8 + 1; // of 73 spare superblocks
    assert!(
        la.avail_spare.abs_diff(lb.avail_spare) <= spare_tolerance,
        "{la:?}\n{lb:?}"
    );
    // read-only alike (the spare bit may differ at its threshold, within the tolerance)
    assert_eq!(
        la.critical_warning & 8,
        lb.critical_warning & 8,
        "{a:?}\n{b:?}"
    );

    let fills = [&mut written, &mut aged].map(|d| d.run(&whole(d, Op::Write)).unwrap());
    let reads = [&mut written, &mut aged].map(|d| mbps(d, Op::Read));
    let close = |x: f64, y: f64| (x / y - 1.0).abs() < 0.05;
    assert!(
        close(fills[0].mbps(), fills[1].mbps()),
        "fills {} vs {} MB/s",
        fills[0].mbps(),
        fills[1].mbps()
    );
    assert!(close(reads[0], reads[1]), "reads {reads:?} MB/s");
    // worn past slc_retire_pe_cycles: neither drive has a cache left
    assert!(fills.iter().all(|f| f.counters.slc_limit_bytes == 0));
    fills.into_iter().nth(1).unwrap()
}

#[test]
fn ageing_by_the_age_step_agrees_with_ageing_by_writes() {
    let sequential = agree(|d| whole(d, Op::Write).idle_after(2.0));
    let random = agree(|d| {
        Step::new("random", Op::RandWrite, 16 * KIB, d.whole_span(16 * KIB))
            .qd(32)
            .io_size(d.user_bytes() / 2 / (16 * KIB) * (16 * KIB))
            .idle_after(2.0)
    });
    // The young drive fills through its cache, and faster; the aged ones have none.
    let mut young = Drive::new(worn_out_preset()).unwrap();
    let fresh = young.run(&whole(&young, Op::Write)).unwrap();
    assert!(fresh.counters.fold_bytes > 0);
    for aged in [sequential, random] {
        assert_eq!(aged.counters.fold_bytes + aged.counters.slc_used_bytes, 0);
        assert!(
            fresh.mbps() > 1.03 * aged.mbps(),
            "{} vs {}",
            fresh.mbps(),
            aged.mbps()
        );
    }
}

#[test]
fn a_drive_whose_spare_runs_out_goes_read_only_and_keeps_its_data() {
    let mut d = Drive::new(worn_out_preset()).unwrap();
    d.run(&whole(&d, Op::Write)).unwrap();
    // its free superblocks worn out, those holding data one erase from it
    let near_end = Age::new(100.0, AgeUnit::Percent);
    d.run(&Step::aged("age", near_end)).unwrap();
    let random = Step::new("random", Op::RandWrite, 16 * KIB, d.whole_span(16 * KIB))
        .qd(32)
        .io_size(20 * d.user_bytes());
    match d.run(&random) {
        Err(SimError::DriveFailed(e)) => assert!(e.contains("read-only"), "{e}"),
        other => panic!("the worn-out drive took the writes: {other:?}"),
    }
    let log = SmartLog::of(&d);
    assert_eq!(log.critical_warning & (1 | 8), 1 | 8, "{log:?}");
    assert_eq!(log.avail_spare, 0);
    // its superblocks died near 19 of the 20 rated cycles (a mean over the good and the retired)
    assert!(log.percent_used >= 85, "{log:?}");
    d.check_invariants().unwrap();
    // reads go on, and find every block written (none reads as never written)
    let read = d.run(&whole(&d, Op::Read)).unwrap();
    assert_eq!(read.counters.unwritten_read_bytes, 0);
    assert_eq!(read.read.unwrap().bytes, d.whole_span(128 * KIB));
    assert!(matches!(
        d.run(&whole(&d, Op::Write)),
        Err(SimError::DriveFailed(_))
    ));
}

#[test]
fn ageing_stops_where_the_spare_runs_out_as_writes_would() {
    let age = |value| Step::aged("age", Age::new(value, AgeUnit::Pe));
    let mut d = Drive::new(worn_out_preset()).unwrap();
    let far = d.run(&age(1000.0)).unwrap();
    assert!(
        far.notes[0].contains("read-only: its spare ran out short of the 1000"),
        "{:?}",
        far.notes
    );
    let worn = d.wear();
    assert!(worn.read_only && worn.mean_pe < 30.0, "{worn:?}");
    // half a cycle short of where it stopped, a drive aged alike still takes writes
    let mut short = Drive::new(worn_out_preset()).unwrap();
    let stopped = far.notes[0].split("to ").nth(1).unwrap();
    let stopped: f64 = stopped.split(' ').next().unwrap().parse().unwrap();
    short.run(&age(stopped - 1.0)).unwrap();
    assert!(!short.wear().read_only, "{:?}", short.wear());
    short.run(&whole(&short, Op::Write)).unwrap();
    // and ageing a read-only drive again changes nothing
    d.run(&age(2000.0)).unwrap();
    assert_eq!(d.wear(), worn);
}

#[test]
fn ages_the_drive_cannot_reach_are_refused_with_what_it_can() {
    let mut d = Drive::new(worn_out_preset()).unwrap();
    let refused =
        |d: &mut Drive, value, unit| match d.run(&Step::aged("age", Age::new(value, unit))) {
            Err(SimError::Step(e)) => e,
            other => panic!("{other:?}"),
        };
    let e = refused(&mut d, 10.0, AgeUnit::Tbw);
    assert!(e.contains("rates no TBW"), "{e}");
    let e = refused(&mut d, -1.0, AgeUnit::Percent);
    assert!(e.contains("0 or more"), "{e}");
    let below_one = Age {
        write_amplification: Some(0.5),
        ..Age::new(5.0, AgeUnit::Pe)
    };
    match d.run(&Step::aged("age", below_one)) {
        Err(SimError::Step(e)) => assert!(e.contains("not 1 to 100"), "{e}"),
        other => panic!("{other:?}"),
    }
    // and a drive aged once is not made younger by a lower age
    d.run(&Step::aged("age", Age::new(50.0, AgeUnit::Percent)))
        .unwrap();
    let before = d.wear();
    d.run(&Step::aged("age", Age::new(5.0, AgeUnit::Pe)))
        .unwrap();
    assert_eq!(d.wear(), before);
}

#[test]
fn an_age_at_a_measured_write_amplification_counts_the_host_writes_by_it() {
    let host_and_nand = |wa| {
        let mut d = Drive::new(worn_out_preset()).unwrap();
        let age = Age {
            write_amplification: wa,
            ..Age::new(8.0, AgeUnit::Pe)
        };
        let c = d.run(&Step::aged("age", age)).unwrap().counters;
        (c.host_write_bytes as f64, c.nand_write_bytes as f64)
    };
    // no rated TBW: the host wrote all the NAND did; at 2.5, two fifths of it
    let (host, nand) = host_and_nand(None);
    assert!(nand > 0.0 && host == nand, "{host} {nand}");
    let (host, nand_again) = host_and_nand(Some(2.5));
    assert_eq!(nand_again, nand);
    assert!((host * 2.5 / nand - 1.0).abs() < 1e-6, "{host} {nand}");
}
