"""Hole 1 of issue 9: a TARGET under /dev, /proc or /sys, or on a filesystem the kernel
keeps in memory (devtmpfs, proc, sysfs, cgroup, debugfs...), that is not an existing block
device is refused: before, `ssdlab run /dev/loop4p2 --size 1GiB` made a 1 GiB regular file
in devtmpfs and "tested" it.

Refused both by `resolve` (the run) and by `resolve.refuse_file_path` (planning, --dry-run).
"""

import os
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import resolve as resolving
from ssdlab.targets.files import sidecar
from ssdlab.units import MiB
from tests.fake_sysfs import mountinfo

MISSING_NODES = ["/dev/loop99p2", "/dev/mapper/ssdlab-missing", "/dev/nvme9n1"]


def resolved(spec: str, size: int | None = MiB, force: bool = False):
    return resolving.resolve(spec, size=size, force=force, commands=Commands())


@pytest.fixture
def leftovers():
    """Paths a failing (pre-fix) run may have created in /dev; removed if they are files."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        for made in (path, sidecar(path)):
            if made.is_file() and not made.is_symlink():
                made.unlink()


@pytest.mark.parametrize("spec", MISSING_NODES)
def test_a_missing_device_node_is_refused_and_nothing_is_created(spec, leftovers):
    path = Path(spec)
    if path.exists():
        pytest.skip(f"{spec} exists on this machine")
    leftovers.append(path)
    with pytest.raises(SsdlabError) as excinfo:
        resolved(spec, size=MiB)
    message = str(excinfo.value)
    assert message.startswith(f"{spec} does not exist"), message
    assert "`lsblk`" in message and "partprobe" in message and "dmsetup" in message
    assert not path.exists() and not sidecar(path).exists()


@pytest.mark.parametrize("spec", MISSING_NODES)
def test_planning_refuses_a_missing_device_node_too(spec):
    if Path(spec).exists():
        pytest.skip(f"{spec} exists on this machine")
    with pytest.raises(SsdlabError, match=f"^{spec} does not exist.*`lsblk`"):
        resolving.refuse_file_path(Path(spec), force=False)


def test_a_link_into_dev_is_judged_by_where_it_points(tmp_path, leftovers):
    link = tmp_path / "drive.img"
    link.symlink_to("/dev/ssdlab-missing-node")
    leftovers.append(Path("/dev/ssdlab-missing-node"))
    for refuse in (lambda: resolved(str(link)),
                   lambda: resolving.refuse_file_path(link, force=False)):
        with pytest.raises(SsdlabError) as excinfo:
            refuse()
        message = str(excinfo.value)
        assert f"{link} (a link to /dev/ssdlab-missing-node) does not exist" in message
        assert "`lsblk`" in message
    assert not Path("/dev/ssdlab-missing-node").exists()


def test_a_file_in_tmpfs_under_dev_is_refused_even_with_force(leftovers):
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm here")
    path = Path(f"/dev/shm/ssdlab-test-{os.getpid()}.img")
    leftovers.append(path)
    path.write_bytes(b"x" * 4096)
    with pytest.raises(SsdlabError) as excinfo:
        resolved(str(path), size=MiB, force=True)
    message = str(excinfo.value)
    assert message.startswith(f"{path} is a regular file on tmpfs"), message
    assert "not a block device" in message and "disk-backed filesystem" in message
    assert path.read_bytes() == b"x" * 4096 and not sidecar(path).exists()


@pytest.mark.parametrize("spec", ["/proc/version", "/sys/kernel/uevent_seqnum"])
def test_an_existing_file_in_proc_or_sys_is_refused_even_with_force(spec):
    if not Path(spec).is_file():
        pytest.skip(f"{spec} is not here")
    with pytest.raises(SsdlabError, match=f"^{spec} is a regular file on (proc|sysfs)"):
        resolved(spec, size=MiB, force=True)
    assert not sidecar(Path(spec)).exists()


def test_the_directory_dev_itself_is_refused():
    with pytest.raises(SsdlabError, match="^/dev is a directory on devtmpfs"):
        resolved("/dev")


def test_a_character_device_keeps_its_own_message():
    with pytest.raises(SsdlabError, match="/dev/null is a character device, not a block device"):
        resolved("/dev/null")


@pytest.mark.parametrize("fstype", ["devtmpfs", "proc", "sysfs", "cgroup2", "debugfs",
                                    "tracefs", "configfs", "securityfs", "pstore", "bpf"])
def test_a_pseudo_filesystem_mounted_anywhere_is_refused(tmp_path, fstype):
    info = mountinfo(tmp_path / "mountinfo", ("254:0", "/", "ext4", "/dev/vda"),
                     ("0:40", str(tmp_path / "mnt"), fstype, "none"))
    with pytest.raises(SsdlabError, match=f"does not exist, and ssdlab creates no files on "
                                          f"{fstype} \\(mounted at {tmp_path}/mnt\\)"):
        resolving.refuse_pseudo_path(tmp_path / "mnt" / "drive.img", info)


@pytest.mark.parametrize("fstype", ["ext4", "xfs", "tmpfs", "btrfs"])
def test_ordinary_filesystems_outside_dev_are_allowed(tmp_path, fstype):
    info = mountinfo(tmp_path / "mountinfo", ("254:0", "/", "ext4", "/dev/vda"),
                     ("0:40", str(tmp_path / "mnt"), fstype, "none"))
    resolving.refuse_pseudo_path(tmp_path / "mnt" / "drive.img", info)


def test_an_existing_block_device_under_dev_is_not_refused_here():
    root_disk = next((Path(f"/dev/{n}") for n in sorted(os.listdir("/sys/class/block"))
                      if Path(f"/dev/{n}").is_block_device()), None)
    if root_disk is None:
        pytest.skip("no block device node under /dev")
    resolving.refuse_pseudo_path(root_disk)
