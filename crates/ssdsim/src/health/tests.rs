//! The health log, Identify Controller and features of a simulated drive: nvme-cli's field
//! names, its units, and counts that follow what the host did.

use super::*;
use crate::config::tests::{full_text, small};
use crate::config::DriveConfig;
use crate::power::Platform;
use crate::step::{Op, Step};
use crate::thermal::{ThermalLimits, ThermalLog};
use serde_json::Value;

const GOLDEN: &str = "../../tests/golden/telemetry";

fn golden(name: &str) -> Value {
    let path = format!("{}/{GOLDEN}/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn json<T: serde::Serialize>(record: &T) -> Value {
    serde_json::to_value(record).unwrap()
}

/// The small drive with every optional section: power states and wear.
fn full_drive(platform: Platform) -> Drive {
    let cfg = DriveConfig::from_toml_str(&full_text()).unwrap();
    Drive::with_platform(cfg, 1, platform).unwrap()
}

/// The keys of `text`'s top-level object named in `keys`, in the order they are printed.
fn printed_order(text: &str, keys: &[String]) -> Vec<String> {
    let mut found: Vec<_> = keys
        .iter()
        .map(|k| (text.find(&format!("\"{k}\"")).unwrap(), k.clone()))
        .collect();
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}

#[test]
fn the_health_log_has_nvme_cli_2_6s_fields_in_its_order() {
    let name = "nvme-2.6-smart-log-sn850.json";
    let mut expected = keys(&golden(name));
    // the simulated drive has no sensor beside the composite temperature
    expected.retain(|k| !k.starts_with("temperature_sensor_"));
    let log = SmartLog::of(&full_drive(Platform::default()));
    let mut found = keys(&json(&log));
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
    let ours = serde_json::to_string(&log).unwrap();
    let theirs =
        std::fs::read_to_string(format!("{}/{GOLDEN}/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert_eq!(
        printed_order(&ours, &expected),
        printed_order(&theirs, &expected)
    );
}

#[test]
fn identify_names_every_field_as_nvme_cli_2_6_does() {
    let real = golden("nvme-2.6-id-ctrl-sn850.json");
    let ours = json(&IdCtrl::of(&full_drive(Platform::default())));
    for key in keys(&ours) {
        assert!(real.get(&key).is_some(), "nvme-cli prints no `{key}`");
    }
    let mut psd_keys = keys(&ours["psds"][0]);
    let mut real_psd_keys = keys(&real["psds"][0]);
    psd_keys.sort();
    real_psd_keys.sort();
    assert_eq!(psd_keys, real_psd_keys);
}

#[test]
fn identify_declares_the_presets_power_states() {
    let drive = full_drive(Platform::default());
    let id = IdCtrl::of(&drive);
    assert_eq!(id.npss, 3);
    assert_eq!(id.apsta, 1);
    assert_eq!(id.mn.len(), 40);
    assert_eq!(id.mn.trim_end(), drive.config().name);
    assert_eq!(id.sn.len(), 20);
    assert_eq!(id.fr, format!("ssdsim-{}", crate::VERSION));
    let declared: Vec<_> = id
        .psds
        .iter()
        .map(|p| {
            (
                p.max_power,
                p.max_power_scale,
                p.non_operational_state,
                p.entry_lat,
                p.exit_lat,
            )
        })
        .collect();
    // ps0 7 W and ps1 4 W in centiwatts; 0.05 W exactly 5 cW; 0.005 W as 50 x 0.0001 W.
    // Declared latencies, not the measured ones (ps2 measured_exit_us = 4000).
    assert_eq!(
        declared,
        [
            (700, 0, 0, 0, 0),
            (400, 0, 0, 0, 200),
            (5, 0, 1, 2000, 5000),
            (50, 1, 1, 5000, 40000)
        ]
    );
}

#[test]
fn a_drive_without_power_or_thermal_model_invents_neither() {
    let drive = Drive::new(small(0.7)).unwrap();
    let id = IdCtrl::of(&drive);
    assert!(id.psds.is_empty());
    assert_eq!(
        (id.npss, id.apsta, id.hctma, id.wctemp, id.cctemp),
        (0, 0, 0, 0, 0)
    );
    let log = SmartLog::of(&drive);
    assert_eq!(log.temperature, 0, "0 K: no sensor");
    assert_eq!(log.percent_used, 0);
    assert!(get_feature(&drive, 0x0c)
        .unwrap()
        .contains("(APSTE): Disabled"));
}

#[test]
fn the_serial_is_the_same_for_the_same_preset_and_seed() {
    let cfg = || DriveConfig::from_toml_str(&full_text()).unwrap();
    let sn = |seed| IdCtrl::of(&Drive::with_seed(cfg(), seed).unwrap()).sn;
    assert_eq!(sn(1), sn(1));
    assert_ne!(sn(1), sn(2));
    assert_ne!(sn(1), IdCtrl::of(&Drive::new(small(0.7)).unwrap()).sn);
}

#[test]
fn the_log_counts_what_the_host_did() {
    let mut drive = full_drive(Platform::default());
    let before = SmartLog::of(&drive);
    assert_eq!(
        (before.data_units_written, before.host_write_commands),
        (0, 0)
    );
    let span = 1 << 20;
    drive
        .run(&Step::new("w", Op::Write, 4096, span).idle_after(7300.0))
        .unwrap();
    drive
        .run(&Step::new("r", Op::RandRead, 16384, span).io_size(10 * 16384))
        .unwrap();
    let log = SmartLog::of(&drive);
    assert_eq!(log.host_write_commands, span / 4096);
    assert_eq!(log.data_units_written, data_units(span));
    assert_eq!(log.host_read_commands, 10);
    assert_eq!(
        log.data_units_read, 1,
        "163 840 bytes is one unit, rounded up"
    );
    assert_eq!(log.power_on_hours, 2, "7300 s of idle and a little I/O");
    assert_eq!(
        log.controller_busy_time, 0,
        "well under a minute of commands"
    );
    assert_eq!(
        (log.power_cycles, log.media_errors, log.critical_warning),
        (1, 0, 0)
    );
}

#[test]
fn data_units_are_thousands_of_512_bytes_rounded_up() {
    assert_eq!(data_units(0), 0);
    assert_eq!(data_units(1), 1);
    assert_eq!(data_units(512_000), 1);
    assert_eq!(data_units(512_001), 2);
    assert_eq!(data_units(u64::MAX), u64::MAX.div_ceil(512_000));
}

#[test]
fn temperatures_are_whole_kelvin_and_never_read_as_no_sensor() {
    assert_eq!(kelvin(25.0), 298);
    assert_eq!(kelvin(79.6), 353);
    assert_eq!(kelvin(-300.0), 1);
    assert_eq!(kelvin(f64::INFINITY), u16::MAX);
}

#[test]
fn percentage_used_is_mean_pe_cycles_over_the_rating() {
    assert_eq!(percent_used(0.0, 3000), 0);
    assert_eq!(percent_used(30.0, 3000), 1);
    assert_eq!(percent_used(2999.9, 3000), 99);
    assert_eq!(percent_used(3000.0, 3000), 100);
    assert_eq!(percent_used(1e9, 10), 255);
}

#[test]
fn spare_below_its_threshold_and_read_only_media_set_their_warning_bits() {
    assert_eq!(wear_warnings(100, false), 0);
    assert_eq!(wear_warnings(10, false), 0);
    assert_eq!(wear_warnings(9, false), 1);
    assert_eq!(wear_warnings(0, true), 1 | 4 | 8);
}

#[test]
fn the_temperature_warning_comes_at_cctemp_and_stays_after_a_shutdown() {
    let limits = ThermalLimits {
        wctemp_c: 84.0,
        cctemp_c: 88.0,
        tmt1_c: 80.0,
        tmt2_c: 82.0,
    };
    let at = |c: f64, shutdowns: u64| ThermalLog {
        composite_c: c,
        shutdowns,
        ..ThermalLog::default()
    };
    assert_eq!(temperature_warning(None, None), 0);
    assert_eq!(temperature_warning(Some(at(87.9, 0)), Some(limits)), 0);
    assert_eq!(temperature_warning(Some(at(88.0, 0)), Some(limits)), 2);
    assert_eq!(temperature_warning(Some(at(40.0, 1)), Some(limits)), 2);
}

fn apst_entries(text: &str) -> Vec<(u64, u64)> {
    let numbers = |prefix: &str| -> Vec<u64> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(prefix))
            .map(|v| v.trim().trim_end_matches(" ms").parse().unwrap())
            .collect()
    };
    let idle = numbers("Idle Time Prior to Transition (ITPT):");
    let state = numbers("Idle Transition Power State   (ITPS):");
    idle.into_iter().zip(state).collect()
}

