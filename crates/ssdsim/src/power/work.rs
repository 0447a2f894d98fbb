//! The drive's work, counted per operation: what its energy is computed from.

use std::ops::{Add, Sub};

/// Cumulative work of the drive's parts. The NAND counts die and channel time, the host
/// interface its processor time and link bytes, each in its own copy; the drive's work
/// is their sum, and a step's the difference of two sums. One add per operation or
/// command, never per 4 KiB unit: the energy is computed from these at the step's end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Die time sensing pages, ns (each page type its own read time).
    pub read_ns: u64,
    /// Die time programming, ns.
    pub program_ns: u64,
    /// Die time erasing, ns (one block per die of a superblock).
    pub erase_ns: u64,
    /// 4 KiB units moved over the NAND channels, in and out.
    pub channel_units: u64,
    /// Command processor time (commands and the firmware work in their path), ns.
    pub processor_ns: u64,
    /// Payload bytes over the host link, both directions.
    pub link_bytes: u64,
}

impl Work {
    /// Every field combined with `other`'s by `f`.
    fn zip(self, other: Work, f: impl Fn(u64, u64) -> u64) -> Work {
        Work {
            read_ns: f(self.read_ns, other.read_ns),
            program_ns: f(self.program_ns, other.program_ns),
            erase_ns: f(self.erase_ns, other.erase_ns),
            channel_units: f(self.channel_units, other.channel_units),
            processor_ns: f(self.processor_ns, other.processor_ns),
            link_bytes: f(self.link_bytes, other.link_bytes),
        }
    }
}

impl Add for Work {
    type Output = Work;
    fn add(self, other: Work) -> Work {
        self.zip(other, |a, b| a + b)
    }
}

impl Sub for Work {
    type Output = Work;
    fn sub(self, other: Work) -> Work {
        self.zip(other, |a, b| a - b)
    }
}
