//! `[drive.ecc]`: error correction in tiers and their costs (see `crate::wear::ecc`).

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// The decoding tiers of a read: hard-decision decode, read retry, soft decode, parity
/// across the dies; past them the read is uncorrectable.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EccConfig {
    /// The most RBER hard-decision decoding corrects.
    /// Bound: [`bounds::RBER`](crate::bounds::RBER).
    pub hard_limit_rber: f64,
    /// Decoder time per iteration, µs; iterations of a decode that succeeds easily, and
    /// the most before it gives up.
    /// Bounds: [`bounds::DECODE_US`](crate::bounds::DECODE_US), [`bounds::ITERATIONS`](crate::bounds::ITERATIONS).
    pub iteration_us: f64,
    pub typical_iterations: u32,
    pub max_iterations: u32,
    /// Steps of the read-retry table: each senses the page again at shifted reference
    /// voltages; the last sits where the data's charge now is.
    /// Bound: [`bounds::RETRY_STEPS`](crate::bounds::RETRY_STEPS).
    pub retry_steps: u32,
    /// How many times its errors at the best voltages a retention-aged page shows at the
    /// default ones (what read retry wins back).
    /// Bound: [`bounds::RETENTION_SHIFT`](crate::bounds::RETENTION_SHIFT).
    pub retention_shift: f64,
    /// The most RBER soft decoding corrects, its extra senses, and its decode time on the
    /// drive's one soft decoder, µs.
    /// Bounds: [`bounds::RBER`](crate::bounds::RBER), [`bounds::RETRY_STEPS`](crate::bounds::RETRY_STEPS), [`bounds::DECODE_US`](crate::bounds::DECODE_US).
    pub soft_limit_rber: f64,
    pub soft_senses: u32,
    pub soft_decode_us: f64,
    /// The most RBER a page can have and still be rebuilt from the parity the drive keeps
    /// across its dies (None: no such parity).
    /// Bound: [`bounds::RBER`](crate::bounds::RBER).
    pub parity_limit_rber: Option<f64>,
}

impl Section for EccConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.ecc");
        f.add("hard_limit_rber", self.hard_limit_rber, &b::RBER);
        f.add("iteration_us", self.iteration_us, &b::DECODE_US);
        f.add(
            "typical_iterations",
            self.typical_iterations,
            &b::ITERATIONS,
        );
        f.add("max_iterations", self.max_iterations, &b::ITERATIONS);
        f.add("retry_steps", self.retry_steps, &b::RETRY_STEPS);
        f.add("retention_shift", self.retention_shift, &b::RETENTION_SHIFT);
        f.add("soft_limit_rber", self.soft_limit_rber, &b::RBER);
        f.add("soft_senses", self.soft_senses, &b::RETRY_STEPS);
        f.add("soft_decode_us", self.soft_decode_us, &b::DECODE_US);
        f.add_some("parity_limit_rber", self.parity_limit_rber, &b::RBER);
    }

    /// Each tier corrects more than the one before it.
    fn validate(&self) -> Result<(), ConfigError> {
        if self.typical_iterations > self.max_iterations {
            return Err(ConfigError(
                "drive.ecc.typical_iterations must be <= drive.ecc.max_iterations".into(),
            ));
        }
        let parity = self.parity_limit_rber.unwrap_or(f64::INFINITY);
        if !(self.hard_limit_rber < self.soft_limit_rber && self.soft_limit_rber < parity) {
            return Err(ConfigError(
                "drive.ecc: hard_limit_rber < soft_limit_rber < parity_limit_rber: each tier corrects more than the one before".into(),
            ));
        }
        Ok(())
    }
}
