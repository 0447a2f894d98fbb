//! The `age` step: a worn drive as a state, not petabytes of simulated writes.
//!
//! Contract: an [`Age`] names the wear to reach, in native P/E cycles, in percent of the
//! rated cycles (the health log's Percentage Used) or in TB written by the host (a share
//! of the rated TBW: the rating's own ratio of host writes to cycles). [`Age::target`]
//! turns it into a mean wear, refused beyond the point where every superblock of the
//! drive would have worn out and on a preset without `[drive.wear]`. [`History`] is what
//! the ageing stands for: NAND and host bytes written, and the powered-on time of
//! writing them at the NAND's program speed (the least a drive could have taken).

use crate::config::{DriveConfig, WearConfig};
use crate::geometry::{Geometry, UNIT};
use serde::Deserialize;

/// How far to age a drive.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Age {
    pub value: f64,
    pub unit: AgeUnit,
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
    /// The mean wear to reach, native P/E cycles; `last` is when the last superblock of
    /// the drive wears out (its longest endurance).
    pub fn target(&self, wear: Option<&WearConfig>, last: f64) -> Result<f64, String> {
        let Some(w) = wear else {
            return Err("the preset has no [drive.wear]: its drive does not wear".into());
        };
        if !(self.value.is_finite() && self.value >= 0.0) {
            return Err(format!(
                "an age of {} is not a number of 0 or more",
                self.value
            ));
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
        if cycles > last {
            return Err(format!(
                "an age of {cycles:.0} P/E cycles is beyond this drive's life: its last block wears out at {last:.0}; age it to at most that"
            ));
        }
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
    /// that over the rating's write amplification (capacity x rated cycles / rated TBW),
    /// or all of it where no TBW is rated.
    pub fn of(erases: u64, cfg: &DriveConfig, geo: &Geometry) -> History {
        let nand_bytes = erases * geo.units_per_sb as u64 * UNIT;
        let host_bytes = match cfg.wear.as_ref().and_then(|w| w.rated_tbw.map(|t| (w, t))) {
            Some((w, tbw)) => {
                let wa = geo.total_units() as f64 * UNIT as f64 * w.rated_pe_cycles as f64
                    / (tbw * 1e12);
                (nand_bytes as f64 / wa.max(1.0)) as u64
            }
            None => nand_bytes,
        };
        let t_prog_s = cfg.timing(cfg.native_mode).t_prog_us * 1e-6;
        let bytes_per_s = geo.dies as f64 * geo.units_per_pu as f64 * UNIT as f64 / t_prog_s;
        History {
            nand_bytes,
            host_bytes,
            seconds: nand_bytes as f64 / bytes_per_s,
        }
    }
}
