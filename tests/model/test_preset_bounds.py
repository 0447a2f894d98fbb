"""Preset values outside physics and absurd steps are refused, never a panic or a runaway.

Issue 9, safety hole 5: `channel_mbps = 1e-300`, `t_prog_us = 1e10` and `read_cmd_us = 1e8`
made the simulator allocate until the OOM killer ended it, `t_prog_us = 1e20` and `1e-300`
gave a plausible speed, `page_bytes = 1 GiB` and `channels = 4294967295` panicked. Each is
now refused when the preset is loaded, with a message naming the field, its value and the
allowed range, through the Python API (a ValueError) and through the CLI (one `error:` line,
exit status 2, no traceback). The bounds themselves are tested in crates/ssdsim.
"""

from __future__ import annotations

import json
import resource

import pytest

from ssdlab import _ssdsim
from ssdlab.model import Op, Step
from tests.conftest import run_cli
from tests.paths import DATA, REPOSITORY

SMALL = DATA / "small-tlc.toml"
BUILTIN = REPOSITORY / "drives"

# (a line of the small preset, what replaces it, the message naming the field)
ISSUE_EXAMPLES = [
    ("channel_mbps = 800.0", "channel_mbps = 1e-300",
     "drive.nand.channel_mbps = 1e-300 is outside 10..10000 (MB/s)"),
    ("t_prog_us = 600.0", "t_prog_us = 1e10",
     "drive.nand.tlc.t_prog_us = 1e10 is outside 1..100000 (µs)"),
    ("read_cmd_us = 1.3", "read_cmd_us = 1e8",
     "drive.controller.read_cmd_us = 1e8 is outside 0.01..10000 (µs)"),
    ("t_prog_us = 600.0", "t_prog_us = 1e20",
     "drive.nand.tlc.t_prog_us = 1e20 is outside 1..100000 (µs)"),
    ("t_prog_us = 600.0", "t_prog_us = 1e-300",
     "drive.nand.tlc.t_prog_us = 1e-300 is outside 1..100000 (µs)"),
    ("page_bytes = 16384", "page_bytes = 1073741824",
     "drive.geometry.page_bytes = 1073741824 is outside 4096..65536 (bytes)"),
    ("channels = 8 ", "channels = 4294967295 ",
     "drive.geometry.channels = 4294967295 is outside 1..64"),
]
IDS = [new.split(" #")[0].strip() for _, new, _ in ISSUE_EXAMPLES]


def bad_preset(line: str, replacement: str) -> str:
    text = SMALL.read_text()
    assert text.count(line) == 1, line
    return text.replace(line, replacement)


@pytest.mark.parametrize(("line", "replacement", "message"), ISSUE_EXAMPLES, ids=IDS)
def test_the_python_api_refuses_the_preset_naming_the_field(line, replacement, message):
    with pytest.raises(ValueError) as refused:
        _ssdsim.Drive(bad_preset(line, replacement))
    assert isinstance(refused.value, _ssdsim.PresetError)
    assert str(refused.value) == message


def test_every_shipped_preset_and_the_test_preset_load():
    presets = sorted(BUILTIN.glob("*.toml")) + [SMALL]
    assert len(presets) >= 6
    for path in presets:
        assert _ssdsim.Drive(path.read_text()).user_bytes > 0, path


# The JSON of a valid step; the changes below are ones the Python model would refuse.
STEP = Step(label="s", rw=Op.RANDWRITE, bs=4096, size=1 << 20).model_dump(mode="json")
ABSURD_STEPS = [
    ({"bs": -1}, "step field `bs`: invalid value: integer `-1`"),
    ({"bs": 0}, "bs = 0 is outside 512..1073741824 (bytes)"),
    ({"bs": 2**64}, "step field `bs`: invalid type: floating point"),
    ({"size": 2**64 - 512}, "exceeds the drive's"),
    ({"iodepth": 0}, "iodepth = 0 is outside 1..4096"),
    ({"runtime": 0.0}, "runtime = 0 is outside"),
    ({"runtime": float("inf")}, "step field `runtime`: expected value"),  # JSON has no inf
    ({"runtime": 10**400}, "step field `runtime`: number out of range"),
    ({"idle_after": float("nan")}, "step field `idle_after`: expected value"),
    ({"io_size": 2**64 - 1}, "io_size = 18446744073709551615 is outside"),
    ({"rate_iops": 0}, "rate_iops = 0 is outside"),
    ({"bs": "4k"}, 'step field `bs`: invalid type: string "4k"'),
]


@pytest.mark.parametrize(("change", "message"), ABSURD_STEPS, ids=[str(c) for c, _ in ABSURD_STEPS])
def test_an_absurd_step_is_a_value_error_naming_the_field(change, message):
    drive = _ssdsim.Drive(SMALL.read_text())
    with pytest.raises(ValueError) as refused:
        drive.run_step(json.dumps({**STEP, **change}))
    assert isinstance(refused.value, _ssdsim.StepError)
    assert message in str(refused.value)
    # The drive is unharmed and runs the next step.
    assert drive.run_step(json.dumps({**STEP, "io_size": 1 << 20}))["write"]["bytes"] == 1 << 20


# The examples that ran out of memory, overflowed or panicked, through the CLI.
CLI_EXAMPLES = [ISSUE_EXAMPLES[i] for i in (0, 3, 5, 6)]


@pytest.mark.parametrize(("line", "replacement", "message"), CLI_EXAMPLES,
                         ids=[IDS[i] for i in (0, 3, 5, 6)])
def test_the_cli_refuses_the_preset_in_one_line_with_status_2(tmp_path, line, replacement, message):
    preset = tmp_path / "bad.toml"
    preset.write_text(bad_preset(line, replacement))
    proc = run_cli("run", f"sim:{preset}", "--suite", "quick", "--scale", "0.01",
                   db=tmp_path / "x.db", check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert message in lines[0]


def test_a_drive_whose_tables_exceed_the_memory_limit_is_refused_not_aborted(tmp_path):
    """9 TB is within the bounds, but its mapping tables (8.2 GiB for the LBAs, 9.0 GiB for
    the physical units) are not within a 3 GiB address-space limit: a message, not an
    allocation abort."""
    preset = tmp_path / "huge.toml"
    preset.write_text(bad_preset("user_capacity_gb = 16.0", "user_capacity_gb = 9000.0")
                      .replace("blocks_per_plane = 24 ", "blocks_per_plane = 8200 "))
    limit = 3 << 30
    proc = run_cli("run", f"sim:{preset}", "--suite", "quick", "--dry-run", db=tmp_path / "x.db",
                   check=False, timeout=120,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert proc.returncode == 2, proc.stderr
    assert "needs 17.2 GiB of memory for its mapping tables" in " ".join(proc.stderr.split())
