//! The drive's account of itself, as an NVMe drive gives it to the host: its SMART /
//! health log ([`SmartLog`]), Endurance Group log ([`EnduranceLog`]), Identify Controller
//! ([`IdCtrl`]) and the features ssdlab reads ([`get_feature`]), so that the telemetry code written for real drives reads a
//! simulated one unchanged.
//!
//! Contract: the records serialize (serde) to the JSON nvme-cli 2.6 and later prints for
//! `nvme smart-log -o json` and `nvme id-ctrl -o json`: the same field names, the same
//! units (kelvin, data units of 1000 × 512 bytes, minutes, seconds, centiwatts), and
//! [`get_feature`] returns the text `nvme get-feature -f FID -H` prints. They are built
//! from the drive's public state only; nothing here changes the drive. What the drive does
//! not model is reported as a real drive reports "not known": a temperature of 0 K (no
//! sensor) without a thermal model, thresholds of 0 K, RTD3 latencies of 0.

mod endurance;
mod features;
mod identify;

pub use endurance::EnduranceLog;
pub use features::{get_feature, InvalidField};
pub use identify::{IdCtrl, PowerStateDescriptor};

use crate::run::Drive;
use crate::thermal::{ThermalLimits, ThermalLog};
use serde::Serialize;

/// Bytes in one data unit of the health log: a thousand 512-byte units.
pub const DATA_UNIT_BYTES: u64 = 1000 * 512;

/// Critical Warning bits (NVMe base specification, SMART / Health Information log): spare
/// below its threshold, temperature, reliability degraded, all media read-only.
const WARNING_SPARE: u8 = 1 << 0;
const WARNING_TEMPERATURE: u8 = 1 << 1;
const WARNING_DEGRADED: u8 = 1 << 2;
const WARNING_READ_ONLY: u8 = 1 << 3;

/// The spare threshold the drive declares, %: vendor-specific in the specification; 10 %
/// is what many client drives report.
const SPARE_THRESHOLD_PCT: u8 = 10;

/// SMART / Health Information (log page 02h), in nvme-cli 2.6+'s field order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmartLog {
    pub critical_warning: u8,
    /// Composite temperature, K; 0 when the drive has no thermal model (no sensor).
    pub temperature: u16,
    pub avail_spare: u8,
    pub spare_thresh: u8,
    pub percent_used: u8,
    pub endurance_grp_critical_warning_summary: u8,
    pub data_units_read: u64,
    pub data_units_written: u64,
    pub host_read_commands: u64,
    pub host_write_commands: u64,
    /// Minutes of host commands.
    pub controller_busy_time: u64,
    pub power_cycles: u64,
    pub power_on_hours: u64,
    pub unsafe_shutdowns: u64,
    /// Each thermal shutdown leaves one.
    pub media_errors: u64,
    pub num_err_log_entries: u64,
    /// Minutes at or above WCTEMP, and at or above CCTEMP.
    pub warning_temp_time: u32,
    pub critical_comp_time: u32,
    /// Entries into light (TMT1) and heavy (TMT2) throttling, and seconds in each.
    pub thm_temp1_trans_count: u32,
    pub thm_temp2_trans_count: u32,
    pub thm_temp1_total_time: u32,
    pub thm_temp2_total_time: u32,
}

impl SmartLog {
    /// The log of `drive` now.
    pub fn of(drive: &Drive) -> SmartLog {
        let counters = drive.counters();
        let thermal = drive.thermal_log();
        // without a thermal model: nothing logged, no throttling, no shutdown
        let log = thermal.unwrap_or_default();
        let rated = drive.config().wear.as_ref().map(|w| w.rated_pe_cycles);
        let wear = drive.wear();
        // rounded down: a drive reports 9 % until a whole tenth of the spare is gone
        let avail_spare = wear.available_spare_pct.floor() as u8;
        SmartLog {
            critical_warning: temperature_warning(thermal, drive.thermal_limits())
                | wear_warnings(avail_spare, wear.read_only),
            temperature: thermal.map_or(0, |t| kelvin(t.composite_c)),
            avail_spare,
            spare_thresh: SPARE_THRESHOLD_PCT,
            percent_used: rated.map_or(0, |r| percent_used(wear.mean_pe, r)),
            endurance_grp_critical_warning_summary: 0,
            data_units_read: data_units(counters.host_read_bytes),
            data_units_written: data_units(counters.host_write_bytes),
            host_read_commands: counters.host_read_commands,
            host_write_commands: counters.host_write_commands,
            controller_busy_time: (drive.busy_s() / 60.0) as u64,
            power_cycles: drive.power_cycles(),
            power_on_hours: (drive.power_on_s() / 3600.0) as u64,
            // a drive that dropped off the bus went down without a shutdown notification
            unsafe_shutdowns: log.shutdowns,
            media_errors: log.shutdowns + counters.uncorrectable_reads,
            num_err_log_entries: counters.uncorrectable_reads,
            warning_temp_time: minutes(log.warning_s),
            critical_comp_time: minutes(log.critical_s),
            thm_temp1_trans_count: saturate(log.light_entries),
            thm_temp2_trans_count: saturate(log.heavy_entries),
            thm_temp1_total_time: seconds(log.light_s),
            thm_temp2_total_time: seconds(log.heavy_s),
        }
    }
}

/// Bytes as data units, rounded up as the specification says (1 to 512 000 bytes is 1).
pub fn data_units(bytes: u64) -> u64 {
    bytes.div_ceil(DATA_UNIT_BYTES)
}

/// °C as the whole kelvin a drive reports (K = °C + 273, as NVMe converts), at least 1 K
/// so that it never reads as "no sensor".
pub fn kelvin(celsius: f64) -> u16 {
    (celsius + 273.0).round().clamp(1.0, u16::MAX as f64) as u16
}

/// The temperature bit while the composite temperature is at or above CCTEMP, and from
/// the first thermal shutdown on (a real drive keeps it after such an event).
fn temperature_warning(thermal: Option<ThermalLog>, limits: Option<ThermalLimits>) -> u8 {
    let too_hot = match (thermal, limits) {
        (Some(t), Some(l)) => t.composite_c >= l.cctemp_c,
        _ => false,
    };
    let shut_down = thermal.is_some_and(|t| t.shutdowns > 0);
    if too_hot || shut_down {
        WARNING_TEMPERATURE
    } else {
        0
    }
}

/// The spare bit below the spare threshold; a read-only drive sets the read-only bit and
/// the reliability bit (its media can no longer take data).
fn wear_warnings(avail_spare: u8, read_only: bool) -> u8 {
    let mut bits = 0;
    if avail_spare < SPARE_THRESHOLD_PCT {
        bits |= WARNING_SPARE;
    }
    if read_only {
        bits |= WARNING_READ_ONLY | WARNING_DEGRADED;
    }
    bits
}

/// Percentage of the rated endurance used: the mean wear of the superblocks (native P/E
/// cycles, SLC-mode cycles weighted) over `[drive.wear].rated_pe_cycles`, rounded down,
/// 255 at most as the specification caps it. A preset without `[drive.wear]` rates no
/// endurance: 0.
fn percent_used(mean_pe: f64, rated_pe_cycles: u32) -> u8 {
    (100.0 * mean_pe / rated_pe_cycles.max(1) as f64).clamp(0.0, 255.0) as u8
}

fn minutes(s: f64) -> u32 {
    seconds(s / 60.0)
}

fn seconds(s: f64) -> u32 {
    s.clamp(0.0, u32::MAX as f64) as u32
}

fn saturate(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

#[cfg(test)]
use features::thermal_management;
#[cfg(test)]
mod tests;
