"""Device purge: NVMe sanitize where the drive has it and it erases nothing else, else nvme
format, else blkdiscard, else zeroes; the method, the commands that ran and why a better
method was passed over are returned. Replayed outputs, and Debian's real nvme-cli answering
for a pretend /dev/nvme0 through tests/nvme_shim (whose sanitize runs for as many reads of its
log as asked, and ends as asked)."""

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands, Completed, ReplayCommands
from ssdlab.targets import sanitize
from ssdlab.targets.consent import confirm_destroy
from ssdlab.targets.purge import DISCARD, FORMAT, ZEROES, purge_device
from tests.fake_sysfs import FakeSysfs
from tests.nvme_shim import DRIVES, build_shim, nvme_on_path
from tests.shim_common import find_program
from tests.telemetry_data import golden

OK = Completed((), 0, "", "")
FORMAT_COMMAND = "nvme format /dev/nvme0n1 --ses=1 --force"
ID_CTRL = "nvme id-ctrl /dev/nvme0 -o json"
SANITIZE_LOG = "nvme sanitize-log /dev/nvme0 -o json"
BLOCK_ERASE = "nvme sanitize /dev/nvme0 --sanact=2"
CRYPTO_ERASE = "nvme sanitize /dev/nvme0 --sanact=4"
NO_SANITIZE = "sanitize not used: /dev/nvme0 has neither sanitize block erase nor crypto erase (Identify SANICAP)"


def cleared(name: str):
    ident = {"name": name, "serial": None}
    return confirm_destroy(Path(f"/dev/{name}"), ident, name)


def failed(stderr: str) -> Completed:
    return Completed((), 1, "", stderr)


def never_sleeps(seconds: float) -> None:
    pytest.fail("waited for a sanitize")


def test_nvme_namespace_is_formatted_with_user_data_erase():
    commands = ReplayCommands({FORMAT_COMMAND: OK, "blkdiscard /dev/nvme0n1": OK})
    purged = purge_device(cleared("nvme0n1"), commands, never_sleeps)
    assert (purged.method, purged.commands) == (FORMAT, (FORMAT_COMMAND,))
    assert purged.notes[0].startswith(f"sanitize not used: Identify Controller could not be read: `{ID_CTRL}`")


def test_nvme_format_refused_falls_back_to_discard():
    commands = ReplayCommands({FORMAT_COMMAND: failed("NVMe status: INVALID_FORMAT"),
                               "blkdiscard /dev/nvme0n1": OK})
    purged = purge_device(cleared("nvme0n1"), commands, never_sleeps)
    assert (purged.method, purged.commands) == (DISCARD, (FORMAT_COMMAND, "blkdiscard /dev/nvme0n1"))
    assert purged.notes[1:] == (f"failed: `{FORMAT_COMMAND}`: NVMe status: INVALID_FORMAT",)
    assert purged.said[-1] == "purged by a discard of every block"


def test_nvme_without_nvme_cli_is_discarded():
    commands = ReplayCommands({"blkdiscard /dev/nvme0n1": OK})
    assert purge_device(cleared("nvme0n1"), commands).commands == ("blkdiscard /dev/nvme0n1",)


def test_nvme_partition_is_neither_sanitized_nor_formatted():
    commands = ReplayCommands({"nvme format /dev/nvme0n1p1 --ses=1 --force": OK, ID_CTRL: OK,
                               "blkdiscard /dev/nvme0n1p1": OK})
    assert purge_device(cleared("nvme0n1p1"), commands).commands == ("blkdiscard /dev/nvme0n1p1",)
    assert commands.calls == [("blkdiscard", "--help"), ("blkdiscard", "/dev/nvme0n1p1")]


def test_no_discard_support_falls_back_to_zeroes_and_says_so():
    commands = ReplayCommands({
        "blkdiscard /dev/loop3": failed("blkdiscard: /dev/loop3: BLKDISCARD ioctl failed: "
                                        "Operation not supported"),
        "blkdiscard --zeroout /dev/loop3": OK})
    purged = purge_device(cleared("loop3"), commands)
    assert (purged.method, purged.commands) == (ZEROES, ("blkdiscard /dev/loop3", "blkdiscard --zeroout /dev/loop3"))


def test_when_nothing_works_every_failure_is_reported():
    commands = ReplayCommands({"blkdiscard /dev/sdb": failed("Device or resource busy"),
                               "blkdiscard --zeroout /dev/sdb": failed("Device or resource busy")})
    with pytest.raises(SsdlabError, match=r"could not purge /dev/sdb:\n  `blkdiscard /dev/sdb`: "
                                          r"Device or resource busy\n  `blkdiscard --zeroout"):
        purge_device(cleared("sdb"), commands)


