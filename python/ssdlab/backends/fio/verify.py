"""The retention test's seeded verify pattern on a real target, and what fio says of it.

The pattern is written once (`pattern_options`) and checked later, days later, by a
separate fio invocation (`check_options`): fio's `verify_only` replays the write job
without writing and reads every block back, checking the crc32c header fio put in it.
Both passes must be the first (only) job of their fio invocation, on the same region
(filename, offset, size) with the same bs, without `time_based`, `runtime` or `io_size`:
fio derives each block's data seed from `randseed`, the job's number and the block's place
in the sequence, and a runtime cuts the check short.

What fio 3.33 does, read in its source and seen on real files (tests/backends/test_fio_verify.py):

- `rw=readwrite` with `rwmixread=0` (writes only). fio compares the seed in a block's
  header with the one it regenerates only in a job that reads and writes (verify.c:
  `if (!td_rw(td) || ...) io_u->rand_seed = hdr->rand_seed;`). With `rw=write` a pattern
  of another seed, or a stale copy of an earlier fill, verifies clean; with readwrite it is
  reported as `bad header rand_seed`, as is a block that landed at the wrong offset (the
  seed check comes before the offset check).
- `verify_interval` = bs, one header per block: with finer intervals fio prints every bad
  interval but counts only a bad last one (its per-interval result is overwritten by the
  next interval's), so its error count no longer says how many blocks failed.
- `continue_on_error=all`: without it the first bad block ends the job. `verify` alone
  would continue past bad data but stop at the first unreadable block (EIO), which is what
  retention is about; a verify_only pass issues no writes, so `all` means reads and verifies.
  fio continues only on EIO and EILSEQ (td_error.c `__NON_FATAL_ERR`). With a synchronous
  ioengine (psync) fio 3.33 still ends the check at the first read error (do_verify breaks
  on the error of an I/O that completed inline): run the check with libaio or io_uring.
- `error_dump=1`: fio's default is 0 (options.c), and then a read error it continues past
  is counted but its offset never printed (io_u.c `__io_u_log_error`).
- `verify_dump=0`: otherwise two files per bad block are written into the working
  directory; `verify_state_save=0`: otherwise every verify job leaves
  `local-JOB-0-verify.state` there (backend.c), needed only with `verify_state_load`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from ssdlab.model import BadBlock, Verification

MAX_SEED = 2**63 - 1   # fio 3.33 fails to parse a larger randseed
KEEP = 1000            # failures kept per report; the rest are counted
STORED = 100           # failures a step's result keeps (model.Verification)
KEEP_UNPARSED = 20
SHOWN = 10             # failures named by describe()
MAX_LINE = 8192        # a verify line is a path (at most 4096 bytes) and a few numbers


def _base(seed: int, bs: int) -> dict[str, str]:
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"verify seed {seed} is outside 0..{MAX_SEED} (fio's randseed)")
    if bs < 512 or bs % 512:
        raise ValueError(f"verify block size {bs} is not a positive multiple of 512 bytes")
    return {
        "rw": "readwrite",
        "rwmixread": "0",
        "bs": str(bs),
        "verify": "crc32c",
        "verify_interval": str(bs),
        "randseed": str(seed),
        "verify_state_save": "0",
    }


def pattern_options(seed: int, bs: int) -> dict[str, str]:
    """fio options that write the seeded crc32c pattern, one header per block carrying its
    offset and seed; no inline verify, since the check is a later, separate pass."""
    return {**_base(seed, bs), "do_verify": "0"}


def check_options(seed: int, bs: int) -> dict[str, str]:
    """fio options of the read-back: verify_only with the pattern's seed, on to the end of the
    region past bad and unreadable blocks, each one printed with its offset."""
    return {**_base(seed, bs), "verify_only": "1", "do_verify": "1", "verify_fatal": "0",
            "verify_dump": "0", "continue_on_error": "all", "error_dump": "1"}


class FailureKind(StrEnum):
    CHECKSUM = "checksum"          # header intact, data differs from its crc32c
    ZERO_HEADER = "zero_header"    # zeros where the header was: trimmed or never written
    BAD_MAGIC = "bad_magic"        # no fio header at all
    WRONG_SEED = "wrong_seed"      # a header of another write: other seed, stale or misplaced
    WRONG_OFFSET = "wrong_offset"  # a header naming another offset
    BAD_HEADER = "bad_header"      # header length, crc or number wrong
    READ_ERROR = "read_error"      # the read failed (EIO: the drive could not correct it)


@dataclass(frozen=True)
class BlockFailure:
    offset: int
    length: int
    kind: FailureKind
    check: str                    # what fio checked: "crc32c", "header rand_seed", the errno text
    found: str | None = None
    expected: str | None = None

    def describe(self) -> str:
        match self.kind:
            case FailureKind.CHECKSUM:
                return f"{self.check} mismatch"
            case FailureKind.ZERO_HEADER:
                return "header zeroed, as after a TRIM"
            case FailureKind.BAD_MAGIC:
                return f"no fio header (magic {self.found})"
            case FailureKind.WRONG_SEED:
                return f"header of another write: seed {self.found}, expected {self.expected}"
            case FailureKind.WRONG_OFFSET:
                return f"header names offset {self.found}"
            case FailureKind.BAD_HEADER:
                return f"bad {self.check} {self.found}, expected {self.expected}"
            case FailureKind.READ_ERROR:
                return f"unreadable: {self.check}"
        return self.kind.value


@dataclass(frozen=True)
class VerifyReport:
    """The bad blocks of one check pass (at most KEEP kept, `failed_blocks` counts all)."""

    failures: tuple[BlockFailure, ...]
    failed_blocks: int
    kinds: Mapping[FailureKind, int]
    blocks_checked: int | None      # fio's reads of the check, bad ones included
    blocks_expected: int | None     # the pattern's blocks, as fio's dry run of the write counted them
    fio_error_count: int | None     # fio's total_err (present with continue_on_error)
    fio_error: int | None           # fio's first error (errno), 0 when none
    stopped: str | None = None      # fio's message when it ended the job on an error
    unparsed: tuple[str, ...] = ()
    unparsed_count: int = 0
    notes: tuple[str, ...] = ()     # fio's notes on the job ("note: ..."), not about the data

    @property
    def complete(self) -> bool:
        return (self.blocks_checked is not None and self.blocks_checked == self.blocks_expected
                and self.stopped is None)

    @property
    def counts_agree(self) -> bool:
        return self.fio_error_count == self.failed_blocks

    @property
    def ok(self) -> bool:
        """Every block was read and matched, and everything fio said was understood."""
        return (self.failed_blocks == 0 and self.complete and self.counts_agree
                and self.unparsed_count == 0)

    def verification(self) -> Verification:
        """The report as a step's result keeps it: the counts, and the first STORED failures."""
        return Verification(blocks_checked=self.blocks_checked, blocks_expected=self.blocks_expected,
                            failed=self.failed_blocks, kinds={kind.value: n for kind, n in self.kinds.items()},
                            bad=tuple(BadBlock(offset=f.offset, length=f.length, kind=f.kind.value, what=f.describe())
                                      for f in self.failures[:STORED]),
                            ok=self.ok, summary=self.describe())

    def describe(self) -> str:
        total = "?" if self.blocks_expected is None else str(self.blocks_expected)
        if self.failed_blocks:
            named = ", ".join(f"offset {f.offset} ({f.describe()})" for f in self.failures[:SHOWN])
            more = self.failed_blocks - min(SHOWN, len(self.failures))
            verb = "failed" if FailureKind.READ_ERROR in self.kinds else "differ"
            parts = [f"{self.failed_blocks} of {total} blocks {verb}: {named}"
                     + (f" and {more} more" if more else "")]
        elif self.complete:
            parts = [f"all {self.blocks_checked} blocks verified"]
        else:
            parts = ["no bad block reported"]
        if self.blocks_checked is None:
            parts.append("how many blocks fio checked is unknown (no JSON result)")
        elif not self.complete:
            why = f" ({self.stopped})" if self.stopped else ""
            parts.append(f"fio checked only {self.blocks_checked} of {total} blocks{why}")
        if self.fio_error_count is not None and not self.counts_agree:
            parts.append(f"fio counted {self.fio_error_count} errors where {self.failed_blocks} "
                         "bad blocks were reported")
        if self.unparsed_count:
            hidden = self.unparsed_count - len(self.unparsed)
            parts.append("; ".join(self.unparsed) + (f" (and {hidden} more)" if hidden else ""))
        return "; ".join(parts)


