//! NAND geometry and addressing.
//!
//! Contract: the simulator manages space in *superblocks* — one erase block
//! from every plane of every die, erased together — and maps data in 4 KiB
//! *units*. A superblock is programmed in *program units*: one multi-plane
//! page on one die (`planes × page_bytes`, i.e. `units_per_pu` units).
//! Program unit `p` of a superblock lives on die `p % dies` (so consecutive
//! program units stripe across dies and channels) at page row `p / dies`.
//! Die `d` sits on channel `d % channels`. A physical page address (`Ppa`) is
//! `superblock × units_per_sb + p × units_per_pu + u`, a `u32`. In SLC mode a
//! superblock has only `pages_per_block / bits(native)` rows, so it holds
//! `1 / bits` of its native data.

use crate::bounds::Bound;
use crate::config::{CellMode, ConfigError, DriveConfig};

/// Bytes in one mapping unit.
pub const UNIT: u64 = 4096;

/// Physical page address of a 4 KiB unit.
pub type Ppa = u32;
/// Marker of "no address" in mapping tables.
pub const NONE: u32 = u32::MAX;

/// A derived count of the geometry: at least 1, and every address built from it
/// (at most the count of units in the NAND array) below [`NONE`].
const ADDRESSABLE: Bound = Bound::integer(1, NONE as u64 - 1, "");

/// The product of `factors`, checked to be [`ADDRESSABLE`] (no overflow on the way).
fn count(what: &str, factors: &[u32]) -> Result<u32, ConfigError> {
    let exact = factors
        .iter()
        .try_fold(1u64, |p, &f| p.checked_mul(f as u64));
    // An overflowing product is shown as a float; it is refused either way.
    let shown = exact.map_or_else(|| factors.iter().map(|&f| f as f64).product(), |p| p as f64);
    ADDRESSABLE
        .check(&format!("drive.geometry: {what}"), shown)
        .map_err(|e| {
            ConfigError(format!(
                "{e} (the simulator's 32-bit page addresses); use a smaller geometry"
            ))
        })?;
    // Exact: the check passed, so the product is a whole number below 2^32.
    Ok(shown as u32)
}

/// Exact division of 32-bit numbers by a fixed 32-bit divisor with a multiply
/// (Lemire, Kaser, Kurz 2019: M = floor(2^64 / d) + 1 is exact for all 32-bit n).
#[derive(Debug, Clone, Copy)]
pub struct FastDiv {
    m: u64,
    d: u32,
}

impl FastDiv {
    pub fn new(d: u32) -> FastDiv {
        assert!(d > 0);
        FastDiv {
            m: (u64::MAX / d as u64).wrapping_add(1),
            d,
        }
    }
    #[inline]
    pub fn div(&self, n: u32) -> u32 {
        if self.d == 1 {
            return n;
        }
        ((self.m as u128 * n as u128) >> 64) as u32
    }
    #[inline]
    pub fn rem(&self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
}

/// Derived, immutable geometry.
#[derive(Debug, Clone)]
pub struct Geometry {
    pub channels: u32,
    pub dies: u32,
    pub superblocks: u32,
    /// 4 KiB units per program unit (multi-plane page).
    pub units_per_pu: u32,
    /// Page rows per block in native mode.
    pub rows_native: u32,
    /// Page rows per block in SLC mode.
    pub rows_slc: u32,
    /// Units of a superblock in native mode (the stride of `Ppa`s).
    pub units_per_sb: u32,
    /// Units of a superblock in SLC mode.
    pub units_per_sb_slc: u32,
    /// User-visible 4 KiB units (logical space).
    pub user_units: u64,
    /// Bits per cell of the native mode.
    pub native_bits: u32,
    pub native_mode: CellMode,
    div_sb: FastDiv,
    pub(crate) div_pu: FastDiv,
    div_dies: FastDiv,
}

impl Geometry {
    /// Derive the geometry of a preset whose fields are within their bounds and whose
    /// native mode has timings (`DriveConfig::validate` checks both first). Errors
    /// name the relation that fails: a page of whole 4 KiB units, a block of whole
    /// SLC rows, and counts that 32-bit page addresses can reach.
    pub fn new(cfg: &DriveConfig) -> Result<Geometry, ConfigError> {
        let g = &cfg.geometry;
        if !g.page_bytes.is_multiple_of(UNIT as u32) {
            return Err(ConfigError(
                "drive.geometry.page_bytes must be a multiple of 4096".into(),
            ));
        }
        let native_bits = cfg.timing(cfg.native_mode).bits_per_cell;
        if !g.pages_per_block.is_multiple_of(native_bits) {
            return Err(ConfigError(format!(
                "drive.geometry.pages_per_block must be a multiple of drive.nand.{}.bits_per_cell",
                cfg.native_mode.name()
            )));
        }
        let rows_slc = g.pages_per_block / native_bits;
        let dies = count("dies", &[g.channels, g.dies_per_channel])?;
        let units_per_pu = count(
            "4 KiB units per program unit",
            &[g.planes_per_die, g.page_bytes / UNIT as u32],
        )?;
        let units_per_sb = count(
            "4 KiB units per superblock",
            &[g.pages_per_block, dies, units_per_pu],
        )?;
        let units_per_sb_slc = count(
            "4 KiB units per SLC superblock",
            &[rows_slc, dies, units_per_pu],
        )?;
        count(
            "4 KiB units in the NAND array",
            &[g.blocks_per_plane, units_per_sb],
        )?;
        Ok(Geometry {
            channels: g.channels,
            dies,
            superblocks: g.blocks_per_plane,
            units_per_pu,
            rows_native: g.pages_per_block,
            rows_slc,
            units_per_sb,
            units_per_sb_slc,
            user_units: cfg.user_bytes() / UNIT,
            native_bits,
            native_mode: cfg.native_mode,
            div_sb: FastDiv::new(units_per_sb),
            div_pu: FastDiv::new(units_per_pu),
            div_dies: FastDiv::new(dies),
        })
    }

