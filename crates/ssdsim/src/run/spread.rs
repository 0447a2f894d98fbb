//! Where a random command falls: an index among `n` equal blocks of the span, drawn
//! from the step's [`Distribution`] with the drive's PRNG.
//!
//! The skewed forms are fio 3.33's mechanisms, so a job file means the same access
//! pattern here as on a real drive: zipf by Gray et al.'s method ("Quickly generating
//! billion-record synthetic databases", SIGMOD 1994) with the normalising sum taken over
//! at most [`ZIPF_TERMS`] ranks as fio does; pareto as u^(ln h / ln(1 - h)) of the
//! range; fio's "normal" as the mean of [`BELL_DRAWS`] uniform draws, widened by a
//! uniform deviation of `dev_pct` of the range. Their ranks are then scattered over the
//! span by a mixing hash and a random rotation, as fio scatters them, so the popular
//! blocks are not one contiguous range. Zoned forms pick a zone by its access share and
//! a block uniformly inside it.

use crate::pattern::{Distribution, Zone};
use crate::rng::Rng;

/// fio sums the zipf normaliser over at most this many ranks (lib/zipf.c): beyond, the
/// distribution it draws is that truncated one, and so is this one.
const ZIPF_TERMS: u64 = 10_000_000;
/// Uniform draws averaged into one of fio's "normal" values (lib/gauss.c).
const BELL_DRAWS: u64 = 12;

/// A sampler of block indices in `0..n`.
pub(super) enum Spread {
    Uniform,
    /// fio's random map: every block once per pass over the span, in a random order.
    EachOnce(Shuffle),
    Zipf {
        theta: f64,
        zeta_n: f64,
        zeta_2: f64,
        rotation: u64,
    },
    Pareto {
        power: f64,
        rotation: u64,
    },
    Bell {
        /// Width of the uniform deviation added, blocks.
        dev: u64,
        rotation: u64,
    },
    /// (cumulative access share in 0..1, first block, blocks), in order.
    Zones(Vec<(f64, u64, u64)>),
}