_TAIL = (r" at file (?P<file>.*) offset (?P<offset>\d+), length (?P<length>\d+)"
         r" \(requested block: offset=\d+, length=\d+")
_CHECKSUM = re.compile(r"(?P<check>[^\s:]{1,8}): verify failed" + _TAIL + r", flags=[0-9a-f]+\)")
_HEADER = re.compile(r"verify: bad (?P<check>magic header|header length|header rand_seed|header offset|"
                     r"header numberio|header crc) (?P<found>\S+), (?:wanted|calculated) (?P<expected>\S+)"
                     + _TAIL + r"\)")
_IO_ERROR = re.compile(r"fio: io_u error(?: on file (?P<file>.*))?: (?P<error>[^:]+): (?P<ddir>\w+) "
                       r"offset=(?P<offset>\d+), buflen=(?P<length>\d+)")
_CRC = re.compile(r"\s+(?P<which>Expected|Received) CRC: (?P<crc>[0-9a-f]+)")
_ATTACHED = re.compile(r"\s+(?:\w+ data dumped as .*)|fio: verify type mismatch \(\d+ media, \d+ given\)")
# "err=5/" alone when an earlier, non-fatal error came first (fio.h __td_verror keeps the
# text of the first error only)
_STOPPED = re.compile(r"fio: pid=\d+, err=\d+/(?:file:\S+, func=.*, error=.*)?")
_NOTE = re.compile(r"note: .*")

