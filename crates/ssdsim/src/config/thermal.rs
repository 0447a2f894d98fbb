//! `[drive.thermal]`: the drive's thermal thresholds, and the model of its heat.
//!
//! The thresholds (TMT1, TMT2, WCTEMP, CCTEMP) are what the drive declares. With
//! `[drive.thermal.rc]` and `[drive.thermal.throttle]` the drive heats and throttles
//! (`crate::thermal`); without them it reports its thresholds and stays cool.

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// Thermal thresholds and model.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThermalConfig {
    /// Thermal management threshold 1 (light throttling above it), °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub tmt1_c: f64,
    /// Thermal management threshold 2 (heavy throttling above it), °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub tmt2_c: f64,
    /// Warning and critical composite temperatures (Identify Controller's WCTEMP and
    /// CCTEMP), °C; the health log counts the time spent above each.
    /// Bound of each: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub wctemp_c: Option<f64>,
    pub cctemp_c: Option<f64>,
    /// The temperature at which the controller stops answering (drops off the bus), °C.
    /// Bound: [`bounds::TMT_C`](crate::bounds::TMT_C).
    pub shutdown_c: Option<f64>,
    pub rc: Option<RcConfig>,
    pub throttle: Option<ThrottleConfig>,
}

/// A two-node RC network: the controller (where the heat is made and the sensor is)
/// over the board, which the air cools through the run's cooling.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RcConfig {
    /// Thermal resistance from the controller to the board, K/W.
    /// Bound: [`bounds::THERMAL_K_PER_W`](crate::bounds::THERMAL_K_PER_W).
    pub controller_k_per_w: f64,
    /// Heat capacity of the controller node and of the board node, J/K.
    /// Bound of each: [`bounds::HEAT_CAPACITY_J_PER_K`](crate::bounds::HEAT_CAPACITY_J_PER_K).
    pub controller_j_per_k: f64,
    pub board_j_per_k: f64,
    /// Thermal resistance from the board to the air, per cooling, K/W.
    /// Bound of each: [`bounds::THERMAL_K_PER_W`](crate::bounds::THERMAL_K_PER_W).
    pub bare_k_per_w: f64,
    pub heatsink_k_per_w: f64,
    pub fan_k_per_w: f64,
}

/// How the firmware throttles: by capping its power at that of a lower operational
/// power state (`light_state` above TMT1, `heavy_state` above TMT2), released once the
/// temperature is `hysteresis_k` below the threshold.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThrottleConfig {
    /// Bound: [`bounds::HYSTERESIS_K`](crate::bounds::HYSTERESIS_K).
    pub hysteresis_k: f64,
    /// Operational power states (numbers in `[drive.power.states]`) whose maximum power
    /// caps the drive's when throttled lightly and heavily.
    /// Bound of each: [`bounds::THROTTLE_STATE`](crate::bounds::THROTTLE_STATE).
    pub light_state: i64,
    pub heavy_state: i64,
    /// A rate-of-rise trigger, where the drive has one: light throttling starts when the
    /// temperature, rising as fast as over the last second, would reach TMT1 within this
    /// many seconds. Bound: [`bounds::LOOKAHEAD_S`](crate::bounds::LOOKAHEAD_S).
    pub rise_lookahead_s: Option<f64>,
}

impl RcConfig {
    /// The board-to-air resistance with `cooling`, K/W.
    pub fn cooling_k_per_w(&self, cooling: crate::thermal::Cooling) -> f64 {
        use crate::thermal::Cooling;
        match cooling {
            Cooling::Bare => self.bare_k_per_w,
            Cooling::Heatsink => self.heatsink_k_per_w,
            Cooling::Fan => self.fan_k_per_w,
        }
    }
}

impl ThermalConfig {
    /// The model's parts, when the drive heats (all present after validation, or none).
    pub fn model(&self) -> Option<(&RcConfig, &ThrottleConfig)> {
        Some((self.rc.as_ref()?, self.throttle.as_ref()?))
    }

