"""The kernel's nvme hwmon chip on a fake sysfs tree, in both places kernels have put it."""

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.hwmon import composite_c, find_nvme_chip, read_temperatures
from ssdlab.telemetry.records import HwmonTemperatures
from tests.fake_sysfs import FakeSysfs
from tests.telemetry_data import CHIP


@pytest.mark.parametrize("legacy", [False, True])
def test_chip_found_under_controller_or_pci_device(tmp_path, legacy):
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.nvme_controller("nvme0", hwmon=CHIP, legacy_hwmon=legacy)
    chip = find_nvme_chip("/dev/nvme0", sysfs.root)
    assert chip is not None and composite_c(chip) == 37.85
    assert read_temperatures(chip) == HwmonTemperatures(composite_c=37.85, sensors_c=((1, 44.85), (2, 37.85)),
                                                        max_c=83.85, min_c=-0.15, crit_c=87.85, alarm=False)


def test_another_chip_is_not_the_drives(tmp_path):
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.nvme_controller("nvme0", hwmon=CHIP, chip_name="drivetemp")
    sysfs.nvme_controller("nvme1")
    assert find_nvme_chip("nvme0", sysfs.root) is None
    assert find_nvme_chip("nvme1", sysfs.root) is None
    assert find_nvme_chip("nvme7", sysfs.root) is None


def test_missing_files_are_none_and_garbage_is_an_error(tmp_path):
    sysfs = FakeSysfs(tmp_path / "sys")
    sysfs.nvme_controller("nvme0", hwmon={"temp2_input": "40000"})
    chip = find_nvme_chip("nvme0", sysfs.root)
    assert read_temperatures(chip) == HwmonTemperatures(composite_c=None, sensors_c=((1, 40.0),))
    (chip / "temp1_input").write_text("N/A\n")
    with pytest.raises(SsdlabError, match="temp1_input holds 'N/A', not millidegrees"):
        composite_c(chip)
