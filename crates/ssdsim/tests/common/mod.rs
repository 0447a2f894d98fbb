//! Helpers shared by the integration tests.
#![allow(dead_code)]
use ssdsim::{Drive, DriveConfig, Op, Step, StepResult};

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// A preset from the repository's drives/ directory.
pub fn preset(name: &str) -> DriveConfig {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../drives")
        .join(format!("{name}.toml"));
    DriveConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"))
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

/// The METHODOLOGY.md / CALIBRATION.md cache estimate: GB written before the
/// first sustained drop (three consecutive segments under 70 % of the speed of
/// the first four).
pub fn cache_estimate_gb(r: &StepResult) -> f64 {
    let pts = &r.per_gib;
    let start = pts.iter().take(4).map(|p| p.mbps).sum::<f64>() / 4.0;
    for i in 0..pts.len().saturating_sub(3) {
        if pts[i..i + 3].iter().all(|p| p.mbps < 0.7 * start) {
            return if i == 0 {
                0.0
            } else {
                pts[i - 1].gib * GIB as f64 / 1e9
            };
        }
    }
    pts.last().map(|p| p.gib * GIB as f64 / 1e9).unwrap_or(0.0)
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
