"""A stop asked by a signal interrupts a run, whatever the code it lands in makes of it: the
handler raises KeyboardInterrupt inside whatever Python code runs, and pydantic's JSON
serializer, for one, wraps it in an error of its own (seen in CI: a SIGHUP during a
step's serialization printed a traceback instead of how to resume)."""

import signal

import pytest
from pydantic import BaseModel, field_serializer
from pydantic_core import PydanticSerializationError

from ssdlab import session, signals
from ssdlab.backends import StepOutcome
from ssdlab.catalogue import Scale
from ssdlab.errors import Interrupted
from ssdlab.store import Store
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.probe import Telemetry
from tests.factories import result
from tests.store.test_store import new_run


class Serialized(BaseModel):
    """A model whose serialization is where the signal lands."""

    value: int = 1

    @field_serializer("value")
    def _serialize(self, value: int) -> int:
        signals._stop(signal.SIGTERM, None)  # as the handler runs when the signal arrives
        return value


class SerializingBackend:
    name = "fio"

    def __init__(self, signal_lands: bool):
        self.signal_lands = signal_lands

    def run_step(self, step, progress=None):
        if self.signal_lands:
            Serialized().model_dump_json()
        raise PydanticSerializationError("a serializer's own failure")


def execute(tmp_path, backend):
    with Store(tmp_path / "runs.db") as store:
        run_id = new_run(store, ("rand-read-burst",))
        session._execute(store, run_id, backend, [], False, RunTelemetry(Telemetry()), Scale(0.01))


def test_a_stop_that_a_library_wrapped_in_its_own_error_still_interrupts_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(signals, "_stop_asked", False)
    with pytest.raises(Interrupted, match=r"`ssdlab resume 1` continues"):
        execute(tmp_path, SerializingBackend(signal_lands=True))
    assert signals.stop_asked()


def test_without_a_stop_the_same_error_is_the_error_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(signals, "_stop_asked", False)
    with pytest.raises(PydanticSerializationError, match="a serializer's own failure"):
        execute(tmp_path, SerializingBackend(signal_lands=False))


class SwallowingBackend:
    """A step during which the signal lands where Python swallows its KeyboardInterrupt (a
    finalizer: 'Exception ignored in ...'), the step itself going on to its end."""

    name = "fio"

    def __init__(self):
        self.steps = 0

    def run_step(self, step, progress=None):
        self.steps += 1
        try:
            signals._stop(signal.SIGINT, None)
        except KeyboardInterrupt:
            pass
        return StepOutcome(result(), ("job",))


def test_a_stop_swallowed_during_a_step_stops_the_run_once_that_step_is_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(signals, "_stop_asked", False)
    backend = SwallowingBackend()
    with pytest.raises(Interrupted, match=r"`ssdlab resume 1` continues"):
        execute(tmp_path, backend)
    assert backend.steps == 1
    with Store(tmp_path / "runs.db") as store:
        assert len(store.steps(1, 0)) == 1