_HEADER_KIND = {"magic header": FailureKind.BAD_MAGIC, "header rand_seed": FailureKind.WRONG_SEED,
                "header offset": FailureKind.WRONG_OFFSET}


def _failure(line: str) -> BlockFailure | None:
    if m := _CHECKSUM.fullmatch(line):
        return BlockFailure(int(m["offset"]), int(m["length"]), FailureKind.CHECKSUM, m["check"])
    if m := _HEADER.fullmatch(line):
        kind = _HEADER_KIND.get(m["check"], FailureKind.BAD_HEADER)
        if kind is FailureKind.BAD_MAGIC and m["found"] == "0":
            kind = FailureKind.ZERO_HEADER
        return BlockFailure(int(m["offset"]), int(m["length"]), kind, m["check"], m["found"], m["expected"])
    if m := _IO_ERROR.fullmatch(line):
        check = m["error"] if m["ddir"] == "read" else f"{m['ddir']} {m['error']}"
        return BlockFailure(int(m["offset"]), int(m["length"]), FailureKind.READ_ERROR, check)
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _job(json_out: Any) -> tuple[dict[str, Any] | None, str | None]:
    if json_out is None:
        return None, None
    jobs = json_out.get("jobs") if isinstance(json_out, dict) else None
    if not isinstance(jobs, list) or len(jobs) != 1 or not isinstance(jobs[0], dict):
        return None, f"a JSON result without exactly one job: {str(json_out)[:200]}"
    return jobs[0], None


def _total_ios(job: dict[str, Any], ddir: str) -> int | None:
    section = job.get(ddir)
    return _int(section.get("total_ios")) if isinstance(section, dict) else None


def parse_failures(stderr: str | Iterable[str], json_out: dict[str, Any] | None,
                   keep: int = KEEP) -> VerifyReport:
    """The bad blocks of a check pass from what fio printed besides its JSON (stderr, and the
    lines of stdout around the JSON), and the counts from its JSON. Lines can be streamed (a
    whole drive of bad blocks is a line each); never raises: what it does not know becomes an
    "unparsed fio verify message" entry."""
    lines = stderr.splitlines() if isinstance(stderr, str) else stderr
    kept: list[BlockFailure] = []
    kinds: Counter[FailureKind] = Counter()
    unparsed: list[str] = []
    unparsed_count = 0
    stopped: str | None = None
    notes: list[str] = []
    last: FailureKind | None = None   # the kind of the failure just read, for its detail lines
    seen_text = False

    def not_understood(text: str) -> None:
        nonlocal unparsed_count
        unparsed_count += 1
        if len(unparsed) < KEEP_UNPARSED:
            unparsed.append(f"unparsed fio verify message: {text[:300]}")

    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        seen_text = True
        if len(line) > MAX_LINE:   # not fio's; and the patterns need not see megabytes
            not_understood(line)
            last = None
        elif failure := _failure(line):
            kinds[failure.kind] += 1
            if len(kept) < keep:
                kept.append(failure)
            last = failure.kind
        elif last is FailureKind.CHECKSUM and (m := _CRC.fullmatch(line)):
            if kinds.total() == len(kept):   # the failure it belongs to was kept
                which = "expected" if m["which"] == "Expected" else "found"
                kept[-1] = replace(kept[-1], **{which: m["crc"]})
        elif last is not None and _ATTACHED.fullmatch(line):
            pass
        elif _STOPPED.fullmatch(line.strip()):
            stopped = line.strip()
            last = None
        elif _NOTE.fullmatch(line.strip()):
            if len(notes) < KEEP_UNPARSED:
                notes.append(line.strip())
            last = None
        else:
            not_understood(line)
            last = None

    job, problem = _job(json_out)
    checked = expected = None
    if job is not None:
        checked, expected = _total_ios(job, "read"), _total_ios(job, "write")
        if checked is None or expected is None:
            problem = f"a JSON job without its read and write total_ios: {str(job)[:200]}"
    if problem is not None:
        not_understood(problem)
    elif json_out is None and not seen_text:
        not_understood("no message and no JSON result")
    return VerifyReport(
        failures=tuple(kept), failed_blocks=kinds.total(), kinds=dict(kinds),
        blocks_checked=checked, blocks_expected=expected,
        fio_error_count=_int(job.get("total_err")) if job else None,
        fio_error=_int(job.get("error")) if job else None,
        stopped=stopped, unparsed=tuple(unparsed), unparsed_count=unparsed_count, notes=tuple(notes))
