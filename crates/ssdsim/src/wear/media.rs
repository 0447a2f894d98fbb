//! Reading the NAND's pages as a worn drive does: the error model and the ECC tiers of
//! each read, with the data age and the reads behind them.
//!
//! Contract: [`Media`] keeps, per superblock, when its data was programmed (on the
//! [`RetentionClock`]) and how many pages have been read from it since; it tells the
//! caller, for a read of a native-mode page, which decoding tiers its worst codeword
//! needs ([`Media::decode`]). Each page's RBER comes from the [`RawErrors`] model and is
//! kept per superblock until its inputs move (the clock, a new program, a fifth more
//! reads); each codeword's errors spread around its page's (log-normal, over-dispersed). A
//! page so clean that even a codeword four sigmas worse decodes at once takes the fast
//! path: no draw. SLC-mode pages (wide margins, short-lived data) always decode at once.
//!
//! With `[drive.refresh]`, it also names the superblocks whose data the drive should
//! rewrite in idle time ([`Media::due`]): those older than `after_days` on the retention
//! clock (oldest first; looked for once each time the clock moves), and those whose
//! blocks were read `after_reads` times since their program (as they cross it).

use super::ecc::{Decode, Ecc};
use super::errors::{PowerLaw, RawErrors, Rber};
use super::retention::RetentionClock;
use crate::config::DriveConfig;
use crate::rng::Rng;

/// Sigmas of codeword spread the fast path allows for.
const WORST_SIGMAS: f64 = 4.0;
/// The seed of the codeword draws (deterministic runs).
const CODEWORD_SEED: u64 = 0xECC0_DE00;

/// A superblock's RBER, and the inputs it was computed for (its wear and mode change only
/// at an erase, before it is programmed again, and by ageing: both forget it).
#[derive(Debug, Clone, Copy)]
struct Kept {
    rber: Rber,
    /// Every read decodes at once (SLC mode, or clean even for a codeword far out).
    at_once: bool,
    /// The standard normal draw at or below which a codeword decodes at once.
    easy_z: f64,
    clock: f64,
    /// Reads up to which it holds (a fifth more than when computed).
    reads_until: u32,
}

/// A superblock's reads since its program, and the fast path's licence: up to which count
/// its reads decode at once at the clock of `epoch` (one 16-byte load for most reads).
#[derive(Debug, Clone, Copy, Default)]
struct Quick {
    reads: u32,
    at_once_until: u32,
    epoch: u64,
}

pub struct Media {
    errors: Box<dyn RawErrors>,
    ecc: Ecc,
    clock: RetentionClock,
    sigma: f64,
    worst: f64,
    rng: Rng,
    /// Retention clock when each superblock was last programmed (opened).
    programmed: Vec<f64>,
    /// Page reads of each superblock since it was programmed (with its fast path), and the
    /// dies its reads spread over.
    quick: Vec<Quick>,
    dies: f64,
    kept: Vec<Option<Kept>>,
    /// Changes whenever the clock may have moved or wear changed: every fast path then lapses.
    epoch: u64,
    /// Refresh: data age (equivalent seconds) and page reads of a superblock after which
    /// it is rewritten (infinite, `u32::MAX`: never), the superblocks due in turn, and the
    /// clock when they were last looked for.
    refresh_after_s: f64,
    reclaim_after_reads: u32,
    due: std::collections::VecDeque<u32>,
    looked_at: f64,
}

impl Media {
    /// The media of a preset with `[drive.errors]` and `[drive.ecc]`; None without.
    pub fn new(cfg: &DriveConfig, superblocks: u32, dies: u32) -> Option<Media> {
        let (errors, ecc, wear) = (cfg.errors.as_ref()?, cfg.ecc.as_ref()?, cfg.wear.as_ref()?);
        let refresh = cfg.refresh.as_ref();
        let n = superblocks as usize;
        Some(Media {
            errors: Box::new(PowerLaw::new(errors, wear.rated_pe_cycles)),
            ecc: Ecc::new(ecc),
            clock: RetentionClock::new(errors),
            sigma: errors.codeword_sigma,
            worst: (WORST_SIGMAS * errors.codeword_sigma).exp(),
            rng: Rng::new(CODEWORD_SEED),
            programmed: vec![0.0; n],
            quick: vec![Quick::default(); n],
            dies: dies as f64,
            kept: vec![None; n],
            epoch: 1,
            refresh_after_s: refresh
                .and_then(|r| r.after_days)
                .map_or(f64::INFINITY, |d| d * 86_400.0),
            reclaim_after_reads: refresh
                .and_then(|r| r.after_reads)
                .map_or(u32::MAX, |r| (r * dies as f64).min(u32::MAX as f64) as u32),
            due: std::collections::VecDeque::new(),
            looked_at: 0.0,
        })
    }

    pub fn ecc(&self) -> &Ecc {
        &self.ecc
    }

    /// `seconds` pass at `celsius` (powered or not).
    pub fn advance(&mut self, seconds: f64, celsius: f64) {
        self.clock.advance(seconds, celsius);
        self.epoch += 1;
    }

    /// Superblock `sb` is programmed anew from now.
    pub fn programmed(&mut self, sb: u32) {
        let s = sb as usize;
        self.programmed[s] = self.clock.now();
        self.quick[s] = Quick::default();
        self.kept[s] = None;
    }

