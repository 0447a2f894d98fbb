"""Device, file and host identity from a fake sysfs tree and replayed tool outputs.

The nvme-cli and lsblk outputs in tests/golden/devices/ are hand-written (see its
README); the wipefs ones are recordings.
"""

import json
import socket
from pathlib import Path

import pytest

from ssdlab.external import Completed, ReplayCommands
from ssdlab.targets.identity import device_identity, file_identity, host_identity
from tests.fake_sysfs import FakeSysfs, mountinfo
from tests.paths import GOLDEN_DEVICES as GOLDEN

ID_CTRL = "nvme id-ctrl /dev/nvme0n1 -o json"
ID_NS = "nvme id-ns /dev/nvme0n1 -o json"
TB = 1953525168 * 512


def ok(stdout: str) -> Completed:
    return Completed((), 0, stdout, "")


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


@pytest.fixture
def nvme_sysfs(tmp_path):
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.disk("nvme0n1", "259:0", 1953525168, physical=512, controller="nvme0", bus="nvme",
               controller_attrs={"model": "Samsung SSD 980 PRO 1TB                 ",
                                 "serial": "S5GXNF0R712345A     ", "firmware_rev": "5B2QGXA7",
                                 "transport": "pcie"})
    sysfs.partition("nvme0n1", "nvme0n1p1", "259:1", 1048576)
    return sysfs.root


def test_an_nvme_drives_pcie_link_is_read_from_its_pci_function(nvme_sysfs):
    function = nvme_sysfs / "devices/ctrl/nvme0/device"
    function.mkdir()
    (function / "current_link_speed").write_text("16.0 GT/s PCIe\n")
    (function / "current_link_width").write_text("4\n")
    ident = device_identity(Path("/dev/nvme0n1"), ReplayCommands(), nvme_sysfs)
    assert ident["pcie_link"] == {"gts": 16.0, "width": 4}
    (function / "current_link_speed").write_text("Unknown\n")  # a link down, as some kernels say
    assert device_identity(Path("/dev/nvme0n1"), ReplayCommands(), nvme_sysfs)["pcie_link"] is None


def test_nvme_identity_from_nvme_cli_and_sysfs(nvme_sysfs):
    commands = ReplayCommands({ID_CTRL: ok(golden("nvme-id-ctrl.json")),
                               ID_NS: ok(golden("nvme-id-ns.json"))})
    ident = device_identity(Path("/dev/nvme0n1"), commands, nvme_sysfs)
    assert ident == {
        "path": "/dev/nvme0n1", "name": "nvme0n1",
        "model": "Samsung SSD 980 PRO 1TB", "serial": "S5GXNF0R712345A", "firmware": "5B2QGXA7",
        "capacity_bytes": TB, "logical_block_size": 512, "physical_block_size": 512,
        "rotational": False, "transport": "nvme",
        "lba_format": {"index": 0, "data_size": 512, "metadata_size": 0},
        "pcie_link": None,  # this tree's controller has no PCI function
    }
    assert commands.calls == [tuple(ID_CTRL.split()), tuple(ID_NS.split())]


def test_nvme_identity_without_nvme_cli_comes_from_sysfs(nvme_sysfs):
    ident = device_identity(Path("/dev/nvme0n1"), ReplayCommands(), nvme_sysfs)
    assert (ident["model"], ident["serial"], ident["firmware"]) == (
        "Samsung SSD 980 PRO 1TB", "S5GXNF0R712345A", "5B2QGXA7")
    assert ident["lba_format"] is None


@pytest.mark.parametrize("reply", [Completed((), 1, "", "NVMe status: Invalid Field"),
                                   ok("not json"), ok("[]"), ok('{"mn": 7, "lbafs": []}')])
def test_failing_or_odd_nvme_cli_leaves_sysfs_values(nvme_sysfs, reply):
    ident = device_identity(Path("/dev/nvme0n1"), ReplayCommands({ID_CTRL: reply, ID_NS: reply}),
                            nvme_sysfs)
    assert ident["serial"] == "S5GXNF0R712345A" and ident["lba_format"] is None


def test_lba_format_follows_flbas(nvme_sysfs):
    ns = json.loads(golden("nvme-id-ns.json")) | {"flbas": 1}
    commands = ReplayCommands({ID_CTRL: ok(golden("nvme-id-ctrl.json")), ID_NS: ok(json.dumps(ns))})
    ident = device_identity(Path("/dev/nvme0n1"), commands, nvme_sysfs)
    assert ident["lba_format"] == {"index": 1, "data_size": 4096, "metadata_size": 0}


