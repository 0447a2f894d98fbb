//! Reading a prepared trace: the records a trace step replays, streamed from its file.
//!
//! Contract: the file is python/ssdlab/traces/prepared.py's layout (change both or
//! neither): a 32-byte header ([`MAGIC`], the record count as a little-endian u64, 16
//! reserved bytes), then [`RECORD_BYTES`] per record, little-endian: time µs from the
//! replay's start (u64), byte offset (u64), byte length (u32), operation (u8: 0 read,
//! 1 write, 2 trim, 3 flush), 3 bytes of padding. [`check`] refuses a file whose header
//! or length is not that before the step runs; [`TraceReader`] reads it [`BLOCK`] records
//! at a time (memory flat in the trace's length) and refuses, naming the record, one
//! whose time goes backwards, whose operation is unknown, or whose extent is not whole
//! 512-byte sectors inside the span the step was given.

use super::commands::{Command, Dir};
use crate::step::TraceReplay;
use std::fs::File;
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"SSDLTRC\x01";
const HEADER_BYTES: u64 = 32;
const RECORD_BYTES: usize = 24;
/// Records read at once: 96 KiB.
const BLOCK: usize = 4096;
const SECTOR: u64 = 512;
const OP_FLUSH: u8 = 3;

/// One record of a trace: a command, or a flush (`command` None).
#[derive(Clone, Copy, Debug)]
pub(super) struct TraceCommand {
    /// Issue time, ns from the replay's start.
    pub at: u64,
    pub command: Option<Command>,
}

/// The header of the trace's file, and its length, agree with `trace`.
pub fn check(trace: &TraceReplay) -> Result<(), String> {
    let mut file = File::open(&trace.path).map_err(|e| format!("trace {}: {e}", trace.path))?;
    let len = file
        .metadata()
        .map_err(|e| format!("trace {}: {e}", trace.path))?
        .len();
    let mut header = [0u8; HEADER_BYTES as usize];
    let count = match file.read_exact(&mut header) {
        Ok(()) if &header[..8] == MAGIC => {
            u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"))
        }
        _ => {
            return Err(format!(
                "trace {}: not a prepared trace of this version (prepare it again)",
                trace.path
            ))
        }
    };
    let expected = count
        .checked_mul(RECORD_BYTES as u64)
        .and_then(|b| b.checked_add(HEADER_BYTES));
    if count != trace.records || expected != Some(len) {
        return Err(format!(
            "trace {}: {len} bytes holding {count} records, where the step expects {} (the file changed or is damaged: prepare it again)",
            trace.path, trace.records
        ));
    }
    Ok(())
}

/// The records of a checked trace, in order.
pub(super) struct TraceReader {
    file: BufReader<File>,
    path: String,
    /// Records not yet read from the file.
    unread: u64,
    block: Vec<u8>,
    /// Records in `block`, and the next of them.
    held: usize,
    next: usize,
    /// Records returned so far, and the time of the last.
    count: u64,
    last_us: u64,
    /// The span the records must fall in, bytes.
    start: u64,
    end: u64,
    /// Records issued, told at each block read (the drive's [`crate::Drive::progress`]).
    progress: Arc<AtomicU64>,
}

impl TraceReader {
    /// The records of `trace` (checked by [`check`]), inside `offset..offset + size`; how many
    /// were issued goes to `progress`.
    pub(super) fn open(
        trace: &TraceReplay,
        offset: u64,
        size: u64,
        progress: Arc<AtomicU64>,
    ) -> Result<TraceReader, String> {
        check(trace)?;
        let mut file = BufReader::with_capacity(
            BLOCK * RECORD_BYTES,
            File::open(&trace.path).map_err(|e| format!("trace {}: {e}", trace.path))?,
        );
        file.seek_relative(HEADER_BYTES as i64)
            .map_err(|e| format!("trace {}: {e}", trace.path))?;
        Ok(TraceReader {
            file,
            path: trace.path.clone(),
            unread: trace.records,
            block: vec![0; BLOCK * RECORD_BYTES],
            held: 0,
            next: 0,
            count: 0,
            last_us: 0,
            start: offset,
            end: offset + size,
            progress,
        })
    }

    /// The next record, None after the last; an error names a record out of bounds.
    #[inline]
    pub(super) fn next(&mut self) -> Result<Option<TraceCommand>, String> {
        if self.next == self.held && !self.refill()? {
            return Ok(None);
        }
        let r = &self.block[self.next * RECORD_BYTES..(self.next + 1) * RECORD_BYTES];
        self.next += 1;
        self.count += 1;
        let word = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().expect("8 bytes"));
        let time_us = word(0);
        let offset = word(8);
        let length = u64::from(u32::from_le_bytes(r[16..20].try_into().expect("4 bytes")));
        let op = r[20];
        let dir = match op {
            0 => Dir::Read,
            1 => Dir::Write,
            2 => Dir::Trim,
            _ => Dir::Read, // a flush, or refused below
        };
        let extent_ok = if op == OP_FLUSH {
            offset == 0 && length == 0
        } else {
            op < OP_FLUSH
                && length > 0
                && offset % SECTOR == 0
                && length % SECTOR == 0
                && offset >= self.start
                && offset.checked_add(length).is_some_and(|e| e <= self.end)
        };
        if time_us < self.last_us || time_us > u64::MAX / 1000 || !extent_ok {
            return Err(self.refused(time_us, offset, length, op));
        }
        self.last_us = time_us;
        Ok(Some(TraceCommand {
            at: time_us * 1000,
            command: (op != OP_FLUSH).then_some(Command {
                dir,
                offset,
                bs: length,
            }),
        }))
    }

    /// The offset of the record `ahead` records after the next, when it is in the block
    /// read: its mapping can be fetched into the CPU's cache before it is issued.
    #[inline]
    pub(super) fn offset_ahead(&self, ahead: usize) -> Option<u64> {
        let i = self.next + ahead;
        (i < self.held).then(|| {
            u64::from_le_bytes(
                self.block[i * RECORD_BYTES + 8..i * RECORD_BYTES + 16]
                    .try_into()
                    .expect("8 bytes"),
            )
        })
    }

    /// Read the next block of records; false when there are none left.
    fn refill(&mut self) -> Result<bool, String> {
        // every record before this block has been issued
        self.progress.store(self.count, Ordering::Relaxed);
        if self.unread == 0 {
            return Ok(false);
        }
        let n = (self.unread as usize).min(BLOCK);
        self.file
            .read_exact(&mut self.block[..n * RECORD_BYTES])
            .map_err(|e| {
                format!(
                    "trace {}: {e} (the file changed while it was read)",
                    self.path
                )
            })?;
        self.unread -= n as u64;
        self.held = n;
        self.next = 0;
        Ok(true)
    }

    #[cold]
    fn refused(&self, time_us: u64, offset: u64, length: u64, op: u8) -> String {
        let why = if time_us < self.last_us {
            format!(
                "its time {time_us} µs is before the record before it ({} µs)",
                self.last_us
            )
        } else if op > OP_FLUSH {
            format!("operation {op} is none of read (0), write (1), trim (2), flush (3)")
        } else {
            format!(
                "its {length} bytes at offset {offset} are not whole 512-byte sectors within the span {}..{}",
                self.start, self.end
            )
        };
        format!(
            "trace {}: record {} refused: {why}; prepare the trace again for this drive",
            self.path, self.count
        )
    }
}
