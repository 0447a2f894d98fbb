//! The raw bit error rate (RBER) of a page.
//!
//! Contract of [`RawErrors`]: given the wear of a page's block (native P/E cycles), its
//! data's age (equivalent seconds at the reference temperature, see [`super::retention`])
//! and the reads its block has seen since it was programmed, the page's RBER at the best
//! reference voltages, as two parts: the errors that do not move the cells' threshold
//! voltages as a whole (fresh, wear, read disturb) and those of charge loss, which read
//! retry wins back in part (see [`super::ecc`]). More wear, older or hotter-kept data and
//! more reads never give fewer errors.

use crate::config::ErrorsConfig;

/// Seconds in a year (the retention term's unit of time).
pub const YEAR_S: f64 = 365.25 * 24.0 * 3600.0;
/// Block reads of the read-disturb term's unit.
const READS_UNIT: f64 = 1e5;

/// A page's RBER at the best reference voltages, in two parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rber {
    /// Fresh, wear and read-disturb errors.
    pub steady: f64,
    /// Charge lost since the page was programmed.
    pub retention: f64,
}

impl Rber {
    pub fn total(&self) -> f64 {
        self.steady + self.retention
    }
}

/// A model of raw bit errors (see module docs).
pub trait RawErrors: Send + Sync {
    fn rber(&self, cycles: f64, age_s: f64, block_reads: f64) -> Rber;
}

/// Power laws in wear, retention time and reads (CALIBRATION.md):
/// `fresh + wear_rber (N / rated)^k + s(N) (retention_rber (t / 1 year)^n + read_rber (R / 1e5)^q)`
/// with `s(N) = (1 + N / wear_scale_cycles)^wear_scale_exponent`: worn cells leak and are
/// disturbed faster.
pub struct PowerLaw {
    cfg: ErrorsConfig,
    rated_cycles: f64,
}

impl PowerLaw {
    pub fn new(cfg: &ErrorsConfig, rated_cycles: u32) -> PowerLaw {
        PowerLaw {
            cfg: cfg.clone(),
            rated_cycles: rated_cycles as f64,
        }
    }
}

impl RawErrors for PowerLaw {
    fn rber(&self, cycles: f64, age_s: f64, block_reads: f64) -> Rber {
        let c = &self.cfg;
        let worn = (1.0 + cycles.max(0.0) / c.wear_scale_cycles).powf(c.wear_scale_exponent);
        let wear = c.wear_rber * (cycles.max(0.0) / self.rated_cycles).powf(c.wear_exponent);
        let disturb =
            c.read_disturb_rber * (block_reads.max(0.0) / READS_UNIT).powf(c.read_disturb_exponent);
        let retention = c.retention_rber * (age_s.max(0.0) / YEAR_S).powf(c.retention_exponent);
        Rber {
            steady: c.fresh_rber + wear + worn * disturb,
            retention: worn * retention,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The TLC estimates of CALIBRATION.md as a preset states them (drives/*.toml).
    pub fn tlc() -> ErrorsConfig {
        ErrorsConfig {
            fresh_rber: 5e-5,
            wear_rber: 9.5e-4,
            wear_exponent: 1.96,
            retention_rber: 2.5e-4,
            retention_exponent: 0.4,
            read_disturb_rber: 2e-4,
            read_disturb_exponent: 1.0,
            wear_scale_cycles: 180.0,
            wear_scale_exponent: 0.967,
            activation_ev: 1.1,
            reference_c: 30.0,
            codeword_sigma: 0.3,
        }
    }

    #[test]
    fn the_estimates_of_calibration_md_are_met() {
        // CALIBRATION.md, TLC at 0 / 1000 / 3000 P/E: fresh 5e-5 / 1.6e-4 / 1.0e-3;
        // after 1 year at 30 °C 3.0e-4 / 1.7e-3 / 5.0e-3.
        let m = PowerLaw::new(&tlc(), 3000);
        for (cycles, fresh, year) in [
            (0.0, 5e-5, 3e-4),
            (1000.0, 1.6e-4, 1.7e-3),
            (3000.0, 1e-3, 5e-3),
        ] {
            let at = |t| m.rber(cycles, t, 0.0).total();
            assert!(
                (at(0.0) / fresh - 1.0).abs() < 0.06,
                "{cycles}: {}",
                at(0.0)
            );
            assert!(
                (at(YEAR_S) / year - 1.0).abs() < 0.06,
                "{cycles}: {}",
                at(YEAR_S)
            );
        }
    }

    #[test]
    fn more_wear_older_data_and_more_reads_never_give_fewer_errors() {
        let m = PowerLaw::new(&tlc(), 3000);
        let mut last = 0.0;
        for cycles in [0.0, 10.0, 500.0, 3000.0, 9000.0] {
            for age in [0.0, 60.0, 3600.0, YEAR_S, 10.0 * YEAR_S] {
                for reads in [0.0, 1e3, 1e5, 1e6] {
                    let r = m.rber(cycles, age, reads).total();
                    assert!(r >= m.rber(cycles, age, reads / 2.0).total());
                    assert!(r >= m.rber(cycles, age / 2.0, reads).total());
                    assert!(r >= m.rber(cycles / 2.0, age, reads).total());
                    last = r;
                }
            }
        }
        assert!(last > 1e-2);
    }
}
