//! The drive's heat and throttling, emerging from its energy (CALIBRATION.md, "Thermal").

use crate::common::*;
use ssdsim::health::SmartLog;
use ssdsim::thermal::Cooling;
use ssdsim::{Drive, DriveConfig, Op, Platform, SimError, Step, StepResult};

const SN850: &str = "wd-sn850-1tb";

/// A drive on a platform that keeps it out of its low power states (as the lab's SN850
/// was, CALIBRATION.md): idle, it stays at its active-idle power, and warm.
fn on(cfg: DriveConfig, cooling: Cooling, ambient_c: f64) -> Drive {
    let platform = Platform {
        cooling,
        ambient_c,
        ..MEASURING_PLATFORM
    };
    Drive::with_platform(cfg, 1, platform).unwrap()
}

/// 128 KiB QD32 sequential writes for `seconds`, wrapping over the 1 TB drive
/// (METHODOLOGY.md's thermal-soak for 1200 s).
fn soak(seconds: f64) -> Step {
    Step {
        time_based: true,
        ..Step::new("soak", Op::Write, 128 * KIB, 7_000_000 * 128 * KIB)
            .qd(32)
            .runtime(seconds)
    }
}

fn idle(seconds: f64) -> Step {
    Step::new("idle", Op::Read, 4 * KIB, 4 * KIB).idle_after(seconds)
}

// CALIBRATION.md, "WD SN850": it "throttles within about 20 minutes of sequential writing
// without a heatsink"; the issue: not within the first minute, and not at all with a
// heatsink. Throttling holds its power under PS1's 4.1 W, which costs throughput
// (CAL:THERMAL "light throttle to 50-75 % of the bandwidth"), and it recovers as it cools.
#[test]
fn the_sn850_throttles_after_minutes_of_writing_bare_and_not_with_a_heatsink() {
    let mut runs = on_every_core(vec![Cooling::Bare, Cooling::Heatsink], |cooling| {
        let mut d = on(preset(SN850), cooling, 35.0);
        let first_minute = d.run(&soak(60.0)).unwrap();
        assert_eq!(d.thermal_log().unwrap().light_entries, 0, "{cooling:?}");
        let rest = d.run(&soak(1140.0)).unwrap();
        assert_eq!(rest.temperature_c.len(), rest.per_second.len());
        let log = d.thermal_log().unwrap();
        let hottest = rest.temperature_c.iter().cloned().fold(f64::MIN, f64::max);
        (d, first_minute, rest, log, hottest)
    });
    let [bare, heatsink] = &mut runs[..] else {
        unreachable!()
    };
    assert!(
        bare.3.light_entries >= 1 && bare.3.light_s > 0.0,
        "{:?}",
        bare.3
    );
    assert_eq!(heatsink.3.light_entries, 0, "{:?}", heatsink.3);
    assert!(
        heatsink.4 < 70.0 && bare.4 > 75.0,
        "{} {}",
        heatsink.4,
        bare.4
    );
    // The same writes, throttled in the last ten minutes on the bare drive only.
    let last_600 = |r: &StepResult| {
        mean(
            &r.per_second[540..1140]
                .iter()
                .map(|p| p.mbps)
                .collect::<Vec<_>>(),
        )
    };
    let (throttled, free) = (last_600(&bare.2), last_600(&heatsink.2));
    assert!(throttled < 0.95 * free, "{throttled:.0} vs {free:.0} MB/s");
    // It cools once the writing stops, and writes as fast as before it throttled again.
    let rest = bare.0.run(&idle(600.0)).unwrap();
    assert!(*rest.temperature_c.last().unwrap() < 60.0);
    let entries = bare.0.thermal_log().unwrap().light_entries;
    let cooled = bare.0.run(&soak(10.0)).unwrap();
    assert_eq!(bare.0.thermal_log().unwrap().light_entries, entries);
    assert!(
        cooled.mbps() > throttled / 0.95,
        "{:.0} vs {throttled:.0} MB/s",
        cooled.mbps()
    );
}

// CALIBRATION.md, "Thermal": "temperature rise = sum of R_i x P x (1 - e^(-t/tau_i))":
// a drive that cannot sleep idles at its active-idle power and settles at ambient + P x R.
#[test]
fn an_idle_drive_settles_at_ambient_plus_its_power_times_its_resistance() {
    let cfg = preset(SN850);
    let rc = cfg.thermal.as_ref().unwrap().rc.clone().unwrap();
    let watts = cfg.power.as_ref().unwrap().active_idle_w;
    for cooling in [Cooling::Bare, Cooling::Heatsink, Cooling::Fan] {
        let platform = Platform {
            cooling,
            ..MEASURING_PLATFORM
        };
        let mut d = Drive::with_platform(cfg.clone(), 1, platform).unwrap();
        let r = d.run(&idle(5000.0)).unwrap();
        let expected =
            platform.ambient_c + watts * (rc.controller_k_per_w + rc.cooling_k_per_w(cooling));
        let settled = *r.temperature_c.last().unwrap();
        assert!(
            (settled - expected).abs() < 0.05,
            "{cooling:?}: {settled} vs {expected}"
        );
    }
}

