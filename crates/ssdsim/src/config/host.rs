//! `[drive.host]`: the host interface.

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

/// Host interface.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Link: `pcie3x4` (about 3500 MB/s of payload) or `pcie4x4` (about 7000 MB/s).
    pub link: LinkKind,
    /// Override of the payload ceiling, MB/s (per direction).
    /// Bound: [`bounds::PAYLOAD_MBPS`](crate::bounds::PAYLOAD_MBPS).
    pub payload_mbps: Option<f64>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Pcie3x4,
    Pcie4x4,
}

impl HostConfig {
    /// Payload ceiling per direction, MB/s.
    pub fn link_mbps(&self) -> f64 {
        self.payload_mbps.unwrap_or(match self.link {
            LinkKind::Pcie3x4 => 3500.0,
            LinkKind::Pcie4x4 => 7000.0,
        })
    }
}

impl Section for HostConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.host");
        f.add_some("payload_mbps", self.payload_mbps, &b::PAYLOAD_MBPS);
    }
}
