"""A fleet of real drives (as root): loop devices offered by an `ssdlab worker` on a Dask
scheduler on the loopback, run on through `ssdlab run HOST:/dev/NAME --cluster`.

The worker runs every check on its host: a consent for another device is refused there and
nothing is written; a mounted device is refused by its safety checks; a device it does not
offer is refused before anything is sent. Every address is on the loopback."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from ssdlab.distributed.fleet import FleetRunner, Offered, Placed, offered_drives, worker_threads
from ssdlab.errors import SsdlabError
from ssdlab.model import RunStatus, TestStatus
from ssdlab.store import Store
from ssdlab.targets.resolve import fleet_target
from tests.conftest import run_cli, table_column
from tests.distributed.waiting import wait_for
from tests.loop_devices import loop_device, mounted, require, run

HOST = socket.gethostname()
QUICK = ["--tests", "qd1-seq-write", "--scale", "0.01"]  # writes the device, in about 2 s
DASK = str(Path(sys.executable).parent / "dask")


class Fleet:
    """A scheduler and one `ssdlab worker` offering two loop devices (one mounted); a third
    loop device exists but is not offered."""

    def __init__(self, base: Path, stack: ExitStack):
        require("mkfs.ext4", "mount")
        self.base = base
        self.free, self.mounted, self.other = (stack.enter_context(loop_device(base / f"{n}.img", size=256 << 20))
                                               for n in ("free", "mounted", "other"))
        run("mkfs.ext4", "-q", str(self.mounted))
        stack.enter_context(mounted(self.mounted, base / "mnt"))
        self.procs: list[subprocess.Popen] = []
        stack.callback(self.stop)
        scheduler_file = base / "scheduler.json"
        self.spawn("scheduler", DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(scheduler_file))
        self.address = wait_for(lambda: json.loads(scheduler_file.read_text())["address"], self.log("scheduler"))
        self.start_worker()

    def start_worker(self) -> None:
        self.worker = self.spawn("worker", sys.executable, "-m", "ssdlab", "worker", "--scheduler", self.address,
                                 "--drive", str(self.free), "--drive", str(self.mounted), "--db",
                                 str(self.base / "worker.db"))
        wait_for(lambda: "Registered to" in self.log("worker")(), self.log("worker"))

    def spawn(self, name: str, *argv: str) -> subprocess.Popen:
        with open(self.base / f"{name}.log", "wb") as log:
            self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))
        return self.procs[-1]

    def log(self, name: str):
        return lambda: (self.base / f"{name}.log").read_text(errors="replace")

    def run(self, device: Path, *args: str, db: Path, check: bool = True) -> subprocess.CompletedProcess:
        return run_cli("run", f"{HOST}:{device}", "--cluster", self.address, *QUICK, *args, db=db, check=check,
                       timeout=120)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices)")
    with ExitStack() as stack:
        yield Fleet(tmp_path_factory.mktemp("fleet"), stack)


def _digest(device: Path) -> str:
    with open(device, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_a_run_on_a_drive_of_the_fleet_is_made_there_and_stored_here(fleet, tmp_path):
    db = tmp_path / "ssdlab.db"
    name = fleet.free.name
    with open(fleet.free, "r+b") as f:  # a mark the run must not touch while consent is refused
        f.write(os.urandom(1 << 20))
    before = _digest(fleet.free)
    refused = fleet.run(fleet.free, "--destroy-data", "loop-of-someone-else", db=db, check=False)
    assert refused.returncode == 3, refused.stderr
    assert "does not match" in refused.stderr and f"--destroy-data {name}" in refused.stderr
    assert _digest(fleet.free) == before  # checked on the worker, before anything was written
    assert not db.exists()  # no run came back

    done = fleet.run(fleet.free, "--destroy-data", name, "--json", db=db)
    (document,) = json.loads(done.stdout)
    assert document["run"]["target"] == f"{HOST}:{fleet.free}" and document["run"]["status"] == "done"
    assert _digest(fleet.free) != before  # the worker's fio wrote it
    runs = run_cli("runs", db=db).stdout
    assert table_column(runs, "target") == [f"{HOST}:{fleet.free}"]
    assert table_column(runs, "host") == [HOST]
    # the worker's host keeps its own record of the run, under the device's own path
    worker_runs = run_cli("runs", "--json", db=fleet.base / "worker.db").stdout
    assert [r["target"] for r in json.loads(worker_runs)] == [str(fleet.free)]


def test_a_mounted_drive_is_refused_by_the_safety_checks_of_its_host(fleet, tmp_path):
    proc = fleet.run(fleet.mounted, "--destroy-data", fleet.mounted.name, db=tmp_path / "ssdlab.db", check=False)
    assert proc.returncode == 3, proc.stderr
    assert "mounted" in proc.stderr and str(fleet.base / "mnt") in " ".join(proc.stderr.split())


def test_the_workers_dask_diagnostics_are_turned_down(fleet):
    from distributed import Client
    with Client(fleet.address, timeout=30, set_as_default=False) as client:
        seen = client.run(lambda dask_worker: ("profile" in dask_worker.periodic_callbacks,
                                               dask_worker.periodic_callbacks["tick"].callback_time))
    assert list(seen.values()) == [(False, 1000)]  # worker_settings.WORKER: no profiler, a tick a second


def test_a_sweep_on_an_ssdlab_worker_scores_as_on_this_machine(fleet, tmp_path):
    swept = ["sweep", "wd-sn850-1tb", "--set", "cache.max_cell_share=0.3,0.7", "--suite", "quick", "--tests",
             "rand-read-burst", "--scale", "0.01", "--json"]
    on_worker, here = (json.loads(run_cli(*swept, *where, db=tmp_path / f"{i}.db").stdout)["variants"]
                       for i, where in enumerate((["--cluster", fleet.address], [])))
    assert [v["status"] for v in on_worker] == ["done", "done"]
    assert [(v["name"], v["scores"]) for v in on_worker] == [(v["name"], v["scores"]) for v in here]


def test_a_drive_the_worker_does_not_offer_is_refused_before_anything_is_sent(fleet, tmp_path):
    db = tmp_path / "ssdlab.db"
    proc = fleet.run(fleet.other, "--destroy-data", fleet.other.name, db=db, check=False)
    assert proc.returncode == 2
    said = " ".join(proc.stderr.split())
    assert f"no worker offers {HOST}:{fleet.other}" in said
    assert f"{HOST}:{fleet.free}" in said and f"{HOST}:{fleet.mounted}" in said  # what the fleet offers
    assert not db.exists()


def test_a_dry_run_on_a_drive_of_the_fleet_is_planned_on_its_host_and_writes_nothing(fleet, tmp_path):
    db = tmp_path / "ssdlab.db"
    shown = fleet.run(fleet.mounted, "--dry-run", "--json", db=db)
    plan = json.loads(shown.stdout)
    assert plan["target"] == f"{HOST}:{fleet.mounted}" and plan["host"] == HOST
    assert [t["id"] for t in plan["tests"]] == ["qd1-seq-write"]
    assert plan["capacity"] == 256 << 20  # the device's, read on its host
    # its host's safety checks, read there: the mounted device would be refused
    assert any("mounted" in reason for reason in plan["refusals"])
    before = _digest(fleet.free)
    text = fleet.run(fleet.free, "--dry-run", db=db).stdout
    assert f"planned on {HOST}" in text and "qd1-seq-write" in text
    assert _digest(fleet.free) == before and not db.exists()
    refused = fleet.run(fleet.other, "--dry-run", db=db, check=False)
    assert refused.returncode == 2 and f"no worker offers {HOST}:{fleet.other}" in " ".join(refused.stderr.split())
    assert not db.exists()


def _first_test_done(client: subprocess.Popen, db: Path, fleet: Fleet) -> None:
    """Wait for the client's run to finish its first test; if the client ends first, fail at
    once with what it and the worker said."""
    def done() -> bool:
        if client.poll() is not None:
            raise AssertionError(f"the client ended ({client.returncode}): {client.stderr.read()}\n"
                                 f"worker: {fleet.log('worker')()[-3000:]}")
        return _tests_done(db) == 1

    try:
        wait_for(done, lambda: f"worker: {fleet.log('worker')()[-3000:]}", timeout=60)
    except AssertionError:
        client.kill()
        raise


def _tests_done(db: Path) -> int:
    try:  # the file exists a moment before its tables do
        with Store.open_existing(db, readonly=True) as store:
            return sum(r.status is TestStatus.DONE for run in store.runs() for r in store.tests(run.id))
    except SsdlabError:
        return 0


def test_a_worker_killed_mid_run_leaves_its_run_resumable_on_its_host(fleet, tmp_path):
    """The first test sent as it ended; the worker SIGKILLed in the second: the run is stored
    as far as it was sent, interrupted; resumed on the drive's host, only the second runs."""
    db = tmp_path / "ssdlab.db"
    client = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", f"{HOST}:{fleet.free}", "--cluster",
                               fleet.address, "--tests", "qd1-seq-write,trim", "--scale", "0.01", "--destroy-data",
                               fleet.free.name, "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    _first_test_done(client, db, fleet)
    fleet.worker.kill()
    _, err = client.communicate(timeout=60)
    assert client.returncode == 130, err
    assert "left the cluster" in err and "run 1 is stored as far as its worker sent it" in " ".join(err.split())
    with Store.open_existing(db, readonly=True) as store:
        assert store.run(1).status is RunStatus.INTERRUPTED
        seq = store.tests(1)[0].seq
        first = store.steps(1, seq)
    assert first  # its steps came
    refused = run_cli("resume", "1", db=db, check=False)  # not here: on the drive's host
    assert refused.returncode == 2 and "--cluster ADDRESS` continues it on its host" in refused.stderr
    fleet.start_worker()
    run_cli("resume", "1", "--cluster", fleet.address, "--destroy-data", fleet.free.name, db=db, timeout=120)
    with Store.open_existing(db, readonly=True) as store:
        assert store.run(1).status is RunStatus.DONE
        assert [r.status for r in store.tests(1)] == [TestStatus.DONE, TestStatus.DONE]
        assert store.steps(1, seq) == first  # the first test was kept, not run again


