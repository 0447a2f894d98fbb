//! Power states: which ones the drive falls to while idle, when, and how long it takes
//! to wake.
//!
//! Contract: the host's [`ApstPolicy`] turns the drive's declared table into tiers, each
//! a non-operational state entered after some idle in the tier before it. A [`Ladder`]
//! adds the drive's own active idle (clock gating after `active_idle_entry_us`) and,
//! for a host idle that began at offset 0, says how long is spent in each state up to
//! any offset and how long a command arriving then waits to be served: the exit latency
//! of the state it finds the drive in (plus the rest of the entry when the drive is
//! still entering it). While a state is being entered the drive still draws the power
//! of the state it is leaving. The drive's firmware counts the host's idle for APST in
//! whole ticks of its timer (`power.idle_tick_us`): a tick that ends after the idle began
//! counts in full, so each tier is entered up to a tick before its idle time has passed,
//! by how far into a tick the idle began. Active idle is the hardware's clock gating,
//! timed exactly.

use crate::config::{PowerConfig, PowerStateConfig};
use crate::time::ns_from_us;

/// Linux (5.14 and later) tiers of APST: a non-operational state whose entry + exit
/// latency is at most `tolerance_us` is entered after `idle_ms` of idle
/// (`apst_primary_*` and `apst_secondary_*` of nvme_core; CALIBRATION.md, "Idle power
/// states on Linux"), shortest first.
const LINUX_TIERS: [LinuxTier; 2] = [
    LinuxTier {
        tolerance_us: 15_000.0,
        idle_ms: 100,
    },
    LinuxTier {
        tolerance_us: 100_000.0,
        idle_ms: 2000,
    },
];

struct LinuxTier {
    tolerance_us: f64,
    idle_ms: u64,
}

const NS_PER_MS: u64 = 1_000_000;

/// A non-operational state the host lets the drive fall to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tier {
    /// Its number in the table (`psN`).
    pub state: usize,
    /// Idle in the state before (the top state for the first tier) before it is entered, ns.
    pub after_ns: u64,
}

/// How the host programs autonomous power state transitions: the tiers the drive
/// descends while idle, shallowest first.
pub trait ApstPolicy {
    fn tiers(&self, table: &[&PowerStateConfig]) -> Vec<Tier>;
}

/// APST off, or a platform that cannot reach the non-operational states: no tiers.
pub struct NoApst;

impl ApstPolicy for NoApst {
    fn tiers(&self, _table: &[&PowerStateConfig]) -> Vec<Tier> {
        Vec::new()
    }
}

/// APST as Linux builds its table (nvme_configure_apst): from the deepest state up, a
/// non-operational state whose exit latency is within `max_latency_us` becomes the
/// target of the first tier its entry + exit latency fits, each tier used once and a
/// shallower state never given a later tier than a deeper one.
pub struct LinuxApst {
    pub max_latency_us: u64,
}

impl ApstPolicy for LinuxApst {
    fn tiers(&self, table: &[&PowerStateConfig]) -> Vec<Tier> {
        let mut tiers = Vec::new();
        let mut last: Option<usize> = None;
        for (state, s) in table.iter().enumerate().rev() {
            if s.operational || s.exit_us > self.max_latency_us as f64 {
                continue;
            }
            let total = s.entry_us + s.exit_us;
            let Some(i) = LINUX_TIERS.iter().position(|t| total <= t.tolerance_us) else {
                continue;
            };
            if last.is_some_and(|l| i >= l) {
                continue;
            }
            last = Some(i);
            tiers.push(Tier {
                state,
                after_ns: LINUX_TIERS[i].idle_ms * NS_PER_MS,
            });
        }
        tiers.reverse();
        tiers
    }
}

/// A state of the ladder, its times as offsets from the start of the idle.
#[derive(Debug, Clone, PartialEq)]
struct Rung {
    state: usize,
    /// When its entry starts and when it is reached.
    starts: u64,
    reached: u64,
    exit_ns: u64,
}

