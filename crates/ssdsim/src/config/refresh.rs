//! `[drive.refresh]`: the firmware rewriting data before its errors outgrow decoding (see
//! `crate::wear::media`).

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;

/// Background refresh by data age and read reclaim by reads, in idle time; each field
/// absent: the drive does not do it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RefreshConfig {
    /// Rewrite a superblock's data once it is this many days old at the errors' reference
    /// temperature (hotter days count more: the retention clock).
    /// Bound: [`bounds::REFRESH_DAYS`](crate::bounds::REFRESH_DAYS).
    pub after_days: Option<f64>,
    /// Move a superblock's data once each of its blocks has been read this many times since
    /// it was programmed.
    /// Bound: [`bounds::RECLAIM_READS`](crate::bounds::RECLAIM_READS).
    pub after_reads: Option<f64>,
}

impl Section for RefreshConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.refresh");
        f.add_some("after_days", self.after_days, &b::REFRESH_DAYS);
        f.add_some("after_reads", self.after_reads, &b::RECLAIM_READS);
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.after_days.is_none() && self.after_reads.is_none() {
            return Err(ConfigError(
                "[drive.refresh] needs after_days, after_reads or both (leave the table out for none)".into(),
            ));
        }
        Ok(())
    }
}