def test_a_worker_stopped_mid_run_stops_fio_and_leaves_its_run_resumable(fleet, tmp_path):
    """SIGTERM to `ssdlab worker` in the second test: fio is stopped at its next poll, the run
    is left interrupted on the drive's host and in the client's database, the worker leaves;
    resumed, only the second test runs."""
    db = tmp_path / "ssdlab.db"
    client = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", f"{HOST}:{fleet.free}", "--cluster",
                               fleet.address, "--tests", "qd1-seq-write,qd1-seq-read", "--scale", "0.05",
                               "--destroy-data", fleet.free.name, "--db", str(db)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    _first_test_done(client, db, fleet)
    fleet.worker.send_signal(signal.SIGTERM)
    assert fleet.worker.wait(timeout=30) == 0, fleet.log("worker")()
    assert not _fio_on(fleet.free)  # stopped, not left writing
    _, err = client.communicate(timeout=60)
    assert client.returncode == 130, err
    with Store.open_existing(db, readonly=True) as store:
        assert store.run(1).status is RunStatus.INTERRUPTED
        first_test, second_test = (r.status for r in store.tests(1))
        assert first_test is TestStatus.DONE and second_test is not TestStatus.DONE  # stopped in it
        seq = store.tests(1)[0].seq
        first = store.steps(1, seq)
    said = " ".join(err.split())
    assert f"run 1 is stored as far as its worker sent it: `ssdlab resume 1 --cluster {fleet.address}`" in said
    with Store.open_existing(fleet.base / "worker.db", readonly=True) as store:
        here = [run for run in store.runs() if run.target == str(fleet.free)][-1]
        assert here.status is RunStatus.INTERRUPTED  # its host's record says so too
    fleet.start_worker()
    run_cli("resume", "1", "--cluster", fleet.address, "--destroy-data", fleet.free.name, db=db, timeout=120)
    with Store.open_existing(db, readonly=True) as store:
        assert store.run(1).status is RunStatus.DONE
        assert store.steps(1, seq) == first  # the first test was kept, not run again


