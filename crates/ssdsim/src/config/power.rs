//! `[drive.power]`: the power model (parsed and validated; not modelled yet).

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// Power model parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// Lowest idle power actually reached, W.
    /// Bound: [`bounds::IDLE_W`](crate::bounds::IDLE_W).
    pub idle_w: f64,
    /// Exit latency of that idle state, µs.
    /// Bound: [`bounds::IDLE_EXIT_US`](crate::bounds::IDLE_EXIT_US).
    pub idle_exit_us: f64,
    /// Peak power, W.
    /// Bound: [`bounds::PEAK_W`](crate::bounds::PEAK_W).
    pub peak_w: Option<f64>,
}

impl Section for PowerConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.power");
        f.add("idle_w", self.idle_w, &b::IDLE_W);
        f.add("idle_exit_us", self.idle_exit_us, &b::IDLE_EXIT_US);
        f.add_some("peak_w", self.peak_w, &b::PEAK_W);
    }

    /// The powers in their natural order: the drive draws no less at its peak than idle.
    fn validate(&self) -> Result<(), ConfigError> {
        if self.peak_w.is_some_and(|peak| peak < self.idle_w) {
            return Err(ConfigError(
                "drive.power.peak_w must be >= drive.power.idle_w".into(),
            ));
        }
        Ok(())
    }
}