def test_missing_blkdiscard_is_a_clear_error():
    with pytest.raises(SsdlabError, match="blkdiscard is not installed: install util-linux"):
        purge_device(cleared("sdb"), ReplayCommands())


# -- which drives are sanitized (replayed) -------------------------------------------------

def id_ctrl(**fields) -> Completed:
    """The SN850's Identify Controller (nvme-cli 2.6), `fields` changed."""
    return Completed((), 0, json.dumps(json.loads(golden("nvme-2.6-id-ctrl-sn850.json")) | fields), "")


def sanitize_log(status: int, block_erase_s: int = 4294967295) -> Completed:
    log = {"sprog": 0 if status == 2 else 65535, "sstat": {"global_erased": 0, "no_cmplted_passes": 0,
                                                           "status": f"({status}) as the drive says."},
           "cdw10_info": 2, "time_block_erase": block_erase_s, "time_crypto_erase": 4294967295}
    return Completed((), 0, json.dumps({"nvme0": log}), "")


def replayed(sanicap: int, status: int = 1, **fields) -> ReplayCommands:
    return ReplayCommands({ID_CTRL: id_ctrl(sanicap=sanicap, **fields), SANITIZE_LOG: sanitize_log(status),
                           BLOCK_ERASE: OK, CRYPTO_ERASE: OK, FORMAT_COMMAND: OK, "blkdiscard /dev/nvme0n1": OK})


def test_a_drive_without_sanitize_is_formatted_and_the_purge_says_why():
    purged = purge_device(cleared("nvme0n1"), replayed(sanicap=0), never_sleeps)
    assert (purged.method, purged.commands, purged.notes) == (FORMAT, (FORMAT_COMMAND,), (NO_SANITIZE,))


def test_block_erase_is_preferred_to_crypto_erase():
    commands = replayed(sanicap=0x3)
    purged = purge_device(cleared("nvme0n1"), commands, never_sleeps)
    assert (purged.method, purged.commands) == ("NVMe sanitize, block erase", (BLOCK_ERASE, SANITIZE_LOG))
    assert tuple(CRYPTO_ERASE.split()) not in commands.calls


MAY_HOLD = ("which may hold up to 32 (Identify NN), some maybe unseen here (the drive manages namespaces, "
            "or has another controller)")


@pytest.mark.parametrize(("namespaces", "fields", "why"), [
    (["nvme0n1", "nvme0n2"], {}, "and /dev/nvme0 has 2 (nvme0n1, nvme0n2)"),
    (["nvme0n1"], {"oacs": 0x1e}, MAY_HOLD),  # namespace management
    (["nvme0c0n1"], {"cmic": 2}, MAY_HOLD),  # another controller may have more
    (["nvme0n1"], {}, None),  # one namespace, and no other can be made or hidden
])
def test_sanitize_only_where_it_erases_the_target_alone(tmp_path, namespaces, fields, why):
    sysfs = FakeSysfs(tmp_path / "sys")
    controller = sysfs.nvme_controller("nvme0")
    for name in namespaces:
        (controller / name).mkdir()
    commands = replayed(sanicap=0x2, nn=32, **{"oacs": 0x16, "cmic": 0, **fields})
    purged = purge_device(cleared("nvme0n1"), commands, never_sleeps, sysfs.root)
    if why is None:
        assert purged.method == "NVMe sanitize, block erase"
    else:
        assert (purged.method, purged.commands) == (FORMAT, (FORMAT_COMMAND,))
        assert purged.notes == (f"sanitize not used: it erases every namespace of the NVM subsystem, {why}",)


def test_a_sanitize_already_running_is_left_alone():
    purged = purge_device(cleared("nvme0n1"), replayed(sanicap=0x2, status=2), never_sleeps)
    assert purged.method == FORMAT and purged.notes == ("sanitize not used: a sanitize is already in progress "
                                                        "on /dev/nvme0",)


@pytest.mark.parametrize(("estimate_s", "limit_s", "said"), [
    (100, 800, "an estimate of 100 s"), (4294967295, 3600, "no estimate")])
