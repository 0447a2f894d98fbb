"""Hole 4 of issue 9 on a fake sysfs tree: the checks look through loop devices (their
backing file, offset and size limit) and device-mapper devices (their slaves) to what
lies underneath. Backing files are real files under tmp_path, so they are matched by
inode as on a real host; wipefs outputs are recordings.

The same on real loop devices: test_safety_loop_stack.py.
"""

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from ssdlab.external import Completed, ReplayCommands
from ssdlab.targets.safety import refusal_reasons
from ssdlab.units import MiB
from tests.fake_sysfs import FakeSysfs, mountinfo
from tests.paths import GOLDEN_DEVICES as GOLDEN

ELSEWHERE = "choose another device"


@dataclass
class Host:
    """Root on nvme0n1p1; a spare disk sdb (sdb1, sdb2); an ext4 image file."""

    sysfs: FakeSysfs
    info: Path
    swaps: Path
    image: Path

    def reasons(self, name: str, commands: ReplayCommands) -> list[str]:
        return refusal_reasons(Path(f"/dev/{name}"), commands, self.sysfs.root, self.info,
                               self.swaps)

    def mount(self, dev: str, point: str, fstype: str, source: str) -> None:
        self.info.write_text(self.info.read_text()
                             + f"50 1 {dev} / {point} rw - {fstype} {source} rw\n")

    def swap(self, path: Path | str, kind: str = "partition") -> None:
        self.swaps.write_text(self.swaps.read_text() + f"{path}\t{kind}\t1000\t0\t-2\n")


@pytest.fixture
def host(tmp_path) -> Host:
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.disk("nvme0n1", "259:0", 4000)
    sysfs.partition("nvme0n1", "nvme0n1p1", "259:1", 2000)
    sysfs.partition("nvme0n1", "nvme0n1p2", "259:2", 2000)
    sysfs.disk("sdb", "8:16", 4000)
    sysfs.partition("sdb", "sdb1", "8:17", 2000)
    sysfs.partition("sdb", "sdb2", "8:18", 2000)
    info = mountinfo(tmp_path / "mountinfo", ("259:1", "/", "ext4", "/dev/nvme0n1p1"))
    swaps = tmp_path / "swaps"
    swaps.write_text("Filename\tType\tSize\tUsed\tPriority\n")
    image = tmp_path / "images" / "disk.img"
    image.parent.mkdir()
    image.write_bytes(b"\0" * 4096)
    return Host(sysfs, info, swaps, image)


def wipefs(**recordings: str) -> ReplayCommands:
    """`wipefs -n -J` of each device (by kernel name) or file (by path): a recording name."""
    def key(target: str) -> str:
        return f"wipefs -n -J {target if target.startswith('/') else '/dev/' + target}"
    return ReplayCommands({key(t.replace("__", "/")): Completed(
        (), 0, (GOLDEN / f"wipefs-{recording}.json").read_text(), "")
        for t, recording in recordings.items()})


def probes(path: Path, recording: str, **devices: str) -> ReplayCommands:
    commands = wipefs(**devices)
    commands.outputs[f"wipefs -n -J {path}"] = Completed(
        (), 0, (GOLDEN / f"wipefs-{recording}.json").read_text(), "")
    return commands


def mounted_image(host: Host) -> Path:
    """loop0 maps the image through another name (a hard link: same inode, other path)
    and is mounted at /mnt/img."""
    alias = host.image.with_name("alias.img")
    os.link(host.image, alias)
    host.sysfs.loop("loop0", "7:0", alias, 192 * 1024)
    host.mount("7:0", "/mnt/img", "ext4", "/dev/loop0")
    return alias


def test_a_window_into_an_image_mounted_through_another_loop_is_refused(host):
    mounted_image(host)
    host.sysfs.loop("loop1", "7:1", host.image, 64 * 1024, offset=16 * MiB, sizelimit=32 * MiB)
    commands = probes(host.image, "ext4", loop1="blank")
    assert host.reasons("loop1", commands) == [
        f"{host.image}, which /dev/loop1 maps, is also the backing file of /dev/loop0, and "
        f"/dev/loop0 is mounted at /mnt/img (ext4): unmount it (`umount /mnt/img`) or {ELSEWHERE}",
        f"/dev/loop1 maps bytes 16 MiB to 48 MiB of {host.image}, which carries signatures of a "
        "filesystem, RAID/LVM member or partition table (ext4) at its start: the loop device is "
        "a part of that filesystem or disk image, and writing it corrupts the image. "
        f"{ELSEWHERE.capitalize()}, or if the image's data is not needed, erase its signatures "
        f"(`wipefs -a {host.image}`)"]