/// The states a drive goes through while idle on one platform.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    /// Idle after which the drive is in active idle, and its wake-up latency, ns.
    active_after_ns: u64,
    active_exit_ns: u64,
    rungs: Vec<Rung>,
    /// The firmware timer's tick, ns (0: an exact timer).
    tick_ns: u64,
}

impl Ladder {
    /// The ladder of the drive of `p` under `policy`.
    pub fn new(p: &PowerConfig, policy: &dyn ApstPolicy) -> Ladder {
        let table = p.table();
        let mut reached = 0;
        let rungs = policy
            .tiers(&table)
            .into_iter()
            .map(|tier| {
                let s = table[tier.state];
                let starts = reached + tier.after_ns;
                reached = starts + ns_from_us(s.entry_us);
                Rung {
                    state: tier.state,
                    starts,
                    reached,
                    exit_ns: ns_from_us(s.wake_us()),
                }
            })
            .collect();
        Ladder {
            active_after_ns: ns_from_us(p.active_idle_entry_us),
            active_exit_ns: ns_from_us(p.active_idle_exit_us),
            rungs,
            tick_ns: p.idle_tick_us.map_or(0, ns_from_us),
        }
    }

    /// How much of the APST idle the firmware has counted at the start of an idle that
    /// began at drive time `from`: the part of its timer's tick already gone.
    fn counted_early(&self, from: u64) -> u64 {
        from.checked_rem(self.tick_ns).unwrap_or(0)
    }

    /// The state a command arriving `idle_ns` (> 0) into the idle that began at drive time
    /// `from` wakes the drive from (None: active idle, or awake), and how long it waits.
    pub fn wake(&self, idle_ns: u64, from: u64) -> (Option<usize>, u64) {
        let counted = idle_ns + self.counted_early(from);
        match self.rungs.iter().rev().find(|r| r.starts <= counted) {
            Some(r) => (Some(r.state), r.reached.saturating_sub(counted) + r.exit_ns),
            None if idle_ns >= self.active_after_ns => (None, self.active_exit_ns),
            None => (None, 0),
        }
    }

