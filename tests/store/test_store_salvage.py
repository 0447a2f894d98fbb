"""Reading a damaged table row by row (store/salvage.py): every row SQLite can still read
is read, whichever page is damaged, and what cannot be is reported as rowid ranges."""

import sqlite3
from contextlib import closing

import pytest

from ssdlab.store.salvage import LAST_ROWID, readable_rows

ROWS = 400


def table_with_pages(path):
    """A table of ROWS rows of about 500 bytes (several to a page); its leaf pages in order."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE t (v TEXT)")
        conn.executemany("INSERT INTO t (v) VALUES (?)", [(f"{i:04d}" * 125,) for i in range(ROWS)])
        conn.commit()
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        leaves = [n for n, in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 't' AND pagetype = 'leaf' ORDER BY pageno")]
    return page_size, leaves


def damage(path, page_size, page):
    with open(path, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\xa5" * page_size)


def readable_one_by_one(path):
    """The rowids that a lookup of each one alone still reads."""
    found = set()
    with closing(sqlite3.connect(path)) as conn:
        for rowid in range(1, ROWS + 1):
            try:
                if conn.execute("SELECT v FROM t WHERE rowid = ?", (rowid,)).fetchall():
                    found.add(rowid)
            except sqlite3.DatabaseError:
                pass
    return found


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_every_row_still_readable_is_read_whichever_leaf_is_damaged(tmp_path, which):
    path = tmp_path / "t.db"
    page_size, leaves = table_with_pages(path)
    page = {"first": leaves[0], "middle": leaves[len(leaves) // 2], "last": leaves[-1]}[which]
    damage(path, page_size, page)
    unreadable = []
    with closing(sqlite3.connect(path)) as conn:
        got = [row[0] for row in readable_rows(conn, "t", ["v"], unreadable)]
    assert got == sorted(readable_one_by_one(path)) and len(got) < ROWS
    lost = set(range(1, ROWS + 1)) - set(got)
    assert all(any(r.first <= rowid <= r.last for r in unreadable) for rowid in lost)
    if which == "last":  # the table's end cannot be read: the range runs to its end
        assert unreadable[-1].last == LAST_ROWID and unreadable[-1].first == max(got) + 1
