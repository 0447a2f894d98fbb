//! Mechanisms of issue 10, each shown emerging from the model (nothing scripted):
//! the reclaim order, a dynamic cache bounded by physical space (the third phase of a
//! fill appears only when free superblocks run short), background folding that gives
//! bursts back to cache speed, program/erase suspend for reads, and TRIM without a
//! stall of deferred erases. On the 16 GB test preset (tests/data/small-tlc.toml: the
//! SN850's NAND and dynamic cache at a small capacity) and variants of it.
mod common;
use common::*;
use ssdsim::{Drive, DriveConfig, Op, Step, StepResult};

fn small_tlc_text() -> String {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/small-tlc.toml");
    std::fs::read_to_string(p).unwrap()
}

/// The test preset with `(from, to)` replacements applied to its text.
fn variant(changes: &[(&str, &str)]) -> Drive {
    let mut text = small_tlc_text();
    for (from, to) in changes {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    Drive::new(DriveConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// The test preset at 70 GB of raw NAND in 116 superblocks of 604 MB (201 MB in SLC mode),
/// `user_gb` of it user capacity: a fill long enough for its phases to show in 1 GiB segments.
fn seventy_gb(user_gb: &str, more: &[(&str, &str)]) -> Drive {
    let mut changes = vec![
        ("user_capacity_gb = 16.0", user_gb),
        ("blocks_per_plane = 24", "blocks_per_plane = 116"),
        ("pages_per_block = 1152", "pages_per_block = 576"),
    ];
    changes.extend_from_slice(more);
    variant(&changes)
}

fn fill(d: &mut Drive) -> StepResult {
    let span = d.whole_span(128 * KIB);
    d.run(&Step::fill("fill", span)).unwrap()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Throughput of the fill's segments after the cache (the first sustained drop).
fn after_cache(r: &StepResult) -> Vec<f64> {
    let first = r.per_gib[0].mbps;
    r.per_gib
        .iter()
        .skip_while(|p| p.mbps > 0.7 * first)
        .map(|p| p.mbps)
        .collect()
}

// B2: the third phase (forced folding shrinks the cache while the host writes) appears when
// native data leaves no free superblocks; with plenty of spare capacity the same cache
// policy never runs short, and the end of the fill is as fast as the native phase before it.
#[test]
fn the_third_phase_appears_only_when_physical_space_runs_short() {
    // 10 % and 100 % of spare capacity over the user capacity, a cache of 30 % of the
    // superblocks (34 of 116): with 35 GB of user data, its 58 native superblocks and the
    // cache's 34 always leave some free; with 63.7 GB (105 native superblocks) they cannot.
    let cache = [("max_cell_share = 0.767", "max_cell_share = 0.3")];
    let mut tight = seventy_gb("user_capacity_gb = 63.7", &cache);
    let mut roomy = seventy_gb("user_capacity_gb = 35.0", &cache);
    let (t, r) = (fill(&mut tight), fill(&mut roomy));
    let (t_post, r_post) = (after_cache(&t), after_cache(&r));
    let quarter = |v: &[f64], first: bool| {
        let q = (v.len() / 4).max(1);
        mean(if first { &v[..q] } else { &v[v.len() - q..] })
    };
    let (t_mid, t_end) = (quarter(&t_post, true), quarter(&t_post, false));
    let (r_mid, r_end) = (quarter(&r_post, true), quarter(&r_post, false));
    eprintln!(
        "tight: native {t_mid:.0} MB/s, end {t_end:.0}; roomy: native {r_mid:.0}, end {r_end:.0}"
    );
    assert!(
        t_end < 0.9 * t_mid,
        "tight spare: end {t_end:.0} vs native phase {t_mid:.0}"
    );
    assert!(
        r_end > 0.95 * r_mid,
        "roomy spare: end {r_end:.0} vs native phase {r_mid:.0}"
    );
    assert!(t.counters.fold_bytes > r.counters.fold_bytes);
}

// B2: the dynamic cache is bounded by the superblocks native data leaves free: a drive half
// full of data has a smaller cache than an empty one.
#[test]
fn the_cache_shrinks_as_native_data_fills_the_drive() {
    let mut d = variant(&[]);
    let empty = d.counters().slc_limit_bytes;
    fill_to(&mut d, 0.5, 600.0); // idle folds the cache: the data is native
    let half = d.counters().slc_limit_bytes;
    eprintln!(
        "cache limit: {:.1} GB empty, {:.1} GB half full",
        empty as f64 / 1e9,
        half as f64 / 1e9
    );
    assert!(half < empty * 3 / 4, "half full {half} vs empty {empty}");
}

// B3: background folding frees whole SLC superblocks while the host writes natively, and
// each one freed gives the host a burst at cache speed. After the cache has filled, 2 GiB
// more of sequential writes in 128 MiB segments: some segments run above what native
// programs alone can reach (32 dies x 32 KiB / 600 us = 1748 MB/s); without background
// folding none does.
#[test]
fn background_folding_gives_bursts_back_to_cache_speed() {
    const NATIVE_CEILING_MBPS: f64 = 32.0 * 32768.0 / 600e-6 / 1e6;
    let bursts = |ratio: &str| {
        let mut d = seventy_gb(
            "user_capacity_gb = 63.7",
            &[("busy_fold_ratio = 0.75", ratio)],
        );
        let past_cache = 22 * GIB; // the cache holds 17.9 GB
        d.run(&Step::new("fill", Op::Write, 128 * KIB, past_cache).qd(32))
            .unwrap();
        let r = d
            .run(&Step::fill("more", 2 * GIB).offset(past_cache))
            .unwrap();
        let segments: Vec<f64> = r.per_gib.iter().map(|p| p.mbps).collect();
        eprintln!("{ratio}: {segments:.0?}");
        segments
            .iter()
            .filter(|&&m| m > 1.1 * NATIVE_CEILING_MBPS)
            .count()
    };
    let (with, without) = (
        bursts("busy_fold_ratio = 0.75"),
        bursts("busy_fold_ratio = 0.0"),
    );
    assert!(with >= 2, "{with} segments with bursts");
    assert_eq!(without, 0);
}

/// QD4 random 4 KiB reads mixed 50/50 with writes on a drive half full of data: the reads'
/// 99th percentile latency, µs.
fn mixed_read_p99_us(suspend: bool) -> f64 {
    let with = if suspend {
        "channel_mbps = 800.0\nsuspend_us = 25.0"
    } else {
        "channel_mbps = 800.0"
    };
    let mut d = variant(&[("channel_mbps = 800.0", with)]);
    let half = fill_to(&mut d, 0.5, 600.0);
    let r = d
        .run(
            &Step::new("mixed", Op::RandRw, 4 * KIB, half)
                .mix(50)
                .qd(4)
                .runtime(2.0),
        )
        .unwrap();
    r.read.unwrap().latency.p99_ns as f64 / 1e3
}

// B5: with program/erase suspend a read no longer waits for a whole program on its die.
#[test]
fn suspend_keeps_reads_from_waiting_behind_programs() {
    let (without, with) = (mixed_read_p99_us(false), mixed_read_p99_us(true));
    eprintln!("mixed QD4 read p99: {without:.0} us without suspend, {with:.0} us with");
    assert!(
        with < 0.5 * without,
        "with suspend {with:.0} us, without {without:.0} us"
    );
}

// B6: a TRIM frees superblocks without erasing them at once; they are erased when next
// needed or in idle time, so writes right after a large TRIM do not stall behind hundreds
// of erases (no write waits longer than a few erases).
#[test]
fn writes_after_a_large_trim_do_not_stall() {
    let mut d = variant(&[]);
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("fill", Op::Write, 128 * KIB, span).qd(32))
        .unwrap();
    let trim = d
        .run(&Step::new("trim", Op::Trim, 64 * MIB, span / (64 * MIB) * (64 * MIB)).qd(1))
        .unwrap();
    assert!(trim.counters.free_superblocks > 12, "{:?}", trim.counters);
    let w = d
        .run(&Step::new("write", Op::Write, 128 * KIB, 4 * GIB).qd(32))
        .unwrap();
    let max_ms = w.write.unwrap().latency.max_ns as f64 / 1e6;
    eprintln!("longest write after trimming the drive: {max_ms:.2} ms");
    assert!(max_ms < 4.0 * 3.5, "a write waited {max_ms:.1} ms");
    d.check_invariants().unwrap();
}
