"""MLflow tracking for the study: robust to concurrent SQLite writers, idempotent per job.

Layout: one MLflow experiment per study experiment (``<study>/exp1``, ``<study>/exp2``, ``<study>/exp6``)
plus ``<study>/summary``; a parent run per grid job with one child run per model; tables and figures
as artifacts of the summary run.

Idempotency: every run of a job carries the tag ``wsvm.job_slot`` (experiment/dataset/weighting/
seed-realization/chunk) and the parent run ``wsvm.job_key`` (slot + hash of the job spec) and
``config_hash``.  A job first deletes every active run with its slot (a finished run of an earlier
attempt, or the half-finished runs of a job that died), then logs anew, and at the end checks that
exactly one child per model exists (removing any duplicate).  So the store mirrors ``results/``: one
parent per chunk file and one child per row.

Concurrency: a SQLite store is created by the first job that needs it, under an exclusive file lock
beside the database (:func:`_store_creation`), so alembic migrations never race and no workflow
step has to run first; every call is retried with exponential backoff and jitter on "database is
locked"/busy errors.
"""

from __future__ import annotations

import logging
import math
import random
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypeVar

__all__ = [
    "TRANSIENT_MARKERS",
    "is_transient",
    "with_retries",
    "Tracker",
    "experiment_name",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT_MARKERS = (
    "database is locked",
    "database table is locked",
    "database is busy",
    "sqlite_busy",
    "sqlite_locked",
    "unable to open database file",
    "disk i/o error",
    "could not obtain lock",
    "deadlock",
    "connection reset",
    "connection refused",
    "connection aborted",
    "temporarily unavailable",
    "max retries exceeded",
    "too many requests",
)

# tag keys
SLOT = "wsvm.job_slot"
KEY = "wsvm.job_key"
KIND = "wsvm.kind"
MODEL_INDEX = "wsvm.model_index"
COMPLETE = "wsvm.complete"


def experiment_name(prefix: str, experiment: str) -> str:
    return f"{prefix}/{experiment}"


def is_transient(exc: BaseException) -> bool:
    """Whether an error is worth retrying (lock contention, busy database, flaky server)."""
    text = f"{type(exc).__name__}: {exc}".lower()
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        text += " " + f"{type(cause).__name__}: {cause}".lower()
    return any(m in text for m in TRANSIENT_MARKERS)


def with_retries(fn: Callable[..., T], *args: Any, attempts: int = 30, base: float = 0.05, cap: float = 4.0,
                 deadline: float = 600.0, **kwargs: Any) -> T:
    """Call ``fn`` retrying transient errors with exponential backoff (full jitter)."""
    start = time.monotonic()
    for attempt in range(attempts):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - filtered by is_transient
            if not is_transient(exc) or attempt == attempts - 1 or time.monotonic() - start > deadline:
                raise
            delay = random.uniform(0, min(cap, base * 2**attempt))
            log.warning("transient tracking error (%s); retry %d in %.2fs", str(exc).splitlines()[0][:200],
                        attempt + 1, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def sqlite_path(uri: str) -> str | None:
    """The database file of a ``sqlite:///`` URI (None for other stores or in-memory databases)."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri[len("sqlite:///"):].split("?", 1)[0]
    return path if path and path != ":memory:" else None


def _sqlite_initialized(path: str) -> bool:
    """Whether a SQLite file holds an MLflow store (MLflow's migrations record their version)."""
    import sqlite3

    if not Path(path).is_file():
        return False
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            return bool(con.execute("SELECT count(*) FROM alembic_version").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return False


@contextmanager
def _store_creation(uri: str, sqlite_wal: bool):
    """Serialise the creation of a SQLite store: MLflow runs its schema migrations when a client first
    opens a new database, and concurrent migrations corrupt it. Inside the block the caller opens the
    store; while the database is new, that happens under an exclusive lock on ``<database>.lock``, and a
    new store is then put in write-ahead-log mode when ``sqlite_wal`` (persistent; needs a local file
    system). An existing SQLite store, a tracking server or a file store is opened without a lock."""
    path = sqlite_path(uri)
    if path is None or _sqlite_initialized(path):
        yield
        return
    import fcntl

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            new = not _sqlite_initialized(path)
            yield
            if new and sqlite_wal:
                set_sqlite_wal(uri)
            if new:
                log.info("created the MLflow store %s", path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def set_sqlite_wal(uri: str) -> str:
    """Switch a SQLite store to WAL journal mode (a persistent property of the database file)."""
    import sqlite3

    path = sqlite_path(uri)
    if path is None:
        return "n/a"

    def switch() -> str:
        con = sqlite3.connect(path, timeout=30)
        try:
            return con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        finally:
            con.close()

    mode = with_retries(switch)
    log.info("SQLite store %s: journal_mode=%s", path, mode)
    return mode


def _fmt_param(v: Any) -> str:
    if isinstance(v, float):
        return repr(round(v, 10))
    return str(v)


class Tracker:
    """Thin, retrying wrapper of :class:`mlflow.tracking.MlflowClient`.

    ``seconds`` accumulates the wall time spent in MLflow (import, store access, retries), which is
    the tracking overhead the study reports."""

    def __init__(self, uri: str, artifact_root: str | None = None, sqlite_wal: bool = True):
        self.seconds = 0.0
        self.calls = 0
        self.uri = uri
        self.artifact_root = artifact_root
        with self.timed():
            from mlflow.tracking import MlflowClient  # heavy import: counted as overhead

            with _store_creation(uri, sqlite_wal):
                self.client = MlflowClient(tracking_uri=uri)
                self.client.search_experiments(max_results=1)  # opens (and, if new, creates) the store
        self._exp_ids: dict[str, str] = {}

    # -------------------------------------------------------------------------------- plumbing
    @contextmanager
    def timed(self):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - t0

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self.calls += 1
        with self.timed():
            return with_retries(fn, *args, **kwargs)

    # ----------------------------------------------------------------------------- experiments
    def experiment_id(self, name: str) -> str:
        """Id of the experiment ``name``, created (or restored when deleted) if needed; race-safe."""
        if name in self._exp_ids:
            return self._exp_ids[name]

        def get_or_create() -> str:
            exp = self.client.get_experiment_by_name(name)
            if exp is not None:
                if exp.lifecycle_stage == "deleted":
                    self.client.restore_experiment(exp.experiment_id)
                return exp.experiment_id
            location = None
            if self.artifact_root:
                safe = name.replace("/", "_")
                location = (Path(self.artifact_root) / safe).resolve().as_uri()
            try:
                return self.client.create_experiment(name, artifact_location=location)
            except Exception as exc:  # another process created it first
                if "already exists" in str(exc).lower() or "RESOURCE_ALREADY_EXISTS" in str(exc):
                    exp = self.client.get_experiment_by_name(name)
                    if exp is not None:
                        return exp.experiment_id
                raise

        eid = self.call(get_or_create)
        self._exp_ids[name] = eid
        return eid

    def init_store(self, names: Iterable[str]) -> dict[str, str]:
        """The experiments ``names`` in the store (created when missing; the store itself is created
        when the tracker opens it)."""
        return {n: self.experiment_id(n) for n in names}

    # ------------------------------------------------------------------------------------ runs
    def search(self, experiment_id: str, filter_string: str) -> list:
        from mlflow.entities import ViewType

        runs, token = [], None
        while True:
            page = self.call(self.client.search_runs, [experiment_id], filter_string=filter_string,
                             run_view_type=ViewType.ACTIVE_ONLY, max_results=5000, page_token=token)
            runs.extend(page)
            token = page.token
            if not token:
                return runs

    def delete_runs(self, runs: Iterable) -> int:
        n = 0
        for run in runs:
            try:
                self.call(self.client.delete_run, run.info.run_id)
                n += 1
            except Exception as exc:  # already deleted by a concurrent cleanup
                if "deleted" not in str(exc).lower() and "not found" not in str(exc).lower():
                    raise
        return n

    def delete_slot(self, experiment_id: str, slot: str) -> int:
        """Delete every active run (parents and children) of a job slot; returns how many."""
        return self.delete_runs(self.search(experiment_id, f"tags.`{SLOT}` = '{slot}'"))

    def create_run(self, experiment_id: str, run_name: str, tags: Mapping[str, Any],
                   params: Mapping[str, Any] | None = None, metrics: Mapping[str, float] | None = None,
                   parent_id: str | None = None, finished: bool = False) -> str:
        """Create a run with tags, params and metrics: create_run + one log_batch (+ set_terminated)."""
        from mlflow.entities import Metric, Param

        tags = {k: str(v) for k, v in tags.items()}
        if parent_id:
            tags["mlflow.parentRunId"] = parent_id
        run = self.call(self.client.create_run, experiment_id, tags=tags, run_name=run_name)
        run_id = run.info.run_id
        now = int(time.time() * 1000)
        batch_metrics = [Metric(k, float(v), now, 0) for k, v in (metrics or {}).items()
                         if v is not None and math.isfinite(float(v))]
        batch_params = [Param(k, _fmt_param(v)) for k, v in (params or {}).items()]
        # MLflow's log_batch limits: 1000 metrics and 100 params per call
        while batch_metrics or batch_params:
            self.call(self.client.log_batch, run_id, metrics=batch_metrics[:1000], params=batch_params[:100])
            batch_metrics, batch_params = batch_metrics[1000:], batch_params[100:]
        if finished:
            self.call(self.client.set_terminated, run_id, "FINISHED")
        return run_id

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], tags: Mapping[str, Any] | None = None):
        from mlflow.entities import Metric, RunTag

        now = int(time.time() * 1000)
        self.call(self.client.log_batch, run_id,
                  metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()
                           if v is not None and math.isfinite(float(v))],
                  tags=[RunTag(k, str(v)) for k, v in (tags or {}).items()])

    def terminate(self, run_id: str, status: str = "FINISHED") -> None:
        self.call(self.client.set_terminated, run_id, status)

    def check_children(self, experiment_id: str, slot: str, parent_id: str, expected: Iterable[int]) -> int:
        """Make the job's children exactly one per expected model index: delete duplicates (e.g. from
        a retried call that had in fact succeeded) and stray runs; raise if a model is missing."""
        expected = set(int(i) for i in expected)
        runs = self.search(experiment_id, f"tags.`{SLOT}` = '{slot}' and tags.`{KIND}` = 'model'")
        keep: dict[int, Any] = {}
        extra = []
        for run in sorted(runs, key=lambda r: r.info.start_time or 0):
            idx = run.data.tags.get(MODEL_INDEX)
            parent = run.data.tags.get("mlflow.parentRunId")
            if idx is None or parent != parent_id or int(idx) not in expected or int(idx) in keep:
                extra.append(run)
            else:
                keep[int(idx)] = run
        if extra:
            log.warning("removing %d duplicate/stray child runs of %s", len(extra), slot)
            self.delete_runs(extra)
        missing = expected - set(keep)
        if missing:
            raise RuntimeError(f"{slot}: {len(missing)} child runs missing after logging")
        return len(keep)

    def log_artifacts(self, run_id: str, files: Iterable[str | Path], artifact_path: str | None = None):
        for f in files:
            self.call(self.client.log_artifact, run_id, str(f), artifact_path)