#[test]
fn apst_is_the_table_linux_programs_for_the_platform() {
    // ps2 (2 + 5 ms) fits Linux's 15 ms tier, entered after 100 ms; ps3 (45 ms) its
    // 100 ms tier, after 2 s.
    let on = get_feature(&full_drive(Platform::default()), 0x0c).unwrap();
    assert!(on.starts_with(
        "get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001\n"
    ));
    let entries = apst_entries(&on);
    assert_eq!(entries.len(), 32);
    assert_eq!(entries[..4], [(100, 2), (100, 2), (2000, 3), (0, 0)]);
    assert!(entries[4..].iter().all(|&e| e == (0, 0)));
    // A lower latency limit leaves out ps3; 0 turns APST off.
    let low = Platform {
        apst_max_latency_us: 10_000,
        ..Platform::default()
    };
    assert_eq!(
        apst_entries(&get_feature(&full_drive(low), 0x0c).unwrap())[..3],
        [(100, 2), (100, 2), (0, 0)]
    );
    let off = Platform {
        apst_max_latency_us: 0,
        ..Platform::default()
    };
    let text = get_feature(&full_drive(off), 0x0c).unwrap();
    assert!(text.contains("Current value:00000000\n"));
    assert!(apst_entries(&text).iter().all(|&e| e == (0, 0)));
    // A platform that cannot reach the low states still has the table programmed.
    let no_low = Platform {
        low_power_states: false,
        ..Platform::default()
    };
    assert_eq!(
        get_feature(&full_drive(no_low), 0x0c).unwrap(),
        on,
        "the same table"
    );
}

