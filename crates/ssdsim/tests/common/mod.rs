//! Helpers shared by the integration tests.
#![allow(dead_code)]
use ssdsim::{Drive, DriveConfig, Op, Platform, Step, StepResult};

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// The 16 GB test preset (the SN850's NAND and dynamic cache at a small capacity), shared
/// with the Python tests.
pub fn small_tlc_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/small-tlc.toml")
}

/// A preset from the repository's drives/ directory.
pub fn preset(name: &str) -> DriveConfig {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../drives")
        .join(format!("{name}.toml"));
    DriveConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// The platform of the published measurements: the lab's kept the SN850 and the 980 PRO
/// out of their low power states (CALIBRATION.md, "Idle power states on Linux"), and a
/// spec-sheet benchmark keeps its drive busy: a drive that never sleeps between the steps
/// of a calibration (its idles would otherwise put a wake-up from PS4 in a 1 s measurement).
/// Its drives did not throttle in the throughput tests (the SN850's throttling was reported
/// from a separate soak): a heatsink, as by default.
pub const MEASURING_PLATFORM: Platform = Platform {
    apst_max_latency_us: ssdsim::power::DEFAULT_MAX_LATENCY_US,
    low_power_states: false,
    cooling: ssdsim::thermal::Cooling::Heatsink,
    ambient_c: ssdsim::thermal::DEFAULT_AMBIENT_C,
    volatile_write_cache: true,
};

/// A fresh preset drive on the [`MEASURING_PLATFORM`].
pub fn measured(name: &str) -> Drive {
    Drive::with_platform(preset(name), 1, MEASURING_PLATFORM).unwrap()
}

/// Write the first `frac` of the drive sequentially (128 KiB, QD32), then idle `idle_s`.
pub fn fill_to(d: &mut Drive, frac: f64, idle_s: f64) -> u64 {
    let bytes = ((d.user_bytes() as f64 * frac) as u64) / (128 * KIB) * (128 * KIB);
    d.run(
        &Step::new("precondition", Op::Write, 128 * KIB, bytes)
            .qd(32)
            .idle_after(idle_s),
    )
    .unwrap();
    bytes
}

/// Index of the first segment of a fill's first sustained drop: three consecutive
/// segments under 70 % of the speed of the first four (the cache speed); None without one.
pub fn first_sustained_drop(r: &StepResult) -> Option<usize> {
    let pts = &r.per_gib;
    let start = cache_speed_mbps(r);
    (0..pts.len().saturating_sub(3)).find(|&i| pts[i..i + 3].iter().all(|p| p.mbps < 0.7 * start))
}

/// The speed of a fill's first four segments, MB/s: its speed in the cache.
pub fn cache_speed_mbps(r: &StepResult) -> f64 {
    r.per_gib.iter().take(4).map(|p| p.mbps).sum::<f64>() / 4.0
}

/// The METHODOLOGY.md / CALIBRATION.md cache estimate: GB written before the
/// first sustained drop (three consecutive segments under 70 % of the speed of
/// the first four).
pub fn cache_estimate_gb(r: &StepResult) -> f64 {
    let pts = &r.per_gib;
    match first_sustained_drop(r) {
        Some(0) => 0.0,
        Some(i) => pts[i - 1].gib * GIB as f64 / 1e9,
        None => pts.last().map(|p| p.gib * GIB as f64 / 1e9).unwrap_or(0.0),
    }
}

/// The level a fill writes at after its cache, MB/s: the median of the segments from the
/// first sustained drop to the end (a level read off the curve, as a review reads it; bursts
/// and a slower end phase move it less than they move the mean). 0 without a drop.
pub fn after_cache_mbps(r: &StepResult) -> f64 {
    let Some(i) = first_sustained_drop(r) else {
        return 0.0;
    };
    let mut v: Vec<f64> = r.per_gib[i..].iter().map(|p| p.mbps).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Throughput of a fill's segments after its cache: from the first segment under 70 %
/// of the first one's speed to the end, MB/s.
pub fn segments_after_cache(r: &StepResult) -> Vec<f64> {
    let first = r.per_gib[0].mbps;
    r.per_gib
        .iter()
        .skip_while(|p| p.mbps > 0.7 * first)
        .map(|p| p.mbps)
        .collect()
}

/// The mean of `v`.
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The spec-sheet state: a purged drive with `SPEC_SPAN` written sequentially (128 KiB,
/// QD32) just before, as the client suite writes the data a test reads, and as a spec-sheet
/// benchmark writes its test area; with no idle, the data is still where the writes put it
/// (in the SLC cache of a drive with one). Returns the span written.
pub fn spec_state(d: &mut Drive) -> u64 {
    d.run(&Step::new("test area", Op::Write, 128 * KIB, SPEC_SPAN).qd(32))
        .unwrap();
    SPEC_SPAN
}

/// The test area of the spec-sheet state: 16 GiB, the client suite's burst span.
pub const SPEC_SPAN: u64 = 16 * GIB;

/// IOPS of 4 KiB `op` (random read or write) over `span` at queue depth `qd`, for 0.5 s.
pub fn iops_4k(d: &mut Drive, op: Op, span: u64, qd: u32) -> f64 {
    d.run(&Step::new("4 KiB", op, 4 * KIB, span).qd(qd).runtime(0.5))
        .unwrap()
        .iops()
}

/// A small, fast drive with round timings, for exact timing tests. `extra` is appended to [drive.cache].
pub fn tiny(cache: &str) -> DriveConfig {
    let text = format!(
        r#"
[drive]
name = "tiny"
user_capacity_gb = 0.7
native_mode = "tlc"
[drive.geometry]
channels = 2
dies_per_channel = 2
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 96
page_bytes = 16384
[drive.nand]
channel_mbps = 800.0
[drive.nand.slc]
t_read_us = 25.0
t_prog_us = 200.0
t_erase_us = 2000.0
bits_per_cell = 1
[drive.nand.tlc]
t_read_us = 60.0
t_prog_us = 600.0
t_erase_us = 3000.0
bits_per_cell = 3
[drive.controller]
read_cmd_us = 2.0
write_cmd_us = 3.0
read_latency_us = 1.0
write_latency_us = 5.0
trim_cmd_us = 4.0
trim_unit_ns = 1.0
write_buffer_kib = 256
[drive.host]
link = "pcie4x4"
[drive.ftl]
gc_low_superblocks = 3
gc_idle_superblocks = 6
victim_policy = "greedy"
[drive.cache]
{cache}
"#
    );
    DriveConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}"))
}

pub const NO_CACHE: &str = "policy = \"none\"\nidle_fold = false\nbusy_fold_ratio = 0.0";
pub const SLC_KEEP: &str =
    "policy = \"static\"\nstatic_gb = 0.1\nidle_fold = false\nbusy_fold_ratio = 0.0";
pub const SLC_FOLD: &str =
    "policy = \"static\"\nstatic_gb = 0.1\nidle_fold = true\nbusy_fold_ratio = 0.0";

/// `f` of every item, in their order, computed on as many threads as the machine has
/// cores: a test of independent drives takes the time of its share of them, not of all.
pub fn on_every_core<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let count = items.len();
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(count))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = vec![];
                    loop {
                        let next = queue.lock().unwrap().next();
                        let Some((i, item)) = next else { break mine };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}
