"""A Dask cluster with mutual TLS beyond the loopback (as root): the certificates of `ssdlab
fleet certs`; a scheduler and its workers in network namespaces of their own, joined by a
veth pair. A sweep over TLS scores as on this machine; a worker or a client whose certificate
is not the cluster CA's is refused; plain TCP to the scheduler's address is refused before
any connection.

Every address here is inside the two namespaces this module makes (10.231.7.0/24, whose veth
ends are made there, never in this machine's own namespace) or on the loopback; the client
(`ssdlab sweep`) runs in the scheduler's namespace."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography import x509

from ssdlab.distributed.certs import cert_files, cluster_security, make_certs
from ssdlab.distributed.cluster import TLS_NEEDED
from ssdlab.errors import SsdlabError
from tests.conftest import run_cli
from tests.distributed.test_cluster import OPTIONS
from tests.distributed.test_sweeps import GRID
from tests.loop_devices import loop_device

TWO = GRID[:2]  # two variants
SCHEDULER_IP, WORKER_IP = "10.231.7.1", "10.231.7.2"
ADDRESS = f"tls://{SCHEDULER_IP}:8786"
DASK = str(Path(sys.executable).parent / "dask")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _can_make_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if shutil.which("ip") is None or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode:
        return "`ip netns` is not available here"
    return None


def _tls(directory: Path, role: str, ca: Path | None = None) -> list[str]:
    return ["--tls-ca-file", str(ca or directory / "ca.pem"), "--tls-cert", str(directory / f"{role}.pem"),
            "--tls-key", str(directory / f"{role}-key.pem")]


class Fleet:
    """The namespaces, certificates and processes of the module's cluster."""

    def __init__(self, base: Path):
        tag = f"{os.getpid()}"
        self.scheduler_ns, self.worker_ns = f"ssdlab-sched-{tag}", f"ssdlab-work-{tag}"
        self.certs, self.foreign = base / "certs", base / "foreign"
        self.logs = base
        self.procs: dict[str, subprocess.Popen] = {}
        self.namespaces: list[str] = []

    def start(self) -> None:
        make_certs(self.certs, [SCHEDULER_IP, WORKER_IP])
        make_certs(self.foreign, [SCHEDULER_IP, WORKER_IP])  # the same names, another CA
        for ns in (self.scheduler_ns, self.worker_ns):
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        # both ends made inside the namespaces: nothing appears in this machine's own
        _ip("link", "add", "veth0", "netns", self.scheduler_ns, "type", "veth", "peer", "name", "veth0",
            "netns", self.worker_ns)
        for ns, ip in ((self.scheduler_ns, SCHEDULER_IP), (self.worker_ns, WORKER_IP)):
            _ip("-n", ns, "addr", "add", f"{ip}/24", "dev", "veth0")
            _ip("-n", ns, "link", "set", "veth0", "up")
        self.spawn("scheduler", self.scheduler_ns, "scheduler", "--protocol", "tls", "--host", SCHEDULER_IP,
                   "--port", "8786", "--no-dashboard", *_tls(self.certs, "scheduler"))
        worker = ["worker", ADDRESS, "--host", WORKER_IP, "--no-nanny", "--no-dashboard"]
        self.spawn("worker", self.worker_ns, *worker, "--name", "trusted", "--nthreads", "2",
                   *_tls(self.certs, "worker"))
        # knows the cluster's CA (it is no secret) but shows a certificate of another
        self.spawn("intruder", self.worker_ns, *worker, "--name", "intruder", "--nthreads", "1",
                   *_tls(self.foreign, "worker", ca=self.certs / "ca.pem"))

    def spawn(self, name: str, ns: str, *args: str) -> None:
        with open(self.logs / f"{name}.log", "wb") as log:
            self.procs[name] = subprocess.Popen(["ip", "netns", "exec", ns, DASK, *args], stdout=log,
                                                stderr=subprocess.STDOUT)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def workers(self) -> list[str]:
        """The names of the scheduler's workers, once it has at least one (asked by a client
        with the cluster's certificate, from the scheduler's namespace)."""
        code = ("import json, sys; from pathlib import Path; from distributed import Client; "
                "from ssdlab.distributed.certs import cluster_security; "
                f"c = Client({ADDRESS!r}, security=cluster_security(Path(sys.argv[1])), timeout=20); "
                "c.wait_for_workers(1, timeout=20); "
                "print(json.dumps(sorted(w['name'] for w in c.scheduler_info()['workers'].values())))")
        proc = subprocess.run(["ip", "netns", "exec", self.scheduler_ns, sys.executable, "-c", code, str(self.certs)],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr + self.log("scheduler")
        return json.loads(proc.stdout)

    def sweep(self, *args: str, db: Path, check: bool = True) -> subprocess.CompletedProcess:
        """`ssdlab sweep ARGS` run in the scheduler's namespace."""
        argv = ["ip", "netns", "exec", self.scheduler_ns, sys.executable, "-m", "ssdlab", "sweep", "wd-sn850-1tb",
                *TWO, *OPTIONS, *args, "--db", str(db)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if check:
            assert proc.returncode == 0, proc.stderr
        return proc

    def stop(self) -> None:
        for proc in self.procs.values():  # nothing of theirs outlives them: no need to let them close
            proc.kill()
            proc.wait()
        for ns in self.namespaces:  # its veth end goes with it
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    if reason := _can_make_namespaces():
        pytest.skip(reason)
    fleet = Fleet(tmp_path_factory.mktemp("fleet"))
    try:
        fleet.start()
        assert "trusted" in fleet.workers()  # the cluster ready before anything is sent to it
        yield fleet
    finally:
        fleet.stop()


@pytest.fixture(scope="module")
def swept(fleet, tmp_path_factory):
    """The same two variants over TLS and on this machine: each sweep's table."""
    base = tmp_path_factory.mktemp("swept")
    here = subprocess.Popen([sys.executable, "-m", "ssdlab", "sweep", "wd-sn850-1tb", *TWO, *OPTIONS, "--json",
                             "--db", str(base / "local.db")], stdout=subprocess.PIPE, text=True)  # meanwhile
    over_tls = fleet.sweep("--cluster", ADDRESS, "--tls", str(fleet.certs), "--json", db=base / "tls.db")
    out, _ = here.communicate(timeout=120)
    assert here.returncode == 0
    return json.loads(over_tls.stdout), json.loads(out)


@pytest.mark.root
def test_a_sweep_over_tls_scores_as_on_this_machine(swept):
    over_tls, here = swept
    assert [v["status"] for v in over_tls["variants"]] == ["done"] * 2
    assert [v["name"] for v in over_tls["variants"]] == [v["name"] for v in here["variants"]]
    assert [v["scores"] for v in over_tls["variants"]] == [v["scores"] for v in here["variants"]]


@pytest.mark.root
def test_a_worker_with_another_cas_certificate_is_refused_by_the_scheduler(fleet, swept):
    workers = fleet.workers()
    assert "trusted" in workers and "intruder" not in workers
    assert fleet.procs["intruder"].poll() is None  # still trying: it did not stop for another reason
    assert "Waiting to connect" in fleet.log("intruder")
    assert f"TLS handshake failed with remote 'tls://{WORKER_IP}:" in fleet.log("scheduler")


@pytest.mark.root
@pytest.mark.parametrize("certs, said", [
    ("none", "cannot read the client's TLS files"),
    ("foreign", "cannot reach the Dask scheduler"),
])
def test_a_client_without_the_clusters_certificate_is_refused(fleet, tmp_path, certs, said):
    directory = tmp_path / "certs"
    directory.mkdir()
    if certs == "foreign":  # the cluster's CA, a certificate of another
        shutil.copy(fleet.certs / "ca.pem", directory)
        for name in ("client.pem", "client-key.pem"):
            shutil.copy(fleet.foreign / name, directory)
    db = tmp_path / "ssdlab.db"
    proc = fleet.sweep("--cluster", ADDRESS, "--tls", str(directory), db=db, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert said in " ".join(proc.stderr.split())
    assert "fleet certs" in proc.stderr
    assert not db.exists()


@pytest.mark.root
def test_plain_tcp_to_the_schedulers_address_is_refused_before_any_connection(fleet, tmp_path):
    mine = f"remote 'tls://{SCHEDULER_IP}:"  # connections from the client's namespace (the intruder's: WORKER_IP)
    handshakes = fleet.log("scheduler").count(mine)
    db = tmp_path / "ssdlab.db"
    proc = fleet.sweep("--cluster", f"tcp://{SCHEDULER_IP}:8786", db=db, check=False)
    assert proc.returncode == 2 and TLS_NEEDED in " ".join(proc.stderr.split())
    assert "ssdlab fleet certs" in TLS_NEEDED
    assert not db.exists()
    time.sleep(0.2)  # a connection the scheduler saw would be in its log by now
    assert fleet.log("scheduler").count(mine) == handshakes


@pytest.mark.root
def test_a_drive_of_a_worker_in_its_own_namespace_runs_over_tls(fleet, tmp_path):
    """`ssdlab worker --tls` in the workers' namespace offers a loop device; the client, in the
    scheduler's, runs on it by the worker's address: every check and fio there, the run here."""
    with loop_device(tmp_path / "drive.img", size=256 << 20) as device:
        argv = ["ip", "netns", "exec", fleet.worker_ns, sys.executable, "-m", "ssdlab", "worker", "--scheduler",
                ADDRESS, "--tls", str(fleet.certs), "--drive", str(device), "--name", "drives", "--db",
                str(tmp_path / "worker.db")]
        with open(tmp_path / "worker.log", "wb") as log:
            worker = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        fleet.procs["drives"] = worker
        try:
            deadline = time.monotonic() + 30
            while "Registered to" not in (tmp_path / "worker.log").read_text(errors="replace"):
                assert time.monotonic() < deadline and worker.poll() is None, (tmp_path / "worker.log").read_text()
                time.sleep(0.2)
            db = tmp_path / "ssdlab.db"
            proc = subprocess.run(["ip", "netns", "exec", fleet.scheduler_ns, sys.executable, "-m", "ssdlab", "run",
                                   f"{WORKER_IP}:{device}", "--cluster", ADDRESS, "--tls", str(fleet.certs),
                                   "--tests", "qd1-seq-write", "--scale", "0.01", "--destroy-data", device.name,
                                   "--json", "--db", str(db)], capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr
            (document,) = json.loads(proc.stdout)
            assert document["run"]["target"] == f"{WORKER_IP}:{device}" and document["run"]["status"] == "done"
            assert f"Listening to: tls://{WORKER_IP}:" in " ".join((tmp_path / "worker.log").read_text().split())
        finally:
            worker.kill()
            worker.wait()


def test_fleet_certs_writes_private_keys_names_the_hosts_and_refuses_to_overwrite(tmp_path):
    directory = tmp_path / "certs"
    said = run_cli("fleet", "certs", directory, "--host", "10.231.7.1", "--host", "node-2.lab", "--days", "30").stdout
    assert "dask scheduler --protocol tls --host 10.231.7.1" in said and "--tls-cert" in said
    assert f"--cluster tls://10.231.7.1:8786 --tls {directory}" in said
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = cert_files(directory)
    assert sorted(p.name for p in directory.iterdir()) == sorted(p.name for p in files)
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == (0o600 if path.name.endswith("-key.pem") else 0o644)
    cert = x509.load_pem_x509_certificate((directory / "worker.pem").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} == {"10.231.7.1", "127.0.0.1"}
    assert set(names.get_values_for_type(x509.DNSName)) == {"node-2.lab", "localhost"}
    assert 29 <= (cert.not_valid_after_utc - cert.not_valid_before_utc).days <= 31

    before = {p: p.read_bytes() for p in files}
    refused = run_cli("fleet", "certs", directory, check=False)
    assert refused.returncode == 2 and "already exist" in refused.stderr and "--force" in refused.stderr
    assert {p: p.read_bytes() for p in files} == before
    run_cli("fleet", "certs", directory, "--force")
    assert all(p.read_bytes() != before[p] for p in files)
    assert stat.S_IMODE((directory / "client-key.pem").stat().st_mode) == 0o600


def test_each_roles_security_is_its_own_certificate_and_a_missing_file_is_named(tmp_path):
    make_certs(tmp_path, [])
    for role in ("client", "worker", "scheduler"):
        security = cluster_security(tmp_path, role)
        assert security.require_encryption
        assert security.get_tls_config_for_role(role) == {
            "ca_file": str(tmp_path / "ca.pem"), "ciphers": None, "cert": str(tmp_path / f"{role}.pem"),
            "key": str(tmp_path / f"{role}-key.pem")}
    (tmp_path / "worker-key.pem").unlink()
    with pytest.raises(SsdlabError, match=r"cannot read the worker's TLS files .*worker-key.pem; `ssdlab fleet certs"):
        cluster_security(tmp_path, "worker")
    (tmp_path / "client-key.pem").write_bytes((tmp_path / "scheduler-key.pem").read_bytes())
    with pytest.raises(SsdlabError, match="not a CA, a certificate and its key"):
        cluster_security(tmp_path, "client")