#[test]
fn apst_follows_set_platform() {
    let mut drive = full_drive(Platform::default());
    drive
        .set_platform(Platform {
            apst_max_latency_us: 0,
            ..Platform::default()
        })
        .unwrap();
    assert!(get_feature(&drive, 0x0c).unwrap().contains("Disabled"));
}

#[test]
fn power_management_is_ps0() {
    let drive = full_drive(Platform::default());
    assert_eq!(
        get_feature(&drive, 0x02).unwrap().lines().next().unwrap(),
        "get-feature:0x02 (Power Management), Current value:00000000"
    );
}

#[test]
fn the_volatile_write_cache_is_the_platforms_and_identify_says_the_drive_has_one() {
    // tests/golden/telemetry/nvme-2.3-get-feature-0x06-{sn850,off}.txt, nvme-cli 2.3's own print
    let golden_text = |name: &str| {
        std::fs::read_to_string(format!("{}/{GOLDEN}/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    };
    let mut drive = full_drive(Platform::default());
    assert_eq!(IdCtrl::of(&drive).vwc & 1, 1);
    assert_eq!(
        get_feature(&drive, 0x06).unwrap(),
        golden_text("nvme-2.3-get-feature-0x06-sn850.txt")
    );
    drive
        .set_platform(Platform {
            volatile_write_cache: false,
            ..Platform::default()
        })
        .unwrap();
    assert_eq!(
        get_feature(&drive, 0x06).unwrap(),
        golden_text("nvme-2.3-get-feature-0x06-off.txt")
    );
}

#[test]
fn thermal_management_is_tmt1_and_tmt2_in_kelvin_and_off_without_a_thermal_model() {
    let sn850 = ThermalLimits {
        wctemp_c: 84.0,
        cctemp_c: 88.0,
        tmt1_c: 80.0,
        tmt2_c: 82.0,
    };
    // tests/golden/telemetry/nvme-2.3-get-feature-0x10-sn850.txt: 353 K and 355 K
    let on = thermal_management(Some(sn850));
    let mut lines = on.lines();
    assert_eq!(
        lines.next().unwrap(),
        "get-feature:0x10 (Host Controlled Thermal Management), Current value:0x01610163"
    );
    assert_eq!(
        lines.next().unwrap(),
        "\tThermal Management Temperature 1 (TMT1) : 353 K (80 °C)"
    );
    assert!(thermal_management(None).starts_with(
        "get-feature:0x10 (Host Controlled Thermal Management), Current value:00000000\n"
    ));
}

#[test]
fn every_other_feature_is_an_invalid_field_and_none_panics() {
    let drive = full_drive(Platform::default());
    for fid in (0..=0x1ffu32).chain([u32::MAX, 1 << 31]) {
        match get_feature(&drive, fid) {
            Ok(_) => assert!(
                [0x02, 0x06, 0x0c, 0x10].contains(&fid),
                "0x{fid:x} answered"
            ),
            Err(e) => {
                assert_eq!(e.fid, fid);
                assert!(e.to_string().contains("Invalid Field in Command"));
            }
        }
    }
}

#[test]
fn the_endurance_log_has_nvme_cli_2_6s_keys_and_counts_the_nands_writes() {
    // the keys nvme-cli 2.6 prints for `nvme endurance-log -o json`, in order
    // (nvme-print-json.c, json_endurance_log)
    let theirs = [
        "critical_warning",
        "endurance_group_features",
        "avl_spare",
        "avl_spare_threshold",
        "percent_used",
        "domain_identifier",
        "endurance_estimate",
        "data_units_read",
        "data_units_written",
        "media_units_written",
        "host_read_cmds",
        "host_write_cmds",
        "media_data_integrity_err",
        "num_err_info_log_entries",
        "total_end_grp_cap",
        "unalloc_end_grp_cap",
    ];
    let mut d = full_drive(Platform::default());
    let span = d.whole_span(4096);
    d.run(&Step::new("fill", Op::Write, 128 << 10, d.whole_span(128 << 10)).qd(32))
        .unwrap();
    d.run(
        &Step::new("random", Op::RandWrite, 4096, span)
            .qd(32)
            .io_size(2 * span),
    )
    .unwrap();
    let log = EnduranceLog::of(&d);
    let text = serde_json::to_string(&log).unwrap();
    let keys: Vec<String> = theirs.iter().map(|k| k.to_string()).collect();
    assert_eq!(printed_order(&text, &keys), keys);
    assert_eq!(json(&log).as_object().unwrap().len(), theirs.len());
    let smart = SmartLog::of(&d);
    assert_eq!(log.data_units_written, smart.data_units_written);
    // random writes over a full drive: garbage collection writes more than the host
    assert!(
        log.media_units_written > log.data_units_written * 11 / 10,
        "{log:?}"
    );
    // rated 600 TBW: 600e12 bytes in 512 000-byte units
    assert_eq!(log.endurance_estimate, 1_171_875_000);
}
