"""A retention test's wait in the store: the run and its test shown as waiting, with the date,
until the test's off step is stored; the steps before it kept when the test goes on; a test
started again drops its wait."""

from ssdlab.catalogue import Scale, compile_tests
from ssdlab.model import RunStatus, TestStatus, Wait
from ssdlab.store import Store
from tests.factories import result

GiB = 1 << 30
WAIT = Wait(seq=0, idx=3, seed=2**63 - 1, since="2026-01-01T00:00:00+00:00", until="2027-01-01T00:00:00+00:00")


def waiting_run(store: Store) -> tuple[int, tuple]:
    """A retention run stopped at its wait, as execution leaves it: purge, pattern, fresh read stored."""
    (test,) = compile_tests(["retention"], Scale(0.01), 2 * GiB)
    run_id = store.create_run(name=None, target="/tmp/x", target_kind="file", suite="retention",
                              suite_toml="name='retention'", scale=0.01, tests=[test], identity={"path": "/tmp/x"},
                              host={}, engine={"engine": "fio"}, options={"size": 2 * GiB})
    store.start_test(run_id, 0)
    for index, step in enumerate(test.steps[:3]):
        store.save_step(run_id, 0, index, step, result(), ())
    store.begin_wait(run_id, WAIT)
    return run_id, test.steps


def test_a_run_stopped_at_its_wait_is_waiting_until_its_off_step_is_stored(tmp_path):
    with Store(tmp_path / "s.db") as store:
        run_id, steps = waiting_run(store)
        run = store.run(run_id)
        assert (run.status, run.waiting_until) == (RunStatus.WAITING, WAIT.until)
        assert store.tests(run_id)[0].status is TestStatus.WAITING
        assert store.wait(run_id, 0) == store.pending_wait(run_id) == WAIT  # the seed read back exactly
        store.continue_test(run_id, 0, keep=3)
        assert [s.idx for s in store.steps(run_id, 0)] == [0, 1, 2]  # kept
        store.save_step(run_id, 0, 3, steps[3], result(), ())  # the wait is over
        assert store.pending_wait(run_id) == WAIT.model_copy(update={"over": True})
        assert store.tests(run_id)[0].status is TestStatus.RUNNING
        assert (store.run(run_id).status, store.run(run_id).waiting_until) == (RunStatus.INTERRUPTED, None)
        store.finish_test(run_id, 0, {"name": "x", "value": 1.0, "unit": "MB/s"})
        assert store.pending_wait(run_id) is None and store.wait(run_id, 0).over


def test_a_test_started_again_from_its_purge_drops_its_wait(tmp_path):
    with Store(tmp_path / "s.db") as store:
        run_id, _ = waiting_run(store)
        store.start_test(run_id, 0)
        assert store.wait(run_id, 0) is None and store.steps(run_id, 0) == []
        assert store.run(run_id).status is RunStatus.INTERRUPTED
