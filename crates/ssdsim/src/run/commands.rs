//! Command generation: the commands of a job, like fio's, generated ahead of issue.
//!
//! Contract: each command's size is the job's `bs`, or drawn from its `bssplit` (before
//! anything else of the command). Offsets are sequential (each after the previous
//! command's end, plus fio's `offset_delta`; wrapping to the span's start, or to its
//! end going backwards, the position starting afresh with every step) or random: a
//! block of `blockalign` bytes (default: the smallest size) drawn from the job's
//! distribution ([`Spread`]) with the drive's seeded PRNG, moved back so the command
//! ends inside the span. A mix picks the direction of each command with probability
//! `rwmixread` %, drawn after the offset; `trimwrite` trims each block and then writes
//! it. Each command is generated [`LOOK_AHEAD`] commands before it is issued, so that
//! its mapping entries are in the CPU's cache when the controller looks them up.

use super::prefetch::Prefetches;
use super::spread::Spread;
use crate::controller::Controller;
use crate::pattern::SplitSize;
use crate::rng::Rng;
use crate::step::{Op, Step};

/// How many commands are generated before they are issued. The mapping entry of a
/// random command is prefetched with its batch (`super::prefetch`), which gives it at
/// least half of `LOOK_AHEAD` commands of simulation (microseconds of wall time) to arrive
/// from memory; the entries of 16 commands are 16 cache lines, far too few to evict one
/// another. The PRNG runs this many commands ahead of issue (the last ones of a step are
/// never issued), so a change of this value changes the offsets of every later random step.
const LOOK_AHEAD: usize = 16;

/// What a command does; its value indexes per-direction arrays.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Dir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

/// One host command.
#[derive(Clone, Copy, Debug)]
pub(super) struct Command {
    pub dir: Dir,
    /// Byte offset on the drive.
    pub offset: u64,
    /// Bytes.
    pub bs: u64,
}

/// The directions a job's commands take.
enum Directions {
    /// Every command in one direction.
    Only(Dir),
    /// Reads with this probability (in %), else writes.
    Mixed { read_pct: u32 },
    /// Each block trimmed, then written: the write waiting, when there is one.
    TrimThenWrite { write: Option<Command> },
}

/// The sizes of a job's commands.
enum Sizes {
    One(u64),
    /// (cumulative share in 0..1, size), in order: a split's.
    Split(Vec<(f64, u64)>),
}

/// Where a job's commands fall in its span.
enum Order {
    /// After the end of the previous command (relative to the span), plus `delta`.
    Sequential { end: u64, delta: i64 },
    /// In blocks of `align` bytes, `n` of them, drawn from `spread`.
    Random { spread: Spread, align: u64, n: u64 },
}

/// The commands of one job, in issue order (fio's generator).
pub(super) struct Generator {
    sizes: Sizes,
    order: Order,
    directions: Directions,
    /// Start of the span and its length, bytes.
    offset: u64,
    span: u64,
}

impl Generator {
    pub(super) fn new(step: &Step, rng: &mut Rng) -> Generator {
        let directions = match step.rw {
            Op::Read | Op::RandRead => Directions::Only(Dir::Read),
            Op::Write | Op::RandWrite => Directions::Only(Dir::Write),
            Op::Trim | Op::RandTrim => Directions::Only(Dir::Trim),
            Op::TrimWrite => Directions::TrimThenWrite { write: None },
            Op::RandRw | Op::Rw => Directions::Mixed {
                read_pct: step.rwmixread.expect("a validated mix has a read share"),
            },
        };
        let order = if step.rw.is_random() {
            let align = step.blockalign.unwrap_or(step.min_bs());
            let n = step.size / align;
            Order::Random {
                // fio's random map covers blocks of one size: a split draws anew.
                spread: Spread::new(
                    &step.distribution,
                    n,
                    align,
                    step.randommap && step.bssplit.is_empty(),
                    rng,
                ),
                align,
                n,
            }
        } else {
            Order::Sequential {
                end: 0,
                delta: step.offset_delta,
            }
        };
        Generator {
            sizes: sizes(step.bs, &step.bssplit),
            order,
            directions,
            offset: step.offset,
            span: step.size,
        }
    }

    /// fio's verify pass of a job that wrote `step`'s span: sequential reads of it.
    pub(super) fn verify(step: &Step, rng: &mut Rng) -> Generator {
        let read = Step {
            rw: Op::Read,
            offset_delta: 0,
            distribution: Default::default(),
            ..step.clone()
        };
        Generator::new(&read, rng)
    }

    pub(super) fn is_random(&self) -> bool {
        matches!(self.order, Order::Random { .. })
    }

