"""Consent to erase: --destroy-data SERIAL, the kernel name for serial-less devices,
typing the device name on a terminal; refusal otherwise."""

import io
from pathlib import Path

import pytest

from ssdlab.errors import UnsafeTarget
from ssdlab.targets.consent import Cleared, confirm_destroy, recorded_consent

NVME = {"path": "/dev/nvme0n1", "name": "nvme0n1", "model": "Samsung SSD 980 PRO 1TB",
        "serial": "S5GXNF0R712345A", "capacity_bytes": 1000204886016}
LOOP = {"path": "/dev/loop3", "name": "loop3", "model": None, "serial": None,
        "capacity_bytes": 64 << 20}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def confirm(ident, destroy_data=None, stdin=None, stdout=None):
    return confirm_destroy(Path(ident["path"]), ident, destroy_data,
                           stdin=stdin or Pipe(), stdout=stdout or io.StringIO())


def test_matching_serial_clears_the_device():
    cleared = confirm(NVME, "S5GXNF0R712345A")
    assert (cleared.path, cleared.name) == (Path("/dev/nvme0n1"), "nvme0n1")


def test_wrong_serial_is_refused_naming_the_right_flag():
    with pytest.raises(UnsafeTarget, match="--destroy-data S5GXNF0R712345A`"):
        confirm(NVME, "nvme0n1")  # the name does not stand in when there is a serial


def test_kernel_name_stands_in_for_a_missing_serial():
    assert confirm(LOOP, "loop3").name == "loop3"
    with pytest.raises(UnsafeTarget, match=r"`--destroy-data loop3` \(loop3 has no serial: "
                                           r"its kernel name stands in\)"):
        confirm(LOOP, "loop4")


def test_without_a_terminal_and_without_the_flag_it_refuses_showing_the_flag():
    stdout = io.StringIO()
    with pytest.raises(UnsafeTarget) as excinfo:
        confirm(NVME, stdin=Pipe("nvme0n1\n"), stdout=stdout)
    message = str(excinfo.value)
    assert "add `--destroy-data S5GXNF0R712345A`" in message
    assert "all data on /dev/nvme0n1 (nvme0n1, Samsung SSD 980 PRO 1TB" in message
    assert stdout.getvalue() == ""  # nothing was asked


def test_on_a_terminal_typing_the_device_name_clears_it():
    stdout = io.StringIO()
    cleared = confirm(NVME, stdin=Terminal("nvme0n1\n"), stdout=stdout)
    assert cleared.name == "nvme0n1"
    assert "ERASES ALL DATA on /dev/nvme0n1 (nvme0n1, Samsung SSD 980 PRO 1TB, serial " \
           "S5GXNF0R712345A, 931.51 GiB)" in stdout.getvalue()
    assert "Type the device name `nvme0n1`" in stdout.getvalue()


@pytest.mark.parametrize("typed", ["yes\n", "nvme0n2\n", "/dev/nvme0n1\n", "\n", ""])
def test_on_a_terminal_anything_else_is_refused(typed):
    with pytest.raises(UnsafeTarget, match="nothing was erased"):
        confirm(NVME, stdin=Terminal(typed))


def test_only_confirm_destroy_issues_the_token():
    with pytest.raises(TypeError, match="only from consent.confirm_destroy"):
        Cleared(Path("/dev/sdb"), "sdb")


def test_resume_on_the_same_drive_keeps_its_consent():
    assert recorded_consent(dict(NVME), dict(NVME)) == "S5GXNF0R712345A"


def test_resume_on_another_drive_is_refused():
    with pytest.raises(UnsafeTarget, match="not the drive this run started on"):
        recorded_consent(NVME | {"serial": "OTHER"}, NVME)


def test_resume_without_serials_asks_again():
    assert recorded_consent(LOOP, LOOP) is None
