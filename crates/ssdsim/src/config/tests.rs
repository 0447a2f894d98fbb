//! Tests of presets: parsing, bounds and relations; and the small preset that the
//! tests of other modules use (`crate::config::tests::small`).

use super::*;
use crate::bounds::Bound;

/// A small, valid preset used by unit tests across the crate.
pub const SMALL: &str = r#"
[drive]
name = "small test drive"
user_capacity_gb = 0.0
native_mode = "tlc"

[drive.geometry]
channels = 2
dies_per_channel = 2
planes_per_die = 1
blocks_per_plane = 32
pages_per_block = 6
page_bytes = 8192

[drive.nand]
channel_mbps = 800.0
[drive.nand.slc]
t_read_us = 25.0
t_prog_us = 200.0
t_erase_us = 2000.0
bits_per_cell = 1
[drive.nand.tlc]
t_read_us = 60.0
t_prog_us = 700.0
t_erase_us = 3500.0
bits_per_cell = 3

[drive.controller]
read_cmd_us = 2.0
write_cmd_us = 2.0
read_latency_us = 0.0
write_latency_us = 0.0
trim_cmd_us = 2.0
trim_unit_ns = 1.0
write_buffer_kib = 64

[drive.host]
link = "pcie4x4"

[drive.ftl]
gc_low_superblocks = 3
gc_idle_superblocks = 5
victim_policy = "greedy"

[drive.cache]
policy = "dynamic"
free_share = 1.0
max_cell_share = 0.5
idle_fold = true
busy_fold_ratio = 0.0
"#;

/// SMALL with a user capacity of `frac` of raw.
pub fn small(frac: f64) -> DriveConfig {
    let mut text = SMALL.to_string();
    // raw = 2*2*1*32*6*8192 = 6_291_456 bytes
    let user = (6_291_456.0 * frac) / 1e9;
    text = text.replace(
        "user_capacity_gb = 0.0",
        &format!("user_capacity_gb = {user}"),
    );
    DriveConfig::from_toml_str(&text).unwrap()
}

fn err(text: &str) -> String {
    DriveConfig::from_toml_str(text).unwrap_err().0
}

// A run stored before wear was modelled carries a [drive.wear] of the rated cycles only:
// it loads without a wear model, as it ran; a wear table of the current form is checked.
#[test]
fn a_wear_table_from_before_the_wear_model_loads_without_one() {
    let text = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.004");
    let old =
        text.clone() + "\n[drive.wear]\nrated_pe_cycles = 3000\nslc_retire_pe_cycles = 2000\n";
    assert!(DriveConfig::from_toml_str(&old).unwrap().wear.is_none());
    let partial = text + "\n[drive.wear]\nrated_pe_cycles = 3000\nslc_pe_cycles = 30000\n";
    assert!(
        err(&partial).contains("endurance_median"),
        "{}",
        err(&partial)
    );
}

// A run stored by ssdlab 0.1.0 carries its preset, whose [drive.power] modelled nothing:
// it loads without a power model, and a mistyped current table is still refused.
#[test]
fn a_power_table_of_ssdlab_0_1_0_loads_without_a_power_model() {
    let text = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.004");
    let old = text.clone() + "\n[drive.power]\nidle_w = 1.33\nidle_exit_us = 165.0\n";
    let c = DriveConfig::from_toml_str(&old).unwrap();
    assert!(c.power.is_none());
    let mistyped = text + "\n[drive.power]\nidle_w = 1.33\nactive_idle_w = 1.0\n";
    assert!(err(&mistyped).contains("idle_w"), "{}", err(&mistyped));
}

#[test]
fn small_preset_parses() {
    let c = small(0.7);
    assert_eq!(c.raw_bytes(), 6_291_456);
    assert!(c.over_provisioning() > 0.4);
}