    #[inline(always)]
    fn next(&mut self, rng: &mut Rng) -> Command {
        if let Directions::TrimThenWrite { write } = &mut self.directions {
            if let Some(w) = write.take() {
                return w;
            }
        }
        let bs = match &self.sizes {
            Sizes::One(bs) => *bs,
            Sizes::Split(split) => {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                split
                    .iter()
                    .find(|s| u < s.0)
                    .unwrap_or(&split[split.len() - 1])
                    .1
            }
        };
        let at = match &mut self.order {
            Order::Random { spread, align, n } => {
                // The uniform draw in line: the other spreads are worth a call.
                let block = match spread {
                    Spread::Uniform => rng.below(*n),
                    skewed => skewed.draw(*n, rng),
                };
                let at = block * *align;
                // A command must end inside the span: move it back by whole blocks.
                if at + bs > self.span {
                    (self.span - bs) / *align * *align
                } else {
                    at
                }
            }
            Order::Sequential { end, delta } => {
                let mut at = *end as i128;
                if at != 0 && *delta != 0 {
                    at += *delta as i128;
                }
                let span = self.span as i128;
                if at < 0 || at + bs as i128 > span {
                    // fio wraps holed I/O to the start and backwards I/O to the end.
                    at = if *delta < 0 { span + *delta as i128 } else { 0 };
                    at = at.clamp(0, span - bs as i128);
                }
                *end = at as u64 + bs;
                at as u64
            }
        };
        let dir = match &mut self.directions {
            Directions::Only(dir) => *dir,
            // A share of 0 or 100 % draws nothing from the PRNG.
            Directions::Mixed { read_pct } => {
                if *read_pct >= 100 || (*read_pct > 0 && rng.below(100) < *read_pct as u64) {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
            Directions::TrimThenWrite { write } => {
                *write = Some(Command {
                    dir: Dir::Write,
                    offset: self.offset + at,
                    bs,
                });
                Dir::Trim
            }
        };
        Command {
            dir,
            offset: self.offset + at,
            bs,
        }
    }
}

/// A job's sizes: one, or a split as cumulative shares.
fn sizes(bs: u64, split: &[SplitSize]) -> Sizes {
    if split.is_empty() {
        return Sizes::One(bs);
    }
    let total: f64 = split.iter().map(|s| s.pct).sum();
    let mut cum = 0.0;
    Sizes::Split(
        split
            .iter()
            .map(|s| {
                cum += s.pct / total;
                (cum, s.bs)
            })
            .collect(),
    )
}

/// The commands of a job, generated [`LOOK_AHEAD`] commands before issue.
pub(super) struct Commands {
    generator: Generator,
    /// The next [`LOOK_AHEAD`] commands; `head` is the next to issue.
    ring: [Command; LOOK_AHEAD],
    head: usize,
    prefetches: Prefetches,
}

impl Commands {
    /// The commands of `generator`, drawing from the drive's PRNG `rng`.
    pub(super) fn new(mut generator: Generator, rng: &mut Rng) -> Commands {
        let mut ring = [Command {
            dir: Dir::Write,
            offset: 0,
            bs: 0,
        }; LOOK_AHEAD];
        for slot in &mut ring {
            *slot = generator.next(rng);
        }
        Commands {
            generator,
            ring,
            head: 0,
            prefetches: Prefetches::new(),
        }
    }

    /// The next command to issue, left in place.
    #[inline]
    pub(super) fn peek(&self) -> Command {
        self.ring[self.head]
    }

    /// The next command to issue. Generates the one [`LOOK_AHEAD`] behind it and,
    /// for random jobs, prefetches mapping entries of commands ahead (sequential
    /// ones walk the tables in order, which the CPU's own prefetcher follows).
    #[inline]
    pub(super) fn next(&mut self, dev: &Controller, rng: &mut Rng) -> Command {
        let command = self.ring[self.head];
        let new = self.generator.next(rng);
        self.ring[self.head] = new;
        self.head = (self.head + 1) % LOOK_AHEAD;
        if self.generator.is_random() {
            self.prefetches.add(lba_of(new), dev);
        }
        command
    }
}

/// The 4 KiB mapping unit in which a command starts.
#[inline]
pub(super) fn lba_of(command: Command) -> u64 {
    command.offset / crate::geometry::UNIT
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(step: &Step, count: usize) -> Vec<(Dir, u64, u64)> {
        let mut rng = Rng::new(1);
        let mut g = Generator::new(step, &mut rng);
        (0..count)
            .map(|_| {
                let c = g.next(&mut rng);
                (c.dir, c.offset, c.bs)
            })
            .collect()
    }

    #[test]
    fn backwards_reads_go_down_from_the_end_as_fios_read_minus_8k() {
        // fio 3.33 (io_u.c): the first at the start, then the previous end - 8k, wrapping
        // to the span's end - 8k.
        let step = Step {
            offset_delta: -8192,
            ..Step::new("b", Op::Read, 4096, 64 * 1024)
        };
        let at: Vec<u64> = offsets(&step, 5).iter().map(|c| c.1 / 1024).collect();
        assert_eq!(at, [0, 56, 52, 48, 44]);
    }

    #[test]
    fn holes_skip_forward_and_wrap_to_the_start() {
        let step = Step {
            offset_delta: 4096,
            ..Step::new("h", Op::Write, 4096, 32 * 1024)
        };
        let at: Vec<u64> = offsets(&step, 5).iter().map(|c| c.1 / 1024).collect();
        assert_eq!(at, [0, 8, 16, 24, 0]);
    }

    #[test]
    fn trimwrite_trims_each_block_then_writes_it() {
        let got = offsets(&Step::new("t", Op::TrimWrite, 4096, 1 << 20), 4);
        assert_eq!(
            got,
            [
                (Dir::Trim, 0, 4096),
                (Dir::Write, 0, 4096),
                (Dir::Trim, 4096, 4096),
                (Dir::Write, 4096, 4096)
            ]
        );
    }

    #[test]
    fn a_split_draws_sizes_in_their_shares_and_random_offsets_stay_aligned_and_inside() {
        let step = Step {
            bssplit: vec![
                SplitSize {
                    bs: 4096,
                    pct: 75.0,
                },
                SplitSize {
                    bs: 65536,
                    pct: 25.0,
                },
            ],
            blockalign: Some(4096),
            ..Step::new("s", Op::RandWrite, 4096, 1 << 20)
        };
        let got = offsets(&step, 20_000);
        let big = got.iter().filter(|c| c.2 == 65536).count() as f64 / 20_000.0;
        assert!((big - 0.25).abs() < 0.02, "{big}");
        assert!(got.iter().all(|c| c.1 % 4096 == 0 && c.1 + c.2 <= 1 << 20));
    }
}
