//! Write buffer of one host stream.
//!
//! Contract: a write completes when its data is in the buffer; the buffer holds
//! a program unit's data until that unit's program ends, and has room for
//! `slots` program units. The data of the next program unit is accepted when
//! its slot is free, i.e. when the program `slots` units before it has ended,
//! so sustained writes run at the speed of the NAND while bursts shorter than
//! the buffer run at the speed of the link.

pub struct WriteBuffer {
    /// Program end time of the unit last held in each slot.
    ends: Vec<u64>,
    /// Slot of the program unit being filled.
    next: usize,
}

impl WriteBuffer {
    /// A buffer of `slots` program units (at least one).
    pub fn new(slots: usize) -> WriteBuffer {
        WriteBuffer {
            ends: vec![0; slots.max(1)],
            next: 0,
        }
    }

    /// When data arriving at `t` for the program unit being filled is accepted.
    #[inline]
    pub fn accept(&self, t: u64) -> u64 {
        t.max(self.ends[self.next])
    }

    /// The program unit being filled was sent to the NAND and its program ends at `end`.
    #[inline]
    pub fn programmed(&mut self, end: u64) {
        self.ends[self.next] = end;
        self.next = if self.next + 1 == self.ends.len() {
            0
        } else {
            self.next + 1
        };
    }

    /// When every program unit the buffer holds has been programmed.
    pub fn drained_at(&self) -> u64 {
        self.ends.iter().copied().max().unwrap_or(0)
    }
}
