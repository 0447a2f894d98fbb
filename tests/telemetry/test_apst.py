"""APST switched off only inside idle-wake's measurement, its original value in the store
before the switch is written, and written back at the end, on failure, and after a kill by
the next `ssdlab` start. A fake sysfs tree holds the switch."""

import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from ssdlab import locks
from ssdlab.drive_settings import restore_pending
from ssdlab.store import Store
from ssdlab.store.migrations import MIGRATIONS, migrate
from ssdlab.telemetry.apst import ApstUnavailable, apst_disabled
from ssdlab.telemetry.nvme import latency_tolerance_file
from tests.conftest import run_cli
from tests.fake_sysfs import FakeSysfs

RUN_ID = 7


@pytest.fixture
def switch(tmp_path) -> Path:
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.nvme_controller("nvme0", attrs={"power/pm_qos_latency_tolerance_us": "100000"})
    return latency_tolerance_file("/dev/nvme0", sysfs.root)


def changes(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT run_id, place, original, restored_at IS NOT NULL FROM setting_changes"
                            " WHERE setting = 'apst'").fetchall()


def test_original_recorded_before_the_switch_is_written_and_restored_at_the_end(tmp_path, switch):
    with Store(tmp_path / "db") as store, apst_disabled(store, RUN_ID, switch):
        assert switch.read_text() == "0\n"
        assert changes(store.path) == [(RUN_ID, str(switch), "100000", 0)]
    assert switch.read_text() == "100000\n"
    assert changes(tmp_path / "db") == [(RUN_ID, str(switch), "100000", 1)]


def test_restored_on_failure(tmp_path, switch):
    with Store(tmp_path / "db") as store, pytest.raises(RuntimeError), apst_disabled(store, RUN_ID, switch):
        raise RuntimeError("fio failed")
    assert switch.read_text() == "100000\n" and changes(tmp_path / "db")[0][3] == 1


def test_no_permission_changes_nothing(tmp_path, switch, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(Path, "write_text", refuse)
    with Store(tmp_path / "db") as store, pytest.raises(ApstUnavailable, match="switching APST needs root"):
        with apst_disabled(store, RUN_ID, switch):
            pytest.fail("measured with APST on as if it were off")
    assert switch.read_text() == "100000\n" and changes(tmp_path / "db")[0][3] == 1


def test_no_switch_is_unavailable(tmp_path):
    with Store(tmp_path / "db") as store, pytest.raises(ApstUnavailable, match="does not manage APST"):
        with apst_disabled(store, RUN_ID, tmp_path / "nvme9/power/pm_qos_latency_tolerance_us"):
            pass
    assert changes(tmp_path / "db") == []


def test_restore_is_idempotent_and_spares_a_live_run(tmp_path, switch):
    with Store(tmp_path / "db") as store:
        live = store.record_setting_change(RUN_ID + 1, "apst", str(switch), "any")
        store.record_setting_change(RUN_ID, "apst", str(switch), "100000")
        switch.write_text("0\n")
        with locks.hold_run(store.path, RUN_ID + 1):
            assert restore_pending(store) == [f"restored APST left off by run {RUN_ID}: wrote 100000 to {switch}"]
            assert restore_pending(store) == []
        assert switch.read_text() == "100000\n"
        assert [c[0] for c in store.unrestored_setting_changes()] == [live]


def test_a_switch_of_another_drive_at_the_controller_is_not_written(tmp_path, switch):
    serial = switch.parent.parent / "serial"
    serial.write_text("21050A800123\n")
    with Store(tmp_path / "db") as store:
        store.record_setting_change(RUN_ID, "apst", str(switch), "any", drive="21050A800123")
        serial.write_text("S4EWNX0R000000Z\n")  # the run killed, another drive put in
        assert restore_pending(store)[0].startswith(f"APST left off by run {RUN_ID} not restored: {switch} is not "
                                                    "the drive the run changed (serial 21050A800123, now S4EWNX0R")
        assert switch.read_text() == "100000\n" and len(store.unrestored_setting_changes()) == 1


def test_a_change_stored_before_the_table_was_made_general_is_still_restored(tmp_path, switch):
    """Schema 6 kept APST changes in `apst_changes`; migration 7 moves them to `setting_changes`."""
    db = tmp_path / "db"
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        migrate(conn, MIGRATIONS[:6])
        conn.execute("INSERT INTO apst_changes (run_id, switch, original, changed_at) VALUES (?, ?, ?, ?)",
                     (RUN_ID, str(switch), "100000", "2024-05-01T12:00:00+00:00"))
    switch.write_text("0\n")
    with Store(db) as store:
        assert restore_pending(store) == [f"restored APST left off by run {RUN_ID}: wrote 100000 to {switch}"]
    assert switch.read_text() == "100000\n" and changes(db) == [(RUN_ID, str(switch), "100000", 1)]


SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ssdlab import locks
    from ssdlab.store import Store
    from ssdlab.telemetry.apst import apst_disabled
    store = Store(sys.argv[1])
    hold = locks.hold_run(store.path, int(sys.argv[3]))
    with apst_disabled(store, int(sys.argv[3]), Path(sys.argv[2])):
        print("idle", flush=True)
        time.sleep(600)
""")


def test_killed_mid_idle_restored_by_the_next_start(tmp_path, switch):
    db = tmp_path / "db"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, db, switch, str(RUN_ID)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "idle\n"
        assert switch.read_text() == "0\n"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert switch.read_text() == "0\n" and changes(db)[0][3] == 0
    restored = run_cli("runs", db=db)
    assert f"restored APST left off by run {RUN_ID}: wrote 100000 to {switch}" in restored.stderr.replace("\n", "")
    assert switch.read_text() == "100000\n" and changes(db)[0][3] == 1
    assert "APST" not in run_cli("runs", db=db).stderr  # done once
