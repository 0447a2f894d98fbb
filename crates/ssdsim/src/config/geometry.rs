//! `[drive.geometry]`: the physical organisation of the NAND array.

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

/// Physical organisation of the NAND array.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    /// Independent NAND channels (buses) of the controller.
    /// Bound: [`bounds::CHANNELS`](crate::bounds::CHANNELS).
    pub channels: u32,
    /// Dies (LUNs) on each channel.
    /// Bound: [`bounds::DIES_PER_CHANNEL`](crate::bounds::DIES_PER_CHANNEL).
    pub dies_per_channel: u32,
    /// Planes per die, programmed and read together (multi-plane operations).
    /// Bound: [`bounds::PLANES_PER_DIE`](crate::bounds::PLANES_PER_DIE).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    /// Bound: [`bounds::BLOCKS_PER_PLANE`](crate::bounds::BLOCKS_PER_PLANE).
    pub blocks_per_plane: u32,
    /// Pages per block in native mode (an SLC block has pages_per_block / bits_per_cell(native)).
    /// Bound: [`bounds::PAGES_PER_BLOCK`](crate::bounds::PAGES_PER_BLOCK).
    pub pages_per_block: u32,
    /// Page size in bytes (data area, per plane); a multiple of 4096.
    /// Bound: [`bounds::PAGE_BYTES`](crate::bounds::PAGE_BYTES).
    pub page_bytes: u32,
}

/// Its relations (whole 4 KiB units per page, whole SLC rows per block, counts
/// within 32-bit page addresses) are checked where the geometry is derived,
/// [`crate::geometry::Geometry::new`], with the NAND's bits per cell.
impl Section for GeometryConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.geometry");
        f.add("channels", self.channels, &b::CHANNELS);
        f.add(
            "dies_per_channel",
            self.dies_per_channel,
            &b::DIES_PER_CHANNEL,
        );
        f.add("planes_per_die", self.planes_per_die, &b::PLANES_PER_DIE);
        f.add(
            "blocks_per_plane",
            self.blocks_per_plane,
            &b::BLOCKS_PER_PLANE,
        );
        f.add("pages_per_block", self.pages_per_block, &b::PAGES_PER_BLOCK);
        f.add("page_bytes", self.page_bytes, &b::PAGE_BYTES);
    }
}
