//! Identify Controller: who the drive is, its thermal limits and its power states.

use super::kelvin;
use crate::config::PowerStateConfig;
use crate::run::Drive;
use serde::Serialize;

/// Widths of the space-padded strings of Identify Controller, bytes.
const SERIAL_BYTES: usize = 20;
const MODEL_BYTES: usize = 40;

/// Identify Controller, the fields the simulator knows, named and ordered as nvme-cli
/// 2.6+ prints them (it prints every field; those left out here it would print as 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdCtrl {
    pub vid: u16,
    pub ssvid: u16,
    pub sn: String,
    pub mn: String,
    /// `ssdsim-VERSION`: wider than a real drive's 8 bytes, so that the version is whole.
    pub fr: String,
    /// RTD3 resume and entry latencies, µs (0: not reported; not modelled).
    pub rtd3r: u32,
    pub rtd3e: u32,
    /// The number of power states minus one.
    pub npss: u8,
    /// Autonomous power state transitions supported (bit 0).
    pub apsta: u8,
    /// Warning and critical composite temperatures, K (0: not reported).
    pub wctemp: u16,
    pub cctemp: u16,
    /// Total capacity, bytes.
    pub tnvmcap: u64,
    /// Host-controlled thermal management supported (bit 0), and its lowest and highest
    /// thresholds, K (0: not reported).
    pub hctma: u16,
    pub mntmt: u16,
    pub mxtmt: u16,
    /// A volatile write cache is present (bit 0): every simulated drive has one, which the
    /// host turns on or off (feature 06h).
    pub vwc: u8,
    pub psds: Vec<PowerStateDescriptor>,
}

/// One power state descriptor as nvme-cli 2.6+ prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerStateDescriptor {
    /// Maximum power, in 0.01 W (`max_power_scale` 0) or 0.0001 W (1).
    pub max_power: u16,
    pub max_power_scale: u8,
    #[serde(rename = "non-operational_state")]
    pub non_operational_state: u8,
    /// Entry and exit latency, µs.
    pub entry_lat: u32,
    pub exit_lat: u32,
    pub read_tput: u8,
    pub read_lat: u8,
    pub write_tput: u8,
    pub write_lat: u8,
    /// Idle and active power: not declared by the presets (scale 0, not reported).
    pub idle_power: u16,
    pub idle_scale: u8,
    pub active_power: u16,
    pub active_power_work: u8,
    pub active_scale: u8,
}

impl IdCtrl {
    /// Identify Controller of `drive`. A drive without a power model declares no power
    /// state (rather than an invented one); one without a thermal model, no thresholds.
    pub fn of(drive: &Drive) -> IdCtrl {
        let cfg = drive.config();
        let table = cfg.power.as_ref().map(|p| p.table()).unwrap_or_default();
        let limits = drive.thermal_limits();
        let k = |pick: fn(&crate::thermal::ThermalLimits) -> f64| {
            limits.as_ref().map_or(0, |l| kelvin(pick(l)))
        };
        IdCtrl {
            vid: 0,
            ssvid: 0,
            sn: padded(
                &serial(&cfg.name, drive.user_bytes(), drive.seed()),
                SERIAL_BYTES,
            ),
            mn: padded(&cfg.name, MODEL_BYTES),
            fr: format!("ssdsim-{}", crate::VERSION),
            rtd3r: 0,
            rtd3e: 0,
            npss: table.len().saturating_sub(1) as u8,
            apsta: table.iter().any(|s| !s.operational) as u8,
            wctemp: k(|l| l.wctemp_c),
            cctemp: k(|l| l.cctemp_c),
            tnvmcap: drive.user_bytes(),
            hctma: limits.is_some() as u16,
            mntmt: 0,
            mxtmt: 0,
            vwc: 1,
            psds: table.into_iter().map(descriptor).collect(),
        }
    }
}

fn descriptor(s: &PowerStateConfig) -> PowerStateDescriptor {
    let (max_power, max_power_scale) = max_power(s.max_w);
    PowerStateDescriptor {
        max_power,
        max_power_scale,
        non_operational_state: (!s.operational) as u8,
        entry_lat: microseconds(s.entry_us),
        exit_lat: microseconds(s.exit_us),
        read_tput: 0,
        read_lat: 0,
        write_tput: 0,
        write_lat: 0,
        idle_power: 0,
        idle_scale: 0,
        active_power: 0,
        active_power_work: 0,
        active_scale: 0,
    }
}

/// Maximum power and its scale: centiwatts when they say it exactly, else units of
/// 0.0001 W when those fit 16 bits (the SN850's 0.005 W PS4 is 50 × 0.0001 W), else
/// centiwatts rounded.
fn max_power(watts: f64) -> (u16, u8) {
    let centi = watts * 100.0;
    let fine = watts * 10_000.0;
    if (centi - centi.round()).abs() < 1e-6 || fine.round() > u16::MAX as f64 {
        (centi.round().clamp(0.0, u16::MAX as f64) as u16, 0)
    } else {
        (fine.round().max(0.0) as u16, 1)
    }
}

fn microseconds(us: f64) -> u32 {
    us.round().clamp(0.0, u32::MAX as f64) as u32
}

/// A serial number that is the same for the same preset and seed: `SIM` and the FNV-1a
/// hash of the model name, the capacity and the seed, in hex.
fn serial(model: &str, user_bytes: u64, seed: u64) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let bytes = model
        .bytes()
        .chain(user_bytes.to_le_bytes())
        .chain(seed.to_le_bytes());
    let hash = bytes.fold(OFFSET, |h, b| (h ^ b as u64).wrapping_mul(PRIME));
    format!("SIM{hash:016X}")
}

/// `text` cut to `width` bytes (at a character boundary) and padded with spaces, as
/// Identify Controller's fixed-width strings are.
fn padded(text: &str, width: usize) -> String {
    let mut end = text.len().min(width);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:<width$}", &text[..end])
}