@pytest.mark.parametrize("use, expected", [
    ("held", "/dev/loop0 is held by dm-3 (vg-data), a device-mapper"),
    ("swap", "/dev/loop0 is active swap: turn it off (`swapoff /dev/loop0`)"),
    ("partition mounted", "/dev/loop0p1 is mounted at /mnt/p1 (xfs)"),
])
def test_every_use_of_another_loop_over_the_same_file_refuses(host, use, expected):
    host.sysfs.loop("loop0", "7:0", host.image, 192 * 1024)
    if use == "held":
        host.sysfs.disk("dm-3", "253:3", 1000, attrs={"dm/name": "vg-data"})
        host.sysfs.hold("loop0", "dm-3")
    elif use == "swap":
        host.swap("/dev/loop0")
    else:
        host.sysfs.partition("loop0", "loop0p1", "259:9", 1000)
        host.mount("259:9", "/mnt/p1", "xfs", "/dev/loop0p1")
    host.sysfs.loop("loop1", "7:1", host.image, 192 * 1024)
    [reason] = host.reasons("loop1", wipefs(loop1="blank"))
    assert reason.startswith(f"{host.image}, which /dev/loop1 maps, is also the backing file of "
                             f"/dev/loop0, and {expected}"), reason


def test_an_unused_loop_over_a_plain_file_passes_probing_only_itself(host):
    host.sysfs.loop("loop0", "7:0", host.image, 192 * 1024)  # another loop, unused
    host.sysfs.loop("loop1", "7:1", host.image, 192 * 1024)
    commands = wipefs(loop1="blank")
    assert host.reasons("loop1", commands) == []
    assert commands.calls == [("wipefs", "-n", "-J", "/dev/loop1")]


def test_a_window_into_a_blank_file_passes(host):
    host.sysfs.loop("loop1", "7:1", host.image, 64 * 1024, offset=16 * MiB)
    commands = probes(host.image, "blank", loop1="blank")
    assert host.reasons("loop1", commands) == []
    assert ("wipefs", "-n", "-J", str(host.image)) in commands.calls


def test_a_window_whose_image_cannot_be_probed_is_refused(host):
    host.sysfs.loop("loop1", "7:1", host.image, 64 * 1024, offset=MiB)
    [reason] = host.reasons("loop1", wipefs(loop1="blank"))
    assert reason.startswith(f"cannot look for filesystem signatures on {host.image}")


def test_the_window_of_a_partition_is_that_of_its_loop_device(host):
    """A partition of a loop device at offset 0 is judged like a disk's partition: the
    image's partition table at 0 is the loop device's own, not a window into it, and a
    mounted sibling partition is not under it."""
    host.sysfs.loop("loop1", "7:1", host.image, 192 * 1024)
    host.sysfs.partition("loop1", "loop1p1", "259:11", 1000)
    host.sysfs.partition("loop1", "loop1p2", "259:10", 1000)
    host.mount("259:11", "/boot", "vfat", "/dev/loop1p1")
    commands = wipefs(loop1p2="blank")
    assert host.reasons("loop1p2", commands) == []
    assert commands.calls == [("wipefs", "-n", "-J", "/dev/loop1p2")]


def test_a_backing_file_in_use_as_swap_is_refused(host):
    host.swap(host.image, "file")
    host.sysfs.loop("loop1", "7:1", host.image, 192 * 1024)
    assert host.reasons("loop1", wipefs(loop1="blank")) == [
        f"{host.image}, which /dev/loop1 maps, is active swap: turn it off "
        f"(`swapoff {host.image}`) or {ELSEWHERE}"]


def test_a_deleted_backing_file_is_refused(host):
    host.sysfs.loop("loop1", "7:1", f"{host.image} (deleted)", 192 * 1024)
    host.image.unlink()
    assert host.reasons("loop1", wipefs(loop1="blank")) == [
        f"the backing file of /dev/loop1, {host.image}, has been deleted: ssdlab cannot tell "
        "what else uses it. Detach the loop device (`losetup -d /dev/loop1`) and attach an "
        f"existing file, or {ELSEWHERE}"]


def test_a_backing_file_that_cannot_be_read_is_refused(host):
    host.sysfs.loop("loop1", "7:1", host.image.with_name("elsewhere.img"), 192 * 1024)
    [reason] = host.reasons("loop1", wipefs(loop1="blank"))
    assert reason.startswith("cannot read the backing file of /dev/loop1, "
                             f"{host.image.with_name('elsewhere.img')} (No such file")


@pytest.fixture
def mapped(host) -> Host:
    """dm-0 (`test`) is a linear device on sdb1."""
    host.sysfs.disk("dm-0", "253:0", 2000, attrs={"dm/name": "test"})
    host.sysfs.hold("sdb1", "dm-0")
    return host


