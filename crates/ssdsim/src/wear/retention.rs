//! Data age at a reference temperature: the Arrhenius clock of charge loss.
//!
//! Contract: [`RetentionClock`] counts equivalent seconds at the preset's reference
//! temperature. Time at temperature `T` counts `acceleration(T)` times (Arrhenius,
//! `exp(Ea / k (1 / T_ref - 1 / T))`, the activation energy a preset parameter), while
//! the drive is powered (at its own temperature) and while it is off (at the air's). A
//! superblock's data is as old as the clock's advance since it was programmed.

use crate::bounds::{self, Bound};
use crate::config::ErrorsConfig;
use serde::Deserialize;

/// The longest a drive may be left powered off in one step: a century.
pub const OFF_S: Bound = Bound::real(0.0, 3.2e9, "s");

/// A drive left powered off (on a shelf, in an oven) for `seconds` at `temperature_c`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerOff {
    pub seconds: f64,
    pub temperature_c: f64,
}

impl PowerOff {
    /// Both within their bounds; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        OFF_S.check("power_off.seconds", self.seconds)?;
        bounds::RETENTION_C.check("power_off.temperature_c", self.temperature_c)
    }
}

/// Boltzmann's constant, eV/K.
const BOLTZMANN_EV: f64 = 8.617_333_262e-5;
const KELVIN: f64 = 273.15;

/// Equivalent seconds at the reference temperature.
#[derive(Debug, Clone, Copy)]
pub struct RetentionClock {
    seconds: f64,
    activation_ev: f64,
    reference_c: f64,
}

impl RetentionClock {
    pub fn new(cfg: &ErrorsConfig) -> RetentionClock {
        RetentionClock {
            seconds: 0.0,
            activation_ev: cfg.activation_ev,
            reference_c: cfg.reference_c,
        }
    }

    /// How many times faster charge leaks at `celsius` than at the reference.
    pub fn acceleration(&self, celsius: f64) -> f64 {
        let inverse = |c: f64| 1.0 / (c + KELVIN);
        (self.activation_ev / BOLTZMANN_EV * (inverse(self.reference_c) - inverse(celsius))).exp()
    }

    /// `seconds` pass at `celsius`.
    pub fn advance(&mut self, seconds: f64, celsius: f64) {
        self.seconds += seconds.max(0.0) * self.acceleration(celsius);
    }

    /// Equivalent seconds so far.
    #[inline]
    pub fn now(&self) -> f64 {
        self.seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(ea: f64) -> RetentionClock {
        RetentionClock {
            seconds: 0.0,
            activation_ev: ea,
            reference_c: 30.0,
        }
    }

    #[test]
    fn jedec_s_year_at_30_c_is_about_500_h_at_52_100_h_at_66_and_14_h_at_85() {
        // CALIBRATION.md: "1 year at 30 °C is about 500 h at 52 °C, 100 h at 66 °C, 14 h at 85 °C"
        let c = clock(1.1);
        let year_h = 365.25 * 24.0;
        for (celsius, hours) in [(52.0, 500.0), (66.0, 100.0), (85.0, 14.0)] {
            let equivalent = year_h / c.acceleration(celsius);
            assert!(
                (equivalent / hours - 1.0).abs() < 0.2,
                "{celsius} °C: {equivalent:.0} h"
            );
        }
    }

    #[test]
    fn hotter_storage_equals_longer_storage_by_the_arrhenius_factor() {
        let (mut hot, mut long) = (clock(1.1), clock(1.1));
        hot.advance(3600.0, 70.0);
        long.advance(
            3600.0 * hot.acceleration(70.0) / hot.acceleration(40.0),
            40.0,
        );
        assert!((hot.now() / long.now() - 1.0).abs() < 1e-12);
        let mut flat = clock(0.0);
        flat.advance(10.0, 100.0);
        assert_eq!(flat.now(), 10.0);
    }
}
