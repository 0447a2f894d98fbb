//! `[drive.power]`: the power model: the drive's power with nothing to do, the energy of
//! its work (`[drive.power.nand]` and the controller's figures), and its power-state
//! table (`[drive.power.states]`, `ps0` to `psN` as the drive declares them).

use super::fields::{Fields, Section};
use super::ConfigError;
use crate::bounds as b;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Power model parameters.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// Power in the top state with nothing to do, W: the floor under all the drive's work
    /// (controller idle, DRAM refresh, the link up, NAND standby).
    /// Bound: [`bounds::ACTIVE_IDLE_W`](crate::bounds::ACTIVE_IDLE_W).
    pub active_idle_w: f64,
    /// Host idle after which the drive gates its clocks (its link may drop to L1), µs: the
    /// first command after a longer idle waits `active_idle_exit_us`.
    /// Bound: [`bounds::POWER_LATENCY_US`](crate::bounds::POWER_LATENCY_US).
    pub active_idle_entry_us: f64,
    /// Wake-up latency from active idle, µs.
    /// Bound: [`bounds::POWER_LATENCY_US`](crate::bounds::POWER_LATENCY_US).
    pub active_idle_exit_us: f64,
    /// Tick of the firmware timer that counts host idle for APST, µs: a tick under way
    /// when the idle begins counts in full, so a state is entered up to a tick early
    /// (absent: an exact timer).
    /// Bound: [`bounds::IDLE_TICK_US`](crate::bounds::IDLE_TICK_US).
    pub idle_tick_us: Option<f64>,
    /// Peak power, W, as declared (not modelled).
    /// Bound: [`bounds::PEAK_W`](crate::bounds::PEAK_W).
    pub peak_w: Option<f64>,
    /// Power the controller's processors add while they process commands and firmware
    /// work, W.
    /// Bound: [`bounds::CONTROLLER_ACTIVE_W`](crate::bounds::CONTROLLER_ACTIVE_W).
    pub controller_active_w: f64,
    /// Energy of the controller's data path (ECC, DMA, scrambling) per byte over the NAND
    /// channels, pJ.
    /// Bound: [`bounds::PJ_PER_BYTE`](crate::bounds::PJ_PER_BYTE).
    pub controller_pj_per_byte: f64,
    /// Energy of staging a byte in DRAM (written in, read out) per byte over the NAND
    /// channels, pJ (absent: no DRAM; the controller's SRAM is in its data path).
    /// Bound: [`bounds::PJ_PER_BYTE`](crate::bounds::PJ_PER_BYTE).
    pub dram_pj_per_byte: Option<f64>,
    /// Energy per payload byte over the host link, beyond the link's idle power, pJ.
    /// Bound: [`bounds::PJ_PER_BYTE`](crate::bounds::PJ_PER_BYTE).
    pub link_pj_per_byte: f64,
    pub nand: NandPowerConfig,
    /// The power states, `ps0` (the top one) to `psN`.
    pub states: BTreeMap<String, PowerStateConfig>,
}

/// Supply and currents of the NAND: an operation's energy is volts × amps × its duration.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NandPowerConfig {
    /// Supply voltage, V. Bound: [`bounds::NAND_V`](crate::bounds::NAND_V).
    pub vcc_v: f64,
    /// Current of a die while it senses, programs or erases, and of a channel while it
    /// transfers, mA. Bound of each: [`bounds::NAND_MA`](crate::bounds::NAND_MA).
    pub read_ma: f64,
    pub program_ma: f64,
    pub erase_ma: f64,
    pub io_ma: f64,
}

/// One power state as the drive declares it, with what was measured of it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerStateConfig {
    /// Declared maximum power, W. Bound: [`bounds::STATE_W`](crate::bounds::STATE_W).
    pub max_w: f64,
    /// Declared entry and exit latencies, µs: the host's APST policy picks states by them.
    /// Bound of each: [`bounds::POWER_LATENCY_US`](crate::bounds::POWER_LATENCY_US).
    pub entry_us: f64,
    pub exit_us: f64,
    /// Does the drive serve commands in it? Non-operational states are the idle ones.
    pub operational: bool,
    /// Measured power idling in this non-operational state, W (absent: `max_w`).
    /// Bound: [`bounds::STATE_W`](crate::bounds::STATE_W).
    pub measured_w: Option<f64>,
    /// Measured wake-up latency from this non-operational state, µs (absent: `exit_us`).
    /// Bound: [`bounds::POWER_LATENCY_US`](crate::bounds::POWER_LATENCY_US).
    pub measured_exit_us: Option<f64>,
}

impl PowerStateConfig {
    /// The power drawn idling in this state, W.
    pub fn idle_w(&self) -> f64 {
        self.measured_w.unwrap_or(self.max_w)
    }

    /// The wake-up latency from this state, µs.
    pub fn wake_us(&self) -> f64 {
        self.measured_exit_us.unwrap_or(self.exit_us)
    }
}

