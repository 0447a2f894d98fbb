"""The power suite on a simulated drive through the CLI: its telemetry read as a real drive's
(health before and after every test, the advertised power states), idle wake-up in drive
time on the host the run options describe, APST off and back, and resume on the same host."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssdlab import _ssdsim
from ssdlab.backends.sim import SimBackend
from ssdlab.backends.sim_host import (
    MAX_AMBIENT_C,
    MAX_APST_LATENCY_US,
    MIN_AMBIENT_C,
    Cooling,
    SimHost,
)
from ssdlab.catalogue.power import IDLE_LENGTHS_S
from ssdlab.errors import SsdlabError
from ssdlab.presets import load_preset
from ssdlab.session import RunRequest, sim_host
from tests.cli.test_cli_input import refused
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET as SMALL

SIM = f"sim:{SMALL}"
POWER_STATES = [(9.0, 0, 0, True), (4.1, 0, 0, True), (3.5, 0, 0, True), (0.025, 5000, 10000, False),
                (0.005, 5000, 45000, False)]


def power_run(db: Path, *options: str) -> dict:
    run_cli("run", SIM, "--suite", "power", "--scale", "0.01", *options, db=db)
    return json.loads(run_cli("show", "latest", "--json", db=db).stdout)


def wake_us(score: dict, policy: str) -> list[float]:
    return [score[policy]["by_idle_s"][f"{idle:g}"]["wake_us"] for idle in IDLE_LENGTHS_S]


@pytest.fixture(scope="module")
def default_host(tmp_path_factory) -> dict:
    return power_run(tmp_path_factory.mktemp("sim-power") / "ssdlab.db")


def test_every_test_that_ran_has_the_health_log_before_and_after(default_host):
    tests = {t["id"]: t for t in default_host["tests"]}
    thermal_model = tests["power-states"]["primary_score"]["wctemp_c"] is not None
    assert {i: t["status"] for i, t in tests.items()} == {
        "power-states": "done", "idle-wake": "done", "health": "done",
        "idle-power": "done",  # the simulated drive's own power model is its meter
        "thermal-soak": "done" if thermal_model else "skipped"}
    for test in (tests["power-states"], tests["idle-wake"], tests["health"]):
        assert test["health"]["before"]["power_cycles"] == 1 and test["health"]["after"], test["id"]
    written = tests["idle-wake"]["health"]["delta"]["host_written_bytes"]
    assert written >= 0.01 * 16 * 2**30  # its data, as the drive's own data units count it
    assert tests["health"]["primary_score"]["value"] == 0  # no alarm


def test_idle_power_comes_from_the_power_states_the_drive_reaches(default_host):
    score = next(t for t in default_host["tests"] if t["id"] == "idle-power")["primary_score"]
    # APST off: active idle, small-tlc.toml's 1.33 W (CAL:SN850); APST on: 1.2 s of idle at
    # scale 0.01, so 100 ms awake, then PS3's 25 mW while entering PS3... (CAL:PS)
    assert score["active_idle_mw"] == pytest.approx(1330, rel=0.01)
    assert 25 < score["value"] < 0.2 * 1330
    assert score["unit"] == "mW"


def test_power_states_are_the_presets(default_host):
    score = default_host["tests"][0]["primary_score"]
    assert [(s["max_power_w"], s["entry_latency_us"], s["exit_latency_us"], s["operational"])
            for s in score["states"]] == POWER_STATES
    # Linux's table for them (CALIBRATION.md): PS3 after 100 ms, PS4 after 2 s
    assert score["apst_enabled"] and [(e["from_state"], e["idle_ms"], e["target_state"])
                                      for e in score["apst_table"]] == [(0, 100, 3), (1, 100, 3), (2, 100, 3),
                                                                        (3, 2000, 4)]


def test_wake_up_grows_with_idle_on_a_host_with_low_power_states(default_host):
    score = default_host["tests"][1]["primary_score"]
    host = wake_us(score, "host_policy")
    assert host == sorted(host) and host[0] < 1000 and host[-1] >= 45_000  # PS4's exit latency
    assert max(wake_us(score, "apst_off")) < 1000  # active idle only
    # the states the drive reached, from its own counters: PS3 after 100 ms, PS4 after 2 s more
    states = [score["host_policy"]["by_idle_s"][f"{idle:g}"]["power_state"] for idle in IDLE_LENGTHS_S]
    assert score["host_policy"]["power_state_is"] == "reached"
    assert states == [0, 0, 3, 3, 3, 3, 4, 4, 4], states


def test_without_low_power_states_the_wake_up_stays_short(tmp_path):
    run_cli("run", SIM, "--suite", "power", "--tests", "idle-wake", "--scale", "0.01", "--no-low-power-states",
            db=tmp_path / "db")
    score = json.loads(run_cli("show", "latest", "--json", db=tmp_path / "db").stdout)["tests"][0]["primary_score"]
    assert len(set(wake_us(score, "host_policy"))) == 1 and max(wake_us(score, "host_policy")) < 1000


def test_apst_off_puts_the_hosts_limit_back():
    sim = SimBackend(load_preset(str(SMALL)))
    with pytest.raises(RuntimeError), sim.apst_off():
        assert sim.drive.apst_max_latency_us == 0
        raise RuntimeError("a failure inside")
    assert sim.drive.apst_max_latency_us == 100_000


def test_resume_rebuilds_the_drive_on_the_runs_host(tmp_path):
    """idle-wake switches APST off and back; power-states after it, resumed, still sees the
    run's own limit (20 ms leaves PS4, 45 ms to wake, out of the table)."""
    db = tmp_path / "db"
    run_cli("run", SIM, "--suite", "power", "--tests", "idle-wake,power-states", "--scale", "0.01",
            "--apst-latency-us", "20000", db=db)
    conn = sqlite3.connect(db)
    with conn:  # as a crash in power-states would leave it
        conn.execute("UPDATE tests SET status = 'running', score = NULL WHERE seq = 1")
        conn.execute("UPDATE runs SET status = 'running', finished_at = NULL")
    conn.close()
    run_cli("resume", "latest", db=db)
    doc = json.loads(run_cli("show", "latest", "--json", db=db).stdout)
    # the host, given or the simulator's default, is in show, export and the report's conditions
    host = {"apst_latency_us": 20000, "low_power_states": True, "cooling": "heatsink", "ambient_c": 35.0}
    assert {key: doc["engine"][key] for key in host} == host
    assert "cooling=heatsink" in run_cli("show", "latest", db=db).stdout
    table = doc["tests"][1]["primary_score"]["apst_table"]
    assert [(e["from_state"], e["target_state"]) for e in table] == [(0, 3), (1, 3), (2, 3)]
    assert max(wake_us(doc["tests"][0]["primary_score"], "host_policy")) == pytest.approx(10_000, rel=0.05)