    /// The four declared thresholds, as the health log and Identify give them, when the
    /// preset declares WCTEMP and CCTEMP.
    pub fn limits(&self) -> Option<crate::thermal::ThermalLimits> {
        Some(crate::thermal::ThermalLimits {
            wctemp_c: self.wctemp_c?,
            cctemp_c: self.cctemp_c?,
            tmt1_c: self.tmt1_c,
            tmt2_c: self.tmt2_c,
        })
    }
}

impl Section for ThermalConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.thermal");
        f.add("tmt1_c", self.tmt1_c, &b::TMT_C);
        f.add("tmt2_c", self.tmt2_c, &b::TMT_C);
        f.add_some("wctemp_c", self.wctemp_c, &b::TMT_C);
        f.add_some("cctemp_c", self.cctemp_c, &b::TMT_C);
        f.add_some("shutdown_c", self.shutdown_c, &b::TMT_C);
        if let Some(rc) = &self.rc {
            f.table("drive.thermal.rc");
            for (key, value) in [
                ("controller_k_per_w", rc.controller_k_per_w),
                ("bare_k_per_w", rc.bare_k_per_w),
                ("heatsink_k_per_w", rc.heatsink_k_per_w),
                ("fan_k_per_w", rc.fan_k_per_w),
            ] {
                f.add(key, value, &b::THERMAL_K_PER_W);
            }
            f.add(
                "controller_j_per_k",
                rc.controller_j_per_k,
                &b::HEAT_CAPACITY_J_PER_K,
            );
            f.add("board_j_per_k", rc.board_j_per_k, &b::HEAT_CAPACITY_J_PER_K);
        }
        if let Some(t) = &self.throttle {
            f.table("drive.thermal.throttle");
            f.add("hysteresis_k", t.hysteresis_k, &b::HYSTERESIS_K);
            f.add("light_state", t.light_state as f64, &b::THROTTLE_STATE);
            f.add("heavy_state", t.heavy_state as f64, &b::THROTTLE_STATE);
            f.add_some("rise_lookahead_s", t.rise_lookahead_s, &b::LOOKAHEAD_S);
        }
    }

    /// The thresholds in their natural order; a model whole or absent.
    fn validate(&self) -> Result<(), ConfigError> {
        let order = [
            ("tmt1_c", Some(self.tmt1_c)),
            ("tmt2_c", Some(self.tmt2_c)),
            ("cctemp_c", self.cctemp_c),
            ("shutdown_c", self.shutdown_c),
        ];
        let present: Vec<_> = order
            .iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect();
        for pair in present.windows(2) {
            if pair[1].1 < pair[0].1 {
                return Err(ConfigError(format!(
                    "drive.thermal.{} must be >= drive.thermal.{}",
                    pair[1].0, pair[0].0
                )));
            }
        }
        if let (Some(w), Some(c)) = (self.wctemp_c, self.cctemp_c) {
            if c < w {
                return Err(ConfigError(
                    "drive.thermal.cctemp_c must be >= drive.thermal.wctemp_c".into(),
                ));
            }
        }
        let parts = [
            self.rc.is_some(),
            self.throttle.is_some(),
            self.wctemp_c.is_some() && self.cctemp_c.is_some() && self.shutdown_c.is_some(),
        ];
        if (parts[0] || parts[1]) && !parts.iter().all(|p| *p) {
            return Err(ConfigError(
                "a drive that heats needs all of [drive.thermal.rc], [drive.thermal.throttle], drive.thermal.wctemp_c, cctemp_c and shutdown_c".into(),
            ));
        }
        if let Some(t) = &self.throttle {
            if t.heavy_state < t.light_state {
                return Err(ConfigError(
                    "drive.thermal.throttle.heavy_state must be >= light_state: heavy throttling caps the power lower".into(),
                ));
            }
        }
        Ok(())
    }
}