def test_a_device_mapper_device_on_an_unused_partition_passes(mapped):
    mapped.mount("8:18", "/srv", "xfs", "/dev/sdb2")  # the other partition: not under dm-0
    assert mapped.reasons("dm-0", wipefs(**{"dm-0": "blank"})) == []


@pytest.mark.parametrize("use, expected", [
    ("mounted", "/dev/sdb1 is mounted at /data (ext4)"),
    ("swap", "/dev/sdb1 is active swap"),
    ("held", "/dev/sdb1 is held by dm-5 (other), a device-mapper"),
])
def test_a_device_mapper_device_on_a_used_device_is_refused(mapped, use, expected):
    if use == "mounted":  # e.g. mounted before the table was loaded, through another name
        mapped.mount("8:17", "/data", "ext4", "/dev/sdb1")
    elif use == "swap":
        mapped.swap("/dev/sdb1")
    else:
        mapped.sysfs.disk("dm-5", "253:5", 1000, attrs={"dm/name": "other"})
        mapped.sysfs.hold("sdb1", "dm-5")
    [reason] = mapped.reasons("dm-0", wipefs(**{"dm-0": "blank"}))
    assert reason.startswith(f"/dev/dm-0 is built on /dev/sdb1, and {expected}"), reason


def test_a_device_mapper_device_on_a_partitioned_disk_sees_its_partitions(host):
    host.sysfs.disk("dm-0", "253:0", 4000, attrs={"dm/name": "whole"})
    host.sysfs.hold("sdb", "dm-0")
    host.mount("8:17", "/data", "ext4", "/dev/sdb1")
    [reason] = host.reasons("dm-0", wipefs(**{"dm-0": "blank"}))
    assert reason.startswith("/dev/dm-0 is built on /dev/sdb, and /dev/sdb1 is mounted at /data")


def test_a_device_mapper_device_on_the_root_disk_is_refused(host):
    host.sysfs.disk("dm-0", "253:0", 2000, attrs={"dm/name": "spare"})
    host.sysfs.hold("nvme0n1p2", "dm-0")
    [reason] = host.reasons("dm-0", wipefs(**{"dm-0": "blank"}))
    assert reason.startswith("/dev/dm-0 is built on /dev/nvme0n1p2, and /dev/nvme0n1p2 is on "
                             "the disk that holds the root filesystem /")


def test_a_stack_of_device_mapper_devices_holds_its_own_layers(mapped):
    """dm-1 on dm-0 on sdb1: dm-0 is held by dm-1, which is the target's own stack."""
    mapped.sysfs.disk("dm-1", "253:1", 2000, attrs={"dm/name": "top"})
    mapped.sysfs.hold("dm-0", "dm-1")
    assert mapped.reasons("dm-1", wipefs(**{"dm-1": "blank"})) == []
    [reason] = mapped.reasons("dm-0", wipefs(**{"dm-0": "blank"}))
    assert reason.startswith("/dev/dm-0 is held by dm-1 (top)")


def test_a_device_mapper_device_on_a_window_into_a_mounted_image_is_refused(host):
    mounted_image(host)
    host.sysfs.loop("loop1", "7:1", host.image, 64 * 1024, offset=16 * MiB)
    host.sysfs.disk("dm-0", "253:0", 64 * 1024, attrs={"dm/name": "test"})
    host.sysfs.hold("loop1", "dm-0")
    found = host.reasons("dm-0", probes(host.image, "ext4", **{"dm-0": "blank"}))
    assert [r.split(", and ")[0] for r in found] == ["/dev/dm-0 is built on /dev/loop1"] * 2
    assert "is also the backing file of /dev/loop0, and /dev/loop0 is mounted" in found[0]
    assert "/dev/loop1 maps bytes 16 MiB to the end of" in found[1]


@pytest.mark.root
def test_a_loop_over_a_block_device_is_refused_with_what_uses_that_device(host, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root for mknod")
    node = tmp_path / "sdb1-node"
    os.mknod(node, 0o600 | 0o060000, os.makedev(8, 17))  # a block node for sdb1
    host.mount("8:17", "/data", "ext4", "/dev/sdb1")
    host.sysfs.loop("loop2", "7:2", node, 1000, offset=MiB)
    [reason] = host.reasons("loop2", probes(node, "blank", loop2="blank"))
    assert reason == (f"/dev/loop2 maps {node}, and /dev/sdb1 is mounted at /data (ext4): "
                      f"unmount it (`umount /data`) or {ELSEWHERE}")
    [reason] = host.reasons("sdb1", wipefs(sdb1="blank"))[1:]
    assert reason == (f"/dev/sdb1 is the backing device of /dev/loop2: detach it "
                      f"(`losetup -d /dev/loop2`) or {ELSEWHERE}")