/// A uniform draw in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A bijective mix of 64 bits (SplitMix64's finaliser): neighbouring ranks land far apart.
fn scatter(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Spread {
    /// The sampler of `distribution` over `n` blocks of `block` bytes (a validated step's).
    pub(super) fn new(
        distribution: &Distribution,
        n: u64,
        block: u64,
        each_once: bool,
        rng: &mut Rng,
    ) -> Spread {
        match distribution {
            Distribution::Uniform if each_once => Spread::EachOnce(Shuffle::new(n, rng)),
            Distribution::Uniform => Spread::Uniform,
            Distribution::Zipf { theta } => {
                let zeta_n = (1..=n.min(ZIPF_TERMS))
                    .map(|i| (i as f64).powf(-theta))
                    .sum();
                Spread::Zipf {
                    theta: *theta,
                    zeta_n,
                    zeta_2: 1.0 + 0.5f64.powf(*theta),
                    rotation: rng.below(n),
                }
            }
            Distribution::Pareto { h } => Spread::Pareto {
                power: h.ln() / (1.0 - h).ln(),
                rotation: rng.below(n),
            },
            Distribution::Normal { dev_pct } => Spread::Bell {
                dev: ((n as f64 * dev_pct / 100.0).ceil() as u64).min(n / 2),
                rotation: rng.below(n),
            },
            Distribution::Zoned { zones } => Spread::Zones(zones_of(zones, n, |z| {
                (z.extent / 100.0 * n as f64).round() as u64
            })),
            Distribution::ZonedAbs { zones } => {
                Spread::Zones(zones_of(zones, n, |z| z.extent as u64 / block))
            }
        }
    }

    /// The next block index in `0..n`.
    #[inline(never)]
    pub(super) fn draw(&mut self, n: u64, rng: &mut Rng) -> u64 {
        match self {
            Spread::Uniform => rng.below(n),
            Spread::EachOnce(shuffle) => shuffle.next(rng),
            Spread::Zipf {
                theta,
                zeta_n,
                zeta_2,
                rotation,
            } => {
                let (theta, zeta_n, zeta_2, rotation) = (*theta, *zeta_n, *zeta_2, *rotation);
                let u = unit(rng);
                let uz = u * zeta_n;
                let rank = if uz < 1.0 {
                    0
                } else if uz < zeta_2 {
                    1
                } else {
                    let alpha = 1.0 / (1.0 - theta);
                    let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
                    ((n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64).min(n - 1)
                };
                (scatter(rank) % n + rotation) % n
            }
            Spread::Pareto { power, rotation } => {
                let rank = ((n - 1) as f64 * unit(rng).powf(*power)) as u64;
                (scatter(rank) % n + *rotation) % n
            }
            Spread::Bell { dev, rotation } => {
                let sum: u64 = (0..BELL_DRAWS).map(|_| rng.below(n)).sum();
                let mut mean = sum.div_ceil(BELL_DRAWS) as i64;
                if *dev > 0 {
                    let mut d = rng.below(*dev) as i64 - (*dev / 2) as i64;
                    while mean + d >= n as i64 || mean + d < 0 {
                        d /= 2;
                    }
                    mean += d;
                }
                (scatter(mean as u64) % n + *rotation) % n
            }
            Spread::Zones(zones) => {
                let u = unit(rng);
                let &(_, first, len) = zones
                    .iter()
                    .find(|z| u < z.0)
                    .unwrap_or_else(|| zones.last().expect("a zoned spread has zones"));
                first + rng.below(len)
            }
        }
    }
}

/// A random order of `0..n` without memory of what was drawn: a four-round Feistel
/// permutation of the smallest power of four at least `n` (its halves of equal width),
/// values of `n` or more skipped (cycle walking: at most four tries on average). A new
/// key for every pass, so each pass has its own order.
pub(super) struct Shuffle {
    n: u64,
    /// Bits of each half of the domain.
    half_bits: u32,
    keys: [u64; 4],
    /// Position in the current pass.
    i: u64,
}

impl Shuffle {
    fn new(n: u64, rng: &mut Rng) -> Shuffle {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        Shuffle {
            n,
            half_bits: bits.div_ceil(2),
            keys: std::array::from_fn(|_| rng.next_u64()),
            i: 0,
        }
    }

    fn next(&mut self, rng: &mut Rng) -> u64 {
        let domain = 1u64 << (2 * self.half_bits);
        loop {
            if self.i == domain {
                self.i = 0;
                self.keys = std::array::from_fn(|_| rng.next_u64());
            }
            let v = self.permute(self.i);
            self.i += 1;
            if v < self.n {
                return v;
            }
        }
    }

    /// The Feistel permutation of `x` in 0..4^half_bits.
    fn permute(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let f = scatter(right ^ key) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }
}

/// Zones as (cumulative share, first block, blocks): each at least one block, the last
/// ending inside the span; zones without access are left out.
fn zones_of(zones: &[Zone], n: u64, blocks: impl Fn(&Zone) -> u64) -> Vec<(f64, u64, u64)> {
    let mut out = Vec::with_capacity(zones.len());
    let (mut share, mut first) = (0.0, 0u64);
    for z in zones {
        let len = blocks(z).clamp(1, n - first.min(n - 1));
        share += z.access_pct / 100.0;
        if z.access_pct > 0.0 {
            out.push((share, first.min(n - 1), len));
        }
        first = (first + len).min(n - 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: &Distribution, n: u64, draws: usize) -> Vec<u64> {
        let mut rng = Rng::new(7);
        let mut s = Spread::new(d, n, 4096, false, &mut rng);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[s.draw(n, &mut rng) as usize] += 1;
        }
        c
    }

    /// The share of draws that fell on the `top` most drawn blocks.
    fn top_share(mut c: Vec<u64>, top: usize) -> f64 {
        let total: u64 = c.iter().sum();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c[..top].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn a_random_map_draws_every_block_once_per_pass_in_a_new_order_each_pass() {
        for n in [1u64, 2, 3, 5, 1000, 4097] {
            let mut rng = Rng::new(3);
            let mut s = Spread::new(&Distribution::Uniform, n, 4096, true, &mut rng);
            let pass = |s: &mut Spread, rng: &mut Rng| -> Vec<u64> {
                (0..n).map(|_| s.draw(n, rng)).collect()
            };
            let first = pass(&mut s, &mut rng);
            let second = pass(&mut s, &mut rng);
            for p in [&first, &second] {
                let mut sorted = p.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            }
            if n >= 1000 {
                assert_ne!(first, second);
                // Not in order: fewer than 1 % of neighbours are consecutive blocks.
                let runs = first.windows(2).filter(|w| w[1] == w[0] + 1).count();
                assert!(runs < n as usize / 100, "{runs}");
            }
        }
    }

    #[test]
    fn zipf_concentrates_as_its_theta_says() {
        // Under zipf(theta) over n ranks, rank 1 has 1 / zeta(n, theta) of the draws.
        let n = 10_000;
        for theta in [0.5, 1.2] {
            let expected = 1.0 / (1..=n).map(|i| (i as f64).powf(-theta)).sum::<f64>();
            let c = counts(&Distribution::Zipf { theta }, n, 400_000);
            let top = top_share(c, 1);
            assert!(
                (top - expected).abs() < expected * 0.1,
                "{theta}: {top} vs {expected}"
            );
        }
        let flat = top_share(counts(&Distribution::Uniform, n, 400_000), 100);
        let skewed = top_share(counts(&Distribution::Zipf { theta: 1.2 }, n, 400_000), 100);
        assert!(flat < 0.02 && skewed > 0.5, "{flat} {skewed}");
    }

    #[test]
    fn hot_blocks_are_scattered_not_contiguous() {
        let c = counts(&Distribution::Zipf { theta: 1.2 }, 10_000, 100_000);
        let mut hot: Vec<usize> = (0..c.len()).collect();
        hot.sort_by_key(|&i| std::cmp::Reverse(c[i]));
        let ten = &hot[..10];
        let spread = ten.iter().max().unwrap() - ten.iter().min().unwrap();
        assert!(
            spread > 1000,
            "the 10 hottest blocks lie within {spread} blocks"
        );
    }

    #[test]
    fn pareto_gives_share_h_to_the_share_one_minus_h_of_blocks() {
        // u^(ln 0.9 / ln 0.1) lies above 0.9 with probability 0.9: 90 % of the draws
        // fall on 10 % of the blocks.
        let c = counts(&Distribution::Pareto { h: 0.9 }, 1000, 200_000);
        let top = top_share(c, 100);
        assert!((top - 0.9).abs() < 0.03, "{top}");
    }

    #[test]
    fn zones_get_their_access_shares() {
        let zones = vec![
            Zone {
                access_pct: 50.0,
                extent: 5.0,
            },
            Zone {
                access_pct: 30.0,
                extent: 15.0,
            },
            Zone {
                access_pct: 20.0,
                extent: 80.0,
            },
        ];
        let c = counts(&Distribution::Zoned { zones }, 1000, 200_000);
        let share = |a: usize, b: usize| c[a..b].iter().sum::<u64>() as f64 / 200_000.0;
        assert!((share(0, 50) - 0.5).abs() < 0.01);
        assert!((share(50, 200) - 0.3).abs() < 0.01);
        assert!((share(200, 1000) - 0.2).abs() < 0.01);
    }

    #[test]
    fn every_draw_is_inside_the_span() {
        for d in [
            Distribution::Zipf { theta: 0.5 },
            Distribution::Pareto { h: 0.3 },
            Distribution::Normal { dev_pct: 50.0 },
            Distribution::ZonedAbs {
                zones: vec![Zone {
                    access_pct: 100.0,
                    extent: 1e12,
                }],
            },
        ] {
            for n in [1, 2, 3, 1000] {
                let c = counts(&d, n, 2000);
                assert_eq!(c.iter().sum::<u64>(), 2000, "{d:?} {n}");
            }
        }
    }
}
