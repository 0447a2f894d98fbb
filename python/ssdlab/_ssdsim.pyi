"""Types of the native simulator module (crates/ssdsim-py): a preset's TOML makes a
Drive, on a platform with Linux's power management (APST with a latency limit in µs, 0 for
off) that lets the drive reach its non-operational states or not, cooled (`bare`,
`heatsink` or `fan`) in air at `ambient_c` °C, with its volatile write cache on or off as
the host set it (NVMe feature 06h; off, a write completes only when its data is on NAND,
each write's partly filled program unit programmed at once, padded); each step goes in as
the JSON of an ssdlab.model.Step (`Step.model_dump_json()`, unknown fields refused) and its
whole result comes out as a dict, with its `energy` (None without a power model): `busy_j`,
`idle_j`, `state_s` (seconds in each power state) and `work`, and its `temperature_c` (°C
at each second of drive time, empty when the drive does not heat). The GIL is released while
a step runs. The drive also answers as an NVMe drive answers nvme-cli 2.6+: its health log
and Identify Controller as JSON, and features 02h, 0Ch and 10h as `get-feature -H` prints
them."""

from typing import Any

class PresetError(ValueError):
    """The preset is not valid: the message names the key, its value and its range."""

class StepError(ValueError):
    """The step is not a Step the simulator knows, does not fit the drive or is out of
    bounds: the message names the field."""

class DriveFailed(RuntimeError):
    """The simulated drive failed as a real one would (it overheated and dropped off the
    bus); it runs further steps, and its health log remembers."""

class FeatureError(ValueError):
    """The drive does not support the feature: the message is the status a real drive
    returns (Invalid Field in Command), as nvme-cli prints it."""

class InternalError(RuntimeError):
    """A bug in the simulator (a caught panic); the drive refuses further steps."""

def version() -> str: ...

class Progress:
    """How far the drive's running step is, read from another thread while it runs."""
    @property
    def records(self) -> int:
        """Records of the running trace step issued so far, counted a block at a time."""

class Drive:
    def __init__(self, preset_toml: str, seed: int = 1, apst_max_latency_us: int = 100000,
                 low_power_states: bool = True, cooling: str = "heatsink",
                 ambient_c: float = 35.0, volatile_write_cache: bool = True) -> None: ...
    @property
    def user_bytes(self) -> int: ...
    @property
    def now_s(self) -> float: ...
    def run_step(self, step_json: str) -> dict[str, Any]: ...
    def counters(self) -> dict[str, Any]: ...
    def progress(self) -> Progress: ...
    @property
    def apst_max_latency_us(self) -> int: ...
    def set_apst_max_latency_us(self, us: int) -> None: ...
    @property
    def volatile_write_cache(self) -> bool: ...
    def set_volatile_write_cache(self, on: bool) -> None:
        """The host turns the drive's volatile write cache on or off, from the next step on."""
    def platform(self) -> dict[str, Any]:
        """`apst_latency_us`, `low_power_states`, `cooling`, `ambient_c` and
        `volatile_write_cache`, the simulator's defaults filled in."""
    def smart_log_json(self) -> str: ...
    def endurance_log_json(self) -> str: ...
    def id_ctrl_json(self) -> str: ...
    def get_feature(self, fid: int) -> str: ...
