//! fio's steady-state judgement of a job (`steadystate`, `ss_dur`, `ss_ramp`), in drive
//! time: at every whole second of the job's time its I/Os and bytes completed in that
//! second are a sample; once `ramp_s` and one second more have passed (fio's
//! steadystate.c), the last `dur_s` samples are judged each second, and the job ends at
//! the first second they meet the criterion.

use super::recorder::Recorder;
use crate::pattern::SteadyState;
use crate::step::SteadyReport;
use crate::time::{ns_from_s, NS_PER_S};
use std::collections::VecDeque;

const SECOND: u64 = NS_PER_S as u64;

pub(super) struct Steady {
    cfg: SteadyState,
    /// Start of the job's figures, and the end of the next second to sample.
    start: u64,
    next: u64,
    /// Samples from the ramp's end on: (I/Os, bytes) per second, oldest first.
    window: VecDeque<(u64, u64)>,
    report: SteadyReport,
}

impl Steady {
    pub(super) fn new(cfg: SteadyState, start: u64) -> Steady {
        Steady {
            cfg,
            start,
            next: start + SECOND,
            window: VecDeque::with_capacity(cfg.dur_s as usize + 1),
            report: SteadyReport {
                attained: false,
                criterion: 0.0,
                max_deviation: 0.0,
                slope: 0.0,
                iops: vec![],
                bw: vec![],
            },
        }
    }

    /// When the next second ends.
    pub(super) fn due(&self) -> u64 {
        self.next
    }

    /// Sample every second that ended by `t` from the job's record `rec` (whose counts of a
    /// second are final once the second is over: a command completes after its issue);
    /// true when the job has become steady.
    pub(super) fn judge(&mut self, t: u64, rec: &Recorder) -> bool {
        let ramp_end = self.start + ns_from_s(self.cfg.ramp_s) + SECOND;
        while self.next <= t {
            let second = ((self.next - self.start) / SECOND - 1) as usize;
            let (bytes, ios) = rec.completed_in(second);
            if self.next >= ramp_end {
                self.window.push_back((ios, bytes));
                if self.window.len() > self.cfg.dur_s as usize {
                    self.window.pop_front();
                }
                if self.window.len() == self.cfg.dur_s as usize && self.steady() {
                    self.report.attained = true;
                    return true;
                }
            }
            self.next += SECOND;
        }
        false
    }

    /// The criterion on the full window, kept for the report; is it met?
    fn steady(&mut self) -> bool {
        let ys: Vec<f64> = self
            .window
            .iter()
            .map(|&(ios, bytes)| if self.cfg.iops { ios } else { bytes } as f64)
            .collect();
        let n = ys.len() as f64;
        let mean = ys.iter().sum::<f64>() / n;
        let r = &mut self.report;
        let value = if self.cfg.slope {
            // least squares through x = 0, 1, ..., n - 1
            let sum_x = n * (n - 1.0) / 2.0;
            let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
            let sum_xy: f64 = ys.iter().enumerate().map(|(x, y)| x as f64 * y).sum();
            let denominator = sum_x2 - sum_x * sum_x / n;
            r.slope = if denominator > 0.0 {
                (sum_xy - sum_x * mean) / denominator
            } else {
                0.0
            };
            r.slope
        } else {
            r.max_deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            r.max_deviation
        };
        r.criterion = if self.cfg.pct {
            if mean > 0.0 {
                100.0 * value / mean
            } else {
                f64::INFINITY
            }
        } else {
            value
        };
        r.criterion.abs() < self.cfg.limit
    }

    pub(super) fn report(self) -> SteadyReport {
        let (iops, bw) = self.window.into_iter().unzip();
        SteadyReport {
            iops,
            bw,
            criterion: if self.report.criterion.is_finite() {
                self.report.criterion
            } else {
                0.0
            },
            ..self.report
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(cfg: SteadyState, ys: &[u64]) -> (bool, SteadyReport) {
        let mut s = Steady::new(cfg, 0);
        let mut steady = false;
        for &y in ys {
            s.window.push_back((y, y * 4096));
            if s.window.len() > cfg.dur_s as usize {
                s.window.pop_front();
            }
            steady = s.window.len() == cfg.dur_s as usize && s.steady();
            if steady {
                break;
            }
        }
        (steady, s.report())
    }

    const DEV: SteadyState = SteadyState {
        iops: true,
        slope: false,
        limit: 10.0,
        pct: true,
        dur_s: 3,
        ramp_s: 0.0,
    };

    #[test]
    fn deviation_within_the_limit_of_the_mean_is_steady() {
        let (steady, r) = judged(DEV, &[100, 200, 100, 101, 99]);
        assert!(steady);
        assert_eq!(r.iops, [100, 101, 99]);
        assert!((r.max_deviation - 1.0).abs() < 1e-9 && (r.criterion - 1.0).abs() < 1e-9);
        assert!(!judged(DEV, &[100, 120, 100]).0); // 13.3 % from the mean
    }

    #[test]
    fn a_slope_is_judged_in_absolute_value_as_fio_does() {
        let slope = SteadyState {
            slope: true,
            limit: 5.0,
            pct: false,
            ..DEV
        };
        let (steady, r) = judged(slope, &[100, 90, 80]);
        assert!(!steady && (r.slope + 10.0).abs() < 1e-9);
        assert!(judged(slope, &[100, 98, 96]).0);
    }
}