    /// Calls `spent(state, ns)` for each non-operational state the drive is in between
    /// the offsets `a` and `b` of the idle that began at drive time `from`.
    pub fn residency(&self, a: u64, b: u64, from: u64, mut spent: impl FnMut(usize, u64)) {
        let early = self.counted_early(from);
        let (a, b) = (a + early, b + early);
        for (i, r) in self.rungs.iter().enumerate() {
            let until = self.rungs.get(i + 1).map_or(u64::MAX, |next| next.reached);
            let (from, to) = (r.reached.max(a), until.min(b));
            if from < to {
                spent(r.state, to - from);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(max_w: f64, entry_us: f64, exit_us: f64) -> PowerStateConfig {
        PowerStateConfig {
            max_w,
            entry_us,
            exit_us,
            operational: max_w > 1.0,
            measured_w: None,
            measured_exit_us: None,
        }
    }

    /// (state, idle before it in ms) of the Linux tiers for these non-operational states
    /// after three operational ones.
    fn linux(low: &[(f64, f64)], max_latency_us: u64) -> Vec<(usize, u64)> {
        let mut table = vec![
            state(9.0, 0.0, 0.0),
            state(4.0, 0.0, 0.0),
            state(3.0, 0.0, 0.0),
        ];
        table.extend(low.iter().map(|&(entry, exit)| state(0.01, entry, exit)));
        let refs: Vec<_> = table.iter().collect();
        LinuxApst { max_latency_us }
            .tiers(&refs)
            .iter()
            .map(|t| (t.state, t.after_ns / NS_PER_MS))
            .collect()
    }

    // CALIBRATION.md, "Idle power states on Linux": the WD Black 2018, SN850 and P5 Plus
    // go to PS3 after 100 ms and PS4 after 2 s; the 980 PRO goes to PS4 after 100 ms.
    #[test]
    fn linux_builds_the_tiers_calibration_md_lists() {
        let sn850 = [(5000.0, 10_000.0), (5000.0, 45_000.0)];
        assert_eq!(linux(&sn850, 100_000), [(3, 100), (4, 2000)]);
        let wd_black = [(4000.0, 10_000.0), (4000.0, 85_000.0)];
        assert_eq!(linux(&wd_black, 100_000), [(3, 100), (4, 2000)]);
        let p5_plus = [(5000.0, 6000.0), (12_000.0, 35_000.0)];
        assert_eq!(linux(&p5_plus, 100_000), [(3, 100), (4, 2000)]);
        let pro_980 = [(2000.0, 1200.0), (500.0, 9500.0)];
        assert_eq!(linux(&pro_980, 100_000), [(4, 100)]);
        // A lower latency limit leaves out the deeper state; above every tolerance, none.
        assert_eq!(linux(&sn850, 40_000), [(3, 100)]);
        assert_eq!(linux(&[(100_000.0, 100_000.0)], 1_000_000), []);
    }

    #[test]
    fn the_ladder_spends_idle_time_in_each_state_and_wakes_from_where_it_is() {
        let p = PowerConfig {
            active_idle_w: 1.0,
            active_idle_entry_us: 1000.0,
            active_idle_exit_us: 150.0,
            idle_tick_us: None,
            peak_w: None,
            controller_active_w: 0.0,
            controller_pj_per_byte: 0.0,
            dram_pj_per_byte: None,
            link_pj_per_byte: 0.0,
            nand: crate::config::NandPowerConfig {
                vcc_v: 3.3,
                read_ma: 25.0,
                program_ma: 25.0,
                erase_ma: 25.0,
                io_ma: 10.0,
            },
            states: [
                ("ps0", state(9.0, 0.0, 0.0)),
                ("ps1", state(0.02, 5000.0, 10_000.0)),
                ("ps2", state(0.005, 5000.0, 45_000.0)),
            ]
            .into_iter()
            .map(|(k, s)| (k.to_string(), s))
            .collect(),
        };
        let ms = NS_PER_MS;
        let ladder = Ladder::new(
            &p,
            &LinuxApst {
                max_latency_us: 100_000,
            },
        );
        // PS1 entered at 100 ms, reached at 105 ms; PS2 entered at 2105 ms, reached at 2110.
        assert_eq!(ladder.wake(ms / 2, 0), (None, 0));
        assert_eq!(ladder.wake(50 * ms, 0), (None, 150_000)); // active idle's exit
        assert_eq!(ladder.wake(103 * ms, 0), (Some(1), 2 * ms + 10 * ms)); // entering PS1
        assert_eq!(ladder.wake(2000 * ms, 0), (Some(1), 10 * ms));
        assert_eq!(ladder.wake(3000 * ms, 0), (Some(2), 45 * ms));
        let mut spent = vec![0; 3];
        ladder.residency(0, 3000 * ms, 0, |s, ns| spent[s] += ns);
        assert_eq!(spent, [0, 2005 * ms, 890 * ms]);
        let off = Ladder::new(&p, &NoApst);
        assert_eq!(off.wake(3000 * ms, 0), (None, 150_000));
        off.residency(0, 3000 * ms, 0, |_, _| panic!("no state is reached"));

        // A firmware timer of 10 ms ticks: an idle that began 7 ms into a tick has 3 ms of
        // it to go when the first tick counts, so PS1 is entered at 93 ms of idle (a
        // command at 96 ms finds it 2 ms from reached) and PS2 at 2098 ms; one that began
        // on a tick waits the full 100 ms. Active idle is hardware, timed exactly.
        let ticked = Ladder {
            tick_ns: 10 * ms,
            ..ladder.clone()
        };
        let at = 1000 * ms + 7 * ms;
        assert_eq!(ticked.wake(96 * ms, at), (Some(1), 12 * ms));
        assert_eq!(ticked.wake(96 * ms, 1000 * ms), (None, 150_000));
        assert_eq!(ticked.wake(ms / 2, at), (None, 0));
        let mut spent = vec![0; 3];
        ticked.residency(0, 3000 * ms, at, |s, ns| spent[s] += ns);
        assert_eq!(spent, [0, 2005 * ms, 897 * ms]);
    }
}