def test_a_sanitize_that_never_ends_stops_the_run_after_a_bounded_wait(estimate_s, limit_s, said):
    logs = iter([sanitize_log(0, estimate_s)])  # never sanitized before; then in progress for ever

    class Running(ReplayCommands):
        def run(self, argv, timeout=None):
            if " ".join(argv) == SANITIZE_LOG:
                return next(logs, sanitize_log(2, estimate_s))
            return super().run(argv, timeout)

    slept = []
    with pytest.raises(SsdlabError, match=rf"the sanitize of /dev/nvme0 has not ended after {limit_s} s "
                                          rf"\(the drive gave {said}\); the drive goes on with it"):
        purge_device(cleared("nvme0n1"), Running(replayed(sanicap=0x2).outputs), slept.append)
    assert slept == [sanitize.POLL_S] * int(limit_s / sanitize.POLL_S)


# -- the real nvme-cli on the shim -----------------------------------------------------------

needs_nvme_cli = pytest.mark.skipif(
    find_program("nvme") is None or shutil.which("gcc") is None or shutil.which("blkdiscard") is None,
    reason="needs nvme-cli (Debian package nvme-cli), gcc to build the LD_PRELOAD shim, and blkdiscard")


@pytest.fixture(scope="module")
def shim_so(tmp_path_factory) -> Path:
    return build_shim(tmp_path_factory.mktemp("nvme-shim"))


def shimmed(tmp_path: Path, shim_so: Path, monkeypatch, sanicap: int, **pages: str) -> Path:
    """The SN850 with `sanicap`, its `pages` (file name -> text) added, answering through the
    `nvme` first on PATH, whose format only says it formatted."""
    sn850 = DRIVES["sn850"]
    drive = dataclasses.replace(sn850, id_ctrl=dataclasses.replace(sn850.id_ctrl, sanicap=sanicap))
    directory = drive.write(tmp_path / "pages")
    for name, text in pages.items():
        (directory / name.replace("_", "-")).write_text(text)
    bin_dir = nvme_on_path(tmp_path / "bin", directory, shim_so, formats=True)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return directory


def calls(pages: Path) -> list[str]:
    return (pages / "calls").read_text().splitlines()


@pytest.mark.parametrize(("sanicap", "action", "command"), [(0x2, "block erase", BLOCK_ERASE),
                                                             (0x1, "crypto erase", CRYPTO_ERASE)])
@needs_nvme_cli
def test_the_real_nvme_cli_sanitizes_and_waits_for_the_log_to_say_it_completed(tmp_path, shim_so, monkeypatch,
                                                                             sanicap, action, command):
    pages = shimmed(tmp_path, shim_so, monkeypatch, sanicap, sanitize_polls="3")
    slept = []
    purged = purge_device(cleared("nvme0n1"), Commands(), slept.append)
    assert (purged.method, purged.commands) == (f"NVMe sanitize, {action}", (command, SANITIZE_LOG))
    assert purged.notes == ("the sanitize log said the sanitize completed after 6 s",)
    assert slept == [sanitize.POLL_S] * 3
    assert calls(pages) == [ID_CTRL, SANITIZE_LOG, command, *[SANITIZE_LOG] * 4]  # no format


@pytest.mark.parametrize(("pages", "why"), [
    ({"sanitize_result": "3"}, "sanitize failed: the sanitize log's status is 3 (failed)"),
    ({"fail-0x84": "0x4002"}, f"sanitize failed: `{BLOCK_ERASE}` failed (exit status 1): NVMe status: "
                              "Invalid Field in Command"),
])
@needs_nvme_cli
def test_a_failed_sanitize_falls_back_to_format(tmp_path, shim_so, monkeypatch, pages, why):
    shimmed(tmp_path, shim_so, monkeypatch, 0x2, **pages)
    purged = purge_device(cleared("nvme0n1"), Commands(), never_sleeps)
    assert purged.method == FORMAT and purged.commands[-1] == FORMAT_COMMAND
    assert purged.commands[0] == BLOCK_ERASE and purged.notes[0].startswith(why)


@needs_nvme_cli
def test_a_drive_without_sanitize_goes_to_format_on_the_real_nvme_cli(tmp_path, shim_so, monkeypatch):
    pages = shimmed(tmp_path, shim_so, monkeypatch, 0)
    purged = purge_device(cleared("nvme0n1"), Commands(), never_sleeps)
    assert (purged.method, purged.commands, purged.notes) == (FORMAT, (FORMAT_COMMAND,), (NO_SANITIZE,))
    assert calls(pages) == [ID_CTRL, "nvme format /dev/nvme0n1 --ses=1 --force"]
