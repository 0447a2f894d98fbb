//! The Endurance Group Information log (log page 09h) of the drive's one endurance group,
//! in the shape `nvme endurance-log DEVICE --group-id=1 -o json` of nvme-cli 2.6 prints it:
//! beside the health log's data units written, the media units the NAND wrote (so that
//! write amplification shows through the same telemetry as a real drive's).

use super::{data_units, SmartLog};
use crate::run::Drive;
use serde::Serialize;

/// Endurance Group Information (log page 09h), in nvme-cli 2.6's field order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnduranceLog {
    pub critical_warning: u8,
    pub endurance_group_features: u8,
    pub avl_spare: u8,
    pub avl_spare_threshold: u8,
    pub percent_used: u8,
    pub domain_identifier: u16,
    /// Data units the group may be written over its life: the rated TBW, 0 where none is.
    pub endurance_estimate: u64,
    pub data_units_read: u64,
    pub data_units_written: u64,
    /// Data units (1000 x 512 bytes) the NAND programmed: host data, relocations, metadata.
    pub media_units_written: u64,
    pub host_read_cmds: u64,
    pub host_write_cmds: u64,
    pub media_data_integrity_err: u64,
    pub num_err_info_log_entries: u64,
    /// Capacity of the group, bytes: the NAND's, and none unallocated (one namespace).
    pub total_end_grp_cap: u64,
    pub unalloc_end_grp_cap: u64,
}

impl EnduranceLog {
    /// The log of `drive` now: the health log's counts, and the NAND's writes.
    pub fn of(drive: &Drive) -> EnduranceLog {
        let smart = SmartLog::of(drive);
        let counters = drive.counters();
        let rated_tbw = drive.config().wear.as_ref().and_then(|w| w.rated_tbw);
        EnduranceLog {
            // the group's bits: spare, reliability and read-only (no temperature bit)
            critical_warning: smart.critical_warning & !(1 << 1),
            endurance_group_features: 0,
            avl_spare: smart.avail_spare,
            avl_spare_threshold: smart.spare_thresh,
            percent_used: smart.percent_used,
            domain_identifier: 0,
            endurance_estimate: rated_tbw.map_or(0, |tb| data_units((tb * 1e12) as u64)),
            data_units_read: smart.data_units_read,
            data_units_written: smart.data_units_written,
            media_units_written: data_units(counters.nand_write_bytes),
            host_read_cmds: smart.host_read_commands,
            host_write_cmds: smart.host_write_commands,
            media_data_integrity_err: smart.media_errors,
            num_err_info_log_entries: smart.num_err_log_entries,
            total_end_grp_cap: drive.config().raw_bytes(),
            unalloc_end_grp_cap: 0,
        }
    }
}
