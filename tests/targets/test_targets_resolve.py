"""TARGET -> Target: sim presets, devices, and what is neither, with messages that say
what to do."""

import os
import stat
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import Target, TargetKind
from ssdlab.targets.resolve import device_capacity, resolve
from tests.fake_sysfs import FakeSysfs


def resolved(spec: str, size: int | None = None) -> Target:
    return resolve(spec, size=size, force=False, commands=Commands())


def test_sim_target_has_no_path_and_no_capacity_yet():
    assert resolved("sim:client-tlc-1tb") == Target("sim:client-tlc-1tb", TargetKind.SIM, None, 0)


def test_sim_needs_a_preset():
    with pytest.raises(SsdlabError, match="needs a preset name"):
        resolved("sim:")


def test_directory_suggests_a_file_inside_it(tmp_path):
    with pytest.raises(SsdlabError, match=f"is a directory: give a file inside it, e.g. "
                                          f"`{tmp_path}/ssdlab.img --size 64GiB`"):
        resolved(str(tmp_path))


def test_character_device_is_refused():
    with pytest.raises(SsdlabError, match="/dev/null is a character device, not a block device"):
        resolved("/dev/null")


@pytest.mark.root
def test_nvme_controller_points_to_its_namespace(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root for mknod")
    node = tmp_path / "nvme0"
    os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a char device named like a controller
    with pytest.raises(SsdlabError, match=f"use a namespace such as {node}n1"):
        resolved(str(node))


def test_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(SsdlabError, match="neither a regular file nor a block device"):
        resolved(str(tmp_path / "pipe"))


def test_missing_parent_directory(tmp_path):
    with pytest.raises(SsdlabError, match=r"the directory .*/nope does not exist. Create it"):
        resolved(str(tmp_path / "nope" / "drive.img"), size=1 << 20)


def test_device_capacity_is_sysfs_sectors_times_512(tmp_path):
    sysfs = FakeSysfs(tmp_path)
    sysfs.disk("nvme0n1", "259:0", 1953525168, logical=4096)
    assert device_capacity(Path("/dev/nvme0n1"), sysfs.root) == 1953525168 * 512


def test_empty_device_has_no_capacity(tmp_path):
    sysfs = FakeSysfs(tmp_path)
    sysfs.disk("sdz", "8:240", 0)
    with pytest.raises(SsdlabError, match="reports no capacity"):
        device_capacity(Path("/dev/sdz"), sysfs.root)
