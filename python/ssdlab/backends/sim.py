"""SimBackend: the same steps on a simulated drive (crates/ssdsim), in virtual time.

Idle time is the drive's own: during a step's idle the simulated drive folds its
SLC cache and collects garbage, and falls to lower power states, and no wall-clock time
passes. Its power model gives every step its energy over the busy time (`energy_j`, so the
efficiency figures are live) and, among its counters, the energy of the idle time and the
seconds spent in each power state.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ssdlab import _ssdsim
from ssdlab.backends import ProgressCallback, StepOutcome
from ssdlab.errors import BackendFailed, SsdlabError
from ssdlab.model import DirectionResult, GibPoint, Latency, Phase, SecondPoint, Step, StepResult
from ssdlab.presets import Preset

ENGINE = "sim"


def open_drive(preset: Preset, seed: int = 1) -> _ssdsim.Drive:
    try:
        return _ssdsim.Drive(preset.text, seed)
    except _ssdsim.PresetError as exc:
        raise SsdlabError(f"the preset {preset.name} is not valid: {exc}") from None
    except _ssdsim.InternalError as exc:
        raise BackendFailed(f"the simulator failed on the preset {preset.name}: {exc}") from None


class SimBackend:
    name = ENGINE

    def __init__(self, preset: Preset, seed: int = 1):
        self.preset = preset
        self.seed = seed
        self.drive = open_drive(preset, seed)

    @property
    def capacity(self) -> int:
        return self.drive.user_bytes

    def describe(self) -> dict:
        return {"engine": ENGINE, "simulator_version": _ssdsim.version(), "preset": self.preset.name,
                "preset_sha256": self.preset.sha256, "seed": self.seed}

    def run_step(self, step: Step, progress: ProgressCallback | None = None) -> StepOutcome:
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        try:
            # every field as it is: the simulator's Step has the same ones, and no other
            raw = self.drive.run_step(step.model_dump_json())
        except _ssdsim.StepError as exc:
            raise SsdlabError(f"the simulator refused step {step.label!r}: {exc}") from None
        except _ssdsim.DriveFailed as exc:
            raise BackendFailed(f"step {step.label!r}: {exc}") from None
        except _ssdsim.InternalError as exc:
            raise BackendFailed(f"the simulator failed on step {step.label!r}: {exc}") from None
        if progress:
            progress(1.0, "")
        energy = raw["energy"]
        result = StepResult(
            started_at=started, busy_s=raw["busy_s"], idle_s=raw["idle_s"], bursts=raw["bursts"],
            per_second=tuple(SecondPoint(t_s=t, mbps=m, iops=i) for t, m, i in raw["per_second"]),
            per_gib=tuple(GibPoint(gib=g, mbps=m) for g, m in raw["per_gib"]),
            engine=ENGINE, notes=tuple(raw["notes"]), device=raw["counters"] | _power(energy),
            # a step with no busy time (a purge of an empty drive) has no energy to show
            energy_j=energy["busy_j"] if energy and energy["busy_j"] > 0 else None,
            **{name: _direction(raw[name]) for name in ("read", "write", "trim") if raw[name]})
        command = f"sim {self.preset.name}: {step.describe()}" + (" (purge)" if step.phase is Phase.PURGE else "")
        return StepOutcome(result, (command,))


def _power(energy: dict | None) -> dict[str, float]:
    """The drive's own power figures beside its counters: the energy of the step's idle time
    and the seconds spent in each power state (`ps0_s` is the time awake)."""
    if energy is None:
        return {}
    return {"idle_energy_j": energy["idle_j"],
            **{f"ps{n}_s": seconds for n, seconds in enumerate(energy["state_s"])}}


def _direction(raw: dict) -> DirectionResult:
    lat = raw["latency"]
    return DirectionResult(ios=raw["ios"], bytes=raw["bytes"], busy_s=raw["busy_s"],
                           latency=Latency.from_histogram(lat["histogram"], lat["mean_ns"],
                                                          lat["min_ns"], lat["max_ns"]))
