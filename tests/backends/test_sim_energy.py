"""Energy on the simulated drive: every step of a drive with a power model knows its energy,
so power and efficiency are live; the platform's power management is an option of the
drive, and idle time is spent at the power of the state the drive reaches."""

from __future__ import annotations

import pytest

from ssdlab import _ssdsim
from ssdlab.backends.sim import SimBackend
from ssdlab.model import Op, Step
from ssdlab.presets import load_preset
from tests.paths import SMALL_PRESET as SMALL

KiB, MiB = 1 << 10, 1 << 20
ACTIVE_IDLE_W = 1.33  # small-tlc.toml, as the SN850: CAL:SN850 "about 1.33 W idle"


def test_a_simulated_step_has_its_energy_power_and_efficiency():
    backend = SimBackend(load_preset(str(SMALL)))
    step = Step(label="seq write", rw=Op.WRITE, bs=128 * KiB, iodepth=32, size=256 * MiB, idle_after=1.0)
    result = backend.run_step(step).result
    assert result.energy_j > 0
    assert ACTIVE_IDLE_W < result.watts < 9.0  # above idle, below the drive's PS0 maximum
    assert result.mbps_per_w == pytest.approx(result.mbps / result.watts)
    summary = result.summary()
    assert summary["watts"] == round(result.watts, 3) and summary["kiops_per_w"] > 0
    # the idle after the step: folding, then the low power states
    assert 0 < result.device["idle_energy_j"] < ACTIVE_IDLE_W * result.idle_s
    assert result.device["ps3_s"] > 0


@pytest.mark.parametrize(("low_power_states", "apst_max_latency_us"), [(False, 100_000), (True, 0)])
def test_without_low_states_the_drive_idles_at_its_active_idle_power(low_power_states, apst_max_latency_us):
    drive = _ssdsim.Drive(SMALL.read_text(), low_power_states=low_power_states,
                          apst_max_latency_us=apst_max_latency_us)
    step = Step(label="idle", rw=Op.READ, bs=4 * KiB, size=4 * KiB, idle_after=120.0)
    energy = drive.run_step(step.model_dump_json())["energy"]
    assert energy["idle_j"] == pytest.approx(ACTIVE_IDLE_W * 120.0)
    assert sum(energy["state_s"][1:]) == 0


def test_with_low_states_two_idle_minutes_cost_a_fraction_of_that():
    drive = _ssdsim.Drive(SMALL.read_text())
    step = Step(label="idle", rw=Op.READ, bs=4 * KiB, size=4 * KiB, idle_after=120.0)
    energy = drive.run_step(step.model_dump_json())["energy"]
    assert energy["idle_j"] / 120.0 < 0.01  # PS4's 5 mW, after 2 s in PS3 (CAL:PS)
