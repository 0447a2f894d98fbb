//! The directions published drives show hold on every shipped preset (issue 10): slower
//! sequential and random writes at 90 % filled than at 10 %, speed given back by TRIM, and,
//! where the cache is dynamic, a whole-drive fill with a cache phase, a native phase with
//! bursts back to cache speed, and a slower phase where the cache must shrink.
//!
//! Each preset is simulated at an eighth of its size where its spare allows (an eighth of
//! its blocks and of its user capacity: the same spare share, dies, timings and policies),
//! so that every preset runs in seconds; the directions come from mechanisms, not from
//! the size.
use crate::common::*;
use ssdsim::{Drive, DriveConfig, Op, Step};

/// Divisors of a preset's size tried in turn: the smallest drive whose spare still holds
/// the reclaim reserve (a preset with few, large superblocks cannot shrink as far).
const SCALES: [u32; 4] = [8, 4, 2, 1];

fn presets() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../drives");
    let mut all: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    all.sort();
    assert!(all.len() >= 7, "{} presets", all.len());
    all
}

/// The preset at the smallest of [`SCALES`] that is a valid drive: a fraction of its blocks
/// and of its user capacity.
fn scaled(text: &str) -> Drive {
    let doc: toml::Table = text.parse().unwrap();
    for scale in SCALES {
        let mut doc = doc.clone();
        let drive = doc["drive"].as_table_mut().unwrap();
        let user = drive["user_capacity_gb"].as_float().unwrap();
        drive.insert("user_capacity_gb".into(), (user / scale as f64).into());
        let geometry = drive["geometry"].as_table_mut().unwrap();
        let blocks = geometry["blocks_per_plane"].as_integer().unwrap();
        geometry.insert("blocks_per_plane".into(), (blocks / scale as i64).into());
        if let Ok(cfg) = DriveConfig::from_toml_str(&toml::to_string(&doc).unwrap()) {
            return Drive::new(cfg).unwrap();
        }
    }
    unreachable!("the preset itself is valid")
}

/// A drive in a fill state: purged, the first `frac` written sequentially, then a minute idle.
fn state(text: &str, frac: f64) -> (Drive, u64) {
    let mut d = scaled(text);
    let filled = fill_to(&mut d, frac, 60.0);
    (d, filled)
}

/// 10 s of 128 KiB QD32 sequential writes from `offset` (time-based, as the lab measures).
fn seq_write_mbps(d: &mut Drive, offset: u64) -> f64 {
    let span = d.whole_span(128 * KIB) - offset;
    let step = Step::new("seq", Op::Write, 128 * KIB, span)
        .offset(offset)
        .qd(32);
    d.run(&step.runtime(10.0).io_size(1 << 62).idle_after(60.0))
        .unwrap()
        .mbps()
}

/// 4 KiB QD32 random writes across the drive, a sixth of its capacity of them: more than
/// a 90 %-filled drive has free, so its garbage collection shows (as in the lab's minute).
fn random_write_iops(d: &mut Drive) -> f64 {
    let span = d.whole_span(4 * KIB);
    let bytes = span / 6 / (4 * KIB) * (4 * KIB);
    let step = Step::new("rand", Op::RandWrite, 4 * KIB, span)
        .qd(32)
        .io_size(bytes);
    d.run(&step.idle_after(60.0)).unwrap().iops()
}

#[test]
fn nearly_full_drives_write_slower_and_trim_gives_the_speed_back() {
    on_every_core(presets(), |(name, text)| {
        let (mut ten, off10) = state(&text, 0.1);
        let (mut ninety, off90) = state(&text, 0.9);
        let (seq10, seq90) = (
            seq_write_mbps(&mut ten, off10),
            seq_write_mbps(&mut ninety, off90),
        );
        let rand10 = random_write_iops(&mut state(&text, 0.1).0);
        let rand90 = random_write_iops(&mut state(&text, 0.9).0);
        let half = ninety.whole_span(GIB) / 2 / GIB * GIB;
        let trim = Step::new("trim half", Op::Trim, GIB, half)
            .offset(half)
            .idle_after(600.0);
        ninety.run(&trim).unwrap();
        let trimmed = seq_write_mbps(&mut ninety, half);
        eprintln!(
            "{name}: seq {seq10:.0} MB/s at 10 %, {seq90:.0} at 90 %, {trimmed:.0} after TRIM; random {rand10:.0} / {rand90:.0} IOPS"
        );
        assert!(
            seq90 < 0.9 * seq10,
            "{name}: sequential {seq90:.0} at 90 % vs {seq10:.0} at 10 %"
        );
        assert!(
            rand90 < 0.9 * rand10,
            "{name}: random {rand90:.0} at 90 % vs {rand10:.0} at 10 %"
        );
        assert!(
            trimmed > 1.2 * seq90,
            "{name}: {trimmed:.0} after TRIM vs {seq90:.0} at 90 %"
        );
    });
}

#[test]
fn dynamic_caches_fill_in_three_phases() {
    for (name, text) in presets() {
        if !text.contains("policy = \"dynamic\"") {
            continue;
        }
        let mut d = scaled(&text);
        let span = d.whole_span(128 * KIB);
        let r = d.run(&Step::fill("fill", span)).unwrap();
        let cache = r.per_gib[0].mbps;
        let post = segments_after_cache(&r);
        // The native phase: the first quarter after the cache; the shrinking-cache phase:
        // the slowest quarter after it (the speed may creep back up at the very end).
        let q = (post.len() / 4).max(1);
        let native = mean(&post[..q]);
        let shrinking = post[q..].windows(q).map(mean).fold(f64::MAX, f64::min);
        eprintln!(
            "{name}: cache {cache:.0} MB/s for {:.0} GB, native phase {native:.0}, slowest quarter after it {shrinking:.0}, last eighth {:.0} ({} segments after the cache)",
            cache_estimate_gb(&r),
            mean(&post[post.len() - (q / 2).max(1)..]),
            post.len()
        );
        assert!(
            !post.is_empty() && native < 0.8 * cache,
            "{name}: no cache phase"
        );
        if text.contains("refill = \"idle\"") {
            // The cache refills only after a pause: no bursts, and the speed rises as
            // folding drains the cache (the 980 PRO's published fill, CAL:FILL).
            let end = mean(&post[post.len() - q..]);
            assert!(end > native, "{name}: no rise ({end:.0} vs {native:.0})");
        } else {
            assert!(
                shrinking < native,
                "{name}: no shrinking-cache phase ({shrinking:.0} vs {native:.0})"
            );
        }
        d.check_invariants().unwrap();
    }
}
