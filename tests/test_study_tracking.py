"""MLflow tracking: 4 concurrent writer processes on one SQLite store, idempotent reruns, retries.

Real MLflow, real SQLite, real processes (no mocks)."""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3
import time
from collections import Counter

import pytest

from wsvm_span.study.tracking import (
    COMPLETE,
    KIND,
    MODEL_INDEX,
    SLOT,
    CREDENTIALS_ENV,
    ModelRun,
    Tracker,
    TrackingRefused,
    auth_refusal,
    is_transient,
    set_sqlite_wal,
    use_credentials_file,
    with_retries,
)

N_WRITERS = 4
JOBS_PER_WRITER = 2
MODELS_PER_JOB = 20
BATCH = 8  # model runs per transaction: a job's 20 in three
EXPERIMENT = "test-concurrency/exp1"


def _log_job(tracker: Tracker, eid: str, slot: str, n_models: int) -> str:
    """What a grid job does: clear its slot, parent run, its models' finished runs in batches (of BATCH here),
    check, finish."""
    tracker.delete_slot(eid, slot)
    parent = tracker.create_run(eid, slot, tags={KIND: "job", SLOT: slot, COMPLETE: "false"},
                                params={"slot": slot})
    runs = [ModelRun(f"{slot}/m{i}", tags={KIND: "model", SLOT: slot, MODEL_INDEX: i},
                     params={"log2_C_plus": float(i), "model_index": i},
                     metrics={"test_error": i / 100, "span_rule": i / 50, "nan_metric": float("nan")},
                     time_ms=int(time.time() * 1000))
            for i in range(n_models)]
    children = [run_id for b in range(0, n_models, BATCH)
                for run_id in tracker.log_finished_runs(eid, runs[b:b + BATCH], parent_id=parent)]
    tracker.check_slot(eid, slot, parent, children)
    tracker.log_metrics(parent, {"n_models": n_models}, tags={COMPLETE: "true"})
    tracker.terminate(parent)
    return parent


def _writer(uri: str, artifact_root: str, writer: int, start_event, rerun: bool) -> dict:
    start_event.wait(60)
    tracker = Tracker(uri, artifact_root)
    eid = tracker.experiment_id(EXPERIMENT)
    slots = [f"exp1/set{writer}/class/s0-r1/chunk-{j}" for j in range(JOBS_PER_WRITER)]
    for slot in slots:
        _log_job(tracker, eid, slot, MODELS_PER_JOB)
    if rerun:  # a rerun of a finished job must replace, not duplicate
        _log_job(tracker, eid, slots[0], MODELS_PER_JOB)
    return {"writer": writer, "seconds": tracker.seconds, "calls": tracker.calls}


def _run_writer(args):
    uri, root, writer, rerun = args
    return _writer(uri, root, writer, _EVENT, rerun)


def _init_pool(event):
    global _EVENT
    _EVENT = event


def test_transient_errors_are_retried():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "ok"

    assert with_retries(flaky, base=0.001) == "ok" and len(calls) == 3
    assert is_transient(RuntimeError("(sqlite3.OperationalError) database is locked"))
    assert not is_transient(ValueError("bad parameter"))
    with pytest.raises(ValueError):
        with_retries(lambda: (_ for _ in ()).throw(ValueError("bad parameter")))


def test_a_refused_request_is_not_retried():
    """A server's 401/403 (MLflow's message for a non-JSON answer) fails at once, whatever else it says."""
    from mlflow.exceptions import MlflowException

    refused = MlflowException("API request to endpoint /api/2.0/mlflow/runs/create failed with error code "
                              "401 != 200. Response body: 'You are not authenticated.' (max retries exceeded)")
    assert auth_refusal(refused) == 401 and not is_transient(refused)
    assert auth_refusal(MlflowException("failed with error code 403 != 200. Response body: 'Permission denied'")) == 403
    assert auth_refusal(RuntimeError("database is locked")) is None
    calls = []

    def refuse():
        calls.append(1)
        raise refused

    with pytest.raises(MlflowException):
        with_retries(refuse, base=0.001)
    assert len(calls) == 1