#[test]
fn unknown_key_is_named_with_its_table() {
    let t = SMALL
        .replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001")
        .replace("channel_mbps = 800.0", "channel_mbps = 800.0\nfoo = 1");
    assert_eq!(err(&t), "unknown key `foo` in [drive.nand]");
    let t = SMALL.replace("t_prog_us = 700.0", "t_prog_us = 700.0\nt_prgo = 1");
    assert_eq!(err(&t), "unknown key `t_prgo` in [drive.nand.tlc]");
}

#[test]
fn missing_key_is_named() {
    let t = SMALL
        .replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001")
        .replace("t_prog_us = 700.0\n", "");
    assert_eq!(err(&t), "missing key `drive.nand.tlc.t_prog_us`");
}

#[test]
fn impossible_values_are_refused() {
    let base = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001");
    assert_eq!(
        err(&base.replace("t_prog_us = 700.0", "t_prog_us = 0.0")),
        "drive.nand.tlc.t_prog_us = 0 is outside 1..100000 (µs)"
    );
    assert_eq!(
        err(&base.replace("channels = 2", "channels = 0")),
        "drive.geometry.channels = 0 is outside 1..64"
    );
    assert_eq!(
        err(&base.replace("page_bytes = 8192", "page_bytes = 5000")),
        "drive.geometry.page_bytes must be a multiple of 4096"
    );
    assert_eq!(
        err(&base.replace("max_cell_share = 0.5", "max_cell_share = 1.5")),
        "drive.cache.max_cell_share = 1.5 is outside 0.01..1"
    );
    assert!(
        err(&SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.006"))
            .starts_with("drive.user_capacity_gb leaves too little")
    );
    assert!(
        err(&base.replace("link = \"pcie4x4\"", "link = \"pcie9x4\""))
            .starts_with("drive.host.link")
    );
    assert_eq!(
        err(&base.replace("channels = 2", "channels = -1")),
        "drive.geometry.channels: invalid value: integer `-1`, expected u32"
    );
    assert_eq!(
        err(&base.replace("gc_idle_superblocks = 5", "gc_idle_superblocks = 32")),
        "drive.ftl.gc_idle_superblocks = 32 must be less than the drive's 32 superblocks (drive.geometry.blocks_per_plane)"
    );
}

/// SMALL at 70 % of raw with every optional field present, so that every bound applies.
pub fn full_text() -> String {
    SMALL
        .replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.0044")
        .replace(
            "link = \"pcie4x4\"",
            "link = \"pcie4x4\"\npayload_mbps = 7000.0",
        )
        .replace(
            "channel_mbps = 800.0",
            "channel_mbps = 800.0\nsuspend_us = 30.0",
        )
        .replace(
            "write_buffer_kib = 64",
            "write_buffer_kib = 64\nread_ahead_kib = 256\nflush_idle_us = 5000.0",
        )
        + OPTIONAL_SECTIONS
}

/// [`full_text`] with a static cache, whose fields are the other policy's.
pub fn full_static_text() -> String {
    full_text()
        .replace(
            "policy = \"dynamic\"",
            "policy = \"static\"\nstatic_gb = 0.001",
        )
        .replace("free_share = 1.0\n", "")
        .replace("max_cell_share = 0.5\n", "")
}

const OPTIONAL_SECTIONS: &str = r#"
[drive.mapping]
cache_mib = 1.0
hit_ns = 500.0

[drive.firmware]
journal_entry_bytes = 8
checkpoint_mib = 64.0
checkpoint_us = 500.0
relocate_unit_ns = 100.0
deallocate_share = 0.025

[drive.nand.qlc]
t_read_us = 110.0
t_prog_us = 3500.0
t_erase_us = 10000.0
bits_per_cell = 4

[drive.thermal]
tmt1_c = 80.0
tmt2_c = 82.0
wctemp_c = 84.0
cctemp_c = 88.0
shutdown_c = 100.0

[drive.thermal.rc]
controller_k_per_w = 2.0
controller_j_per_k = 2.0
board_j_per_k = 35.0
bare_k_per_w = 7.0
heatsink_k_per_w = 3.0
fan_k_per_w = 2.0

[drive.thermal.throttle]
hysteresis_k = 3.0
light_state = 1
heavy_state = 1
rise_lookahead_s = 5.0

[drive.power]
active_idle_w = 1.0
active_idle_entry_us = 1000.0
active_idle_exit_us = 150.0
idle_tick_us = 1000.0
peak_w = 8.0
controller_active_w = 1.0
controller_pj_per_byte = 100.0
dram_pj_per_byte = 150.0
link_pj_per_byte = 40.0

[drive.power.nand]
vcc_v = 3.3
read_ma = 25.0
program_ma = 25.0
erase_ma = 25.0
io_ma = 10.0

[drive.power.states]
ps0 = { max_w = 7.0, entry_us = 0.0, exit_us = 0.0, operational = true }
ps1 = { max_w = 4.0, entry_us = 0.0, exit_us = 200.0, operational = true }
ps2 = { max_w = 0.05, entry_us = 2000.0, exit_us = 5000.0, operational = false, measured_w = 0.04, measured_exit_us = 4000.0 }
ps3 = { max_w = 0.005, entry_us = 5000.0, exit_us = 40000.0, operational = false }

[drive.wear]
rated_pe_cycles = 3000
slc_pe_cycles = 30000
slc_retire_pe_cycles = 2000
endurance_median = 2.0
endurance_sigma = 0.15
levelling = "static"
static_spread_pe = 200
rated_tbw = 600.0
"#;

/// `text` with the value at the dotted `key` replaced.
pub fn with_value(text: &str, key: &str, value: toml::Value) -> String {
    let mut doc: toml::Table = text.parse().unwrap();
    let (tables, field) = key.rsplit_once('.').unwrap();
    let mut table = &mut doc;
    for name in tables.split('.') {
        table = table.get_mut(name).unwrap().as_table_mut().unwrap();
    }
    table.insert(field.into(), value);
    toml::to_string(&doc).unwrap()
}

/// Dotted keys of every number in a TOML table.
pub fn numeric_keys(table: &toml::Table, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for (name, value) in table {
        let key = format!("{prefix}{name}");
        match value {
            toml::Value::Integer(_) | toml::Value::Float(_) => keys.push(key),
            toml::Value::Table(t) => keys.extend(numeric_keys(t, &format!("{key}."))),
            _ => {}
        }
    }
    keys
}

/// Values just below and just above a bound, of the field's TOML type.
fn just_outside(bound: &Bound) -> [toml::Value; 2] {
    match bound.kind {
        b::Kind::Integer => [
            toml::Value::Integer(bound.min as i64 - 1),
            toml::Value::Integer(bound.max as i64 + 1),
        ],
        b::Kind::Real => {
            let nudge = |v: f64| v.abs().max(1.0) * 1e-6;
            [
                toml::Value::Float(bound.min - nudge(bound.min)),
                toml::Value::Float(bound.max + nudge(bound.max)),
            ]
        }
    }
}

#[test]
fn every_number_of_a_preset_has_a_bound() {
    for full in [full_text(), full_static_text()] {
        every_number_has_a_bound(&full);
    }
}

fn every_number_has_a_bound(full: &str) {
    let cfg = DriveConfig::from_toml_str(full).unwrap();
    let mut bounded: Vec<String> = cfg.bounded_fields().into_iter().map(|f| f.key).collect();
    let mut numbers: Vec<String> = numeric_keys(&full.parse().unwrap(), "")
        .into_iter()
        // Not a range: each mode has exactly one value, checked by CellTiming::validate.
        .filter(|k| !k.ends_with(".bits_per_cell"))
        .collect();
    bounded.sort();
    numbers.sort();
    assert_eq!(bounded, numbers);
}

#[test]
fn every_bounded_field_just_outside_its_range_is_refused_by_name() {
    for full in [full_text(), full_static_text()] {
        every_field_just_outside_is_refused(&full);
    }
}

fn every_field_just_outside_is_refused(full: &str) {
    let cfg = DriveConfig::from_toml_str(full).unwrap();
    for field in cfg.bounded_fields() {
        for value in just_outside(field.bound) {
            let text = with_value(full, &field.key, value.clone());
            let msg = err(&text);
            assert!(
                msg.starts_with(&format!("{} = ", field.key)) && msg.contains(" is outside "),
                "{} = {value}: {msg}",
                field.key
            );
        }
    }
}

#[test]
fn the_values_of_issue_9_are_refused_at_load_with_the_field_value_and_range() {
    let base = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001");
    let cases = [
        (
            "channel_mbps = 800.0",
            "channel_mbps = 1e-300",
            "drive.nand.channel_mbps = 1e-300 is outside 10..10000 (MB/s)",
        ),
        (
            "t_prog_us = 700.0",
            "t_prog_us = 1e10",
            "drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)",
        ),
        (
            "read_cmd_us = 2.0",
            "read_cmd_us = 1e8",
            "drive.controller.read_cmd_us = 1e8 is outside 0.01..10000 (µs)",
        ),
        (
            "t_prog_us = 700.0",
            "t_prog_us = 1e20",
            "drive.nand.tlc.t_prog_us = 1e20 is outside 1..100000 (µs)",
        ),
        (
            "t_prog_us = 700.0",
            "t_prog_us = 1e-300",
            "drive.nand.tlc.t_prog_us = 1e-300 is outside 1..100000 (µs)",
        ),
        (
            "page_bytes = 8192",
            "page_bytes = 1073741824",
            "drive.geometry.page_bytes = 1073741824 is outside 4096..65536 (bytes)",
        ),
        (
            "channels = 2",
            "channels = 4294967295",
            "drive.geometry.channels = 4294967295 is outside 1..64",
        ),
    ];
    for (line, bad, expected) in cases {
        assert!(base.contains(line));
        assert_eq!(err(&base.replace(line, bad)), expected);
    }
}

#[test]
fn every_relation_between_fields_is_refused_with_its_message() {
    use toml::Value::{Boolean, Float, Integer, String as Text};
    let cases = [
        // Within a section.
        (
            full_text(),
            vec![("drive.nand.tlc.bits_per_cell", Integer(4))],
            "drive.nand.tlc.bits_per_cell must be 3",
        ),
        (
            full_text(),
            vec![("drive.ftl.gc_low_superblocks", Integer(6))],
            "drive.ftl.gc_idle_superblocks must be >= drive.ftl.gc_low_superblocks",
        ),
        (
            full_text(),
            vec![("drive.thermal.tmt2_c", Float(79.0))],
            "drive.thermal.tmt2_c must be >= drive.thermal.tmt1_c",
        ),
        (
            full_text(),
            vec![("drive.power.peak_w", Float(0.5))],
            "drive.power.peak_w must be >= drive.power.active_idle_w",
        ),
        (
            full_text(),
            vec![("drive.power.active_idle_w", Float(7.5))],
            "drive.power.active_idle_w must be <= drive.power.states.ps0.max_w",
        ),
        (
            full_text(),
            vec![("drive.power.states.ps3.max_w", Float(0.5))],
            "drive.power.states.ps3.max_w must be <= drive.power.states.ps2.max_w: states are numbered from the most power down",
        ),
        (
            full_text(),
            vec![("drive.power.states.ps0.operational", Boolean(false))],
            "drive.power.states.ps0 must be operational: the drive serves commands in it",
        ),
        (
            full_text(),
            vec![("drive.power.states.ps1.measured_w", Float(3.0))],
            "drive.power.states.ps1: measured_w and measured_exit_us are for non-operational states, where the drive idles",
        ),
        // Across sections.
        (
            full_text(),
            vec![("drive.native_mode", Text("slc".into()))],
            "drive.native_mode must be `tlc` or `qlc`",
        ),
        (
            SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.0044"),
            vec![("drive.native_mode", Text("qlc".into()))],
            "missing key `drive.nand.qlc` (the native mode)",
        ),
        (
            full_text(),
            vec![("drive.geometry.pages_per_block", Integer(7))],
            "drive.geometry.pages_per_block must be a multiple of drive.nand.tlc.bits_per_cell",
        ),
        (
            full_static_text(),
            vec![("drive.cache.static_gb", Float(1.0))],
            "drive.cache.static_gb is larger than the NAND can hold in SLC mode",
        ),
    ];
    for (base, changes, expected) in cases {
        let text = changes
            .into_iter()
            .fold(base, |text, (key, value)| with_value(&text, key, value));
        assert_eq!(err(&text), expected);
    }
}

#[test]
fn a_geometry_beyond_32_bit_page_addresses_is_refused() {
    let huge = full_text()
        .replace("channels = 2", "channels = 64")
        .replace("dies_per_channel = 2", "dies_per_channel = 64")
        .replace("planes_per_die = 1", "planes_per_die = 16")
        .replace("page_bytes = 8192", "page_bytes = 65536")
        .replace("pages_per_block = 6", "pages_per_block = 16383");
    assert_eq!(
        err(&huge),
        "drive.geometry: 4 KiB units per superblock = 17178820608 is outside 1..4294967294 (the simulator's 32-bit page addresses); use a smaller geometry"
    );
    let many_blocks = full_text()
        .replace("pages_per_block = 6", "pages_per_block = 16383")
        .replace("blocks_per_plane = 32", "blocks_per_plane = 65536");
    assert!(
        err(&many_blocks).starts_with("drive.geometry: 4 KiB units in the NAND array = "),
        "{}",
        err(&many_blocks)
    );
}

#[test]
fn read_levels_have_one_entry_per_page_type_within_bounds() {
    let base = SMALL.replace("user_capacity_gb = 0.0", "user_capacity_gb = 0.001");
    let with = |levels: &str| {
        base.replace(
            "t_prog_us = 700.0",
            &format!("t_prog_us = 700.0\nread_levels = {levels}"),
        )
    };
    assert!(DriveConfig::from_toml_str(&with("[1, 2, 4]")).is_ok());
    assert_eq!(
        err(&with("[1, 2]")),
        "drive.nand.tlc.read_levels must have 3 entries, one per page type of a wordline"
    );
    assert_eq!(
        err(&with("[1, 0, 4]")),
        "drive.nand.tlc.read_levels[1] = 0 is outside 1..15 (senses)"
    );
}

#[test]
fn power_states_are_ps0_to_psn_one_each() {
    let full = full_text();
    let renamed =
        |from: &str, to: &str| full.replace(&format!("\n{from} = {{"), &format!("\n{to} = {{"));
    assert_eq!(
        err(&renamed("ps3", "ps4")),
        r#"drive.power.states must be named ps0 to ps3, one each, found ["ps0", "ps1", "ps2", "ps4"]"#
    );
    assert!(err(&renamed("ps1", "ps01")).starts_with("drive.power.states must be named ps0 to ps3"));
    assert!(err(&renamed("ps1", "idle")).starts_with("drive.power.states must be named ps0 to ps3"));
    let table = DriveConfig::from_toml_str(&full).unwrap().power.unwrap();
    let max_w: Vec<f64> = table.table().iter().map(|s| s.max_w).collect();
    assert_eq!(max_w, [7.0, 4.0, 0.05, 0.005]);
    let none = full.split("\nps0 = {").next().unwrap().to_string()
        + "\n"
        + &full[full.find("[drive.wear]").unwrap()..];
    assert_eq!(
        err(&none),
        "drive.power.states (their number) = 0 is outside 1..32 (states)"
    );
}
