//! Energy and power states: a step's energy adds up from what the drive did, idle time is
//! spent at the power of the state reached, the first command after an idle pays the exit
//! latency of that state, and heavy sequential writing draws what was published
//! (CALIBRATION.md, "Power under load", "Idle power states on Linux", tag CAL:POWER).
use crate::common::*;
use ssdsim::config::PowerConfig;
use ssdsim::{Drive, DriveConfig, Op, Platform, Step, StepResult, Work};

const NS: f64 = 1e-9;

fn small_tlc() -> DriveConfig {
    let p = small_tlc_path();
    DriveConfig::from_file(p).unwrap()
}

fn power_of(cfg: &DriveConfig) -> &PowerConfig {
    cfg.power.as_ref().expect("the preset has a power model")
}

/// The energy of `w` from the preset's figures, as the physics states it: V × I × time for
/// the NAND, the controller's power over its processor time, energy per byte elsewhere.
fn operations_j(cfg: &DriveConfig, w: &Work) -> f64 {
    let p = power_of(cfg);
    let n = &p.nand;
    let volts_amps = |ma: f64| n.vcc_v * ma / 1000.0;
    let channel_s = w.channel_units as f64 * 4096.0 / (cfg.nand.channel_mbps * 1e6);
    let channel_bytes = w.channel_units as f64 * 4096.0;
    volts_amps(n.read_ma) * w.read_ns as f64 * NS
        + volts_amps(n.program_ma) * w.program_ns as f64 * NS
        + volts_amps(n.erase_ma) * w.erase_ns as f64 * NS
        + volts_amps(n.io_ma) * channel_s
        + p.controller_active_w * w.processor_ns as f64 * NS
        + (p.controller_pj_per_byte + p.dram_pj_per_byte.unwrap_or(0.0)) * 1e-12 * channel_bytes
        + p.link_pj_per_byte * 1e-12 * w.link_bytes as f64
}

/// The energy of the time of step `r`: each power state's power over the time spent in it.
fn states_j(cfg: &DriveConfig, r: &StepResult) -> f64 {
    let p = power_of(cfg);
    let table = p.table();
    let e = r.energy.as_ref().unwrap();
    e.state_s[0] * p.active_idle_w
        + e.state_s[1..]
            .iter()
            .zip(&table[1..])
            .map(|(s, state)| s * state.measured_w.unwrap_or(state.max_w))
            .sum::<f64>()
}

fn close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs().max(1e-12),
        "{what}: {got} vs {want}"
    );
}

fn total_j(r: &StepResult) -> f64 {
    let e = r.energy.as_ref().unwrap();
    e.busy_j + e.idle_j
}

#[test]
fn a_steps_energy_is_its_operations_plus_the_power_of_its_states_over_its_time() {
    let cfg = small_tlc();
    let p = power_of(&cfg).clone();
    let mut d = Drive::new(cfg.clone()).unwrap();
    // Sequential writes into the SLC cache of a fresh drive: every NAND operation is a
    // program of a whole program unit, counted here from the drive's own counters.
    let bytes = GIB;
    let w = d
        .run(&Step::new("write", Op::Write, 128 * KIB, bytes).qd(32))
        .unwrap();
    let e = w.energy.as_ref().unwrap();
    let pu_units = 8; // 2 planes x 16 KiB
    let programs = w.counters.nand_write_bytes / 4096 / pu_units;
    let slc_prog_ns = (cfg.nand.slc.t_prog_us * 1000.0) as u64;
    let commands = bytes / (128 * KIB);
    let expected = Work {
        read_ns: 0,
        program_ns: programs * slc_prog_ns,
        erase_ns: 0,
        channel_units: w.counters.nand_write_bytes / 4096,
        processor_ns: commands * (cfg.controller.write_cmd_us * 1000.0) as u64,
        link_bytes: bytes,
    };
    assert_eq!(e.work, expected);
    assert_eq!(e.idle_j, 0.0);
    close(
        "write step J",
        e.busy_j,
        p.active_idle_w * w.busy_s + operations_j(&cfg, &expected),
        1e-9,
    );
    // Reads, then an idle in which the drive folds its cache and sleeps: its energy is the
    // operations', whenever they ran, and each state's power over the time spent in it.
    let r = d
        .run(
            &Step::new("read", Op::RandRead, 4 * KIB, bytes)
                .qd(8)
                .io_size(8 * MIB)
                .idle_after(5.0),
        )
        .unwrap();
    let e = r.energy.as_ref().unwrap();
    assert!(e.work.read_ns > 0 && e.work.program_ns > 0, "{:?}", e.work);
    assert!(e.state_s[3] > 1.0 && e.state_s[4] > 1.0, "{:?}", e.state_s);
    close(
        "time in the states",
        e.state_s.iter().sum(),
        r.busy_s + r.idle_s,
        1e-9,
    );
    close(
        "read and idle step J",
        total_j(&r),
        states_j(&cfg, &r) + operations_j(&cfg, &e.work),
        1e-9,
    );
    // The idle's share: the folding it did, and the states' power rather than the awake one.
    assert!(e.idle_j < p.active_idle_w * r.idle_s, "{e:?}");
    assert!(e.busy_j > p.active_idle_w * r.busy_s, "{e:?}");
}

