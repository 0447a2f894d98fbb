"""Reading what can still be read of a damaged table: its rows in rowid order, stepping
over the pages that cannot be read.

A damaged page makes SQLite fail ("database disk image is malformed") on the rows it
holds, or on every row under it when it is an interior page of the table's b-tree,
while the rest of the table reads as before. So a table is read forward until a row
cannot be; from there, rowids further and further on (1, 2, 4, ... on) are tried
until reading from one works; and the stretch between is bisected down to single
rowids, so that a damaged page costs only the rows on it. (A readable stretch beyond
the last rowid tried is missed only when the end of the table cannot be read either.)

What cannot be read is kept as ranges of rowids: a rowid in such a range may have
held no row at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass

from ssdlab.store.failures import Damaged

# SQLite numbers rows from 1 when it chooses the rowid, as it does for every row ssdlab writes.
FIRST_ROWID = 1
LAST_ROWID = 2**63 - 1

# A damaged page or disk (sqlite3's errors), or text that is not UTF-8 (opening.py).
UNREADABLE = (sqlite3.DatabaseError, Damaged)


@dataclass
class RowidRange:
    first: int
    last: int  # LAST_ROWID: to the end of the table

    def __str__(self) -> str:
        if self.last == LAST_ROWID:
            return f"{self.first} and after"
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def readable_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str],
                  unreadable: list[RowidRange]) -> Iterator[tuple]:
    """Every row of `table` that can be read, as (rowid, *columns), in rowid order; each
    stretch of rowids that cannot be read is added to `unreadable` as it is met."""
    reader = _Reader(conn, table, columns, unreadable)
    start = FIRST_ROWID
    while (failed_at := (yield from reader.rows(start, LAST_ROWID))) is not None:
        resume = reader.next_readable(failed_at)
        if resume is None:
            # nothing further reads: only the row sqlite3 may have stepped past, looked up alone
            alone = yield from reader.rows(failed_at, failed_at)
            reader.lost(failed_at if alone is not None else failed_at + 1, LAST_ROWID)
            return
        yield from reader.bisect(failed_at, resume - 1)
        start = resume


class _Reader:
    def __init__(self, conn: sqlite3.Connection, table: str, columns: Sequence[str],
                 unreadable: list[RowidRange]):
        self.conn = conn
        self.unreadable = unreadable
        select = f"SELECT rowid, {', '.join(columns)} FROM {table}"
        self.select = f"{select} WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
        self.select_one = f"{select} WHERE rowid = ?"

    def rows(self, first: int, last: int) -> Generator[tuple, None, int | None]:
        """The rows from `first` to `last` until one cannot be read; returns the rowid from
        which reading failed, None when every row was read.

        sqlite3 steps to the next row before it hands over a row, so a stretch of rows that
        ends on a damaged page loses its last readable row too; one rowid alone is looked up
        without stepping further, which gets that row back when the stretch is bisected."""
        failed_at = first
        query = (self.select_one, (first,)) if first == last else (self.select, (first, last))
        try:
            for row in self.conn.execute(*query):
                yield row
                failed_at = row[0] + 1
        except UNREADABLE:
            # moving past the range's last row may read the next page, outside the range
            return failed_at if failed_at <= last else None
        return None

    def next_readable(self, failed_at: int) -> int | None:
        """The first of `failed_at` + 1, + 2, + 4, ... from which a row, or the end of the
        table, can be read; None when there is none."""
        step = 1
        while failed_at + step <= LAST_ROWID:
            try:
                self.conn.execute(self.select + " LIMIT 1", (failed_at + step, LAST_ROWID)).fetchall()
                return failed_at + step
            except UNREADABLE:
                step *= 2
        return None

    def bisect(self, first: int, last: int) -> Iterator[tuple]:
        """The rows from `first` to `last` that can be read, however many pages between cannot."""
        failed_at = yield from self.rows(first, last)
        if failed_at is None:
            return
        if failed_at == last:
            self.lost(last, last)
            return
        middle = failed_at + (last - failed_at) // 2
        yield from self.bisect(failed_at, middle)
        yield from self.bisect(middle + 1, last)

    def lost(self, first: int, last: int) -> None:
        if self.unreadable and self.unreadable[-1].last + 1 == first:
            self.unreadable[-1].last = last
        else:
            self.unreadable.append(RowidRange(first, last))