def test_credentials_file_sets_the_user_in_this_process_only_when_private(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD", raising=False)
    monkeypatch.delenv(CREDENTIALS_ENV, raising=False)
    assert use_credentials_file() is None and "MLFLOW_TRACKING_PASSWORD" not in os.environ
    creds = tmp_path / "mlflow-credentials"
    creds.write_text("[mlflow]\nmlflow_tracking_username = jobs\nmlflow_tracking_password = s3cret\n")
    monkeypatch.setenv(CREDENTIALS_ENV, str(creds))
    creds.chmod(0o644)
    with pytest.raises(TrackingRefused, match="readable by others .*chmod 600"):
        use_credentials_file()
    creds.chmod(0o600)
    assert use_credentials_file() == str(creds)
    assert (os.environ["MLFLOW_TRACKING_USERNAME"], os.environ["MLFLOW_TRACKING_PASSWORD"]) == ("jobs", "s3cret")
    monkeypatch.setenv(CREDENTIALS_ENV, str(tmp_path / "missing"))
    with pytest.raises(TrackingRefused, match="cannot be read"):
        use_credentials_file()


@pytest.mark.timeout(240)
def test_four_concurrent_writers_no_lost_or_duplicated_runs(tmp_path):
    from mlflow.entities import RunStatus, ViewType
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    root = str(tmp_path / "artifacts")
    # the store is created once, before the writers start
    Tracker(uri, root, sqlite_wal=False).init_store([EXPERIMENT])  # rollback journal: the harder case

    # a job that died half-way: a RUNNING parent and some children in one writer's slot
    zombie = Tracker(uri, root)
    eid = zombie.experiment_id(EXPERIMENT)
    dead_slot = "exp1/set0/class/s0-r1/chunk-0"
    dead_parent = zombie.create_run(eid, dead_slot, tags={KIND: "job", SLOT: dead_slot})
    for i in range(3):
        zombie.create_run(eid, "x", tags={KIND: "model", SLOT: dead_slot, MODEL_INDEX: i}, parent_id=dead_parent)

    ctx = mp.get_context("spawn")
    event = ctx.Event()
    with ctx.Pool(N_WRITERS, initializer=_init_pool, initargs=(event,)) as pool:
        res = pool.map_async(_run_writer, [(uri, root, w, w == 1) for w in range(N_WRITERS)])
        time.sleep(0.5)
        event.set()  # all writers start together
        stats = res.get(timeout=220)
    assert len(stats) == N_WRITERS

    client = MlflowClient(uri)
    runs = client.search_runs([eid], run_view_type=ViewType.ACTIVE_ONLY, max_results=10000)
    parents = [r for r in runs if r.data.tags.get(KIND) == "job"]
    children = [r for r in runs if r.data.tags.get(KIND) == "model"]
    n_slots = N_WRITERS * JOBS_PER_WRITER
    assert len(parents) == n_slots
    assert len(children) == n_slots * MODELS_PER_JOB
    assert len(runs) == n_slots * (1 + MODELS_PER_JOB)
    assert Counter(r.data.tags[SLOT] for r in parents) == Counter({s: 1 for s in {r.data.tags[SLOT] for r in parents}})
    by_parent = Counter(r.data.tags["mlflow.parentRunId"] for r in children)
    assert set(by_parent) == {p.info.run_id for p in parents}
    assert set(by_parent.values()) == {MODELS_PER_JOB}
    for p in parents:
        idx = sorted(int(r.data.tags[MODEL_INDEX]) for r in children
                     if r.data.tags["mlflow.parentRunId"] == p.info.run_id)
        assert idx == list(range(MODELS_PER_JOB))
        assert p.data.tags[COMPLETE] == "true"
    assert all(r.info.status == RunStatus.to_string(RunStatus.FINISHED) for r in runs)
    assert dead_parent not in {p.info.run_id for p in parents}
    child = children[0]
    assert set(child.data.params) == {"log2_C_plus", "model_index"}
    assert set(child.data.metrics) == {"test_error", "span_rule"}  # NaN metrics are not logged


def _open_store(args):
    uri, event = args[0], _EVENT
    event.wait(60)
    tracker = Tracker(uri)  # creates the store if no other process has yet
    return tracker.experiment_id(EXPERIMENT)


@pytest.mark.timeout(240)
def test_concurrent_jobs_create_a_new_store_once(tmp_path):
    """No job has to run before the fan-out: the first of several concurrent jobs creates the store
    under a file lock, the others wait and use it (issue 8: a workflow step that had to run first)."""
    uri = f"sqlite:///{tmp_path / 'new' / 'mlflow.db'}"
    ctx = mp.get_context("spawn")
    event = ctx.Event()
    with ctx.Pool(N_WRITERS, initializer=_init_pool, initargs=(event,)) as pool:
        res = pool.map_async(_open_store, [(uri,)] * N_WRITERS)
        time.sleep(0.5)
        event.set()
        ids = res.get(timeout=220)
    assert len(set(ids)) == 1  # one experiment, seen by every job
    con = sqlite3.connect(tmp_path / "new" / "mlflow.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1
    con.close()


def test_a_store_being_created_is_opened_only_after_its_creator_is_done(tmp_path):
    """A job that comes when the first one is half-way through MLflow's migrations (alembic_version has its
    row, the tables are not all there) waits for the creation lock instead of opening the store: the clash
    ("table ... already exists") that made test_concurrent_jobs_create_a_new_store_once flaky under load."""
    import fcntl
    import threading

    from wsvm_span.study.tracking import _store_creation

    db = tmp_path / "m.db"
    con = sqlite3.connect(db)  # the state in the middle of a migration: versioned, tables missing
    con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
    con.execute("INSERT INTO alembic_version VALUES ('451aebb31d03')")
    con.commit()
    con.close()
    entered = []
    with open(f"{db}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the creator, migrating

        def opener():
            with _store_creation(f"sqlite:///{db}", False):
                entered.append(time.monotonic())

        thread = threading.Thread(target=opener)
        thread.start()
        thread.join(0.5)
        assert not entered  # waiting for the creator
        released = time.monotonic()
        fcntl.flock(lock, fcntl.LOCK_UN)
    thread.join(10)
    assert entered and entered[0] >= released
    # once created (no lock held), a store is opened at once, without waiting
    done = threading.Thread(target=opener)
    done.start()
    done.join(5)
    assert len(entered) == 2


def test_wal_mode(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    Tracker(uri, sqlite_wal=True).init_store(["x/exp1"])
    con = sqlite3.connect(tmp_path / "m.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    assert set_sqlite_wal("http://server:5000") == "n/a"


def test_a_killed_jobs_runs_are_ended_as_killed_when_its_rerun_clears_the_slot(tmp_path):
    """A job killed mid-run leaves its job run RUNNING; the rerun deletes the slot's runs, and the killed
    attempt's run reads KILLED (a deleted run keeps its status), while its finished model runs stay FINISHED."""
    from mlflow.entities import ViewType

    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}", str(tmp_path / "artifacts"))
    eid = tracker.experiment_id(EXPERIMENT)
    slot = "exp1/set0/class/s0-r1/chunk-0"
    killed = tracker.create_run(eid, slot, tags={KIND: "job", SLOT: slot, COMPLETE: "false"})
    finished = tracker.create_run(eid, f"{slot}/m0", tags={KIND: "model", SLOT: slot, MODEL_INDEX: 0},
                                  parent_id=killed, finished=True)
    rerun = _log_job(tracker, eid, slot, 2)

    client = tracker.client
    assert client.get_run(killed).info.status == "KILLED"
    assert client.get_run(killed).info.lifecycle_stage == "deleted"
    assert client.get_run(finished).info.status == "FINISHED"
    active = tracker.search(eid, f"tags.`{SLOT}` = '{slot}'")
    assert {r.info.status for r in active} == {"FINISHED"} and rerun in {r.info.run_id for r in active}
    deleted = client.search_runs([eid], run_view_type=ViewType.DELETED_ONLY)
    assert {r.info.run_id for r in deleted} == {killed, finished}


def test_ui_views_open_on_experiment_one_whichever_finished_first(tmp_path):
    """`wsvm-span ui` lands on the first view: Experiment 1's, although Experiment 9's job logged first."""
    from wsvm_span.study.mlflow_views import save_views
    from wsvm_span.study.tracking import DATASET_SLOT

    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}", str(tmp_path / "artifacts"))
    for experiment, dataset in (("exp9", "skin_nonskin"), ("exp10", "usps"), ("exp1", "splice"), ("exp2", "ringnorm")):
        eid = tracker.experiment_id(f"order-test/{experiment}")
        parent = tracker.dataset_run(eid, f"{experiment}/{dataset}/class/s0-r1", params={"dataset": dataset})
        tracker.create_run(eid, f"{dataset}/m0", tags={KIND: "model", "dataset": dataset, SLOT: "s"},
                           params={"log2_C_plus": 1.0}, metrics={"test_error": 0.1}, parent_id=parent, finished=True)
        assert tracker.search(eid, f"tags.`{DATASET_SLOT}` = '{experiment}/{dataset}/class/s0-r1'")
    views = save_views(tracker, "order-test")
    assert [v.experiment for v in views] == ["order-test/exp1", "order-test/exp2", "order-test/exp9",
                                             "order-test/exp10"]
