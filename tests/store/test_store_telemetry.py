"""Telemetry in the store (migration 3): health logs, temperature series, energy, throttle
events and notes go in and come back as the records they were; a test started again
drops its earlier attempt's; databases from before migration 3 open without any."""

import shutil
import sqlite3
from contextlib import closing

import pytest

from ssdlab.documents import health_document, health_rows
from ssdlab.errors import SsdlabError
from ssdlab.store import Store, TelemetryNote
from ssdlab.store.migrations import MIGRATIONS
from ssdlab.telemetry.meters import StepEnergy
from ssdlab.telemetry.results import StepTelemetry, TemperatureSeries, TestHealth
from ssdlab.telemetry.throttle import ThrottleEvent
from tests.factories import result
from tests.paths import DB_V010 as V010
from tests.store.test_store import new_run
from tests.telemetry_data import SN850_HEALTH

AFTER = SN850_HEALTH.model_copy(update={"media_errors": 2, "temperature_c": 71})
SERIES = TemperatureSeries(source="hwmon", celsius=(40.5, None, 81.25))
ENERGY = StepEnergy(meter="meter --rail 3v3", energy_j=12.5, span_s=2.5, covered_s=2.4)
HEALTH = TestHealth(before=SN850_HEALTH, after=AFTER)
EVENT = ThrottleEvent(start_s=12, length_s=8, mbps_before=3000.0, mbps_during=1500.0, start_temperature_c=80.0,
                      peak_temperature_c=None, threshold="TMT1")


def store_one_test(store, run_id, health=HEALTH):
    record = store.tests(run_id)[0]
    store.start_test(run_id, record.seq)
    store.save_test_telemetry(run_id, record.seq, TestHealth(before=health.before))
    for idx, step in enumerate(record.test.steps):
        store.save_step(run_id, record.seq, idx, step, result(), (), StepTelemetry(temperature=SERIES, energy=ENERGY))
        store.add_telemetry_notes(run_id, [f"note of step {idx}"], record.seq, idx)
    store.save_test_telemetry(run_id, record.seq, health, {1: (EVENT,)})
    return record.seq


def test_telemetry_round_trip(tmp_path):
    with Store(tmp_path / "t.db") as store:
        run_id = new_run(store)
        store.add_telemetry_notes(run_id, ["no hwmon temperature sensor"])
        seq = store_one_test(store, run_id)
    with Store.open_existing(tmp_path / "t.db") as store:
        record = store.tests(run_id)[seq]
        assert record.health == HEALTH
        assert record.health.alarms() == ["2 new media and data integrity errors during the test"]
        steps = store.steps(run_id, seq)
        assert all(s.telemetry == StepTelemetry(temperature=SERIES, energy=ENERGY) for s in steps)
        assert [s.throttles for s in steps] == [(), (EVENT,), *[()] * (len(steps) - 2)]
        notes = store.telemetry_notes(run_id)
        assert notes[0] == TelemetryNote(None, None, "no hwmon temperature sensor")
        assert notes[1:] == [TelemetryNote(seq, i, f"note of step {i}") for i in range(len(steps))]
        assert store.tests(run_id)[1].health is None  # never started


def test_a_test_started_again_drops_the_telemetry_of_its_earlier_attempt(tmp_path):
    with Store(tmp_path / "t.db") as store:
        run_id = new_run(store)
        store.add_telemetry_notes(run_id, ["about the run"])
        seq = store_one_test(store, run_id)
        store.start_test(run_id, seq)
        assert store.tests(run_id)[seq].health is None and store.steps(run_id, seq) == []
        assert store.telemetry_notes(run_id) == [TelemetryNote(None, None, "about the run")]
        count = "SELECT count(*) FROM {} WHERE run_id = ?"
        for table in ("step_temperatures", "step_energy", "throttle_events", "test_health"):
            assert store._conn.execute(count.format(table), (run_id,)).fetchone()[0] == 0, table


def test_neither_health_log_read_stores_none(tmp_path):
    with Store(tmp_path / "t.db") as store:
        run_id = new_run(store)
        seq = store_one_test(store, run_id, TestHealth())
        assert store.tests(run_id)[seq].health is None


def test_a_damaged_throttle_event_is_named(tmp_path):
    with Store(tmp_path / "t.db") as store:
        run_id = new_run(store)
        seq = store_one_test(store, run_id)
        store._conn.execute("UPDATE throttle_events SET threshold = 'hot'")
        with pytest.raises(SsdlabError, match="damaged .*a stored ThrottleEvent is not valid"):
            store.steps(run_id, seq)


def test_a_database_from_before_telemetry_gains_its_tables_and_reads_without_any(tmp_path):
    copy = tmp_path / "old.db"
    shutil.copy(V010, copy)
    with Store.open_existing(copy) as store:  # read only: through a migrated copy
        run = store.runs()[0]
        assert all(r.health is None for r in store.tests(run.id))
        assert all(s.telemetry == StepTelemetry() and s.throttles == () for s in store.steps(run.id, 0))
        assert store.telemetry_notes(run.id) == []
    with Store(copy) as store:  # for writing: migrated in place
        store.add_telemetry_notes(1, ["resumed by a newer ssdlab"])
    with closing(sqlite3.connect(copy)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 9
        assert db.execute("SELECT note FROM telemetry_notes").fetchall() == [("resumed by a newer ssdlab",)]


def test_the_health_table_and_the_alarms_of_a_worn_drive():
    gib = 1 << 30
    before = SN850_HEALTH.model_copy(update={"nand_written_bytes": 10 * gib})
    after = before.model_copy(update={"host_written_bytes": before.host_written_bytes + gib,
                                      "nand_written_bytes": 12 * gib, "critical_warning": 1,
                                      "available_spare_pct": 9})
    health = TestHealth(before=before, after=after)
    rows = health_rows(health_document(health))
    assert ("data written by the host", "16.09 TiB", "16.09 TiB", "+1 GiB") in rows
    assert ("available spare (%)", "100", "9", "-91") in rows
    assert ("critical warning", "0x00", "0x01", "") in rows  # a bit field: no difference
    assert rows[-1] == ("write amplification (flash / host writes)", "", "", "2.00")
    assert health.alarms() == ["the drive raises a critical warning (0x01): the available spare is below its threshold",
                               "available spare 9 % is below the drive's threshold of 10 %"]
    # logs that are not one drive's are an alarm too
    swapped = TestHealth(before=after, after=before)
    assert swapped.alarms()[0].startswith("the health logs are not one drive's before and after")
    assert health_document(swapped)["delta"] is None
