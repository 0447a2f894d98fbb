"""The volatile write cache a PTS test asks for, on a real NVMe drive: Debian's real nvme-cli
answering for a pretend /dev/nvme0 through tests/nvme_shim (which keeps what Set Features 06h
writes, so a later Get Features sees it). The original is committed to the store before the
cache is set, and written back after the test, on failure, and after a kill by the next
`ssdlab` start; a drive without a volatile write cache, or one that refuses the command, runs
the test with its own setting, and the result says so."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ssdlab import locks
from ssdlab.backends import StepOutcome
from ssdlab.backends.fio import FioBackend
from ssdlab.catalogue import Scale, compile_tests
from ssdlab.drive_settings import restore_pending
from ssdlab.execution import SilentReporter, execute
from ssdlab.external import Commands
from ssdlab.store import Store
from ssdlab.targets import Target, TargetKind
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.nvme import NvmeCli
from ssdlab.telemetry.probe import probe
from ssdlab.units import GiB
from ssdlab.write_cache import WriteCache
from tests.conftest import run_cli
from tests.factories import result
from tests.fake_sysfs import FakeSysfs
from tests.nvme_shim import DRIVES, build_shim, nvme_on_path
from tests.shim_common import find_program

pytestmark = [
    pytest.mark.skipif(find_program("nvme") is None, reason="nvme-cli is not installed (Debian package nvme-cli)"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the LD_PRELOAD shim"),
]

RUN_ID = 7
CONTROLLER = "/dev/nvme0"
SET_OFF = "nvme set-feature /dev/nvme0 -f 0x06 --value=0"
KEPT = "the drive kept its own setting"


@pytest.fixture(scope="module")
def shim_so(tmp_path_factory) -> Path:
    return build_shim(tmp_path_factory.mktemp("nvme-shim"))


def drive_pages(tmp_path: Path, shim_so: Path, monkeypatch, **id_ctrl) -> Path:
    """The SN850's pages (its write cache on), with `id_ctrl` changed, answering through the
    `nvme` first on PATH."""
    sn850 = DRIVES["sn850"]
    drive = dataclasses.replace(sn850, id_ctrl=dataclasses.replace(sn850.id_ctrl, **id_ctrl))
    pages = drive.write(tmp_path / "pages")
    bin_dir = nvme_on_path(tmp_path / "bin", pages, shim_so)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return pages


@pytest.fixture
def pages(tmp_path, shim_so, monkeypatch) -> Path:
    return drive_pages(tmp_path, shim_so, monkeypatch)


def wce(pages: Path) -> int:
    """What the pretend drive holds in feature 06h now."""
    return int((pages / "feature-0x06").read_text(), 0)


def calls(pages: Path) -> list[str]:
    return (pages / "calls").read_text().splitlines()


def changes(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT run_id, setting, place, original, restored_at IS NOT NULL"
                            " FROM setting_changes").fetchall()


def write_cache(store: Store, asked: str, tmp_path: Path) -> WriteCache:
    """As execution.execute makes it for a PTS test on a real drive."""
    backend = FioBackend(tmp_path / "unused", "device", purge=lambda: ())
    return WriteCache.asked(asked, backend, store, RUN_ID, NvmeCli(CONTROLLER, Commands()))


def test_the_original_is_stored_then_the_cache_set_and_restored_after_the_test(tmp_path, pages):
    with Store(tmp_path / "db") as store:
        cache = write_cache(store, "off", tmp_path)
        with cache.held():
            assert wce(pages) == 0
            assert changes(store.path) == [(RUN_ID, "write-cache", CONTROLLER, "1", 0)]
        assert wce(pages) == 1 and changes(store.path)[0][4] == 1
    assert cache.said() == {"asked": "off", "set": True, "original": "on",
                            "how": f"{SET_OFF}; restored to 1 after the test"}
    # read (and whose drive it is), then set, then set back, and never saved: a power cycle
    # brings back the drive's own
    assert calls(pages)[-4:] == ["nvme get-feature /dev/nvme0 -f 0x06 -H", "nvme id-ctrl /dev/nvme0 -o json",
                                 f"nvme {SET_OFF[5:]}", "nvme set-feature /dev/nvme0 -f 0x06 --value=1"]
    assert not (pages / "feature-0x06.saved").exists()


def test_restored_when_the_test_fails(tmp_path, pages):
    with Store(tmp_path / "db") as store, pytest.raises(RuntimeError):
        with write_cache(store, "off", tmp_path).held():
            raise RuntimeError("fio failed")
    assert wce(pages) == 1 and changes(tmp_path / "db")[0][4] == 1


def test_a_drive_without_a_volatile_write_cache_is_not_asked(tmp_path, shim_so, monkeypatch):
    pages = drive_pages(tmp_path, shim_so, monkeypatch, vwc=6)  # bit 0 clear
    with Store(tmp_path / "db") as store:
        off, on = write_cache(store, "off", tmp_path), write_cache(store, "on", tmp_path)
        for cache in (off, on):
            with cache.held():
                pass
    nothing = "the drive has no volatile write cache (Identify VWC bit 0 clear): nothing set"
    assert off.said() == {"asked": "off", "set": True, "original": None,
                          "how": f"{nothing}; its writes are as with one off"}
    assert on.said() == {"asked": "on", "set": False, "original": None, "how": f"{nothing}; it cannot be on"}
    assert not any("feature" in call for call in calls(pages)) and changes(tmp_path / "db") == []


def test_a_refused_set_feature_leaves_the_drive_as_it_was_and_the_test_goes_on(tmp_path, pages):
    (pages / "fail-0x09").write_text("0x4002\n")  # Set Features: Invalid Field in Command
    ran = []
    with Store(tmp_path / "db") as store:
        cache = write_cache(store, "off", tmp_path)
        with cache.held():
            ran.append("the test")
        assert store.unrestored_setting_changes() == []  # nothing left to restore
    said = cache.said()
    assert ran == ["the test"] and wce(pages) == 1
    assert (said["set"], said["original"]) == (False, "on")
    assert said["how"].startswith(f"`{SET_OFF}` failed (exit status 1): NVMe status: Invalid Field in Command")
    assert said["how"].endswith(f": nothing set, {KEPT} (on)")


def test_an_unreadable_feature_changes_nothing(tmp_path, pages):
    (pages / "fail-0x0a").write_text("0x4002\n")  # Get Features refused, as without permission
    with Store(tmp_path / "db") as store:
        cache = write_cache(store, "off", tmp_path)
        with cache.held():
            pass
    said = cache.said()
    assert (said["set"], said["original"]) == (False, None) and said["how"].endswith(f"nothing set, {KEPT}")
    assert "nvme get-feature /dev/nvme0 -f 0x06 -H` failed" in said["how"]
    assert not any("set-feature" in call for call in calls(pages)) and changes(tmp_path / "db") == []


def test_a_failed_restore_is_said_and_left_to_the_next_start(tmp_path, pages):
    with Store(tmp_path / "db") as store:
        cache = write_cache(store, "off", tmp_path)
        with cache.held():
            (pages / "fail-0x09").write_text("0x4002\n")
        assert wce(pages) == 0 and changes(store.path)[0][4] == 0
        assert cache.said()["how"].startswith(f"{SET_OFF}; restoring 1 after the test failed (`nvme set-feature")
        assert cache.said()["how"].endswith("ssdlab tries again at its next start")
        (pages / "fail-0x09").unlink()
        assert restore_pending(store) == ["restored the volatile write cache (NVMe feature 06h) left changed "
                                          "by run 7: nvme set-feature /dev/nvme0 -f 0x06 --value=1"]
    assert wce(pages) == 1 and changes(tmp_path / "db")[0][4] == 1


def left_off(store: Store, tmp_path: Path, pages: Path) -> None:
    """The cache left off by a test whose restore failed, as a killed run leaves it."""
    with write_cache(store, "off", tmp_path).held():
        (pages / "fail-0x09").write_text("0x4002\n")
    (pages / "fail-0x09").unlink()
    assert wce(pages) == 0 and store.unrestored_setting_changes()[0][5] == DRIVES["sn850"].id_ctrl.sn


def test_another_drive_at_the_node_is_not_touched_until_the_one_changed_is_back(tmp_path, pages):
    sn850 = DRIVES["sn850"]
    with Store(tmp_path / "db") as store:
        left_off(store, tmp_path, pages)
        swapped = dataclasses.replace(sn850.id_ctrl, sn="S4EWNX0R000000Z")
        (pages / "id-ctrl.bin").write_bytes(swapped.pack())
        before = len(calls(pages))
        assert restore_pending(store) == [
            "the volatile write cache (NVMe feature 06h) left changed by run 7 not restored: /dev/nvme0 is not "
            f"the drive the run changed (serial {sn850.id_ctrl.sn}, now S4EWNX0R000000Z); ssdlab restores it "
            "when that drive is back, and the drive's next power cycle undoes the change anyway"]
        assert wce(pages) == 0 and not any("set-feature" in c for c in calls(pages)[before:])
        (pages / "id-ctrl.bin").write_bytes(sn850.id_ctrl.pack())
        assert restore_pending(store)[0].startswith("restored the volatile write cache")
    assert wce(pages) == 1 and changes(tmp_path / "db")[0][4] == 1


def test_a_change_from_before_a_restart_is_gone_already_and_not_written(tmp_path, pages):
    with Store(tmp_path / "db") as store:
        left_off(store, tmp_path, pages)
        before = len(calls(pages))
        assert restore_pending(store, boot="another boot") == [
            "the volatile write cache (NVMe feature 06h) left changed by run 7 at /dev/nvme0 is gone: the machine "
            "has restarted since, and the drive came back with its own setting (ssdlab never saves its changes)"]
        assert store.unrestored_setting_changes() == [] and wce(pages) == 0 and calls(pages)[before:] == []


def test_a_live_runs_change_is_left_to_it(tmp_path, pages):
    with Store(tmp_path / "db") as store:
        cache = write_cache(store, "off", tmp_path)
        with cache.held(), locks.hold_run(store.path, RUN_ID):
            assert restore_pending(store) == [] and wce(pages) == 0


SCRIPT = textwrap.dedent("""
    import sys, time
    from ssdlab import locks
    from ssdlab.backends.fio import FioBackend
    from ssdlab.external import Commands
    from ssdlab.store import Store
    from ssdlab.telemetry.nvme import NvmeCli
    from ssdlab.write_cache import WriteCache
    store, run_id = Store(sys.argv[1]), int(sys.argv[2])
    hold = locks.hold_run(store.path, run_id)
    backend = FioBackend(sys.argv[1] + ".unused", "device", purge=lambda: ())
    with WriteCache.asked("off", backend, store, run_id, NvmeCli("/dev/nvme0", Commands())).held():
        print("testing", flush=True)
        time.sleep(600)
