//! Error correction in tiers, and what each costs.
//!
//! Contract of [`Ecc::decode`]: a codeword whose RBER at the default reference voltages is
//! within the hard-decision limit decodes at once, in more iterations the closer it is to
//! the limit (the typical ones are part of the controller's read latency; more cost
//! `iteration_us` each). Else the hard decode fails after `max_iterations` and the page is
//! read again at the next step of the retry table: the charge-loss errors shrink step by
//! step from `retention_shift` times their best-voltage value to it at the last step
//! (each failed hard decode costs `max_iterations`: [`Ecc::failed_ns`]).
//! Still beyond the hard limit at the last step, soft decoding (extra senses, the shared
//! soft decoder) corrects up to its limit; beyond that, parity across the dies rebuilds
//! the page (the other dies' pages read); beyond that the read is uncorrectable: a media
//! error the host sees. [`Decode`] says which tiers a read needed; the caller schedules
//! their senses and transfers on the NAND and adds their decode times.

use super::errors::Rber;
use crate::config::EccConfig;
use crate::time::ns_from_us;

/// What decoding a codeword took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Decode {
    /// Reads again at shifted reference voltages (each: a sense, a transfer, a decode).
    pub retries: u32,
    /// Decoded by the soft decoder after every retry failed.
    pub soft: bool,
    /// Rebuilt from the parity across the dies after soft decoding failed.
    pub parity: bool,
    /// Not corrected at all: a media error.
    pub uncorrectable: bool,
    /// Time of the hard decode that succeeded beyond its typical iterations, ns.
    pub extra_ns: u64,
}

/// The decoding tiers of a preset (see module docs).
#[derive(Debug, Clone)]
pub struct Ecc {
    cfg: EccConfig,
    /// The RBER below which a decode needs no more than its typical iterations.
    easy_rber: f64,
    /// Decoder time of one iteration, ns.
    iteration_ns: u64,
}

impl Ecc {
    pub fn new(cfg: &EccConfig) -> Ecc {
        // extra iterations round to none below this (see `iterations`)
        let extra = (cfg.max_iterations - cfg.typical_iterations).max(1) as f64;
        Ecc {
            cfg: cfg.clone(),
            easy_rber: cfg.hard_limit_rber * (0.5 / extra).sqrt(),
            iteration_ns: ns_from_us(cfg.iteration_us),
        }
    }

    pub fn config(&self) -> &EccConfig {
        &self.cfg
    }

    /// Does a page of `rber` at the default voltages decode within its typical
    /// iterations even if its worst codeword has `worst` times its errors? (The fast path:
    /// no draw, no extra time.)
    #[inline]
    pub fn easy(&self, rber: Rber, worst: f64) -> bool {
        self.at_step(rber, 0) * worst < self.easy_rber
    }

    /// How many times its page's errors a codeword may have and still decode at once
    /// within its typical iterations.
    pub fn easy_spread(&self, rber: Rber) -> f64 {
        self.easy_rber / self.at_step(rber, 0)
    }

    /// RBER at the default voltages and at retry step `k`.
    fn at_step(&self, rber: Rber, k: u32) -> f64 {
        let left = 1.0 - (k as f64 / self.cfg.retry_steps as f64).min(1.0);
        rber.steady + rber.retention * (1.0 + (self.cfg.retention_shift - 1.0) * left)
    }

    /// Iterations of a hard decode of a codeword of `rber` (within the hard limit): the
    /// typical ones, and up to the most as it nears the limit.
    fn iterations(&self, rber: f64) -> u32 {
        let c = &self.cfg;
        let near = (rber / c.hard_limit_rber).clamp(0.0, 1.0);
        let extra = (c.max_iterations - c.typical_iterations) as f64 * near * near;
        c.typical_iterations + extra.round() as u32
    }

    fn iterations_ns(&self, iterations: u32) -> u64 {
        iterations.saturating_sub(self.cfg.typical_iterations) as u64 * self.iteration_ns
    }

    /// Time of a hard decode that fails (it runs to its most iterations), beyond the typical, ns.
    pub fn failed_ns(&self) -> u64 {
        self.iterations_ns(self.cfg.max_iterations)
    }

