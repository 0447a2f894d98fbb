//! The `age` step: a worn drive as a state, not petabytes of simulated writes.
//!
//! Contract: an [`Age`] names the wear to reach, in native P/E cycles, in percent of the
//! rated cycles (the health log's Percentage Used) or in TB written by the host (a share
//! of the rated TBW: the rating's own ratio of host writes to cycles). [`Age::target`]
//! turns it into a mean wear, refused on a preset without `[drive.wear]`; ageing stops
//! short of it where the drive turns read-only, as writes would. [`History`] is what
//! the ageing stands for: NAND and host bytes written, and the powered-on time of
//! writing them at the NAND's program speed (the least a drive could have taken).

use crate::config::{DriveConfig, WearConfig};
use crate::geometry::{Geometry, UNIT};
use serde::Deserialize;

/// The largest write amplification an age takes: beyond any workload's on any FTL.
pub const MAX_WRITE_AMPLIFICATION: f64 = 100.0;

/// How far to age a drive.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Age {
    pub value: f64,
    pub unit: AgeUnit,
    /// NAND bytes per host byte of the writes the age stands for, where they were measured
    /// (the endurance test's sample of its workload); else the rating's own.
    #[serde(default)]
    pub write_amplification: Option<f64>,
}

/// The unit of an [`Age`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgeUnit {
    /// Native P/E cycles (`2000pe`).
    Pe,
    /// Percent of the rated P/E cycles (`80%`).
    Percent,
    /// TB written by the host (`400TBW`), a share of the rated TBW.
    Tbw,
}

impl Age {
    pub fn new(value: f64, unit: AgeUnit) -> Age {
        Age {
            value,
            unit,
            write_amplification: None,
        }
    }

    /// The mean wear to reach, native P/E cycles (ageing stops short of it where the
    /// drive turns read-only).
    pub fn target(&self, wear: Option<&WearConfig>) -> Result<f64, String> {
        let Some(w) = wear else {
            return Err("the preset has no [drive.wear]: its drive does not wear".into());
        };
        if !(self.value.is_finite() && self.value >= 0.0) {
            return Err(format!(
                "an age of {} is not a number of 0 or more",
                self.value
            ));
        }
        if let Some(wa) = self.write_amplification {
            if !(1.0..=MAX_WRITE_AMPLIFICATION).contains(&wa) {
                return Err(format!(
                    "a write amplification of {wa} is not 1 to {MAX_WRITE_AMPLIFICATION}"
                ));
            }
        }
        let rated = w.rated_pe_cycles as f64;
        let cycles = match self.unit {
            AgeUnit::Pe => self.value,
            AgeUnit::Percent => self.value / 100.0 * rated,
            AgeUnit::Tbw => match w.rated_tbw {
                Some(tbw) => self.value / tbw * rated,
                None => {
                    return Err("the preset rates no TBW (drive.wear.rated_tbw): give the age in P/E cycles or percent".into())
                }
            },
        };
        Ok(cycles)
    }
}

/// What ageing by `erases` native superblock erases stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct History {
    pub nand_bytes: u64,
    pub host_bytes: u64,
    /// Powered-on seconds of writing it at the NAND's program speed.
    pub seconds: f64,
}

impl History {
    /// Each erase stands for a superblock programmed in native mode; the host wrote
    /// that over the write amplification `wa` where it was measured, else the rating's
    /// (capacity x rated cycles / rated TBW), or all of it where no TBW is rated.
    pub fn of(erases: u64, wa: Option<f64>, cfg: &DriveConfig, geo: &Geometry) -> History {
        let nand_bytes = erases * geo.units_per_sb as u64 * UNIT;
        let rated = cfg.wear.as_ref().and_then(|w| {
            w.rated_tbw.map(|tbw| {
                geo.total_units() as f64 * UNIT as f64 * w.rated_pe_cycles as f64 / (tbw * 1e12)
            })
        });
        let host_bytes = (nand_bytes as f64 / wa.or(rated).unwrap_or(1.0).max(1.0)) as u64;
        let t_prog_s = cfg.timing(cfg.native_mode).t_prog_us * 1e-6;
        let bytes_per_s = geo.dies as f64 * geo.units_per_pu as f64 * UNIT as f64 / t_prog_s;
        History {
            nand_bytes,
            host_bytes,
            seconds: nand_bytes as f64 / bytes_per_s,
        }
    }
}
