//! `[drive.firmware]`: the firmware's own work on the mapping table.

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

/// Firmware work that keeps the mapping table durable, and its cost to the host.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FirmwareConfig {
    /// Journal bytes per mapping change; a full page of journal is programmed in SLC mode.
    /// Bound: [`bounds::JOURNAL_ENTRY_BYTES`](crate::bounds::JOURNAL_ENTRY_BYTES).
    pub journal_entry_bytes: u32,
    /// Journal written between two checkpoints, MiB; a checkpoint writes every map
    /// page changed since the last one.
    /// Bound: [`bounds::CHECKPOINT_MIB`](crate::bounds::CHECKPOINT_MIB).
    pub checkpoint_mib: f64,
    /// Controller time of a checkpoint, during which host commands wait, µs.
    /// Bound: [`bounds::CHECKPOINT_US`](crate::bounds::CHECKPOINT_US).
    pub checkpoint_us: f64,
    /// Controller time per unit relocated by garbage collection or folding, ns: the host's
    /// commands wait for the reclaim work done in their path.
    /// Bound: [`bounds::RELOCATE_UNIT_NS`](crate::bounds::RELOCATE_UNIT_NS).
    pub relocate_unit_ns: f64,
    /// Controller time per mapped unit a TRIM deallocates, as a share of a 4 KiB write's
    /// (`controller.write_cmd_us`): its old physical unit's valid bit and its superblock's
    /// valid count updated by the same firmware on the same cores that map a write, so a
    /// controller measured faster at writes deallocates faster (an unmapped unit costs only
    /// the walk, `controller.trim_unit_ns`).
    /// Bound: [`bounds::DEALLOCATE_SHARE`](crate::bounds::DEALLOCATE_SHARE).
    pub deallocate_share: f64,
}

impl Section for FirmwareConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.firmware");
        f.add(
            "journal_entry_bytes",
            self.journal_entry_bytes,
            &b::JOURNAL_ENTRY_BYTES,
        );
        f.add("checkpoint_mib", self.checkpoint_mib, &b::CHECKPOINT_MIB);
        f.add("checkpoint_us", self.checkpoint_us, &b::CHECKPOINT_US);
        f.add(
            "relocate_unit_ns",
            self.relocate_unit_ns,
            &b::RELOCATE_UNIT_NS,
        );
        f.add(
            "deallocate_share",
            self.deallocate_share,
            &b::DEALLOCATE_SHARE,
        );
    }
}
