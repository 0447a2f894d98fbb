//! Which LBAs each superblock was written with: the reverse map, kept compact.
//!
//! Garbage collection needs the LBAs of a victim's valid units. A physical-to-logical
//! table (4 bytes per physical unit) was half of the simulator's memory. Instead each
//! superblock keeps the set of LBAs written into it; a unit is valid when the
//! logical-to-physical table still points into the superblock (`l2p[lba]` is the
//! truth, so nothing here changes when data is overwritten, trimmed or moved away).
//! The log takes the smaller of two forms:
//! - runs of consecutive LBAs (sequential writes, folding and relocation of
//!   sequential data: a few bytes per superblock), kept as such from the first write;
//! - LBAs grouped by their high bits, 2 bytes each plus a table of group starts
//!   (random writes: half of a 4-byte table, with no sort). While the superblock is
//!   open its LBAs are logged in write order, and grouped when it is closed; a log
//!   of runs turns into one in write order once runs would take more room.
//!
//! The set may name an LBA twice (written twice into one superblock) or name LBAs
//! that are no longer valid there; the FTL resolves both against the
//! logical-to-physical table.

/// LBAs of a group share their bits above these.
const GROUP_BITS: u32 = 16;

/// The LBAs of one superblock.
enum Log {
    /// Free (nothing written since it was last freed).
    Empty,
    /// Open, while runs take the least room: runs of consecutive LBAs, (first, count),
    /// and the units they hold.
    OpenRuns { runs: Vec<(u32, u32)>, units: u32 },
    /// Open: the LBAs in write order.
    Open(Vec<u32>),
    /// Closed: runs of consecutive LBAs, (first, count).
    Runs(Vec<(u32, u32)>),
    /// Closed: the low bits of the LBAs of group `g` are `low[starts[g]..starts[g + 1]]`.
    Groups { starts: Vec<u32>, low: Vec<u16> },
}

pub struct Owners {
    logs: Vec<Log>,
    /// Groups of the LBA space.
    groups: u32,
    /// Buffers of closed logs, kept for the next open superblock (no allocation churn).
    spare: Vec<Vec<u32>>,
}

impl Owners {
    pub fn new(superblocks: u32, user_units: u64) -> Owners {
        Owners {
            logs: (0..superblocks).map(|_| Log::Empty).collect(),
            groups: (user_units >> GROUP_BITS) as u32 + 1,
            spare: Vec::new(),
        }
    }

    /// Superblock `sb` is opened for writing.
    pub fn open(&mut self, sb: u32) {
        self.logs[sb as usize] = Log::OpenRuns {
            runs: Vec::new(),
            units: 0,
        };
    }

    /// The `n` LBAs from `lba` are written into the open superblock `sb`.
    #[inline]
    pub fn push_run(&mut self, sb: u32, lba: u32, n: u32) {
        match &mut self.logs[sb as usize] {
            Log::OpenRuns { runs, units } => {
                *units += n;
                match runs.last_mut() {
                    Some((first, m)) if first.wrapping_add(*m) == lba => *m += n,
                    _ => {
                        runs.push((lba, n));
                        // Runs take 8 bytes each: as many as the grouped form's bytes allow.
                        if runs.len() > (*units as usize * 2 + self.groups as usize * 4) / 8 {
                            self.write_order(sb);
                        }
                    }
                }
            }
            Log::Open(log) => log.extend(lba..lba + n),
            _ => unreachable!("superblock {sb} is not open"),
        }
    }

    /// `lbas` are written, in order, into the open superblock `sb`.
    #[inline]
    pub fn push_lbas(&mut self, sb: u32, lbas: &[u32]) {
        match &mut self.logs[sb as usize] {
            Log::Open(log) => log.extend_from_slice(lbas),
            _ => {
                // In runs of consecutive LBAs.
                let mut rest = lbas;
                while let Some(&first) = rest.first() {
                    let n = 1 + rest[1..]
                        .iter()
                        .zip(first + 1..)
                        .take_while(|&(&l, next)| l == next)
                        .count();
                    self.push_run(sb, first, n as u32);
                    rest = &rest[n..];
                }
            }
        }
    }

    /// The log of runs of the open superblock `sb` becomes one in write order.
    #[cold]
    fn write_order(&mut self, sb: u32) {
        let Log::OpenRuns { runs, .. } = &self.logs[sb as usize] else {
            unreachable!("superblock {sb} is not logged in runs")
        };
        let mut log = self.spare.pop().unwrap_or_default();
        log.clear();
        log.extend(runs.iter().flat_map(|&(first, n)| first..first + n));
        self.logs[sb as usize] = Log::Open(log);
    }

    /// Superblock `sb` is written to its end: store its log compactly.
    pub fn close(&mut self, sb: u32) {
        self.logs[sb as usize] = match std::mem::replace(&mut self.logs[sb as usize], Log::Empty) {
            Log::OpenRuns { mut runs, .. } => {
                runs.shrink_to_fit();
                Log::Runs(runs)
            }
            Log::Open(log) => {
                let grouped = self.grouped(&log);
                self.spare.push(log);
                grouped
            }
            _ => unreachable!("superblock {sb} is not open"),
        };
    }

    /// Superblock `sb` is free: forget its log.
    pub fn forget(&mut self, sb: u32) {
        if let Log::Open(log) = std::mem::replace(&mut self.logs[sb as usize], Log::Empty) {
            self.spare.push(log);
        }
    }

