//! Command generation: the commands of a step, like fio's, generated ahead of issue.
//!
//! Contract: offsets are sequential (advancing by `bs` from the span's start and
//! wrapping at its end, the position starting afresh with every step) or uniformly
//! random whole blocks of the span from the drive's seeded PRNG; a mix picks the
//! direction of each command with probability `rwmixread` %. For a random command
//! the block is drawn before the direction. Each command is generated
//! [`LOOK_AHEAD`] commands before it is issued, so that its mapping entries are in
//! the CPU's cache when the controller looks them up.

use crate::controller::Controller;
use crate::rng::Rng;
use crate::step::{Op, Step};

/// How many commands are generated before they are issued. The mapping entry of a
/// random command is prefetched when it is generated, which gives it `LOOK_AHEAD`
/// commands of simulation (microseconds of wall time) to arrive from memory; the
/// entries of 16 commands are 16 cache lines, far too few to evict one another. The PRNG runs this
/// many commands ahead of issue (the last ones of a step are never issued), so a
/// change of this value changes the offsets of every later random step.
const LOOK_AHEAD: usize = 16;

/// What a command does; its value indexes per-direction arrays.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Dir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

/// One host command of `bs` bytes.
#[derive(Clone, Copy)]
pub(super) struct Command {
    pub dir: Dir,
    /// Byte offset on the drive.
    pub offset: u64,
}

/// The directions a step's commands take.
enum Directions {
    /// Every command in one direction.
    Only(Dir),
    /// Reads with this probability (in %), else writes.
    Mixed { read_pct: u32 },
}

/// The commands of one step, in issue order (fio's generator).
struct Generator {
    random: bool,
    /// Blocks of `bs` bytes in the span.
    blocks: u64,
    /// The next block of a sequential step.
    seq_pos: u64,
    directions: Directions,
    /// Start of the span and block size, bytes.
    offset: u64,
    bs: u64,
}

impl Generator {
    fn new(step: &Step) -> Generator {
        let directions = match step.rw {
            Op::Read | Op::RandRead => Directions::Only(Dir::Read),
            Op::Write | Op::RandWrite => Directions::Only(Dir::Write),
            Op::Trim => Directions::Only(Dir::Trim),
            Op::RandRw | Op::Rw => Directions::Mixed {
                read_pct: step.rwmixread.expect("a validated mix has a read share"),
            },
        };
        Generator {
            random: step.rw.is_random(),
            blocks: step.size / step.bs,
            seq_pos: 0,
            directions,
            offset: step.offset,
            bs: step.bs,
        }
    }

    #[inline]
    fn next(&mut self, rng: &mut Rng) -> Command {
        let block = if self.random {
            rng.below(self.blocks)
        } else {
            let b = self.seq_pos;
            self.seq_pos = if b + 1 >= self.blocks { 0 } else { b + 1 };
            b
        };
        let dir = match self.directions {
            Directions::Only(dir) => dir,
            // A share of 0 or 100 % draws nothing from the PRNG.
            Directions::Mixed { read_pct } => {
                if read_pct >= 100 || (read_pct > 0 && rng.below(100) < read_pct as u64) {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        Command {
            dir,
            offset: self.offset + block * self.bs,
        }
    }
}

/// The commands of a step, generated [`LOOK_AHEAD`] commands before issue.
pub(super) struct Commands<'a> {
    generator: Generator,
    rng: &'a mut Rng,
    /// The next [`LOOK_AHEAD`] commands; `head` is the next to issue.
    ring: [Command; LOOK_AHEAD],
    head: usize,
}

impl<'a> Commands<'a> {
    /// The commands of `step`, drawing from the drive's PRNG `rng`.
    pub(super) fn new(step: &Step, rng: &'a mut Rng) -> Commands<'a> {
        let mut generator = Generator::new(step);
        let mut ring = [Command {
            dir: Dir::Write,
            offset: 0,
        }; LOOK_AHEAD];
        for slot in &mut ring {
            *slot = generator.next(rng);
        }
        Commands {
            generator,
            rng,
            ring,
            head: 0,
        }
    }

    /// The next command to issue. Generates the one [`LOOK_AHEAD`] behind it and,
    /// for random steps, prefetches mapping entries of commands ahead (sequential
    /// ones walk the tables in order, which the CPU's own prefetcher follows).
    #[inline]
    pub(super) fn next(&mut self, dev: &Controller) -> Command {
        let command = self.ring[self.head];
        let new = self.generator.next(self.rng);
        self.ring[self.head] = new;
        self.head = (self.head + 1) % LOOK_AHEAD;
        if self.generator.random {
            dev.prefetch(lba_of(new));
        }
        command
    }
}

/// The 4 KiB mapping unit in which a command starts.
#[inline]
pub(super) fn lba_of(command: Command) -> u64 {
    command.offset / crate::geometry::UNIT
}