    /// Total physical units (native mode).
    pub fn total_units(&self) -> u64 {
        self.superblocks as u64 * self.units_per_sb as u64
    }

    /// Capacity in units of a superblock in the given mode.
    pub fn sb_capacity(&self, slc: bool) -> u32 {
        if slc {
            self.units_per_sb_slc
        } else {
            self.units_per_sb
        }
    }

    #[inline]
    pub fn superblock_of(&self, ppa: Ppa) -> u32 {
        self.div_sb.div(ppa)
    }

    /// The program unit holding `ppa`, numbered across the drive: pages with the same
    /// number are programmed (and read) together.
    #[inline]
    pub fn program_unit(&self, ppa: Ppa) -> u32 {
        self.div_pu.div(ppa)
    }

    /// Program-unit index within its superblock.
    #[inline]
    pub fn pu_of(&self, ppa: Ppa) -> u32 {
        self.div_pu.div(self.div_sb.rem(ppa))
    }

    #[inline]
    pub fn die_of_pu(&self, pu: u32) -> u32 {
        self.div_dies.rem(pu)
    }

    /// Wordline page row of a program unit within its block (program units stripe across dies).
    #[inline]
    pub fn row_of_pu(&self, pu: u32) -> u32 {
        self.div_dies.div(pu)
    }

    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::small;

    #[test]
    fn fast_division_is_exact() {
        let mut r = crate::rng::Rng::new(3);
        for d in [1u32, 2, 3, 7, 48, 196_608, 294_912, 528_384, u32::MAX] {
            let f = FastDiv::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX, u32::MAX - 1] {
                assert_eq!(f.div(n), n / d, "{n}/{d}");
                assert_eq!(f.rem(n), n % d);
            }
            for _ in 0..10_000 {
                let n = r.next_u64() as u32;
                assert_eq!(f.div(n), n / d, "{n}/{d}");
            }
        }
    }

    #[test]
    fn unaddressable_geometries_are_errors_not_panics() {
        // Geometry::new on values that never passed their bounds.
        type Change = fn(&mut DriveConfig);
        let cases: [(Change, &str); 3] = [
            (
                |c| c.geometry.channels = 0,
                "drive.geometry: dies = 0 is outside 1..4294967294",
            ),
            (
                |c| {
                    c.geometry.planes_per_die = u32::MAX;
                    c.geometry.page_bytes = 1 << 31;
                },
                "drive.geometry: 4 KiB units per program unit = ",
            ),
            (
                |c| c.geometry.pages_per_block = 3 << 30,
                "drive.geometry: 4 KiB units per superblock = ",
            ),
        ];
        for (change, expected) in cases {
            let mut cfg = small(0.6);
            change(&mut cfg);
            let msg = Geometry::new(&cfg).unwrap_err().0;
            assert!(msg.starts_with(expected), "{msg}");
        }
    }

    #[test]
    fn addressing_round_trips() {
        let g = Geometry::new(&small(0.6)).unwrap();
        assert_eq!(g.dies, 4);
        assert_eq!(g.units_per_pu, 2);
        assert_eq!(g.units_per_sb, 6 * 4 * 2);
        assert_eq!(g.units_per_sb_slc, 2 * 4 * 2);
        let ppa = 5 * g.units_per_sb + 7 * g.units_per_pu + 1;
        assert_eq!(g.superblock_of(ppa), 5);
        assert_eq!(g.pu_of(ppa), 7);
        assert_eq!(g.die_of_pu(7), 3);
        assert_eq!(g.channel_of_die(3), 1);
    }
}
