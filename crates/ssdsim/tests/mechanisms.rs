//! Mechanisms of issue 10, each shown emerging from the model (nothing scripted):
//! the reclaim order, a dynamic cache bounded by physical space (the third phase of a
//! fill appears only when free superblocks run short), background folding that gives
//! bursts back to cache speed, program/erase suspend for reads, and TRIM without a
//! stall of deferred erases. On the 16 GB test preset (tests/data/small-tlc.toml: the
//! SN850's NAND and dynamic cache at a small capacity) and variants of it.
use crate::common::*;
use ssdsim::{Drive, DriveConfig, Op, Step, StepResult};

fn small_tlc_text() -> String {
    let p = small_tlc_path();
    std::fs::read_to_string(p).unwrap()
}

/// The test preset's text with `(from, to)` replacements applied.
fn variant_text(changes: &[(&str, &str)]) -> String {
    let mut text = small_tlc_text();
    for (from, to) in changes {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    text
}

fn drive(text: &str) -> Drive {
    Drive::new(DriveConfig::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// The test preset with `(from, to)` replacements applied to its text.
fn variant(changes: &[(&str, &str)]) -> Drive {
    drive(&variant_text(changes))
}

/// The test preset at 70 GB of raw NAND in 116 superblocks of 604 MB (201 MB in SLC mode),
/// `user_gb` of it user capacity: a fill long enough for its phases to show in 1 GiB segments.
fn seventy_gb_text(user_gb: &str, more: &[(&str, &str)]) -> String {
    let mut changes = vec![
        ("user_capacity_gb = 16.0", user_gb),
        ("blocks_per_plane = 24", "blocks_per_plane = 116"),
        ("pages_per_block = 1152", "pages_per_block = 576"),
    ];
    changes.extend_from_slice(more);
    variant_text(&changes)
}

fn seventy_gb(user_gb: &str, more: &[(&str, &str)]) -> Drive {
    drive(&seventy_gb_text(user_gb, more))
}

/// The 70 GB test drive with 63.7 GB of user capacity (too little spare for a whole fill
/// to leave the cache alone), its `busy_fold_ratio = 0.75` line replaced by `folding`.
fn tight(folding: &str) -> Drive {
    seventy_gb(
        "user_capacity_gb = 63.7",
        &[("busy_fold_ratio = 0.75", folding)],
    )
}

/// Write `d` sequentially past its cache (it holds 17.9 GB); returns the bytes written.
fn past_the_cache(d: &mut Drive) -> u64 {
    let written = 22 * GIB;
    d.run(&Step::new("fill", Op::Write, 128 * KIB, written).qd(32))
        .unwrap();
    written
}

fn fill(d: &mut Drive) -> StepResult {
    let span = d.whole_span(128 * KIB);
    d.run(&Step::fill("fill", span)).unwrap()
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
    let (t_post, r_post) = (segments_after_cache(&t), segments_after_cache(&r));
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

/// What native programs alone can reach on the 70 GB test preset: 32 dies x 32 KiB / 600 us.
const NATIVE_CEILING_MBPS: f64 = 32.0 * 32768.0 / 600e-6 / 1e6;

// B2: near full the speed creeps back up as less cache is left to fold. Once native data
// squeezes the cache, the host writes natively until it next pauses while folding drains the
// cache ahead of the shrinking bound: the less cache is left, the less folding shares the
// dies with the host. Folding only as fast as the bound shrinks (half an SLC unit per host
// unit, as many TLC units freed as written) leaves nothing to drain: the end stays slow.
#[test]
fn the_speed_creeps_back_up_near_full_as_the_cache_drains() {
    let creep = |ratio: &str| {
        let r = fill(&mut tight(ratio));
        let post = segments_after_cache(&r);
        let slowest = post.windows(4).map(mean).fold(f64::MAX, f64::min);
        let end = mean(&post[post.len() - 4..]);
        eprintln!("{ratio}: slowest {slowest:.0} MB/s, last 4 GiB {end:.0}: {post:.0?}");
        end / slowest
    };
    let (draining, keeping_pace) = (
        creep("busy_fold_ratio = 0.75"),
        creep("busy_fold_ratio = 0.5"),
    );
    assert!(draining > 1.15, "the end is {draining:.2}x the slowest");
    assert!(
        keeping_pace < 1.05,
        "the end is {keeping_pace:.2}x the slowest"
    );
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
    let bursts = |ratio: &str| {
        let mut d = tight(ratio);
        let past_cache = past_the_cache(&mut d);
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

// B3: a cache that refills only after a pause (`refill = "idle"`) gives no bursts while
// the host keeps writing, though folding frees its superblocks; after a pause the host
// writes at cache speed again.
#[test]
fn a_cache_that_refills_when_idle_gives_no_bursts_until_a_pause() {
    let mut d = tight("busy_fold_ratio = 0.75\nrefill = \"idle\"");
    let past_cache = past_the_cache(&mut d);
    let busy = d
        .run(
            &Step::fill("more", 2 * GIB)
                .offset(past_cache)
                .idle_after(60.0),
        )
        .unwrap();
    let after_pause = d
        .run(&Step::fill("after a pause", GIB).offset(past_cache + 2 * GIB))
        .unwrap();
    let segments: Vec<f64> = busy.per_gib.iter().map(|p| p.mbps).collect();
    eprintln!(
        "busy {segments:.0?}, after a pause {:.0}",
        after_pause.mbps()
    );
    assert!(busy.counters.fold_bytes > 0, "folding ran");
    assert!(segments.iter().all(|&m| m < 1.05 * NATIVE_CEILING_MBPS));
    assert!(after_pause.mbps() > 2.0 * NATIVE_CEILING_MBPS);
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

/// A latency's mean, tail and maximum, for a test's messages.
fn show(l: &ssdsim::Latency) -> String {
    format!(
        "mean {:.1} p99 {:.1} p99.99 {:.1} max {:.1} us",
        l.mean_ns / 1e3,
        l.p99_ns as f64 / 1e3,
        l.p99_99_ns as f64 / 1e3,
        l.max_ns as f64 / 1e3
    )
}

/// The latency summary of QD1 4 KiB random writes for 2 s on the test preset filled
/// whole, with `extra` appended to the preset (e.g. a `[drive.firmware]` section).
fn qd1_random_writes(extra: &str) -> ssdsim::Latency {
    let text = small_tlc_text() + extra;
    let mut d = Drive::new(DriveConfig::from_toml_str(&text).unwrap()).unwrap();
    fill(&mut d);
    let span = d.whole_span(4 * KIB);
    let r = d
        .run(&Step::new("qd1", Op::RandWrite, 4 * KIB, span).runtime(2.0))
        .unwrap();
    r.write.unwrap().latency
}

const FIRMWARE: &str = "
[drive.firmware]
journal_entry_bytes = 8
checkpoint_mib = 1.0
checkpoint_us = 2000.0
relocate_unit_ns = 300.0
deallocate_share = 0.0140056
";

// B4: firmware work in the host's path (garbage collection's steps in the write path,
// checkpoints of the mapping table) gives QD1 writes on a full drive a latency
// distribution: a 99th percentile above the mean and a millisecond maximum. Without it,
// nearly every write completes as soon as its data is buffered.
#[test]
fn firmware_work_gives_write_latency_tails() {
    let plain = qd1_random_writes("");
    let busy = qd1_random_writes(FIRMWARE);
    eprintln!(
        "QD1 random writes, full drive: without firmware work {}; with {}",
        show(&plain),
        show(&busy)
    );
    assert!(
        (plain.p99_ns as f64) < 1.05 * plain.mean_ns,
        "{}",
        show(&plain)
    );
    assert!(busy.p99_ns as f64 > 1.1 * busy.mean_ns, "{}", show(&busy));
    assert!(
        busy.max_ns > 1_000_000 && busy.max_ns > 2 * plain.max_ns,
        "{}",
        show(&busy)
    );
}

/// 2 s of QD1 4 KiB random writes over the whole 70 GB test drive with 10 % spare, with
/// `changes` to the preset: fresh, or nearly full (filled, then written at random at QD32
/// for 30 s, until garbage collection sets the host's pace).
fn qd1_writes_when(nearly_full: bool, changes: &[(&str, &str)]) -> ssdsim::Latency {
    let mut d = seventy_gb("user_capacity_gb = 63.7", changes);
    let span = d.whole_span(4 * KIB);
    if nearly_full {
        fill(&mut d);
        d.run(
            &Step::new("rw", Op::RandWrite, 4 * KIB, span)
                .qd(32)
                .runtime(30.0),
        )
        .unwrap();
    }
    let r = d
        .run(&Step::new("qd1", Op::RandWrite, 4 * KIB, span).runtime(2.0))
        .unwrap();
    r.write.unwrap().latency
}

// Issue 27: write stalls on a nearly full drive. A write completes once its data is in the
// write buffer, and a buffer slot is free again only when its program unit's program has
// ended. A fresh drive programs faster than QD1 writes arrive, so no write waits. On a
// nearly full drive garbage collection shares the dies with the host, the host writes at
// the pace it leaves, the buffer stays full, and a write waits for whatever NAND work
// stands before the next slot's program: a TLC wordline's program (1.8 ms), and when a
// superblock is opened the erase of its blocks (3.5 ms; the pool of erased blocks is used
// up without idle time to refill it). With a 10 µs erase only the programs remain.
#[test]
fn a_nearly_full_drive_makes_qd1_writes_wait_for_the_nand() {
    const FAST_ERASE: [(&str, &str); 2] = [
        ("t_erase_us = 3000.0", "t_erase_us = 10.0"),
        ("t_erase_us = 3500.0", "t_erase_us = 10.0"),
    ];
    let fresh = qd1_writes_when(false, &[]);
    let full = qd1_writes_when(true, &[]);
    let full_fast_erase = qd1_writes_when(true, &FAST_ERASE);
    eprintln!(
        "QD1 random writes: fresh {}; nearly full {}; nearly full with 10 us erases {}",
        show(&fresh),
        show(&full),
        show(&full_fast_erase)
    );
    assert!(fresh.max_ns < 50_000, "{}", show(&fresh));
    assert!(full.p99_ns > 10 * fresh.p99_ns, "{}", show(&full));
    assert!(full.max_ns > 3_500_000, "{}", show(&full));
    assert!(
        (1_000_000..full.max_ns - 1_000_000).contains(&full_fast_erase.max_ns),
        "{}",
        show(&full_fast_erase)
    );
}

/// MB/s of 128 KiB reads at QD1 over 2 GiB of data, sequential or random, with `extra`
/// changes to the preset.
fn qd1_reads_mbps(changes: &[(&str, &str)], op: Op) -> f64 {
    let mut d = variant(changes);
    fill_to(&mut d, 0.25, 600.0);
    d.run(&Step::new("reads", op, 128 * KIB, 2 * GIB).runtime(0.5))
        .unwrap()
        .mbps()
}

// B7: with read-ahead, sequential reads at QD1 find their data already fetched; without it
// they are no faster than random reads of the same size.
#[test]
fn read_ahead_speeds_up_sequential_reads_at_qd1() {
    let ahead = [(
        "write_buffer_kib = 4096",
        "write_buffer_kib = 4096\nread_ahead_kib = 512",
    )];
    let (seq, rand) = (
        qd1_reads_mbps(&[], Op::Read),
        qd1_reads_mbps(&[], Op::RandRead),
    );
    let (seq_ra, rand_ra) = (
        qd1_reads_mbps(&ahead, Op::Read),
        qd1_reads_mbps(&ahead, Op::RandRead),
    );
    eprintln!("QD1 128 KiB reads: sequential {seq:.0} / random {rand:.0} MB/s without read-ahead, {seq_ra:.0} / {rand_ra:.0} with");
    assert!(
        seq < 1.1 * rand,
        "without read-ahead: sequential {seq:.0}, random {rand:.0}"
    );
    assert!(
        seq_ra > 1.5 * rand_ra,
        "with read-ahead: sequential {seq_ra:.0}, random {rand_ra:.0}"
    );
}

/// Mean latency of QD1 4 KiB random reads over `span` of written data, µs.
fn qd1_read_us(extra: &str, span: u64) -> f64 {
    let text = small_tlc_text() + extra;
    let mut d = Drive::new(DriveConfig::from_toml_str(&text).unwrap()).unwrap();
    fill_to(&mut d, 1.0, 3600.0); // idle long enough to fold the cache: every read is of TLC
    let r = d
        .run(&Step::new("reads", Op::RandRead, 4 * KIB, span).runtime(0.5))
        .unwrap();
    r.read.unwrap().latency.mean_ns / 1e3
}

// B9: a DRAM-less drive holds 1 MiB of its 16 MiB mapping table in host memory (64 map
// pages of 16 MiB of data each): random reads within 512 MiB find their map pages held,
// reads across the drive mostly read a map page from NAND first. A drive with the whole
// table in DRAM reads both alike.
#[test]
fn a_dram_less_drive_reads_slower_across_a_large_span() {
    let hmb = "\n[drive.mapping]\ncache_mib = 1.0\nhit_ns = 1000.0\n";
    let (near, far) = (qd1_read_us(hmb, 512 * MIB), qd1_read_us(hmb, 14 * GIB));
    let (near_dram, far_dram) = (qd1_read_us("", 512 * MIB), qd1_read_us("", 14 * GIB));
    eprintln!("QD1 4 KiB random reads: HMB {near:.1} us within 512 MiB, {far:.1} us across the drive; DRAM {near_dram:.1} / {far_dram:.1} us");
    assert!(far > near + 20.0, "HMB: {far:.1} vs {near:.1} us");
    assert!(
        (far_dram - near_dram).abs() < 2.0,
        "DRAM: {far_dram:.1} vs {near_dram:.1} us"
    );
}

/// 4 KiB random write IOPS at QD32 for 5 s on the 70 GB variant with 10 % spare, filled
/// `frac` (then idle 60 s), with `extra` appended to the preset.
fn random_write_iops(extra: &str, frac: f64) -> f64 {
    let mut d = drive(&(seventy_gb_text("user_capacity_gb = 63.7", &[]) + extra));
    fill_to(&mut d, frac, 60.0);
    let span = d.whole_span(4 * KIB);
    let step = Step::new("rw", Op::RandWrite, 4 * KIB, span)
        .qd(32)
        .runtime(5.0);
    d.run(&step).unwrap().iops()
}

// B8: random-write IOPS in each fill state come from what limits them: the controller's
// command cost on a nearly empty drive, and on a full one garbage collection, whose NAND
// work and controller time per relocated unit both take from the host (5 s of writes: the
// full drive's small cache and spare are used up within the first seconds).
#[test]
fn random_write_iops_fall_as_garbage_collection_takes_over() {
    let empty = random_write_iops(FIRMWARE, 0.1);
    let full = random_write_iops(FIRMWARE, 1.0);
    let full_without = random_write_iops("", 1.0);
    eprintln!("4 KiB QD32 random write: {empty:.0} IOPS at 10 %, {full:.0} full ({full_without:.0} without firmware work)");
    assert!(empty > 250e3, "{empty:.0}");
    assert!(full < 0.9 * empty, "{full:.0} vs {empty:.0}");
    assert!(full < full_without, "{full:.0} vs {full_without:.0}");
}

/// Latency of QD1 4 KiB random reads over the test preset's data, all in TLC, with
/// `changes` to the preset.
fn qd1_read_latency(changes: &[(&str, &str)]) -> ssdsim::Latency {
    let mut d = variant(changes);
    fill_to(&mut d, 1.0, 3600.0); // the cache folded: every read is of TLC
    let span = d.whole_span(4 * KIB);
    let r = d
        .run(&Step::new("reads", Op::RandRead, 4 * KIB, span).runtime(1.0))
        .unwrap();
    r.read.unwrap().latency
}

// B4 (read QoS at QD1): the page types of a TLC wordline need different numbers of
// reference-voltage senses (here 1-2-4), so random reads of an idle drive have a latency
// distribution around the same mean; with every page alike, they have none.
#[test]
fn page_types_give_qd1_reads_a_latency_distribution() {
    let alike = qd1_read_latency(&[]);
    let levels = [(
        "t_prog_us = 600.0",
        "t_prog_us = 600.0\nread_levels = [1, 2, 4]",
    )];
    let typed = qd1_read_latency(&levels);
    let ratio = |l: &ssdsim::Latency| l.p99_99_ns as f64 / l.mean_ns;
    eprintln!(
        "QD1 random reads: alike mean {:.1} us, p99.99/mean {:.2}; 1-2-4 page types mean {:.1} us, p99.99/mean {:.2}",
        alike.mean_ns / 1e3, ratio(&alike), typed.mean_ns / 1e3, ratio(&typed)
    );
    assert!(ratio(&alike) < 1.05);
    assert!(ratio(&typed) > 1.3);
    assert!((typed.mean_ns / alike.mean_ns - 1.0).abs() < 0.05);
}

/// Write amplification of 4 KiB random writes at 100 IOPS (10 ms between them) on the
/// test preset, with `changes`.
fn light_write_amplification(changes: &[(&str, &str)]) -> f64 {
    let mut d = variant(changes);
    let span = d.whole_span(4 * KIB);
    let step = Step::new("light", Op::RandWrite, 4 * KIB, span)
        .rate(100)
        .io_size(4 * MIB);
    d.run(&step).unwrap().counters.write_amplification
}

// B4 (write-buffer flushes): a drive that flushes its write buffer after 5 ms of host idle
// programs each lone 4 KiB write padded to a whole program unit (32 KiB here): under a light
// load its NAND writes are a program unit per write; without flushes data waits in the buffer
// until its unit fills.
#[test]
fn write_buffer_flushes_pad_program_units_under_a_light_load() {
    let flush = [(
        "write_buffer_kib = 4096",
        "write_buffer_kib = 4096\nflush_idle_us = 5000.0",
    )];
    let (padded, waiting) = (
        light_write_amplification(&flush),
        light_write_amplification(&[]),
    );
    eprintln!("write amplification at 100 IOPS: {padded:.2} with flushes after 5 ms idle, {waiting:.2} without");
    assert!(padded > 7.0 && padded <= 8.0, "{padded}");
    assert!(waiting < 1.1, "{waiting}");
}

/// Latencies of 64 MiB TRIMs at QD1 over the first 4 GiB of the test preset (with `extra`
/// appended), written first (`written`) or never written; then the latency of a 4 KiB read
/// issued at once with a TRIM of the next 1 GiB.
fn trims(extra: &str, written: bool) -> (ssdsim::Latency, u64) {
    let text = small_tlc_text() + extra;
    let mut d = Drive::new(DriveConfig::from_toml_str(&text).unwrap()).unwrap();
    if written {
        fill(&mut d);
    }
    let r = d
        .run(&Step::new("trims", Op::Trim, 64 * MIB, 4 * GIB))
        .unwrap();
    let trims = r.trim.unwrap().latency;
    // A TRIM of the next 1 GiB and a read of data past it, issued together: the read waits
    // for the controller to finish walking the TRIM's range.
    let behind = ssdsim::Step {
        concurrent: vec![Step::new("read", Op::RandRead, 4 * KIB, 4 * KIB)
            .offset(12 * GIB)
            .io_size(4 * KIB)],
        ..Step::new("big trim", Op::Trim, GIB, GIB).offset(4 * GIB)
    };
    let read = d.run(&behind).unwrap().read.unwrap().latency.max_ns;
    (trims, read)
}

const HMB: &str = "\n[drive.mapping]\ncache_mib = 1.0\nhit_ns = 1000.0\n";

// Issue 27: a TRIM is firmware work on the mapping table. The controller walks every entry
// of the range (its map pages must be in memory: a DRAM-less drive reads those it does not
// hold), and each mapped unit is deallocated (its old unit's valid bit and its superblock's
// count updated, a journal record written). A range never written costs only the walk, a
// written one far more, a DRAM-less drive more still; and the controller's time is
// serial: a read issued behind a large TRIM waits for it. The deallocation is the work of
// the firmware that maps writes, so a controller measured twice as fast at writes
// deallocates twice as fast.
#[test]
fn a_trim_costs_by_the_mapped_units_it_deallocates() {
    let (unmapped, _) = trims(FIRMWARE, false);
    let (mapped, read_behind) = trims(FIRMWARE, true);
    let faster = small_tlc_text().replacen("write_cmd_us = 3.57", "write_cmd_us = 1.785", 1);
    assert_ne!(faster, small_tlc_text());
    let mut d = Drive::new(DriveConfig::from_toml_str(&(faster + FIRMWARE)).unwrap()).unwrap();
    fill(&mut d);
    let fast = d
        .run(&Step::new("trims", Op::Trim, 64 * MIB, 4 * GIB))
        .unwrap();
    let fast = fast.trim.unwrap().latency;
    let (hmb, _) = trims(&(FIRMWARE.to_string() + HMB), true);
    let (plain, plain_read) = trims("", true);
    eprintln!(
        "64 MiB TRIM, mean: unmapped {:.1} us, mapped {:.1} us, mapped DRAM-less {:.1} us, without firmware work {:.1} us; a read behind a 1 GiB TRIM {:.1} us ({:.1} us without firmware work)",
        unmapped.mean_ns / 1e3,
        mapped.mean_ns / 1e3,
        hmb.mean_ns / 1e3,
        plain.mean_ns / 1e3,
        read_behind as f64 / 1e3,
        plain_read as f64 / 1e3
    );
    assert!(mapped.mean_ns > 10.0 * unmapped.mean_ns);
    // 16 384 units at 50 ns, then at 25 ns: 0.4 ms less per range
    let saved = mapped.mean_ns - fast.mean_ns;
    assert!((350_000.0..450_000.0).contains(&saved), "{saved} ns");
    // its map pages read from NAND first: four of 16 MiB of data each per range, a NAND read each
    assert!(hmb.mean_ns > mapped.mean_ns + 50_000.0);
    // 1 GiB deallocated at 50 ns per 4 KiB unit: 13 ms of controller time before the read
    assert!(read_behind > 10_000_000, "{read_behind} ns");
    assert!(plain_read < read_behind / 10, "{plain_read} ns");
}
