//! Latency histogram with fio's log-linear bins.
//!
//! Contract: bins are exactly those of fio's completion-latency histogram
//! (stat.h: 6 bits of precision, 29 groups, 1856 bins, values in ns): values
//! below 128 ns each have their own bin; above, every power-of-two range is
//! split into 64 equal bins. [`bin_value`] is the representative value fio's
//! json+ output prints for a bin (the middle of its range), so histograms from
//! fio and from the simulator merge exactly, bin by bin.

/// Bits of precision per group.
pub const BITS: u32 = 6;
/// Bins per group.
pub const PER_GROUP: usize = 1 << BITS;
/// Number of groups.
pub const GROUPS: usize = 29;
/// Number of bins.
pub const BINS: usize = GROUPS * PER_GROUP;

/// Bin index of a latency in ns.
#[inline]
pub fn bin_index(v: u64) -> usize {
    if v < (PER_GROUP as u64) << 1 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let err = msb - BITS;
    let base = ((err + 1) as usize) << BITS;
    let off = ((v >> err) as usize) & (PER_GROUP - 1);
    (base + off).min(BINS - 1)
}

/// Representative value (ns) of a bin, as fio's json+ prints it.
pub fn bin_value(idx: usize) -> u64 {
    assert!(idx < BINS);
    if idx < PER_GROUP << 1 {
        return idx as u64;
    }
    let err = (idx >> BITS) as u32 - 1;
    let base = 1u64 << (err + BITS);
    let k = (idx % PER_GROUP) as u64;
    // base + (k + 0.5) * 2^err, exact since err >= 1 here
    base + (2 * k + 1) * (1u64 << err) / 2
}

/// Latencies of one direction.
#[derive(Clone)]
pub struct LatHist {
    pub bins: Box<[u64; BINS]>,
    pub count: u64,
    pub sum_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for LatHist {
    fn default() -> Self {
        LatHist {
            bins: Box::new([0; BINS]),
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl LatHist {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.bins[bin_index(ns)] += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// Non-empty bins as (representative value ns, count), ascending.
    pub fn nonzero(&self) -> Vec<(u64, u64)> {
        self.bins
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bin_value(i), c))
            .collect()
    }

    /// Percentile as fio computes it: first bin whose cumulative count reaches
    /// the rank, clamped to the observed min and max.
    pub fn percentile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((self.count as f64 * q / 100.0).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bin_value(i).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        for v in 0..128 {
            assert_eq!(bin_index(v), v as usize);
            assert_eq!(bin_value(v as usize), v);
        }
    }

    #[test]
    fn groups_have_64_bins_and_values_are_midpoints() {
        // 128..255: err=1, bins of width 2, first bin at index 128 holds 128..129, value 129
        assert_eq!(bin_index(128), 128);
        assert_eq!(bin_index(129), 128);
        assert_eq!(bin_index(130), 129);
        assert_eq!(bin_value(128), 129);
        // 256..511: err=2, width 4, index 192, value 256 + 2
        assert_eq!(bin_index(256), 192);
        assert_eq!(bin_value(192), 258);
        // Every value falls in the bin whose range contains it.
        for v in [
            1000u64,
            4095,
            4096,
            65_000,
            1_000_000,
            123_456_789,
            10_000_000_000,
        ] {
            let i = bin_index(v);
            let err = (63 - v.leading_zeros()) - BITS;
            let lo = (v >> err) << err;
            assert_eq!(bin_value(i), lo + (1 << err) / 2, "v={v}");
        }
        // 10 µs falls in bin 9984..10111 (width 128), printed as its middle.
        assert_eq!(bin_value(bin_index(10_000)), 10_048);
    }

    #[test]
    fn huge_values_clamp_to_last_bin() {
        assert_eq!(bin_index(u64::MAX), BINS - 1);
    }

    #[test]
    fn percentiles_follow_fio() {
        let mut h = LatHist::default();
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count, 100);
        let p50 = h.percentile(50.0);
        assert_eq!(p50, bin_value(bin_index(50_000)));
        assert_eq!(
            h.percentile(100.0),
            bin_value(bin_index(100_000)).min(100_000)
        );
    }
}
