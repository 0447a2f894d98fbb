"""Device purge: nvme format, else blkdiscard, else zeroes; the commands that ran are returned."""

from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Completed, ReplayCommands
from ssdlab.targets.consent import confirm_destroy
from ssdlab.targets.purge import purge_device

OK = Completed((), 0, "", "")
FORMAT = "nvme format /dev/nvme0n1 --ses=1 --force"


def cleared(name: str):
    ident = {"name": name, "serial": None}
    return confirm_destroy(Path(f"/dev/{name}"), ident, name)


def failed(stderr: str) -> Completed:
    return Completed((), 1, "", stderr)


def test_nvme_namespace_is_formatted_with_user_data_erase():
    commands = ReplayCommands({FORMAT: OK, "blkdiscard /dev/nvme0n1": OK})
    assert purge_device(cleared("nvme0n1"), commands) == (FORMAT,)


def test_nvme_format_refused_falls_back_to_discard():
    commands = ReplayCommands({FORMAT: failed("NVMe status: INVALID_FORMAT"),
                               "blkdiscard /dev/nvme0n1": OK})
    assert purge_device(cleared("nvme0n1"), commands) == (FORMAT, "blkdiscard /dev/nvme0n1")


def test_nvme_without_nvme_cli_is_discarded():
    commands = ReplayCommands({"blkdiscard /dev/nvme0n1": OK})
    assert purge_device(cleared("nvme0n1"), commands) == ("blkdiscard /dev/nvme0n1",)


def test_nvme_partition_is_not_formatted():
    commands = ReplayCommands({"nvme format /dev/nvme0n1p1 --ses=1 --force": OK,
                               "blkdiscard /dev/nvme0n1p1": OK})
    assert purge_device(cleared("nvme0n1p1"), commands) == ("blkdiscard /dev/nvme0n1p1",)


def test_no_discard_support_falls_back_to_zeroes_and_says_so():
    commands = ReplayCommands({
        "blkdiscard /dev/loop3": failed("blkdiscard: /dev/loop3: BLKDISCARD ioctl failed: "
                                        "Operation not supported"),
        "blkdiscard --zeroout /dev/loop3": OK})
    assert purge_device(cleared("loop3"), commands) == (
        "blkdiscard /dev/loop3", "blkdiscard --zeroout /dev/loop3")


def test_when_nothing_works_every_failure_is_reported():
    commands = ReplayCommands({"blkdiscard /dev/sdb": failed("Device or resource busy"),
                               "blkdiscard --zeroout /dev/sdb": failed("Device or resource busy")})
    with pytest.raises(SsdlabError, match=r"could not purge /dev/sdb:\n  `blkdiscard /dev/sdb`: "
                                          r"Device or resource busy\n  `blkdiscard --zeroout"):
        purge_device(cleared("sdb"), commands)


def test_missing_blkdiscard_is_a_clear_error():
    with pytest.raises(SsdlabError, match="blkdiscard is not installed: install util-linux"):
        purge_device(cleared("sdb"), ReplayCommands())
