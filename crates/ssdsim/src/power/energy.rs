//! The energy of the drive's work.
//!
//! Contract: an [`EnergyModel`] is linear in the [`Work`] it is given, so the energy of
//! any interval is the energy of the work done in it (a step, its idle time, or one
//! second of it for a thermal model), computed once from counts, never per operation.

use super::work::Work;
use crate::config::{DriveConfig, PowerConfig};
use crate::geometry::UNIT;

/// Joules per picojoule, per nanosecond-watt and per milliampere.
const J_PER_PJ: f64 = 1e-12;
const S_PER_NS: f64 = 1e-9;
const A_PER_MA: f64 = 1e-3;

/// What the drive's work costs, on top of its power with nothing to do.
pub trait EnergyModel: Send + Sync {
    /// The energy of `work`, J.
    fn joules(&self, work: &Work) -> f64;
}

/// Energy per operation from the NAND's supply and currents (V × I × the operation's
/// duration, so a mode's slower program costs more), and per byte and per second of
/// processor time from the controller's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct PerOperation {
    j_per_read_ns: f64,
    j_per_program_ns: f64,
    j_per_erase_ns: f64,
    /// The NAND's I/O current over a unit's transfer, and the controller's data path and
    /// the DRAM for its bytes.
    j_per_channel_unit: f64,
    j_per_processor_ns: f64,
    j_per_link_byte: f64,
}

impl PerOperation {
    pub fn new(cfg: &DriveConfig, p: &PowerConfig) -> PerOperation {
        let die_w = |ma: f64| p.nand.vcc_v * ma * A_PER_MA;
        let unit_transfer_s = UNIT as f64 / (cfg.nand.channel_mbps * 1e6);
        let pj_per_byte = p.controller_pj_per_byte + p.dram_pj_per_byte.unwrap_or(0.0);
        PerOperation {
            j_per_read_ns: die_w(p.nand.read_ma) * S_PER_NS,
            j_per_program_ns: die_w(p.nand.program_ma) * S_PER_NS,
            j_per_erase_ns: die_w(p.nand.erase_ma) * S_PER_NS,
            j_per_channel_unit: die_w(p.nand.io_ma) * unit_transfer_s
                + pj_per_byte * UNIT as f64 * J_PER_PJ,
            j_per_processor_ns: p.controller_active_w * S_PER_NS,
            j_per_link_byte: p.link_pj_per_byte * J_PER_PJ,
        }
    }
}

impl EnergyModel for PerOperation {
    fn joules(&self, w: &Work) -> f64 {
        w.read_ns as f64 * self.j_per_read_ns
            + w.program_ns as f64 * self.j_per_program_ns
            + w.erase_ns as f64 * self.j_per_erase_ns
            + w.channel_units as f64 * self.j_per_channel_unit
            + w.processor_ns as f64 * self.j_per_processor_ns
            + w.link_bytes as f64 * self.j_per_link_byte
    }
}