/// Latency of one 4 KiB QD1 read of the drive's first block, after `idle_before` s of idle.
fn first_read_ns(d: &mut Drive, idle_before: f64) -> u64 {
    d.run(&Step::new("idle", Op::Read, 4 * KIB, 4 * KIB).idle_after(idle_before))
        .unwrap();
    let r = d
        .run(&Step::new("first read", Op::Read, 4 * KIB, 4 * KIB))
        .unwrap();
    r.read.unwrap().latency.max_ns
}

/// A drive with data written and its cache folded, so that idles do no work of their own.
fn settled(name: &str, platform: Platform) -> Drive {
    let mut d = Drive::with_platform(preset(name), 1, platform).unwrap();
    d.run(
        &Step::new("data", Op::Write, 128 * KIB, 64 * MIB)
            .qd(32)
            .idle_after(30.0),
    )
    .unwrap();
    d
}

#[test]
fn the_first_read_after_idle_pays_the_exit_latency_of_the_state_reached() {
    let mut d = settled("wd-sn850-1tb", Platform::default());
    let warm = first_read_ns(&mut d, 0.0);
    let after = |d: &mut Drive, s: f64| first_read_ns(d, s) - warm;
    // Below the drive's own clock gating (1 ms), no wake-up; below the first APST tier
    // (100 ms) the exit of active idle (CAL:SN850 "exit latency about 165 µs"); past 2 s
    // in PS3, PS4's declared exit (CAL:PS "0.005 (5000/45000)").
    assert_eq!(after(&mut d, 0.0005), 0);
    assert_eq!(after(&mut d, 0.05), 165_000);
    assert_eq!(after(&mut d, 0.5), 10_000_000);
    assert_eq!(after(&mut d, 3.0), 45_000_000);
    // APST off: the drive never leaves active idle.
    d.set_platform(Platform {
        apst_max_latency_us: 0,
        ..Platform::default()
    })
    .unwrap();
    assert_eq!(after(&mut d, 3.0), 165_000);
    // A latency limit below PS4's exit keeps the drive in PS3.
    d.set_platform(Platform {
        apst_max_latency_us: 20_000,
        ..Platform::default()
    })
    .unwrap();
    assert_eq!(after(&mut d, 3.0), 10_000_000);
}

// CALIBRATION.md: "in one lab the SN850 and 980 PRO never left an active-idle level of
// about 1.3 W and 2.0 W", with exits of about 165 and 408 µs.
#[test]
fn a_platform_without_low_states_idles_at_active_idle_power_and_wakes_in_its_measured_exit() {
    let no_low_states = Platform {
        low_power_states: false,
        ..Platform::default()
    };
    for (name, watts, exit_ns) in [
        ("wd-sn850-1tb", 1.33, 165_000),
        ("samsung-980pro-1tb", 2.04, 408_000),
    ] {
        let mut d = settled(name, no_low_states);
        let warm = first_read_ns(&mut d, 0.0);
        let r = d
            .run(&Step::new("idle", Op::Read, 4 * KIB, 4 * KIB).idle_after(120.0))
            .unwrap();
        let e = r.energy.as_ref().unwrap();
        close(name, e.idle_j, watts * 120.0, 1e-9);
        assert_eq!(e.state_s[1..].iter().sum::<f64>(), 0.0);
        let cold = d
            .run(&Step::new("first read", Op::Read, 4 * KIB, 4 * KIB))
            .unwrap();
        assert_eq!(cold.read.unwrap().latency.max_ns - warm, exit_ns, "{name}");
    }
}

