//! The features ssdlab reads, as `nvme get-feature DEV -f FID -H` prints them.

use super::kelvin;
use crate::power::ApstPolicy;
use crate::run::Drive;
use crate::thermal::ThermalLimits;
use std::fmt::{self, Write};

pub const POWER_MANAGEMENT: u32 = 0x02;
pub const VOLATILE_WRITE_CACHE: u32 = 0x06;
pub const APST: u32 = 0x0c;
pub const HOST_THERMAL_MANAGEMENT: u32 = 0x10;

/// Entries of the APST table (feature 0Ch's data): one per power state the table can hold.
const APST_ENTRIES: usize = 32;

/// A feature the drive does not support: the status a real drive returns, as nvme-cli
/// prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidField {
    pub fid: u32,
}

impl fmt::Display for InvalidField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "NVMe status: Invalid Field in Command: A reserved coded value or an unsupported value in a defined field(0x2) (feature 0x{:x})",
            self.fid
        )
    }
}

impl std::error::Error for InvalidField {}

/// Feature `fid` of `drive` now: 02h (power management: the power state the host set,
/// always PS0, since ssdlab never sets one), 06h (volatile write cache: WCE as the host set
/// it, [`Platform::volatile_write_cache`](crate::Platform::volatile_write_cache)), 0Ch
/// (APST: the table the host programmed for the drive's [`Platform`](crate::Platform)) and
/// 10h (host-controlled thermal management: TMT1 and TMT2, 0 (off) without a thermal
/// model). Any other is refused.
pub fn get_feature(drive: &Drive, fid: u32) -> Result<String, InvalidField> {
    match fid {
        POWER_MANAGEMENT => Ok(header(fid, "Power Management", 0)
            + "\tWorkload Hint (WH): 0 - No Workload\n\tPower State   (PS): 0\n"),
        VOLATILE_WRITE_CACHE => Ok(volatile_write_cache(drive.platform().volatile_write_cache)),
        APST => Ok(apst(drive)),
        HOST_THERMAL_MANAGEMENT => Ok(thermal_management(drive.thermal_limits())),
        _ => Err(InvalidField { fid }),
    }
}

/// nvme-cli's first line; it prints the value with `%#0*x`, which leaves out `0x` for 0.
fn header(fid: u32, name: &str, value: u32) -> String {
    let value = if value == 0 {
        "00000000".to_string()
    } else {
        format!("{value:#010x}")
    };
    format!("get-feature:{fid:#04x} ({name}), Current value:{value}\n")
}

/// WCE, bit 0 of the value, and nvme-cli's line for it (the same from 1.x to 2.11).
fn volatile_write_cache(on: bool) -> String {
    let word = if on { "Enabled" } else { "Disabled" };
    header(VOLATILE_WRITE_CACHE, "Volatile Write Cache", on as u32)
        + &format!("\tVolatile Write Cache Enable (WCE): {word}\n")
}

/// APST as Linux programs it (nvme_configure_apst): entry N, for power state N, goes to
/// the shallowest tier deeper than N after that tier's idle; all zero when APST is off
/// or the drive has no non-operational state.
fn apst(drive: &Drive) -> String {
    let table = drive
        .config()
        .power
        .as_ref()
        .map(|p| p.table())
        .unwrap_or_default();
    let tiers = match drive.platform().programmed_apst() {
        Some(policy) if table.iter().any(|s| !s.operational) => policy.tiers(&table),
        _ => Vec::new(),
    };
    let entry = |state: usize| {
        tiers
            .iter()
            .find(|t| t.state > state)
            .map_or((0, 0), |t| (t.after_ns / 1_000_000, t.state))
    };
    let enabled = !tiers.is_empty();
    let mut out = header(APST, "Autonomous Power State Transition", enabled as u32);
    let word = if enabled { "Enabled" } else { "Disabled" };
    let _ = writeln!(
        out,
        "\tAutonomous Power State Transition Enable (APSTE): {word}"
    );
    out.push_str("\tAuto PST Entries\t.................\n");
    for state in 0..APST_ENTRIES {
        let (idle_ms, target) = if state < table.len() {
            entry(state)
        } else {
            (0, 0)
        };
        let _ = write!(
            out,
            "\tEntry[{state:2}]   \n\t.................\n\
             \tIdle Time Prior to Transition (ITPT): {idle_ms} ms\n\
             \tIdle Transition Power State   (ITPS): {target}\n\t.................\n"
        );
    }
    out
}

/// TMT1 and TMT2 of a drive with these `limits` (both 0, off, without).
pub(super) fn thermal_management(limits: Option<ThermalLimits>) -> String {
    let (tmt1, tmt2) = limits.map_or((0, 0), |l| (kelvin(l.tmt1_c), kelvin(l.tmt2_c)));
    let value = (tmt1 as u32) << 16 | tmt2 as u32;
    let mut out = header(
        HOST_THERMAL_MANAGEMENT,
        "Host Controlled Thermal Management",
        value,
    );
    for (n, k) in [(1, tmt1), (2, tmt2)] {
        let celsius = k as i32 - 273;
        let _ = writeln!(
            out,
            "\tThermal Management Temperature {n} (TMT{n}) : {k} K ({celsius} °C)"
        );
    }
    out
}