def _fio_on(device: Path) -> bool:
    """Is a fio process running on `device` (its job file names it)?"""
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "comm").read_text().strip() == "fio" and str(device) in _job_files(proc):
                return True
        except OSError:
            continue
    return False


def _job_files(proc: Path) -> str:
    args = (proc / "cmdline").read_bytes().split(b"\0")
    return "".join(Path(a.decode()).read_text(errors="replace") for a in args if a.endswith(b".fio")
                   and Path(a.decode()).is_file())


def test_a_fleet_file_gives_each_drive_its_own_consent(fleet, tmp_path):
    """Two drives of the fleet file, each with its consent: the free one runs; the mounted one
    is refused on its host; one command, each outcome its own."""
    listed = tmp_path / "fleet.toml"
    listed.write_text(f'[[drives]]\nhost = "{HOST}"\ndevice = "{fleet.free}"\ndestroy_data = "{fleet.free.name}"\n'
                      f'[[drives]]\nhost = "{HOST}"\ndevice = "{fleet.mounted}"\n'
                      f'destroy_data = "{fleet.mounted.name}"\n')
    db = tmp_path / "ssdlab.db"
    proc = run_cli("run", "--fleet", listed, "--cluster", fleet.address, *QUICK, db=db, check=False, timeout=120)
    assert proc.returncode == 3, proc.stderr  # the first refusal's status
    said = " ".join(proc.stderr.split())
    assert f"{HOST}:{fleet.mounted}" in said and "mounted" in said
    runs = json.loads(run_cli("runs", "--json", db=db).stdout)
    assert [(r["target"], r["status"]) for r in runs] == [(f"{HOST}:{fleet.free}", "done")]