@given(st.integers(min_value=-2**70, max_value=2**70), st.booleans())
def test_any_latency_is_a_host_or_a_plain_refusal(latency, no_low):
    request = RunRequest(target=SIM, apst_latency_us=latency, no_low_power_states=no_low)
    if 0 <= latency <= MAX_APST_LATENCY_US:
        assert sim_host(request) == SimHost(apst_latency_us=latency, low_power_states=not no_low)
    else:
        with pytest.raises(SsdlabError, match=f"--apst-latency-us must be 0 \\(APST off\\) to .*, not {latency}$"):
            sim_host(request)


@pytest.mark.parametrize("options", [("--apst-latency-us", "0"), ("--no-low-power-states",)])
def test_host_options_are_refused_for_a_real_target(tmp_path, options):
    with pytest.raises(SsdlabError, match=f"^{options[0]} set up a simulated drive's host.*sim:PRESET target$"):
        sim_host(RunRequest(target=str(tmp_path / "f.img"), apst_latency_us=0 if len(options) == 2 else None,
                            no_low_power_states=len(options) == 1))


def test_bad_host_options_on_the_command_line(tmp_path):
    refused(run_cli("run", SIM, "--dry-run", "--apst-latency-us", "-1", check=False), "not -1")
    refused(run_cli("run", tmp_path / "f.img", "--dry-run", "--no-low-power-states", check=False),
            "--no-low-power-states", "simulated drive's host")
    proc = run_cli("run", SIM, "--dry-run", "--apst-latency-us", "1.5", check=False)
    assert proc.returncode == 2 and "--apst-latency-us" in proc.stderr and "Traceback" not in proc.stderr


def test_a_stored_host_out_of_bounds_is_refused_plainly():
    with pytest.raises(SsdlabError, match="^the host stored with run 3: apst_latency_us: "):
        SimHost.parse({"apst_latency_us": -5}, "the host stored with run 3")
    with pytest.raises(SsdlabError, match="low_power_states"):
        SimHost.parse({"low_power_states": "perhaps"}, "the host stored with run 3")


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_ambient_temperature_is_a_host_or_a_plain_refusal(ambient):
    request = RunRequest(target=SIM, ambient_c=ambient)
    if MIN_AMBIENT_C <= ambient <= MAX_AMBIENT_C:
        assert sim_host(request).ambient_c == ambient
        return
    with pytest.raises(SsdlabError, match="^--ambient-c must be -40 to 85 °C, not "):
        sim_host(request)


def test_cooling_and_ambient_go_to_the_simulator_only_when_given():
    linux = {"apst_max_latency_us": 100_000, "low_power_states": True}
    assert SimHost().drive_kwargs() == linux
    kwargs = SimHost(cooling=Cooling.FAN, ambient_c=25).drive_kwargs()
    assert kwargs == linux | {"cooling": "fan", "ambient_c": 25}
    _ssdsim.Drive(load_preset("wd-sn850-1tb").text, **kwargs)  # the simulator takes them


def test_cooling_on_the_command_line(tmp_path):
    proc = run_cli("run", SIM, "--dry-run", "--cooling", "liquid", check=False)
    assert proc.returncode == 2 and "--cooling" in proc.stderr and "Traceback" not in proc.stderr
    refused(run_cli("run", tmp_path / "f.img", "--dry-run", "--cooling", "fan", check=False),
            "--cooling", "simulated drive's host")