impl PowerConfig {
    /// The states in order, `ps0` first (after validation: keys `ps0` to `psN`).
    pub fn table(&self) -> Vec<&PowerStateConfig> {
        let mut numbered: Vec<_> = self
            .states
            .iter()
            .map(|(key, state)| (state_number(key), state))
            .collect();
        numbered.sort_by_key(|(n, _)| *n);
        numbered.into_iter().map(|(_, state)| state).collect()
    }

    /// The state keys are `ps0` to `psN` with no gap, 1 to 32 of them.
    fn check_state_keys(&self) -> Result<(), ConfigError> {
        let n = self.states.len();
        b::POWER_STATES
            .check("drive.power.states (their number)", n as f64)
            .map_err(ConfigError)?;
        let mut numbers: Vec<_> = self.states.keys().map(|k| state_number(k)).collect();
        numbers.sort();
        if numbers.iter().copied().ne((0..n).map(Some)) {
            return Err(ConfigError(format!(
                "drive.power.states must be named ps0 to ps{}, one each, found {:?}",
                n - 1,
                self.states.keys().collect::<Vec<_>>()
            )));
        }
        Ok(())
    }
}

/// The number of a state key `psN` (None for anything else, `ps01` included).
fn state_number(key: &str) -> Option<usize> {
    let n: usize = key.strip_prefix("ps")?.parse().ok()?;
    (format!("ps{n}") == key).then_some(n)
}

impl Section for PowerConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.power");
        f.add("active_idle_w", self.active_idle_w, &b::ACTIVE_IDLE_W);
        f.add(
            "active_idle_entry_us",
            self.active_idle_entry_us,
            &b::POWER_LATENCY_US,
        );
        f.add(
            "active_idle_exit_us",
            self.active_idle_exit_us,
            &b::POWER_LATENCY_US,
        );
        f.add_some("idle_tick_us", self.idle_tick_us, &b::IDLE_TICK_US);
        f.add_some("peak_w", self.peak_w, &b::PEAK_W);
        f.add(
            "controller_active_w",
            self.controller_active_w,
            &b::CONTROLLER_ACTIVE_W,
        );
        f.add(
            "controller_pj_per_byte",
            self.controller_pj_per_byte,
            &b::PJ_PER_BYTE,
        );
        f.add_some("dram_pj_per_byte", self.dram_pj_per_byte, &b::PJ_PER_BYTE);
        f.add("link_pj_per_byte", self.link_pj_per_byte, &b::PJ_PER_BYTE);
        f.table("drive.power.nand");
        let n = &self.nand;
        f.add("vcc_v", n.vcc_v, &b::NAND_V);
        for (key, ma) in [
            ("read_ma", n.read_ma),
            ("program_ma", n.program_ma),
            ("erase_ma", n.erase_ma),
            ("io_ma", n.io_ma),
        ] {
            f.add(key, ma, &b::NAND_MA);
        }
        for (key, s) in &self.states {
            f.table(&format!("drive.power.states.{key}"));
            f.add("max_w", s.max_w, &b::STATE_W);
            f.add("entry_us", s.entry_us, &b::POWER_LATENCY_US);
            f.add("exit_us", s.exit_us, &b::POWER_LATENCY_US);
            f.add_some("measured_w", s.measured_w, &b::STATE_W);
            f.add_some("measured_exit_us", s.measured_exit_us, &b::POWER_LATENCY_US);
        }
    }

    /// The table as NVMe orders it: `ps0` operational, declared powers not rising with the
    /// state's number, measurements only of idle states; the drive idles below its top
    /// state's maximum and peaks above its idle.
    fn validate(&self) -> Result<(), ConfigError> {
        self.check_state_keys()?;
        let table = self.table();
        if !table[0].operational {
            return Err(ConfigError(
                "drive.power.states.ps0 must be operational: the drive serves commands in it"
                    .into(),
            ));
        }
        for (i, pair) in table.windows(2).enumerate() {
            if pair[1].max_w > pair[0].max_w {
                return Err(ConfigError(format!(
                    "drive.power.states.ps{}.max_w must be <= drive.power.states.ps{i}.max_w: states are numbered from the most power down",
                    i + 1
                )));
            }
        }
        if let Some(i) = table
            .iter()
            .position(|s| s.operational && (s.measured_w.is_some() || s.measured_exit_us.is_some()))
        {
            return Err(ConfigError(format!(
                "drive.power.states.ps{i}: measured_w and measured_exit_us are for non-operational states, where the drive idles"
            )));
        }
        if self.active_idle_w > table[0].max_w {
            return Err(ConfigError(
                "drive.power.active_idle_w must be <= drive.power.states.ps0.max_w".into(),
            ));
        }
        if self.peak_w.is_some_and(|peak| peak < self.active_idle_w) {
            return Err(ConfigError(
                "drive.power.peak_w must be >= drive.power.active_idle_w".into(),
            ));
        }
        Ok(())
    }
}
