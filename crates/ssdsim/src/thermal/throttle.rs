//! Thermal throttling: when the firmware throttles, and how it holds the drive's power
//! under the cap of the power state it throttles to.

use super::Throttling;
use crate::config::ThrottleConfig;
use crate::time::NS_PER_S;

/// How hard the drive throttles, as the health log counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None = 0,
    /// Above TMT1.
    Light = 1,
    /// Above TMT2.
    Heavy = 2,
}

/// NVMe's host-controlled thermal management as client firmware does it: light
/// throttling at TMT1, heavy at TMT2, each released `hysteresis_k` below its threshold;
/// with a rate-of-rise trigger, light throttling also starts when the temperature,
/// rising as it does, would reach TMT1 within `rise_lookahead_s`.
pub struct Thresholds {
    tmt1_c: f64,
    tmt2_c: f64,
    hysteresis_k: f64,
    lookahead_s: f64,
    level: Level,
}

impl Thresholds {
    pub fn new(tmt1_c: f64, tmt2_c: f64, t: &ThrottleConfig) -> Thresholds {
        Thresholds {
            tmt1_c,
            tmt2_c,
            hysteresis_k: t.hysteresis_k,
            lookahead_s: t.rise_lookahead_s.unwrap_or(0.0),
            level: Level::None,
        }
    }
}

impl Throttling for Thresholds {
    fn level(&mut self, temp_c: f64, rise_k_per_s: f64) -> Level {
        let held = |level: Level, threshold: f64| {
            self.level >= level && temp_c > threshold - self.hysteresis_k
        };
        let foreseen = temp_c + rise_k_per_s.max(0.0) * self.lookahead_s;
        self.level = if temp_c >= self.tmt2_c || held(Level::Heavy, self.tmt2_c) {
            Level::Heavy
        } else if foreseen >= self.tmt1_c || held(Level::Light, self.tmt1_c) {
            Level::Light
        } else {
            Level::None
        };
        self.level
    }
}

/// The firmware's averaging window for a power cap: it may exceed the cap for this long
/// before it holds commands back (the NVMe maximum power of a state is an average over
/// a short window, not an instantaneous limit).
const WINDOW_NS: f64 = 0.1 * NS_PER_S;

/// Holds the drive's mean power at a cap by delaying the fetch of host commands: a
/// bucket filled at the cap and drained by the energy the drive spends (its power with
/// nothing to do included), at most [`WINDOW_NS`] of the cap deep. A command waits
/// until the bucket is no longer in debt.
pub struct Pacer {
    cap_w: f64,
    tokens_j: f64,
    at: u64,
    energy_j: f64,
}

impl Pacer {
    /// A cap of `cap_w` from `t`, when the drive had spent `energy_j`: a full bucket.
    pub fn new(cap_w: f64, t: u64, energy_j: f64) -> Pacer {
        Pacer {
            cap_w,
            tokens_j: Self::depth_j(cap_w),
            at: t,
            energy_j,
        }
    }

    fn depth_j(cap_w: f64) -> f64 {
        cap_w * WINDOW_NS / NS_PER_S
    }

    /// A command the host issues at `t`, the drive having spent `energy_j` so far: when
    /// it is fetched.
    pub fn admit(&mut self, t: u64, energy_j: f64) -> u64 {
        let t = t.max(self.at);
        self.tokens_j = (self.tokens_j + self.cap_w * (t - self.at) as f64 / NS_PER_S)
            .min(Self::depth_j(self.cap_w))
            - (energy_j - self.energy_j);
        self.energy_j = energy_j;
        self.at = t;
        if self.tokens_j >= 0.0 {
            return t;
        }
        let wait = (-self.tokens_j / self.cap_w * NS_PER_S).ceil() as u64;
        self.tokens_j = 0.0;
        self.at = t + wait;
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thresholds(lookahead: Option<f64>) -> Thresholds {
        let t = ThrottleConfig {
            hysteresis_k: 3.0,
            light_state: 1,
            heavy_state: 2,
            rise_lookahead_s: lookahead,
        };
        Thresholds::new(80.0, 82.0, &t)
    }

    #[test]
    fn levels_with_hysteresis() {
        let mut t = thresholds(None);
        let seen: Vec<Level> = [70.0, 79.9, 80.0, 81.0, 82.5, 80.0, 78.5, 78.0, 76.9]
            .iter()
            .map(|&c| t.level(c, 0.0))
            .collect();
        let (none, light, heavy) = (Level::None, Level::Light, Level::Heavy);
        assert_eq!(
            seen,
            [none, none, light, light, heavy, heavy, light, light, none]
        );
    }

    #[test]
    fn a_fast_rise_throttles_before_the_threshold() {
        let mut level = thresholds(Some(5.0));
        assert_eq!(level.level(72.0, 2.0), Level::Light); // 82 in 5 s
        let mut plain = thresholds(Some(5.0));
        assert_eq!(plain.level(72.0, 0.5), Level::None);
        let mut without = thresholds(None);
        assert_eq!(without.level(72.0, 2.0), Level::None);
    }

    #[test]
    fn the_pacer_holds_the_mean_power_at_its_cap() {
        let mut p = Pacer::new(4.0, 0, 0.0);
        let (mut t, mut energy) = (0u64, 0.0);
        // the drive would spend 1 mJ per command every 100 µs: 10 W
        for _ in 0..100_000 {
            t = p.admit(t, energy);
            energy += 1e-3;
            t += 100_000;
        }
        let mean_w = energy / (t as f64 / NS_PER_S);
        assert!((mean_w - 4.0).abs() < 0.05, "{mean_w}");
    }

    #[test]
    fn below_its_cap_the_pacer_holds_nothing_back() {
        let mut p = Pacer::new(4.0, 0, 0.0);
        let mut energy = 0.0;
        for i in 0..1000u64 {
            let t = i * 1_000_000; // 1 mJ per ms: 1 W
            assert_eq!(p.admit(t, energy), t);
            energy += 1e-3;
        }
    }
}