/// Mean power over a 2-minute idle (METHODOLOGY.md, idle-power), W.
fn idle_power_w(name: &str) -> f64 {
    let mut d = settled(name, Platform::default());
    let r = d
        .run(&Step::new("idle", Op::Read, 4 * KIB, 4 * KIB).idle_after(120.0))
        .unwrap();
    r.energy.unwrap().idle_j / r.idle_s
}

/// `got` is `want` less at most `sooner_s` of idle moved from `awake_w` to `asleep_w` over
/// 120 s: the firmware's 1 ms timer tick brings the entries up to a tick sooner.
fn idle_w_close(what: &str, got: f64, want: f64, awake_w: f64, asleep_w: f64) {
    let sooner_s = 1e-3;
    let most = sooner_s * (awake_w - asleep_w) / 120.0;
    let slack = 1e-6 * want; // rounding
    assert!(
        want - most - slack <= got && got <= want + slack,
        "{what}: {got} vs {want} less up to {most}"
    );
}

#[test]
fn idle_time_is_spent_at_the_power_of_each_state_reached() {
    // SN850 (CAL:PS): 105 ms awake at 1.33 W (100 ms to PS3, 5 ms entering it), 2005 ms in
    // PS3 at 25 mW (2 s, then 5 ms entering PS4), the rest in PS4 at 5 mW, each entry up
    // to a timer tick sooner.
    let want = (0.105 * 1.33 + 2.005 * 0.025 + (120.0 - 2.110) * 0.005) / 120.0;
    let got = idle_power_w("wd-sn850-1tb");
    idle_w_close("SN850 idle W", got, want, 1.33, 0.005);
    // 980 PRO: straight to PS4 after 100 ms (CALIBRATION.md, "Idle power states on Linux").
    let want = (0.1005 * 2.04 + (120.0 - 0.1005) * 0.005) / 120.0;
    let got = idle_power_w("samsung-980pro-1tb");
    idle_w_close("980 PRO idle W", got, want, 2.04, 0.005);
    // P5 Plus: the lab's measured powers, CAL:P5P "PS4 about 61 mW ... PS3 about 57 mW".
    let p5 = idle_power_w("crucial-p5plus-1tb");
    assert!((0.061..0.075).contains(&p5), "P5 Plus idle {p5} W");
}

/// Mean power of 128 KiB QD32 sequential writes at 10 % filled, W (busy time).
fn seq_write_w(name: &str) -> f64 {
    let mut d = measured(name);
    let off = fill_to(&mut d, 0.10, 60.0);
    let r = d
        .run(
            &Step::new("seq write", Op::Write, 128 * KIB, 8 * GIB)
                .offset(off)
                .qd(32),
        )
        .unwrap();
    let watts = r.energy.as_ref().unwrap().busy_j / r.busy_s;
    eprintln!("{name}: {:.0} MB/s at {watts:.2} W", r.mbps());
    watts
}

// CALIBRATION.md, "Power under load": the SN850 draws about 6.6 W (tuned through the
// controller's energy per byte, tolerance 5 %); the WD Black 2018 writes sequentially at
// "just over 4 W" (4.0 to 4.4 W).
#[test]
fn heavy_sequential_writing_draws_the_published_power() {
    let sn850 = seq_write_w("wd-sn850-1tb");
    close("SN850 W", sn850, 6.6, 0.05);
    let wd_black = seq_write_w("wd-black-2018-1tb");
    assert!((4.0..4.4).contains(&wd_black), "WD Black 2018 {wd_black} W");
}

// A prediction, not an input: the WD Black 2018's "mixed random under 2 W for most of the
// test, not quite 4 W at the pure-write end" (CALIBRATION.md, "Power under load").
#[test]
fn the_wd_black_2018_draws_under_2_w_mixing_and_not_quite_4_w_writing_randomly() {
    let mut d = measured("wd-black-2018-1tb");
    let span = fill_to(&mut d, 0.10, 60.0);
    let watts = |d: &mut Drive, step: Step| {
        let r = d.run(&step.runtime(1.0).idle_after(1.0)).unwrap();
        r.energy.unwrap().busy_j / r.busy_s
    };
    let mixed = watts(
        &mut d,
        Step::new("mix", Op::RandRw, 4 * KIB, span).qd(4).mix(50),
    );
    let writes = watts(
        &mut d,
        Step::new("writes", Op::RandWrite, 4 * KIB, span).qd(4),
    );
    eprintln!("WD Black 2018 4 KiB QD4: 50/50 mix {mixed:.2} W, writes {writes:.2} W");
    assert!(mixed < 2.0, "{mixed} W");
    assert!((3.0..4.0).contains(&writes), "{writes} W");
}

