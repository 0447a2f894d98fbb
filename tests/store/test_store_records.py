"""Versioned JSON records: written with their schema version, read through the
upgrades from whatever version they were written at."""

import json
import sqlite3
from contextlib import closing

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.store import Store
from ssdlab.store.failures import Damaged
from ssdlab.store.records import COMMANDS, SCHEMA_KEY, RecordKind, dump, load
from tests.store.test_store import new_run, record_steps

# a kind at version 3: 1 -> 2 renamed `mbps` to `mb_per_s`, 2 -> 3 added `unit`
SPEED = RecordKind("speed", upgrades=(
    lambda v: {"mb_per_s": v.pop("mbps"), **v},
    lambda v: {**v, "unit": "MB/s"},
))


def test_a_record_is_written_at_its_kinds_current_version():
    assert SPEED.version == 3
    assert json.loads(dump(SPEED, {"mb_per_s": 5.0, "unit": "MB/s"})) == {
        SCHEMA_KEY: 3, "mb_per_s": 5.0, "unit": "MB/s"}


@pytest.mark.parametrize("stored", [
    '{"mbps": 5.0}',                                          # no version: version 1
    '{"schema_version": 2, "mb_per_s": 5.0}',
    '{"schema_version": 3, "mb_per_s": 5.0, "unit": "MB/s"}',
])
def test_reading_applies_every_upgrade_from_the_stored_version(stored):
    assert load(SPEED, stored) == {"mb_per_s": 5.0, "unit": "MB/s"}


def test_a_record_from_a_newer_ssdlab_is_refused():
    with pytest.raises(SsdlabError, match="schema version 4, written by a newer ssdlab.*upgrade"):
        load(SPEED, '{"schema_version": 4, "mb_per_s": 5.0}')


@pytest.mark.parametrize("stored", ['{"mbps": ', '{"schema_version": "x"}', '{"schema_version": 0}'])
def test_a_record_that_cannot_be_read_is_damage(stored):
    with pytest.raises(Damaged):
        load(SPEED, stored)


def test_0_1_0_step_commands_read_as_todays():
    assert load(COMMANDS, '["fio job"]') == load(COMMANDS, dump(COMMANDS, {"commands": ["fio job"]}))


def test_every_json_value_the_store_writes_carries_its_version(tmp_path):
    db = tmp_path / "r.db"
    with Store(db) as store:
        record_steps(store, new_run(store), 1)
    columns = {"runs": ("identity", "host", "engine", "options"), "tests": ("definition", "score"),
               "steps": ("step", "result", "commands")}
    with closing(sqlite3.connect(db)) as conn:
        for table, names in columns.items():
            for name in names:
                versions = {row[0] for row in conn.execute(
                    f"SELECT json_extract({name}, '$.{SCHEMA_KEY}') FROM {table}")}
                assert versions == {1} or (name == "commands" and versions == {2}), (table, name)
