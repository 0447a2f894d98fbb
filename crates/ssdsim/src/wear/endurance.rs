//! Each superblock's endurance: how many native P/E cycles it survives.
//!
//! Every erase block has its own endurance, log-normal around `endurance_median` times
//! the rated cycles (blocks of one die differ by their position and their defects); a
//! superblock holds one block from every plane of every die and is retired when the
//! first of them wears out, so its endurance is the least of theirs. The draw is
//! seeded by a constant: every drive of a preset has the same silicon, so that runs of
//! it compare alike.

use crate::config::WearConfig;
use crate::rng::Rng;

/// The seed of the draw (any constant: see the module docs).
const SILICON_SEED: u64 = 0x005E_ED0F_B10C;

/// Endurance of each of `superblocks` superblocks of `blocks_per_sb` blocks, native P/E
/// cycles; unlimited without a wear model.
pub fn draw(cfg: Option<&WearConfig>, superblocks: u32, blocks_per_sb: u32) -> Vec<f32> {
    let Some(w) = cfg else {
        return vec![f32::INFINITY; superblocks as usize];
    };
    let median = w.endurance_median * w.rated_pe_cycles as f64;
    let mut rng = Rng::new(SILICON_SEED);
    (0..superblocks)
        .map(|_| {
            let weakest = (0..blocks_per_sb)
                .map(|_| standard_normal(&mut rng))
                .fold(f64::INFINITY, f64::min);
            (median * (w.endurance_sigma * weakest).exp()) as f32
        })
        .collect()
}

/// A standard normal draw (Marsaglia's polar method: no trigonometry).
pub(super) fn standard_normal(rng: &mut Rng) -> f64 {
    let unit = |rng: &mut Rng| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 52) as f64 - 1.0;
    loop {
        let (u, v) = (unit(rng), unit(rng));
        let s = u * u + v * v;
        if s < 1.0 && s > 0.0 {
            return u * (-2.0 * s.ln() / s).sqrt();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Levelling;

    fn wear(sigma: f64) -> WearConfig {
        WearConfig {
            rated_pe_cycles: 3000,
            slc_pe_cycles: 30000,
            slc_retire_pe_cycles: None,
            endurance_median: 1.5,
            endurance_sigma: sigma,
            levelling: Levelling::Dynamic,
            static_spread_pe: None,
            rated_tbw: None,
        }
    }

    #[test]
    fn a_superblock_lasts_as_long_as_its_weakest_block() {
        let one = draw(Some(&wear(0.2)), 2000, 1);
        let many = draw(Some(&wear(0.2)), 2000, 64);
        let median = |v: &[f32]| {
            let mut s = v.to_vec();
            s.sort_by(f32::total_cmp);
            s[s.len() / 2] as f64
        };
        // one block: the median of the distribution; 64: the median of the least of 64 normal draws is 2.30 sigma below
        assert!(
            (median(&one) / 4500.0 - 1.0).abs() < 0.03,
            "{}",
            median(&one)
        );
        let expected = 4500.0 * (-0.2f64 * 2.30).exp();
        assert!(
            (median(&many) / expected - 1.0).abs() < 0.03,
            "{}",
            median(&many)
        );
        assert!(draw(Some(&wear(0.0)), 5, 64).iter().all(|&e| e == 4500.0));
        assert!(draw(None, 3, 64).iter().all(|e| e.is_infinite()));
    }
}