def test_partition_takes_its_disk_identity_and_its_own_capacity(nvme_sysfs):
    ident = device_identity(Path("/dev/nvme0n1p1"), ReplayCommands(), nvme_sysfs)
    assert ident["name"] == "nvme0n1p1" and ident["serial"] == "S5GXNF0R712345A"
    assert ident["capacity_bytes"] == 1048576 * 512


def test_sata_serial_and_transport_come_from_lsblk(tmp_path):
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.disk("sda", "8:0", 1953525168, physical=4096, controller="0:0:0:0", bus="scsi",
               controller_attrs={"model": "Samsung SSD 870", "rev": "2B6Q"})
    lsblk = "lsblk -J -d -o NAME,MODEL,SERIAL,REV,TRAN /dev/sda"
    commands = ReplayCommands({lsblk: ok(golden("lsblk-sata.json"))})
    ident = device_identity(Path("/dev/sda"), commands, sysfs.root)
    # sysfs wins where it knows (model, firmware); lsblk fills the serial and the transport
    assert (ident["model"], ident["firmware"], ident["serial"], ident["transport"]) == (
        "Samsung SSD 870", "2B6Q", "S6PTNZ0R612345X", "sata")
    assert ident["physical_block_size"] == 4096


def test_unknown_device_is_all_none_not_an_exception(tmp_path):
    ident = device_identity(Path("/dev/nothere"), ReplayCommands(), FakeSysfs(tmp_path).root)
    assert ident["name"] == "nothere"
    assert all(ident[k] is None for k in ident if k not in ("path", "name"))


def test_file_identity_takes_the_longest_mount_point_and_the_top_mount(tmp_path):
    data = tmp_path / "data dir"
    data.mkdir()
    info = mountinfo(tmp_path / "mountinfo",
                     ("254:0", "/", "ext4", "/dev/vda"),
                     ("259:1", str(tmp_path).replace(" ", "\\040"), "tmpfs", "tmpfs"),
                     ("259:2", str(data).replace(" ", "\\040"), "xfs", "/dev/nvme0n1p1"),
                     ("259:3", str(data).replace(" ", "\\040"), "btrfs", "/dev/sdb"))
    ident = file_identity(data / "drive.img", info)
    assert ident["filesystem"] == "btrfs" and ident["mount_point"] == str(data)
    assert ident["backing_device"] == "/dev/sdb"
    assert ident["path"] == str(data / "drive.img") and ident["free_bytes"] > 0
    assert file_identity(tmp_path / "x", info)["backing_device"] is None  # tmpfs


def test_host_identity(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "etc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(
        "processor\t: 0\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\n\n"
        "processor\t: 1\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\n")
    (tmp_path / "proc/meminfo").write_text("MemTotal:       65536000 kB\nMemFree: 1 kB\n")
    (tmp_path / "etc/os-release").write_text('NAME="Debian GNU/Linux"\n'
                                             'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    commands = ReplayCommands({"uname -r": ok("6.1.0-18-amd64\n")})
    assert host_identity(commands, tmp_path) == {
        "cpu_model": "AMD Ryzen 9 7950X 16-Core Processor", "logical_cores": 2,
        "kernel": "6.1.0-18-amd64", "os": "Debian GNU/Linux 12 (bookworm)",
        "memory_bytes": 65536000 * 1024, "hostname": socket.gethostname()}
    unknown = host_identity(ReplayCommands(), tmp_path / "none")
    assert unknown.pop("hostname") == socket.gethostname()  # the name is the machine's, not read under root
    assert all(v is None for v in unknown.values())


def test_host_identity_has_the_host_name_cleaned_or_none(tmp_path, monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "  worker-7.lab  \n")
    assert host_identity(ReplayCommands(), tmp_path)["hostname"] == "worker-7.lab"
    monkeypatch.setattr(socket, "gethostname", lambda: "")
    assert host_identity(ReplayCommands(), tmp_path)["hostname"] is None

    def fails():
        raise OSError("no name")
    monkeypatch.setattr(socket, "gethostname", fails)
    assert host_identity(ReplayCommands(), tmp_path)["hostname"] is None  # a fact missing, never an error
