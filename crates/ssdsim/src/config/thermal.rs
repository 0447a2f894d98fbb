//! `[drive.thermal]`: the thermal model (parsed and validated; not modelled yet).

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// Thermal model parameters (parsed and validated; not modelled yet).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThermalConfig {
    /// Thermal management threshold 1, °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub tmt1_c: f64,
    /// Thermal management threshold 2, °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub tmt2_c: f64,
    /// Ambient temperature, °C.
    /// Bound: [`bounds::AMBIENT_C`](crate::bounds::AMBIENT_C).
    pub ambient_c: Option<f64>,
}

impl Section for ThermalConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.thermal");
        f.add("tmt1_c", self.tmt1_c, &b::TMT_C);
        f.add("tmt2_c", self.tmt2_c, &b::TMT_C);
        f.add_some("ambient_c", self.ambient_c, &b::AMBIENT_C);
    }

    /// The thresholds in their natural order: the heavier throttling starts no sooner.
    fn validate(&self) -> Result<(), ConfigError> {
        if self.tmt2_c < self.tmt1_c {
            return Err(ConfigError(
                "drive.thermal.tmt2_c must be >= drive.thermal.tmt1_c".into(),
            ));
        }
        Ok(())
    }
}
