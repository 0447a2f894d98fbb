//! The simulator's fast paths give the same results as the straightforward code they
//! replaced: a battery of varied steps on small drives, every result compared with the
//! one recorded before the optimisations (tests/data/same_results.txt: a fingerprint of
//! each step's whole result, and its MB/s to read). A change of results must be a change
//! of the model, explained where it is made: then regenerate the record with
//! `UPDATE_SAME_RESULTS=1 cargo test --profile tests -p ssdsim --test same_results`.
use crate::common::*;
use ssdsim::{Drive, DriveConfig, Op, Step};

/// Firmware work on the test preset, its whole mapping table in DRAM (as most presets).
const FIRMWARE: &str = "
[drive.firmware]
journal_entry_bytes = 8
checkpoint_mib = 8.0
checkpoint_us = 500.0
relocate_unit_ns = 100.0
deallocate_share = 0.0140056
";

/// With [`FIRMWARE`], every other optional mechanism on: a mapping table held in part
/// (HMB), program/erase suspend, page types, read-ahead and write-buffer flushes.
const MAPPING_IN_PART: &str = "
[drive.mapping]
cache_mib = 2.0
hit_ns = 500.0
";

fn small_tlc(extra: &str, changes: &[(&str, &str)]) -> Drive {
    let p = small_tlc_path();
    let mut text = std::fs::read_to_string(p).unwrap();
    for (from, to) in changes {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    Drive::new(DriveConfig::from_toml_str(&(text + extra)).unwrap()).unwrap()
}

/// The steps of the battery: fill, random writes into garbage collection, reads of every
/// kind, a mix, bursts with idle, TRIM and writes after it, a light paced load, partial
/// (read-modify-write) writes, a purge.
fn battery(d: &Drive) -> Vec<Step> {
    let span = d.whole_span(128 * KIB);
    let span4 = d.user_bytes() / (4 * KIB) * (4 * KIB);
    vec![
        Step::fill("fill", span),
        Step::new("randwrite QD32", Op::RandWrite, 4 * KIB, span4)
            .qd(32)
            .io_size(d.user_bytes()),
        Step::new("randwrite QD1", Op::RandWrite, 4 * KIB, span4).runtime(0.3),
        Step::new("randread QD1", Op::RandRead, 4 * KIB, span4).io_size(32 * MIB),
        Step::new("randread QD32", Op::RandRead, 4 * KIB, span4)
            .qd(32)
            .io_size(256 * MIB),
        Step::new("randrw QD4", Op::RandRw, 4 * KIB, span4)
            .qd(4)
            .mix(70)
            .io_size(128 * MIB),
        Step::new("read QD1", Op::Read, 128 * KIB, span).io_size(GIB),
        Step::new("write bursts", Op::Write, 128 * KIB, span)
            .qd(32)
            .io_size(4 * GIB)
            .bursts(256 * MIB, 0.5)
            .idle_after(5.0),
        Step::new("trim", Op::Trim, 128 * MIB, span / 2),
        Step::new("write after trim", Op::Write, 128 * KIB, span)
            .qd(32)
            .io_size(4 * GIB)
            .per_gib(),
        Step::new("paced writes", Op::RandWrite, 4 * KIB, span4)
            .rate(2000)
            .runtime(0.5),
        Step::new("partial writes", Op::RandWrite, 2 * KIB, span4)
            .qd(8)
            .io_size(16 * MIB),
        Step::purge("purge"),
        Step::new("write after purge", Op::Write, 128 * KIB, span)
            .qd(32)
            .io_size(2 * GIB),
    ]
}

/// FNV-1a of `text`: a fingerprint that is the same on every platform and Rust version.
fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn record() -> String {
    let drives = [
        ("plain", small_tlc("", &[])),
        ("firmware", small_tlc(FIRMWARE, &[])),
        (
            "everything",
            small_tlc(
                &(FIRMWARE.to_owned() + MAPPING_IN_PART),
                &[(
                    "write_buffer_kib = 4096",
                    "write_buffer_kib = 4096\nread_ahead_kib = 512\nflush_idle_us = 1000.0",
                )],
            ),
        ),
    ];
    let mut out = String::new();
    for (name, mut d) in drives {
        for step in battery(&d) {
            let r = d.run(&step).unwrap();
            out += &format!(
                "{name:<10} {:<18} {:016x} {:10.1} MB/s\n",
                step.label,
                fingerprint(&format!("{r:?}")),
                r.mbps()
            );
        }
    }
    out
}

#[test]
fn fast_paths_give_the_results_of_the_straightforward_code() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/same_results.txt");
    let now = record();
    if std::env::var_os("UPDATE_SAME_RESULTS").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    for (was, is) in recorded.lines().zip(now.lines()) {
        assert_eq!(was, is, "a step's result changed");
    }
    assert_eq!(recorded.lines().count(), now.lines().count());
}