    /// Forget every log (purge).
    pub fn clear(&mut self) {
        for sb in 0..self.logs.len() {
            self.forget(sb as u32);
        }
    }

    /// Every LBA superblock `sb` was written with, each to `f` (in the stored order:
    /// write order, or by runs, or grouped by the high bits; an LBA may come twice).
    #[inline]
    pub fn for_each_lba(&self, sb: u32, mut f: impl FnMut(u32)) {
        match &self.logs[sb as usize] {
            Log::Empty => {}
            Log::Open(log) => log.iter().for_each(|&l| f(l)),
            Log::OpenRuns { runs, .. } | Log::Runs(runs) => runs
                .iter()
                .for_each(|&(first, n)| (first..first + n).for_each(&mut f)),
            Log::Groups { starts, low } => {
                for g in 0..self.groups as usize {
                    let high = (g as u32) << GROUP_BITS;
                    let members = &low[starts[g] as usize..starts[g + 1] as usize];
                    members.iter().for_each(|&l| f(high | l as u32));
                }
            }
        }
    }

    /// The log grouped by the LBAs' high bits (a counting sort: two passes, no comparison).
    fn grouped(&self, log: &[u32]) -> Log {
        let mut starts = vec![0u32; self.groups as usize + 1];
        for &l in log {
            starts[(l >> GROUP_BITS) as usize + 1] += 1;
        }
        for g in 1..starts.len() {
            starts[g] += starts[g - 1];
        }
        let mut next = starts.clone();
        let mut low = vec![0u16; log.len()];
        for &l in log {
            let g = (l >> GROUP_BITS) as usize;
            low[next[g] as usize] = l as u16;
            next[g] += 1;
        }
        Log::Groups { starts, low }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::NONE;

    /// A closed superblock 7 of 8 units from page 56, written with `lbas`; `l2p` maps
    /// each LBA to the page of its last write there.
    fn decoded(lbas: &[u32]) -> Vec<u32> {
        let mut o = Owners::new(10, 1 << 20);
        o.open(7);
        lbas.iter().for_each(|&l| o.push_run(7, l, 1));
        o.close(7);
        let last = |l: u32| {
            lbas.iter()
                .rposition(|&x| x == l)
                .map_or(NONE, |i| 56 + i as u32)
        };
        let mut out = vec![0; 8];
        o.for_each_lba(7, |l| {
            if let Some(offset) = last(l).checked_sub(56).filter(|&o| o < 8) {
                out[offset as usize] = l + 1;
            }
        });
        out
    }

    #[test]
    fn runs_and_groups_give_back_every_valid_unit_at_its_offset() {
        // Sequential: stored as one run.
        assert_eq!(decoded(&[5, 6, 7, 8]), vec![6, 7, 8, 9, 0, 0, 0, 0]);
        // Scattered over groups, one LBA written twice: only its last page is valid.
        let scattered = [70_000, 3, 900_000, 3, 65_536, 12];
        assert_eq!(
            decoded(&scattered),
            vec![70_001, 0, 900_001, 4, 65_537, 13, 0, 0]
        );
    }

    #[test]
    fn the_smaller_form_is_chosen() {
        let mut o = Owners::new(2, 1 << 24);
        o.open(0);
        (0..1000).for_each(|l| o.push_run(0, l, 1));
        o.close(0);
        assert!(matches!(o.logs[0], Log::Runs(ref r) if r.len() == 1));
        o.open(1);
        (0..1000u32).for_each(|i| o.push_run(1, i.wrapping_mul(2_654_435_761) >> 8, 1));
        o.close(1);
        assert!(matches!(o.logs[1], Log::Groups { ref low, .. } if low.len() == 1000));
        // Sequential, then random: logged in runs, then in write order, then grouped.
        let mixed: Vec<u32> = (0..1000u32)
            .chain((0..1000u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8))
            .collect();
        o.forget(0);
        o.open(0);
        mixed.iter().for_each(|&l| o.push_run(0, l, 1));
        assert!(matches!(o.logs[0], Log::Open(ref log) if *log == mixed));
        o.close(0);
        let mut seen = Vec::new();
        o.for_each_lba(0, |l| seen.push(l));
        seen.sort_unstable();
        let mut expected = mixed.clone();
        expected.sort_unstable();
        assert_eq!(seen, expected);
    }

    #[test]
    fn lbas_pushed_together_are_logged_as_pushed_one_by_one() {
        let lbas: Vec<u32> = (10..20)
            .chain([5, 900_000, 900_001])
            .chain(30..40)
            .collect();
        let (mut together, mut one_by_one) = (Owners::new(1, 1 << 20), Owners::new(1, 1 << 20));
        together.open(0);
        one_by_one.open(0);
        together.push_lbas(0, &lbas[..12]);
        together.push_lbas(0, &lbas[12..]);
        lbas.iter().for_each(|&l| one_by_one.push_run(0, l, 1));
        for o in [&mut together, &mut one_by_one] {
            o.close(0);
        }
        let logged = |o: &Owners| {
            let mut seen = Vec::new();
            o.for_each_lba(0, |l| seen.push(l));
            seen
        };
        assert_eq!(logged(&together), lbas);
        assert_eq!(logged(&together), logged(&one_by_one));
        assert!(matches!(together.logs[0], Log::Runs(ref r) if r.len() == 4));
    }
}