def test_a_fleet_file_is_checked_before_anything_runs(tmp_path):
    from ssdlab.distributed.fleet_file import FleetDrive, read_fleet
    path = tmp_path / "fleet.toml"
    path.write_text('[[drives]]\nhost = "lab-3"\ndevice = "/dev/nvme1n1"\ndestroy_data = "S1"\n'
                    '[[drives]]\nhost = "fd00::7"\ndevice = "/dev/sdb"\n')
    assert read_fleet(path) == [FleetDrive("lab-3:/dev/nvme1n1", "S1"), FleetDrive("[fd00::7]:/dev/sdb", None)]
    for text, said in [('[[drives]]\nhost = "lab-3"\n', "device: Field required"),
                       ('[[drives]]\nhost = "lab-3"\ndevice = "/tmp/x"\n', "not a host name or address and a /dev"),
                       ('[[drives]]\nhost = "lab 3"\ndevice = "/dev/sdb"\n', "not a host name"),
                       ('[[drives]]\nhost = "a"\ndevice = "/dev/sdb"\nserial = "x"\n', "Extra inputs"),
                       ('[[drives]]\nhost = "a"\ndevice = "/dev/sdb"\n' * 2, "listed twice"),
                       ("drives = []\n", "at least 1 item"), ("[[drives]\n", "not a TOML fleet file"),
                       ('[[drives]]\nhost = "a"\ndevice = "/dev/sdb"\ndestroy_data = ""\n', "at least 1 character")]:
        path.write_text(text)
        with pytest.raises(SsdlabError, match=said):
            read_fleet(path)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(SsdlabError, match="not a TOML fleet file"):
        read_fleet(path)
    with pytest.raises(SsdlabError, match="cannot read the fleet file"):
        read_fleet(tmp_path / "none.toml")
    alone = run_cli("run", "--fleet", path, db=tmp_path / "x.db", check=False)
    assert alone.returncode == 2 and "give the fleet's --cluster ADDRESS too" in alone.stderr