    /// Equivalent seconds at the reference temperature since `sb` was programmed.
    pub fn age_s(&self, sb: u32) -> f64 {
        self.clock.now() - self.programmed[sb as usize]
    }

    /// The next superblock whose data is due to be rewritten, among those `holding` data
    /// written and closed (full), taken off the list; None when none is.
    pub fn take_due(&mut self, holding: impl Fn(u32) -> bool) -> Option<u32> {
        let sb = self.due(holding)?;
        self.due.pop_front();
        Some(sb)
    }

    /// The next superblock whose data is due to be rewritten (left on the list).
    pub fn due(&mut self, holding: impl Fn(u32) -> bool) -> Option<u32> {
        let now = self.clock.now();
        if self.refresh_after_s.is_finite() && now != self.looked_at {
            self.looked_at = now;
            let mut old: Vec<u32> = (0..self.programmed.len() as u32)
                .filter(|&sb| holding(sb) && self.age_s(sb) >= self.refresh_after_s)
                .collect();
            old.sort_by(|&a, &b| {
                self.programmed[a as usize].total_cmp(&self.programmed[b as usize])
            });
            self.due = old.into_iter().chain(self.due.drain(..)).collect();
        }
        while let Some(&sb) = self.due.front() {
            let s = sb as usize;
            let old = self.age_s(sb) >= self.refresh_after_s;
            if holding(sb) && (old || self.quick[s].reads >= self.reclaim_after_reads) {
                return Some(sb);
            }
            self.due.pop_front(); // rewritten or trimmed since
        }
        None
    }

    /// Wear changed without a new program (ageing): every superblock's RBER is computed again.
    pub fn forget(&mut self) {
        self.kept.fill(None);
        self.epoch += 1;
    }

    /// Decode a read of a page of superblock `sb`: `cycles` its wear and `slc` its mode,
    /// asked only when its RBER is computed again. None: decoded at once, in the typical
    /// iterations (most reads).
    #[inline]
    pub fn decode(
        &mut self,
        sb: u32,
        cycles: impl FnOnce() -> f64,
        slc: impl FnOnce() -> bool,
    ) -> Option<Decode> {
        let q = &mut self.quick[sb as usize];
        q.reads = q.reads.saturating_add(1);
        if q.reads == self.reclaim_after_reads {
            self.due.push_back(sb);
        }
        if q.epoch == self.epoch && q.reads <= q.at_once_until {
            return None;
        }
        let kept = self.kept(sb, cycles, slc);
        if kept.at_once {
            // even a codeword WORST_SIGMAS out: no draw, until the kept RBER lapses
            self.quick[sb as usize] = Quick {
                at_once_until: kept.reads_until,
                epoch: self.epoch,
                ..self.quick[sb as usize]
            };
            return None;
        }
        self.draw(kept)
    }

    /// A codeword's place in its page's spread, and the tiers it needs; its spread itself
    /// only when it is beyond the easy ones.
    fn draw(&mut self, kept: Kept) -> Option<Decode> {
        let p = ((self.rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let z = inverse_normal(p);
        if z <= kept.easy_z {
            return None;
        }
        let spread = (self.sigma * z - self.sigma * self.sigma / 2.0).exp();
        Some(self.ecc.decode(kept.rber, spread)).filter(|d| *d != Decode::default())
    }

    /// The RBER of `sb`'s pages now, computed again when its inputs have moved.
    #[inline]
    fn kept(&mut self, sb: u32, cycles: impl FnOnce() -> f64, slc: impl FnOnce() -> bool) -> Kept {
        let s = sb as usize;
        let (clock, reads) = (self.clock.now(), self.quick[s].reads);
        if let Some(k) = self.kept[s] {
            if k.clock == clock && reads <= k.reads_until {
                return k;
            }
        }
        let rber = self.errors.rber(
            cycles(),
            clock - self.programmed[s],
            reads as f64 / self.dies,
        );
        let sigma = self.sigma;
        let easy_z = if sigma > 0.0 {
            (self.ecc.easy_spread(rber).ln() + sigma * sigma / 2.0) / sigma
        } else if self.ecc.easy_spread(rber) >= 1.0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        let k = Kept {
            rber,
            at_once: slc() || self.ecc.easy(rber, self.worst),
            easy_z,
            clock,
            reads_until: reads + reads / 5,
        };
        self.kept[s] = Some(k);
        k
    }
}

/// The standard normal quantile of `p` in (0, 1), within about 1e-9 (Acklam's rational
/// approximation: a ratio of polynomials, and a logarithm only in the outer 5 %).
fn inverse_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.02425;
    let poly = |c: &[f64], x: f64| c.iter().fold(0.0, |acc, &k| acc * x + k);
    let tail = |p: f64| {
        let q = (-2.0 * p.ln()).sqrt();
        poly(&C, q) / (poly(&D, q) * q + 1.0)
    };
    if p < LOW {
        tail(p)
    } else if p > 1.0 - LOW {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        let r = q * q;
        poly(&A, r) * q / (poly(&B, r) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_normal_quantile_is_the_inverse_of_the_distribution() {
        // quantiles of the standard normal distribution (tables)
        for (p, z) in [
            (0.5, 0.0),
            (0.975, 1.959_963_985),
            (0.8413447461, 1.0),
            (0.001, -3.090_232_306),
            (1e-9, -5.997_807_015),
        ] {
            let got = super::inverse_normal(p);
            assert!((got - z).abs() < 1e-6, "{p}: {got} vs {z}");
        }
    }
}