// CALIBRATION.md: the SN850's "throttling reacts more to the rate of temperature rise
// than to the absolute level": a warm drive starting to write throttles before its sensor
// reaches TMT1; without the trigger it does not.
#[test]
fn a_fast_rise_throttles_a_warm_drive_before_it_reaches_tmt1() {
    let without_trigger = {
        let mut cfg = preset(SN850);
        if let Some(t) = cfg.thermal.as_mut().and_then(|t| t.throttle.as_mut()) {
            t.rise_lookahead_s = None;
        }
        cfg
    };
    let mut seen = vec![];
    for cfg in [preset(SN850), without_trigger] {
        // idle at about 35 + 1.33 x 9 + 22 = 69 °C, then write for 3 s
        let mut d = on(cfg, Cooling::Bare, 57.0);
        d.run(&idle(3000.0)).unwrap();
        let r = d.run(&soak(3.0)).unwrap();
        let hottest = r.temperature_c.iter().cloned().fold(f64::MIN, f64::max);
        assert!(hottest < 80.0, "{hottest}");
        seen.push(d.thermal_log().unwrap().light_entries);
    }
    assert!(seen[0] >= 1, "{seen:?}");
    assert_eq!(seen[1], 0, "{seen:?}");
}

// CALIBRATION.md: "an overheated controller can drop off the bus near 100 °C". In air too
// hot for even heavy throttling to hold it, the drive stops, the step fails as on a real
// drive, the health log keeps it, and the drive runs again once it has cooled.
#[test]
fn a_drive_too_hot_to_hold_drops_off_the_bus_and_remembers() {
    let mut d = on(preset(SN850), Cooling::Bare, 80.0);
    let failed = d.run(&soak(600.0));
    let Err(SimError::DriveFailed(message)) = failed else {
        panic!("expected the drive to fail: {failed:?}");
    };
    assert!(message.contains("dropped off the bus"), "{message}");
    let log = d.thermal_log().unwrap();
    assert_eq!(log.shutdowns, 1);
    assert!(log.heavy_entries >= 1 && log.critical_s > 0.0, "{log:?}");
    let health = SmartLog::of(&d);
    assert_eq!((health.media_errors, health.unsafe_shutdowns), (1, 1));
    assert!(health.thm_temp2_trans_count >= 1 && health.critical_comp_time <= 10);
    d.set_platform(Platform {
        ambient_c: 25.0,
        ..Platform::default()
    })
    .unwrap();
    d.run(&idle(1200.0)).unwrap();
    d.run(&soak(2.0)).unwrap();
    assert_eq!(d.thermal_log().unwrap().shutdowns, 1);
    // cool again, the drive keeps its critical warning (temperature) and its media error
    let health = SmartLog::of(&d);
    assert_eq!(
        (health.critical_warning & 0b10, health.media_errors),
        (0b10, 1)
    );
}

// A drive whose preset has no thermal model reports no temperatures.
#[test]
fn a_drive_without_a_thermal_model_reports_no_temperature() {
    let mut cfg = preset(SN850);
    cfg.thermal = None;
    let mut d = Drive::new(cfg).unwrap();
    assert!(d.run(&soak(1.0)).unwrap().temperature_c.is_empty());
    assert!(d.thermal_log().is_none());
}

// The air around the drive is bounded in the core, not only at the Python boundary: a
// drive is not built in air out of range, and a platform change out of range changes nothing.
#[test]
fn air_out_of_range_is_refused_with_its_range() {
    let hot = Platform {
        ambient_c: 200.0,
        ..Platform::default()
    };
    let built = Drive::with_platform(preset(SN850), 1, hot);
    let Err(SimError::Config(e)) = built else {
        panic!("a drive in 200 °C air was built");
    };
    assert!(e.0.contains("ambient_c") && e.0.contains("85"), "{e}");
    let mut d = Drive::new(preset(SN850)).unwrap();
    let before = d.platform();
    assert!(d.set_platform(hot).is_err());
    assert_eq!(d.platform(), before);
}

#[test]
fn a_drive_switched_off_comes_back_cool() {
    let mut d = on(preset(SN850), Cooling::Bare, 35.0);
    d.run(&soak(120.0)).unwrap();
    let warm = *d.run(&idle(1.0)).unwrap().temperature_c.first().unwrap();
    let off = ssdsim::wear::retention::PowerOff {
        seconds: 3600.0,
        temperature_c: 25.0,
    };
    d.run(&Step::off("off", off)).unwrap();
    let log = SmartLog::of(&d);
    assert!(warm > 45.0, "{warm}");
    // at the run's air when it is powered again (its shelf's air is not the run's)
    assert_eq!(log.temperature, 308, "{log:?}");
    assert_eq!(log.power_cycles, 2);
}
