//! How a fio job places its commands beyond `rw`, `bs` and the span: the sizes they
//! take (`bssplit`), where random ones fall (`random_distribution`), and the share a job
//! keeps among jobs that pace one another (`flow`). Types with their bounds; the
//! generator that draws from them is in `run::commands` and `run::spread`.

use crate::bounds::{self, Bound};
use serde::Deserialize;

/// fio's `bssplit`: most sizes a split may list (fio takes 64 per direction).
pub const MAX_SPLIT_SIZES: usize = 64;
/// fio's `random_distribution=zoned`: most zones (fio takes 256).
pub const MAX_ZONES: usize = 256;
/// fio's `zipf:THETA` and `pareto:H` parameters, and `normal:DEV` in percent.
const ZIPF_THETA: Bound = Bound::real(0.000_001, 100.0, "");
const PARETO_H: Bound = Bound::real(0.000_001, 0.999_999, "");
const NORMAL_DEV_PCT: Bound = Bound::real(0.0, 100.0, "%");
/// fio's `flow` weight and `flow_id`.
const FLOW_WEIGHT: Bound = Bound::integer(1, 1_000_000, "");

/// One size of a `bssplit`: bytes, and the share of commands in percent.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitSize {
    pub bs: u64,
    pub pct: f64,
}

/// One zone of a zoned distribution: the share of commands (%) that fall in it, and its
/// extent: a share of the span (%) for `Zoned`, bytes for `ZonedAbs`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    pub access_pct: f64,
    pub extent: f64,
}

/// Where random commands fall in the span, with fio's names and parameters. The skewed
/// ones scatter their popular blocks over the span as fio does (a hash of the rank), so
/// hot data is not one contiguous range.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Distribution {
    #[default]
    Uniform,
    /// Block of rank k drawn with probability proportional to 1 / k^theta.
    Zipf { theta: f64 },
    /// A power law: the share `h` of commands goes to the share 1 - h of blocks.
    Pareto { h: f64 },
    /// fio's "normal": a bell around the span's middle, `dev_pct` widening it.
    Normal { dev_pct: f64 },
    /// Zones in order from the span's start, extents in percent of it.
    Zoned { zones: Vec<Zone> },
    /// Zones in order from the span's start, extents in bytes.
    ZonedAbs { zones: Vec<Zone> },
}

/// fio's `steadystate`: every second of the job's time (after `ramp_s` and one second
/// more) its IOPS or bandwidth in that second is kept, the last `dur_s` of them judged
/// together; the job ends once they meet the criterion: every one within `limit` of their
/// mean (`slope` false), or the least-squares slope through them below `limit` in absolute
/// value; `pct`: the limit is a percentage of their mean.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyState {
    pub iops: bool,
    pub slope: bool,
    pub limit: f64,
    pub pct: bool,
    pub dur_s: u32,
    pub ramp_s: f64,
}

/// A steady-state window of 1 s to a day of samples; limits finite and not negative.
const STEADY_DUR_S: Bound = Bound::integer(1, 86_400, "s");
const STEADY_LIMIT: Bound = Bound::real(0.0, 1e18, "");

impl SteadyState {
    pub fn check(&self) -> Result<(), String> {
        STEADY_DUR_S.check("steadystate duration", self.dur_s.into())?;
        STEADY_LIMIT.check("steadystate limit", self.limit)?;
        bounds::STEP_IDLE_S.check("steadystate ramp", self.ramp_s)
    }
}

/// fio's `flow`: jobs with the same id issue in proportion to their weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub id: u32,
    pub weight: u32,
}

/// The shares of a split or of zones must add up to 100 % (to a rounding of fio's
/// own, which divides what is left equally among sizes without a share).
fn whole(total: f64) -> bool {
    (total - 100.0).abs() <= 0.01
}

/// Check a `bssplit`: sizes within [`bounds::STEP_BS`], multiples of 512, shares
/// adding up to 100 %.
pub fn check_split(split: &[SplitSize]) -> Result<(), String> {
    if split.len() > MAX_SPLIT_SIZES {
        return Err(format!(
            "bssplit lists {} sizes; at most {MAX_SPLIT_SIZES}",
            split.len()
        ));
    }
    for s in split {
        bounds::STEP_BS.check("bssplit size", s.bs as f64)?;
        if !s.bs.is_multiple_of(512) {
            return Err(format!(
                "bssplit size {} is not a multiple of 512 bytes",
                s.bs
            ));
        }
        Bound::real(0.0, 100.0, "%").check("bssplit share", s.pct)?;
    }
    let total: f64 = split.iter().map(|s| s.pct).sum();
    if !split.is_empty() && !whole(total) {
        return Err(format!("bssplit shares add up to {total} %, not 100 %"));
    }
    Ok(())
}

impl Distribution {
    /// Parameters within their bounds; zones adding up to 100 % of the commands and
    /// (zoned) at most 100 % of the span; `span` bytes for `ZonedAbs`.
    pub fn check(&self, span: u64) -> Result<(), String> {
        match self {
            Distribution::Uniform => Ok(()),
            Distribution::Zipf { theta } => {
                ZIPF_THETA.check("zipf theta", *theta)?;
                if *theta == 1.0 {
                    return Err("zipf theta must not be 1 (fio refuses it too)".into());
                }
                Ok(())
            }
            Distribution::Pareto { h } => PARETO_H.check("pareto h", *h),
            Distribution::Normal { dev_pct } => NORMAL_DEV_PCT.check("normal deviation", *dev_pct),
            Distribution::Zoned { zones } | Distribution::ZonedAbs { zones } => {
                if zones.is_empty() || zones.len() > MAX_ZONES {
                    return Err(format!("a zoned distribution has 1 to {MAX_ZONES} zones"));
                }
                let abs = matches!(self, Distribution::ZonedAbs { .. });
                for z in zones {
                    Bound::real(0.0, 100.0, "%").check("zone access share", z.access_pct)?;
                    let extent = if abs {
                        Bound::real(512.0, 1e18, "bytes")
                    } else {
                        Bound::real(0.0, 100.0, "%")
                    };
                    extent.check("zone extent", z.extent)?;
                }
                let access: f64 = zones.iter().map(|z| z.access_pct).sum();
                if !whole(access) {
                    return Err(format!(
                        "zones' access shares add up to {access} %, not 100 %"
                    ));
                }
                let extent: f64 = zones.iter().map(|z| z.extent).sum();
                let room = if abs { span as f64 } else { 100.0 };
                if extent > room * 1.0001 {
                    let unit = if abs { " bytes" } else { " %" };
                    return Err(format!(
                        "zones cover {extent}{unit}, more than the span's {room}{unit}"
                    ));
                }
                Ok(())
            }
        }
    }
}

impl Flow {
    pub fn check(&self) -> Result<(), String> {
        FLOW_WEIGHT.check("flow weight", self.weight.into())
    }
}
