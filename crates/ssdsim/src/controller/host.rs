//! Host interface: command processing and the link, in each direction.
//!
//! Contract: the command processor is a serial resource (every command costs its
//! processing time on it, in issue order); write data crosses the link to the
//! drive after its command is processed; read data crosses back once the NAND
//! has delivered it, on a gap-filling timeline (a read whose data is ready
//! earlier may use the link before one issued earlier). Fixed latencies (firmware
//! pipeline, completion posting) add to a command's latency without occupying
//! the processor. The processor's busy time and the bytes over the link are counted in
//! [`HostInterface::work`], for the drive's energy.

use crate::config::DriveConfig;
use crate::power::Work;
use crate::time::{ns_from_us, ps_from_ns, ps_to_move};
use crate::timeline::GapTimeline;

/// Read transfers the link to the host remembers for gap filling: enough for a
/// deep queue of reads completing out of order. (It was asked for 64 when a timeline
/// remembered at most 16, which every recorded result was made with.)
const LINK_OUT_HISTORY: usize = 16;

pub struct HostInterface {
    /// When the command processor is next free.
    processor_free: u64,
    /// When the link towards the drive is next free.
    link_in_free: u64,
    link_out: GapTimeline<LINK_OUT_HISTORY>,
    /// Link time per byte, ps.
    link_ps_per_byte: u64,
    read_cmd_ns: u64,
    write_cmd_ns: u64,
    trim_cmd_ns: u64,
    read_latency_ns: u64,
    write_latency_ns: u64,
    trim_unit_ps: u64,
    /// Processor time and link bytes spent, for the drive's energy.
    pub work: Work,
}

impl HostInterface {
    pub fn new(cfg: &DriveConfig) -> HostInterface {
        let c = &cfg.controller;
        HostInterface {
            processor_free: 0,
            link_in_free: 0,
            link_out: GapTimeline::new(),
            link_ps_per_byte: ps_to_move(1, cfg.host.link_mbps()),
            read_cmd_ns: ns_from_us(c.read_cmd_us),
            write_cmd_ns: ns_from_us(c.write_cmd_us),
            trim_cmd_ns: ns_from_us(c.trim_cmd_us),
            read_latency_ns: ns_from_us(c.read_latency_us),
            write_latency_ns: ns_from_us(c.write_latency_us),
            trim_unit_ps: ps_from_ns(c.trim_unit_ns),
            work: Work::default(),
        }
    }

    /// Link time of `bytes`, ns.
    #[inline]
    fn link_ns(&self, bytes: u64) -> u64 {
        (bytes * self.link_ps_per_byte).div_ceil(1000)
    }

    /// Occupy the command processor for `ns` from `t` on; returns when it is done.
    #[inline]
    fn process(&mut self, t: u64, ns: u64) -> u64 {
        self.work.processor_ns += ns;
        self.processor_free = self.processor_free.max(t) + ns;
        self.processor_free
    }

    /// A write command of `bytes` issued at `t`: returns when its data is in the drive.
    #[inline]
    pub fn receive_write(&mut self, t: u64, bytes: u64) -> u64 {
        let processed = self.process(t, self.write_cmd_ns);
        self.work.link_bytes += bytes;
        self.link_in_free = self.link_in_free.max(processed) + self.link_ns(bytes);
        self.link_in_free
    }

    /// The completion of a write whose data the drive accepted at `accepted`.
    #[inline]
    pub fn complete_write(&self, accepted: u64) -> u64 {
        accepted + self.write_latency_ns
    }

    /// A read command issued at `t`: returns when its NAND reads may start.
    #[inline]
    pub fn start_read(&mut self, t: u64) -> u64 {
        self.link_out.prune(t);
        self.process(t, self.read_cmd_ns) + self.read_latency_ns
    }

    /// Read data of `bytes` ready at `ready` crosses the link: returns the read's completion.
    #[inline]
    pub fn send_read(&mut self, ready: u64, bytes: u64) -> u64 {
        let d = self.link_ns(bytes);
        self.work.link_bytes += bytes;
        self.link_out.reserve(ready, d) + d
    }

    /// A TRIM of `units` mapping units issued at `t`: the processor walks the range's
    /// mapping entries; returns when it is done.
    pub fn process_trim(&mut self, t: u64, units: u64) -> u64 {
        let walk = (units * self.trim_unit_ps).div_ceil(1000);
        self.process(t, self.trim_cmd_ns + walk)
    }

    /// Firmware work on the command processor from `t` for `ns`: commands wait behind it.
    pub fn stall(&mut self, t: u64, ns: u64) -> u64 {
        self.process(t, ns)
    }

    /// When the processor and both link directions are free.
    pub fn quiet_at(&self) -> u64 {
        self.processor_free
            .max(self.link_in_free)
            .max(self.link_out.free_at())
    }
}
