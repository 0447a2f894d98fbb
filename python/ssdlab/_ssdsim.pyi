"""Types of the native simulator module (crates/ssdsim-py): a preset's TOML makes a
Drive; each step goes in as the JSON of an ssdlab.model.Step (`Step.model_dump_json()`,
unknown fields refused) and its whole result comes out as a dict. The GIL is released
while a step runs."""

from typing import Any

class PresetError(ValueError):
    """The preset is not valid: the message names the key, its value and its range."""

class StepError(ValueError):
    """The step is not a Step the simulator knows, does not fit the drive or is out of
    bounds: the message names the field."""

class InternalError(RuntimeError):
    """A bug in the simulator (a caught panic); the drive refuses further steps."""

def version() -> str: ...

class Drive:
    def __init__(self, preset_toml: str, seed: int = 1) -> None: ...
    @property
    def user_bytes(self) -> int: ...
    @property
    def now_s(self) -> float: ...
    def run_step(self, step_json: str) -> dict[str, Any]: ...
    def counters(self) -> dict[str, Any]: ...
