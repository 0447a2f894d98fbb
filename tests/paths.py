"""Where the tests' data are: one place for each path the test modules share."""

from pathlib import Path

TESTS = Path(__file__).parent
REPOSITORY = TESTS.parent.resolve()
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
GOLDEN_FIO = GOLDEN / "fio"
GOLDEN_DEVICES = GOLDEN / "devices"
SMALL_PRESET = DATA / "small-tlc.toml"  # a small TLC drive with the SN850's power states: quick to simulate
DB_V010 = DATA / "db-v0.1.0.sqlite"  # a database as ssdlab 0.1.0 wrote it