def test_a_drive_of_a_fleet_needs_the_cluster_and_the_cluster_needs_fleet_drives(tmp_path):
    db = tmp_path / "ssdlab.db"
    alone = run_cli("run", "lab-3:/dev/nvme1n1", *QUICK, db=db, check=False)
    assert alone.returncode == 2 and "give --cluster ADDRESS" in alone.stderr
    mixed = run_cli("run", "sim:wd-sn850-1tb", "--cluster", "tcp://127.0.0.1:9", *QUICK, db=db, check=False)
    assert mixed.returncode == 2 and "targets are drives of the fleet" in mixed.stderr
    beyond = run_cli("run", "lab-3:/dev/nvme1n1", "--cluster", "tcp://10.1.2.3:8786", *QUICK, db=db, check=False)
    assert beyond.returncode == 2 and "beyond the loopback" in beyond.stderr
    assert not db.exists()


def test_fleet_targets_are_a_host_and_a_device_path():
    assert fleet_target("lab-3:/dev/nvme1n1") == ("lab-3", "/dev/nvme1n1")
    assert fleet_target("10.0.0.7:/dev/sdb") == ("10.0.0.7", "/dev/sdb")
    assert fleet_target("[fd00::7]:/dev/sdb") == ("fd00::7", "/dev/sdb")
    for local in ("/dev/nvme1n1", "sim:wd-sn850-1tb", "./a:/dev/x", "drive.img", "lab 3:/dev/x", "lab-3:/tmp/x"):
        assert fleet_target(local) is None, local


def _runner(**facts) -> FleetRunner:
    """A runner that knows one worker's facts, as `worker_facts` gives them (no cluster)."""
    from ssdlab import __version__
    from ssdlab.backends.fio.runner import fio_version
    from ssdlab.external import Commands
    runner = FleetRunner("tcp://127.0.0.1:1")
    mine = {"host": "lab-3", "ssdlab": __version__, "fio": fio_version(Commands()), "drives": {"S1": "/dev/nvme1n1"}}
    runner.facts = {"tcp://10.0.0.7:40000": {**mine, **facts}}
    return runner


def test_a_worker_of_other_versions_is_refused_unless_mixed_versions_are_allowed():
    assert _runner().place("lab-3:/dev/nvme1n1") == Placed("tcp://10.0.0.7:40000", "/dev/nvme1n1")
    assert _runner().place("10.0.0.7:/dev/nvme1n1").worker == "tcp://10.0.0.7:40000"  # by address too
    other = _runner(fio="fio-3.99", ssdlab="0.0.0+other")
    with pytest.raises(SsdlabError, match=r"runs ssdlab 0\.0\.0\+other .*fio fio-3\.99 .*--allow-mixed-versions"):
        other.place("lab-3:/dev/nvme1n1")
    other.allow_mixed_versions = True
    assert other.place("lab-3:/dev/nvme1n1").path == "/dev/nvme1n1"
    with pytest.raises(SsdlabError, match="no worker offers lab-3:/dev/nvme2n1; the fleet offers: lab-3:/dev/nvme1n1"):
        _runner().place("lab-3:/dev/nvme2n1")


def test_a_worker_runs_a_task_per_drive_it_offers_or_without_drives_one_per_core():
    drives = Offered({"S1": "/dev/nvme0n1", "loop3": "/dev/loop3"}, None)
    assert worker_threads(None, drives) == 2 and worker_threads(5, drives) == 5
    assert worker_threads(None, Offered({}, None)) == len(os.sched_getaffinity(0))


def test_a_worker_offers_only_the_drives_named_and_finds_a_serial_on_its_host(tmp_path):
    with pytest.raises(SsdlabError, match="no block device of this host has that serial"):
        offered_drives(["NO-SUCH-SERIAL-42"])
    with pytest.raises(SsdlabError, match="not a block device"):
        offered_drives(["/dev/null"])
    assert offered_drives([]) == {}
