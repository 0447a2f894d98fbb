//! Conversions of configured times and rates to the simulator's integer clock.
//!
//! Contract: the inputs are values that passed their [`crate::bounds`], so they
//! are finite and within ranges where a positive time converts to at least 1 ns
//! (or 1 ps) and every result stays below 2^40, far from `u64::MAX`; the tests
//! below check this at both ends of every bound. Results are rounded to the
//! nearest tick.

/// Nanoseconds per second.
pub const NS_PER_S: f64 = 1e9;

/// `us` microseconds in ns.
pub fn ns_from_us(us: f64) -> u64 {
    to_ticks(us * 1e3)
}

/// `s` seconds in ns.
pub fn ns_from_s(s: f64) -> u64 {
    to_ticks(s * NS_PER_S)
}

/// `ns` nanoseconds in ps.
pub fn ps_from_ns(ns: f64) -> u64 {
    to_ticks(ns * 1e3)
}

/// Time to move `bytes` at `mbps` MB/s (10^6 bytes per second), ps.
pub fn ps_to_move(bytes: u64, mbps: f64) -> u64 {
    to_ticks(bytes as f64 * 1e6 / mbps)
}

fn to_ticks(v: f64) -> u64 {
    debug_assert!(
        v.is_finite() && (0.0..=u64::MAX as f64).contains(&v),
        "{v} ticks: the value was not validated against its bound"
    );
    v.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{self, Bound};
    use crate::geometry::UNIT;

    /// Far below `u64::MAX`: sums and products of a few such ticks cannot overflow.
    const SAFE: u64 = 1 << 40;

    fn ends(b: &Bound) -> [f64; 2] {
        [b.min, b.max]
    }

    fn check_positive(what: &str, b: &Bound, convert: impl Fn(f64) -> u64) {
        for v in ends(b) {
            let t = convert(v);
            assert!(t >= 1 || b.min == 0.0, "{what} {v} converts to 0");
            assert!(
                t < SAFE,
                "{what} {v} converts to {t}, too close to overflow"
            );
        }
    }

    #[test]
    fn every_bounded_time_converts_to_at_least_one_tick_and_far_from_overflow() {
        for b in [
            &bounds::T_READ_US,
            &bounds::T_PROG_US,
            &bounds::T_ERASE_US,
            &bounds::COMMAND_US,
            &bounds::FIXED_LATENCY_US,
            &bounds::POWER_LATENCY_US,
        ] {
            check_positive("µs", b, ns_from_us);
        }
        check_positive("trim ns", &bounds::TRIM_UNIT_NS, ps_from_ns);
        for b in [&bounds::STEP_RUNTIME_S, &bounds::STEP_IDLE_S] {
            for v in ends(b) {
                let t = ns_from_s(v);
                assert!(t >= 1 || b.min == 0.0, "{v} s converts to 0");
                assert!(t < 1 << 50, "{v} s converts to {t}");
            }
        }
    }

    #[test]
    fn every_bounded_rate_moves_a_byte_in_at_least_one_ps() {
        check_positive("link", &bounds::PAYLOAD_MBPS, |r| ps_to_move(1, r));
        check_positive("channel", &bounds::CHANNEL_MBPS, |r| ps_to_move(UNIT, r));
        // The largest command over the slowest link stays far from overflow.
        let t = ps_to_move(bounds::STEP_BS.max as u64, bounds::PAYLOAD_MBPS.min);
        assert!(t < 1 << 50, "{t}");
    }

    #[test]
    fn conversions_round_to_the_nearest_tick() {
        assert_eq!(ns_from_us(1.2), 1200);
        assert_eq!(ns_from_us(0.0004), 0);
        assert_eq!(ns_from_us(0.0006), 1);
        assert_eq!(ns_from_s(0.6), 600_000_000);
        assert_eq!(ps_to_move(4096, 800.0), 5_120_000);
    }
}