#[test]
fn a_step_whose_commands_waited_for_the_drive_to_wake_says_from_which_state() {
    let mut d = settled("wd-sn850-1tb", Platform::default());
    let read = |d: &mut Drive, idle: f64| {
        d.run(&Step::new("idle", Op::Read, 4 * KIB, 4 * KIB).idle_after(idle))
            .unwrap();
        d.run(&Step::new("first read", Op::Read, 4 * KIB, 4 * KIB))
            .unwrap()
    };
    // 3 s idle: PS4 (CAL:PS), its 45 ms exit in the read's latency, and said
    let r = read(&mut d, 3.0);
    let note = r
        .notes
        .iter()
        .find(|n| n.contains("waited for the drive to wake"));
    let note = note.expect("a note on the wake-up");
    assert!(note.contains("1 from PS4 (up to 45.000 ms)"), "{note}");
    // 50 ms idle: active idle's 165 µs exit
    let r = read(&mut d, 0.05);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("1 from active idle (up to 0.165 ms)")),
        "{:?}",
        r.notes
    );
    // no idle: nothing waited, nothing said
    let r = read(&mut d, 0.0);
    assert!(!r.notes.iter().any(|n| n.contains("wake")), "{:?}", r.notes);
}

/// Maximum latency (µs) and the wake note of a minute-long light load (4 KiB random writes
/// at `iops`) on a settled SN850 under `platform`, woken first from its settling idle.
fn light_load(platform: Platform, iops: u64) -> (f64, String) {
    let mut d = settled("wd-sn850-1tb", platform);
    first_read_ns(&mut d, 0.0);
    let r = d
        .run(
            &Step::new("light", Op::RandWrite, 4 * KIB, GIB)
                .rate(iops)
                .runtime(60.0),
        )
        .unwrap();
    let note = r.notes.iter().find(|n| n.contains("wake")).cloned();
    (
        r.write.unwrap().latency.max_ns as f64 / 1e3,
        note.unwrap_or_default(),
    )
}

// Issue 27: at 10 IOPS the host leaves 100 ms less each command's latency between commands,
// just under Linux's 100 ms APST tier. The drive's firmware counts that idle in 1 ms ticks
// (a tick under way counts in full), so it often enters PS3 shortly before a command
// arrives (the command after that one, its gap shortened by that wake, finds it in active
// idle), and the light load's maximum is PS3's wake-up: milliseconds. With APST off the drive only
// gates its clocks (165 µs); kept awake by a load without gaps past active idle's entry,
// nothing wakes at all.
#[test]
fn a_light_load_wakes_from_the_state_the_drive_entered_and_not_when_kept_awake() {
    let (apst, apst_note) = light_load(Platform::default(), 10);
    let off = Platform {
        apst_max_latency_us: 0,
        ..Platform::default()
    };
    let (no_apst, no_apst_note) = light_load(off, 10);
    let (awake, awake_note) = light_load(Platform::default(), 2000);
    eprintln!(
        "10 IOPS: {apst:.0} us ({apst_note}); APST off: {no_apst:.0} us; 2000 IOPS: {awake:.0} us"
    );
    // PS3's 10 ms exit (CAL:PS), and part of its 5 ms entry when a command comes during it
    assert!((10_000.0..15_100.0).contains(&apst), "{apst} us");
    assert!(apst_note.contains("from PS3"), "{apst_note}");
    assert!((165.0..200.0).contains(&no_apst), "{no_apst} us");
    assert!(no_apst_note.contains("from active idle"), "{no_apst_note}");
    assert!(!no_apst_note.contains("from PS"), "{no_apst_note}");
    assert!(awake < 100.0, "{awake} us");
    assert!(awake_note.is_empty(), "{awake_note}");
}