    /// The first retry step (0: the default voltages) at which a codeword of a page of
    /// `rber`, `spread` times its page's errors, is within the hard limit; None if none is.
    /// (`at_step` falls linearly in the step: solved, not searched.)
    fn first_step_within(&self, rber: Rber, spread: f64) -> Option<u32> {
        let c = &self.cfg;
        let limit = c.hard_limit_rber / spread;
        if self.at_step(rber, 0) <= limit {
            return Some(0);
        }
        if self.at_step(rber, c.retry_steps) > limit {
            return None;
        }
        // at_step(k) = steady + retention (1 + (shift - 1)(1 - k / steps)) <= limit
        let left =
            (limit - rber.steady - rber.retention) / (rber.retention * (c.retention_shift - 1.0));
        let k = (c.retry_steps as f64 * (1.0 - left)).ceil().max(0.0) as u32;
        // rounding at the boundary: the first step that is within, by its own test
        (k.saturating_sub(1)..=c.retry_steps).find(|&j| self.at_step(rber, j) <= limit)
    }

    /// Decode a codeword of a page of `rber` whose own errors are `spread` times its page's.
    pub fn decode(&self, rber: Rber, spread: f64) -> Decode {
        let c = &self.cfg;
        let mut d = Decode::default();
        if let Some(k) = self.first_step_within(rber, spread) {
            d.retries = k;
            d.extra_ns = self.iterations_ns(self.iterations(self.at_step(rber, k) * spread));
            return d;
        }
        d.retries = c.retry_steps;
        let best = self.at_step(rber, c.retry_steps) * spread;
        d.soft = true;
        if best <= c.soft_limit_rber {
            return d;
        }
        match c.parity_limit_rber {
            Some(limit) if best <= limit => d.parity = true,
            _ => d.uncorrectable = true,
        }
        d
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn ecc() -> EccConfig {
        EccConfig {
            hard_limit_rber: 8e-3,
            iteration_us: 1.0,
            typical_iterations: 4,
            max_iterations: 20,
            retry_steps: 8,
            retention_shift: 4.0,
            soft_limit_rber: 1.6e-2,
            soft_senses: 4,
            soft_decode_us: 20.0,
            parity_limit_rber: Some(2.4e-2),
        }
    }

    fn rber(steady: f64, retention: f64) -> Rber {
        Rber { steady, retention }
    }

    #[test]
    fn each_tier_is_reached_in_turn_as_errors_grow() {
        let e = Ecc::new(&ecc());
        let fresh = e.decode(rber(5e-5, 0.0), 1.0);
        assert_eq!(fresh, Decode::default());
        // near the limit: more iterations, each a microsecond
        assert_eq!(
            e.decode(rber(e.easy_rber * 0.999, 0.0), 1.0),
            Decode::default()
        );
        assert_ne!(
            e.decode(rber(e.easy_rber * 1.001, 0.0), 1.0),
            Decode::default()
        );
        let near = e.decode(rber(7.9e-3, 0.0), 1.0);
        assert_eq!((near.retries, near.extra_ns), (0, 16_000));
        assert_eq!(e.failed_ns(), 16_000);
        // old data: default voltages see 4x its charge-loss errors; retry wins them back
        let old = e.decode(rber(1e-3, 4e-3), 1.0);
        assert!(old.retries >= 3 && !old.soft, "{old:?}");
        let last = e.at_step(rber(1e-3, 4e-3), old.retries);
        assert!(last <= 8e-3 && e.at_step(rber(1e-3, 4e-3), old.retries - 1) > 8e-3);
        assert_eq!(old.extra_ns, e.iterations_ns(e.iterations(last)));
        let soft = e.decode(rber(1.2e-2, 0.0), 1.0);
        assert!(soft.soft && !soft.parity && soft.retries == 8, "{soft:?}");
        let parity = e.decode(rber(2e-2, 0.0), 1.0);
        assert!(parity.parity && !parity.uncorrectable);
        let lost = e.decode(rber(3e-2, 0.0), 1.0);
        assert!(lost.uncorrectable && !lost.parity);
    }

    #[test]
    fn more_errors_never_take_fewer_tiers() {
        let e = Ecc::new(&ecc());
        let mut last = Decode::default();
        for i in 0..400 {
            let r = e.decode(rber(1e-4, i as f64 * 1e-4), 1.0);
            let rank = |d: &Decode| (d.uncorrectable, d.parity, d.soft, d.retries);
            assert!(rank(&r) >= rank(&last), "{r:?} after {last:?}");
            last = r;
        }
        assert!(last.uncorrectable);
        assert!(e.easy(rber(5e-5, 0.0), 3.3) && !e.easy(rber(1e-3, 1e-3), 1.0));
    }
}
