//! The drive's heat: its temperature, heated by the energy of its work and cooled to the
//! air around it, and the thermal management that throttles it.

/// The drive's thermal thresholds, as Identify Controller (WCTEMP, CCTEMP) and the host
/// controlled thermal management feature (TMT1, TMT2) declare them, °C.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThermalLimits {
    pub wctemp_c: f64,
    pub cctemp_c: f64,
    pub tmt1_c: f64,
    pub tmt2_c: f64,
}

/// What the drive's thermal management has logged since the drive was made, as its
/// SMART / health log reports it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThermalLog {
    /// The temperature the drive reports now (its composite temperature), °C.
    pub composite_c: f64,
    /// Entries into light (TMT1) and heavy (TMT2) throttling.
    pub light_entries: u64,
    pub heavy_entries: u64,
    /// Seconds spent throttled lightly and heavily.
    pub light_s: f64,
    pub heavy_s: f64,
    /// Seconds at or above WCTEMP and at or above CCTEMP.
    pub warning_s: f64,
    pub critical_s: f64,
    /// Times the controller overheated past its shutdown temperature and dropped off the
    /// bus (each leaves a media error in the health log, and the critical warning's
    /// temperature bit set from then on).
    pub shutdowns: u64,
}
