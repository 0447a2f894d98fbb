//! `[drive.controller]`: costs of the controller's front end and FTL processor.

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

/// Controller (front-end and FTL processor) costs.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Controller time to process one read command, µs (serial resource).
    /// Bound: [`bounds::COMMAND_US`](crate::bounds::COMMAND_US).
    pub read_cmd_us: f64,
    /// Controller time to process one write command, µs.
    /// Bound: [`bounds::COMMAND_US`](crate::bounds::COMMAND_US).
    pub write_cmd_us: f64,
    /// Fixed latency of a read command that does not occupy the controller (firmware pipeline,
    /// mapping lookup, completion posting), µs; added before the NAND read.
    /// Bound: [`bounds::FIXED_LATENCY_US`](crate::bounds::FIXED_LATENCY_US).
    pub read_latency_us: f64,
    /// Fixed latency of a write command that does not occupy the controller, µs; added to its completion.
    /// Bound: [`bounds::FIXED_LATENCY_US`](crate::bounds::FIXED_LATENCY_US).
    pub write_latency_us: f64,
    /// Controller time to process one TRIM (deallocate) command, µs.
    /// Bound: [`bounds::COMMAND_US`](crate::bounds::COMMAND_US).
    pub trim_cmd_us: f64,
    /// Additional controller time per 4 KiB unit unmapped by a TRIM, ns.
    /// Bound: [`bounds::TRIM_UNIT_NS`](crate::bounds::TRIM_UNIT_NS).
    pub trim_unit_ns: f64,
    /// Write buffer (DRAM/SRAM) per write stream, KiB: how far host writes may run ahead of NAND programs.
    /// Bound: [`bounds::WRITE_BUFFER_KIB`](crate::bounds::WRITE_BUFFER_KIB).
    pub write_buffer_kib: u32,
    /// Sequential read-ahead, KiB: a read that continues the previous one has the
    /// controller read this much further ahead (absent: none).
    /// Bound: [`bounds::READ_AHEAD_KIB`](crate::bounds::READ_AHEAD_KIB).
    pub read_ahead_kib: Option<u32>,
    /// The write buffer is flushed after the host has been idle this long, µs: a program
    /// unit partly filled is programmed padded (absent: data waits for its unit to fill).
    /// Bound: [`bounds::FLUSH_IDLE_US`](crate::bounds::FLUSH_IDLE_US).
    pub flush_idle_us: Option<f64>,
}

impl Section for ControllerConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.controller");
        f.add("read_cmd_us", self.read_cmd_us, &b::COMMAND_US);
        f.add("write_cmd_us", self.write_cmd_us, &b::COMMAND_US);
        f.add(
            "read_latency_us",
            self.read_latency_us,
            &b::FIXED_LATENCY_US,
        );
        f.add(
            "write_latency_us",
            self.write_latency_us,
            &b::FIXED_LATENCY_US,
        );
        f.add("trim_cmd_us", self.trim_cmd_us, &b::COMMAND_US);
        f.add("trim_unit_ns", self.trim_unit_ns, &b::TRIM_UNIT_NS);
        f.add(
            "write_buffer_kib",
            self.write_buffer_kib,
            &b::WRITE_BUFFER_KIB,
        );
        f.add_some("read_ahead_kib", self.read_ahead_kib, &b::READ_AHEAD_KIB);
        f.add_some("flush_idle_us", self.flush_idle_us, &b::FLUSH_IDLE_US);
    }
}
