"""A run's rows taken out of one database and put into another (store/transfer.py): the copy
is the same run to `ssdlab show --json`, under the id the other database gives it, and a
run stored again under its own id is replaced, not doubled."""

from __future__ import annotations

from ssdlab.catalogue import Scale
from ssdlab.documents import run_document
from ssdlab.session import RunRequest, start_run
from ssdlab.store import Store
from ssdlab.store.transfer import read_run, write_run


def without_ids(document: dict) -> dict:
    return {**document, "run": {key: value for key, value in document["run"].items() if key != "id"}}


def test_a_run_copied_to_another_database_is_the_same_run_under_its_new_id(tmp_path):
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    request = RunRequest("sim:wd-sn850-1tb", suite="quick", tests=("rand-read-burst",), scale=Scale(0.01))
    start_run(RunRequest(request.target, db=target, suite="quick", tests=request.tests, scale=request.scale),
              show_progress=False)  # the target has a run 1 already
    run_id = start_run(RunRequest(request.target, db=source, suite="quick", tests=request.tests,
                                  scale=request.scale), show_progress=False)
    with Store.open_existing(source) as store:
        rows = read_run(store, run_id)
        original = run_document(store, run_id)
    with Store(target) as store:
        copied = write_run(store, rows)
        assert copied == 2
        assert without_ids(run_document(store, copied)) == without_ids(original)
        assert write_run(store, rows, copied) == copied  # stored again: replaced
        assert len(store.runs()) == 2
        assert without_ids(run_document(store, copied)) == without_ids(original)