""")


def test_killed_mid_test_restored_by_the_next_start(tmp_path, pages):
    db = tmp_path / "db"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, db, str(RUN_ID)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "testing\n"
        assert wce(pages) == 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert wce(pages) == 0 and changes(db) == [(RUN_ID, "write-cache", CONTROLLER, "1", 0)]
    said = " ".join(run_cli("runs", db=db).stderr.split())
    assert ("restored the volatile write cache (NVMe feature 06h) left changed by run 7: "
            "nvme set-feature /dev/nvme0 -f 0x06 --value=1") in said
    assert wce(pages) == 1 and changes(db)[0][4] == 1
    assert "drive setting" not in run_cli("runs", db=db).stderr  # done once


class Instant:
    """A backend that runs every step at once at a steady 100 MB/s: a PTS loop is steady by
    its fifth round. Each step notes the write cache the pretend drive has while it runs."""

    name = "instant"

    def __init__(self, pages: Path):
        self.pages, self.caches = pages, set()

    def describe(self) -> dict:
        return {"engine": self.name}

    def run_step(self, step, progress=None) -> StepOutcome:
        self.caches.add(wce(self.pages))
        return StepOutcome(result(mbps=100.0, busy_s=1.0, bs=step.bs), ("instant",))


def test_an_enterprise_pts_test_runs_with_the_cache_off_and_gives_it_back(tmp_path, pages):
    """Through `execute`, as a run on a real drive: the probe's nvme-cli sets the cache."""
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.disk("nvme0n1", "259:0", 2 * GiB // 512, controller="nvme0", bus="nvme")
    sysfs.nvme_controller("nvme0")
    telemetry = RunTelemetry(probe(Target("/dev/nvme0n1", TargetKind.DEVICE, Path("/dev/nvme0n1"), GiB),
                                   Commands(), sysfs.root))
    backend = Instant(pages)
    tests = compile_tests(["pts-e-latency"], Scale(0.001), GiB)
    with Store(tmp_path / "ssdlab.db") as store:
        run_id = store.create_run(name=None, target="/dev/nvme0n1", target_kind="device", suite="pts-enterprise",
                                  suite_toml="", scale=0.001, tests=tests, identity={}, host={},
                                  engine=backend.describe(), options={})
        execute(store, run_id, backend, SilentReporter(), telemetry)
        (record,) = store.tests(run_id)
    assert backend.caches == {0} and wce(pages) == 1
    assert record.score["write_cache"] == {"asked": "off", "set": True, "original": "on",
                                           "how": f"{SET_OFF}; restored to 1 after the test"}
