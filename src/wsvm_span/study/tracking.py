"""MLflow tracking for the study: robust to concurrent writers (SQLite or a tracking server), idempotent
per job.

Layout: one MLflow experiment per study experiment (``<study>/exp1``, ...) plus ``<study>/summary``, each
tagged as a model-training experiment (``mlflow.experimentKind``: MLflow 3 otherwise opens it in its GenAI
view, where runs do not show) and described (``mlflow.note.content``). In each, a parent run per data set,
variant and replicate (tag ``wsvm.dataset_slot``) whose children are the models of that data set (params:
the hyperparameters; metrics: the estimators and the test error), so that the UI's table and chart views
compare the models of one data set side by side; the jobs' own runs (provenance, timings) are children of
the same parent. Tables and figures are artifacts of the summary run.

Idempotency: every run of a job carries the tag ``wsvm.job_slot`` (experiment/dataset/variant/
seed-realization/chunk), the job run ``wsvm.job_key`` (slot + hash of the job spec) and ``config_hash``.
A job first deletes every active run with its slot (a finished run of an earlier attempt, or the runs of
a job that was killed), then logs anew, and at the end checks that the slot holds exactly the runs it
logged (removing any other, e.g. the twin of a request that a dropped connection made the client send
twice). So the store mirrors ``results/``: one job run per chunk file and one model run per row.

Batching: a job's model runs are logged finished, many at a time (:meth:`Tracker.log_finished_runs`), at the
job's end and at the flush points of :class:`wsvm_span.study.runner.JobRuns`. A database store (SQLite,
PostgreSQL, MySQL) gets a batch in one transaction (:class:`_DatabaseRuns`), all of it or none; a tracking
server gets three requests per run (create, log_batch, terminate), its REST API having no batch of runs. Until
the job's end its job run says ``wsvm.complete = false``, so a killed job leaves nothing that reads complete,
and its rerun deletes whatever it had logged.

Data set runs without a step before the fan-out: the first job of a data set creates its parent run and
looks again; of runs created at the same moment by two jobs, each job keeps the oldest it sees (and
deletes none: another job may have adopted it), and the summary step (:meth:`Tracker.merge_dataset_twins`)
moves the children of every twin to one parent and deletes the twins.

Concurrency: a SQLite store is created by the first job that needs it, under an exclusive file lock
beside the database (:func:`_store_creation`), so alembic migrations never race and no workflow step has
to run first; every call is retried with exponential backoff and jitter on "database is locked"/busy
errors and on a tracking server's connection errors (a server restarted mid-job is ridden out). A job
first checks that the store answers (:meth:`Tracker.ensure_reachable`) and fails with a clear error,
before computing anything, when it does not; the scheduler's retry takes it up.

Authentication: a tracking server that asks for a user and password (``scripts/local-cluster`` runs
MLflow's basic-auth app) gets them from the credentials file that ``$WSVM_MLFLOW_CREDENTIALS`` names
(:func:`use_credentials_file`), so that the password is in no command line, job script or log. A server
that refuses them (HTTP 401/403) fails the job at once with :class:`TrackingRefused`: no retry can help.
"""

from __future__ import annotations

import configparser
import logging
import math
import os
import random
import re
import stat
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, TypeVar

__all__ = [
    "CREDENTIALS_ENV",
    "TRANSIENT_MARKERS",
    "TrackingRefused",
    "TrackingUnavailable",
    "auth_refusal",
    "is_transient",
    "use_credentials_file",
    "log_batches",
    "with_retries",
    "ModelRun",
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
DATASET_SLOT = "wsvm.dataset_slot"
JOB_RUN = "wsvm.job_run"
PARENT = "mlflow.parentRunId"
# MLflow 3's UI picks an experiment's view from this tag; without it a new experiment opens in the GenAI
# view, where training runs do not show
EXPERIMENT_KIND = "mlflow.experimentKind"
MODEL_TRAINING = "custom_model_development"
DESCRIPTION = "mlflow.note.content"
# MLflow's log_batch limits per call: 1000 entries in all, of which at most 100 params and 100 tags
BATCH_ENTRIES, BATCH_PARAMS, BATCH_TAGS = 1000, 100, 100
# Pre-flight of a job against a tracking server: one request may take this long (a server whose database
# is down answers only after ~100 s of its own reconnection attempts), and the check gives up after the
# deadline, so that the job fails early and the scheduler's retry resubmits it.
PREFLIGHT_REQUEST_S = 20
PREFLIGHT_DEADLINE_S = 60
PREFLIGHT_PAUSE_S = 5
#: names a credentials file in MLflow's own format (``[mlflow]`` with ``mlflow_tracking_username`` and
#: ``mlflow_tracking_password``, as ``~/.mlflow/credentials``): MLflow reads that file only from the home
#: directory, which SLURM jobs of a shared account (root on the local cluster) have in common
CREDENTIALS_ENV = "WSVM_MLFLOW_CREDENTIALS"
#: what MLflow's REST client says of a refused request (its message carries the HTTP status)
_REFUSED = re.compile(r"error code (401|403)\b")


class TrackingUnavailable(RuntimeError):
    """The tracking store does not answer (server down, database unreachable)."""


class TrackingRefused(RuntimeError):
    """The tracking server refused the credentials (HTTP 401) or the permission (403), or the credentials
    file is missing or unsafe: fixed by the user, never by another attempt."""


def auth_refusal(exc: BaseException) -> int | None:
    """401 or 403 when ``exc`` is a tracking server's refusal of a request (credentials, permission),
    else None."""
    code = getattr(exc, "error_code", None)
    if code in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        return 401 if code == "UNAUTHENTICATED" else 403
    match = _REFUSED.search(str(exc))
    return int(match.group(1)) if match else None


def use_credentials_file() -> str | None:
    """Authenticate this process's requests to a tracking server with the file that
    ``$WSVM_MLFLOW_CREDENTIALS`` names; returns its path (None when the variable is unset).

    MLflow takes a user and password from its environment variables, read at every request; they are
    set here, inside the process, so that they never appear on a command line (``ps``), in a SLURM or
    Snakemake job script or log, or among a run's params and tags. The file must be readable by its
    owner only (as ssh requires of a private key): a password that others can read is not one."""
    path = os.environ.get(CREDENTIALS_ENV)
    if not path:
        return None
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        parser = configparser.ConfigParser()
        with open(path, encoding="utf-8") as f:  # ConfigParser.read would skip a file it cannot open
            parser.read_file(f)
    except OSError as exc:
        raise TrackingRefused(f"the tracking credentials file {path} (${CREDENTIALS_ENV}) cannot be read: {exc}. "
                              "On a cluster it must be on every node the jobs run on (scripts/local-cluster "
                              "start writes /etc/wsvm-cluster/mlflow-credentials).") from exc
    if mode & 0o077:
        raise TrackingRefused(f"the tracking credentials file {path} is readable by others (mode {mode:04o}): "
                              f"chmod 600 {path}, then change the password (docs/cluster.md).")
    section = parser["mlflow"] if parser.has_section("mlflow") else {}
    user, password = section.get("mlflow_tracking_username"), section.get("mlflow_tracking_password")
    if not user or not password:
        raise TrackingRefused(f"the tracking credentials file {path} lacks mlflow_tracking_username or "
                              "mlflow_tracking_password under [mlflow]")
    os.environ["MLFLOW_TRACKING_USERNAME"] = user
    os.environ["MLFLOW_TRACKING_PASSWORD"] = password
    return path


def experiment_name(prefix: str, experiment: str) -> str:
    """The MLflow experiment of a study's experiment: ``<prefix>/<experiment>``.
    """
    return f"{prefix}/{experiment}"


def is_transient(exc: BaseException) -> bool:
    """Whether an error is worth retrying (lock contention, busy database, flaky server); a server's
    refusal of the credentials or the permission never is."""
    if auth_refusal(exc) is not None:
        return False
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


def _being_created(path: str) -> bool:
    """Whether another process holds the creation lock of the store at ``path`` now, i.e. is still running
    MLflow's migrations: ``alembic_version`` has its row from the first migration on, so a store that has one
    may be half made (a job that started a little later than the first opened it then and ran into the
    migrations: "Online migration expected to match one row", or a half-made schema's missing attributes)."""
    import fcntl

    try:
        fd = os.open(f"{path}.lock", os.O_RDONLY)
    except OSError:
        return False  # no lock file: the store was not created under the lock, and nobody is creating it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


@contextmanager
def _store_creation(uri: str, sqlite_wal: bool):
    """Serialise the creation of a SQLite store: MLflow runs its schema migrations when a client first
    opens a new database, and concurrent migrations corrupt it. Inside the block the caller opens the
    store; while the database is new (or another process is still creating it), that happens under an
    exclusive lock on ``<database>.lock``, and a new store is then put in write-ahead-log mode when
    ``sqlite_wal`` (persistent; needs a local file system). An existing SQLite store, a tracking server or a
    file store is opened without a lock."""
    path = sqlite_path(uri)
    if path is None or (_sqlite_initialized(path) and not _being_created(path)):
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


def log_batches(metrics: list, params: list, tags: list):
    """Split metrics, params and tags into ``log_batch`` calls within MLflow's limits."""
    metrics, params, tags = list(metrics), list(params), list(tags)
    while metrics or params or tags:
        p, t = params[:BATCH_PARAMS], tags[:BATCH_TAGS]
        m = metrics[:BATCH_ENTRIES - len(p) - len(t)]
        params, tags, metrics = params[len(p):], tags[len(t):], metrics[len(m):]
        yield m, p, t


@contextmanager
def _http_budget(timeout_s: float, max_retries: int):
    """Bound MLflow's HTTP client (its documented environment variables) for the calls inside."""
    keys = {"MLFLOW_HTTP_REQUEST_TIMEOUT": str(int(timeout_s)), "MLFLOW_HTTP_REQUEST_MAX_RETRIES": str(max_retries)}
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(keys)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _fmt_param(v: Any) -> str:
    if isinstance(v, float):
        return repr(round(v, 10))
    return str(v)


def _entries(metrics: Mapping[str, Any], params: Mapping[str, Any] | None, tags: Mapping[str, Any] | None
             ) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """What a run stores of its metrics (NaN/inf and None dropped), params and tags: the same for every way of
    logging them."""
    return ({k: float(v) for k, v in metrics.items() if v is not None and math.isfinite(float(v))},
            {k: _fmt_param(v) for k, v in (params or {}).items()}, {k: str(v) for k, v in (tags or {}).items()})


class ModelRun(NamedTuple):
    """A finished run to log (:meth:`Tracker.log_finished_runs`): its name, tags, params and metrics, as
    :meth:`Tracker.create_run` takes them, and when its model was done (ms since the epoch): the run's start and
    end time and its metrics' timestamp."""

    name: str
    tags: Mapping[str, Any]
    params: Mapping[str, Any]
    metrics: Mapping[str, float]
    time_ms: int


def _database_store(uri: str) -> bool:
    """Whether ``uri`` is one of MLflow's database stores (an SQLAlchemy URI: ``sqlite:///...``,
    ``postgresql+psycopg2://...``)."""
    from mlflow.store.db.db_types import DATABASE_ENGINES

    return uri.split(":", 1)[0].split("+", 1)[0] in DATABASE_ENGINES


class _DatabaseRuns:
    """Finished runs written into an MLflow database store many in one transaction, by MLflow's own table
    models and sessions: the rows that its client's ``create_run`` (the run, its tags and ``mlflow.runName``),
    ``log_batch`` (params, metrics and latest metrics) and ``set_terminated`` (status, end time) write for each
    run, in one statement per table. Through the client a model run takes three sessions and an ORM object per
    entry: ~20 ms of this process's CPU on the 2-core machine, more than a small Experiment 8 job's model costs
    (docs/study.md, *MLflow*). ``tests/test_study_runner.py`` holds both ways to the runs its rows file says."""

    def __init__(self, uri: str, artifact_root: str | None):
        from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

        # the default artifact root only places the experiments the store creates; a run's artifacts go under
        # its experiment's location
        self.store = SqlAlchemyStore(uri, artifact_root or DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)

    def insert(self, experiment_id: str, runs: Iterable[tuple[str, ModelRun]], parent_id: str | None) -> None:
        """Insert ``runs`` ((run id, run) pairs) as FINISHED runs of the experiment, children of ``parent_id``."""
        from mlflow.entities import LifecycleStage, RunStatus, SourceType
        from mlflow.store.tracking.dbmodels.models import SqlLatestMetric, SqlMetric, SqlParam, SqlRun, SqlTag
        from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME, MLFLOW_USER
        from mlflow.utils.uri import append_to_uri_path
        from sqlalchemy import insert

        experiment = self.store.get_experiment(experiment_id)
        if experiment.lifecycle_stage != LifecycleStage.ACTIVE:  # as MLflow's create_run refuses it
            raise RuntimeError(f"MLflow experiment {experiment.name} ({experiment_id}) is deleted: no runs logged")
        rows: dict[Any, list[dict]] = {SqlRun: [], SqlTag: [], SqlParam: [], SqlMetric: []}
        for run_id, run in runs:
            metrics, params, tags = _entries(run.metrics, run.params,
                                             {**run.tags, MLFLOW_RUN_NAME: run.name,
                                              **({PARENT: parent_id} if parent_id else {})})
            rows[SqlRun].append({
                "run_uuid": run_id, "name": run.name, "experiment_id": int(experiment_id),
                "artifact_uri": append_to_uri_path(experiment.artifact_location, run_id,
                                                   self.store.ARTIFACTS_FOLDER_NAME),
                "source_type": SourceType.to_string(SourceType.UNKNOWN), "source_name": "",
                "entry_point_name": "", "source_version": "", "user_id": tags.get(MLFLOW_USER, "unknown"),
                "status": RunStatus.to_string(RunStatus.FINISHED), "start_time": run.time_ms,
                "end_time": run.time_ms, "deleted_time": None, "lifecycle_stage": LifecycleStage.ACTIVE})
            rows[SqlTag] += [{"run_uuid": run_id, "key": k, "value": v} for k, v in tags.items()]
            rows[SqlParam] += [{"run_uuid": run_id, "key": k, "value": v} for k, v in params.items()]
            rows[SqlMetric] += [{"run_uuid": run_id, "key": k, "value": v, "timestamp": run.time_ms, "step": 0,
                                 "is_nan": False} for k, v in metrics.items()]
        rows[SqlLatestMetric] = rows[SqlMetric]  # one value per metric: it is the latest
        with self.store.ManagedSessionMaker(read_only=False) as session:
            for table, values in rows.items():
                if values:
                    session.execute(insert(table.__table__), values)

    def slot_run_ids(self, experiment_id: str, slot: str) -> set[str]:
        """The ids of the active runs of the experiment tagged with job slot ``slot``: what
        :meth:`Tracker.check_slot` compares, without loading every run's params, metrics and tags as a
        search does."""
        from mlflow.entities import LifecycleStage
        from mlflow.store.tracking.dbmodels.models import SqlRun, SqlTag
        from sqlalchemy import select

        query = (select(SqlRun.run_uuid).join(SqlTag, SqlTag.run_uuid == SqlRun.run_uuid)
                 .where(SqlRun.experiment_id == int(experiment_id), SqlRun.lifecycle_stage == LifecycleStage.ACTIVE,
                        SqlTag.key == SLOT, SqlTag.value == slot))
        with self.store.ManagedSessionMaker() as session:
            return set(session.execute(query).scalars())


class Tracker:
    """Thin, retrying wrapper of :class:`mlflow.tracking.MlflowClient`, which writes batches of finished runs
    into a database store in one transaction each (:class:`_DatabaseRuns`).

    ``seconds`` accumulates the wall time spent in MLflow (import, store access, retries), which is
    the tracking overhead the study reports."""

    def __init__(self, uri: str, artifact_root: str | None = None, sqlite_wal: bool = True):
        self.seconds = 0.0
        self.calls = 0
        self.uri = uri
        self.artifact_root = artifact_root
        # With a tracking server, MLflow prints a link after every run it ends, fetching the run once more
        # to do so: one request per run for a line nobody reads in a batch job.
        os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        server = uri.startswith(("http://", "https://"))
        self.credentials = use_credentials_file() if server else None
        with self.timed():
            from mlflow.tracking import MlflowClient  # heavy import: counted as overhead

            with _store_creation(uri, sqlite_wal):
                self.client = MlflowClient(tracking_uri=uri)
                self.ensure_reachable()  # opens (and, if new, creates) the store
                self.database = _DatabaseRuns(uri, artifact_root) if _database_store(uri) else None
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

    def ensure_reachable(self, deadline_s: float | None = None) -> None:
        """Fail early, with a message that says what to check, when the store does not answer.

        Each try is one bounded request; tries repeat for ``deadline_s`` (default
        :data:`PREFLIGHT_DEADLINE_S`: a server being restarted, a SQLite database locked by a migration).
        A server that refuses the credentials fails at once (:class:`TrackingRefused`)."""
        deadline_s = PREFLIGHT_DEADLINE_S if deadline_s is None else deadline_s
        start = time.monotonic()
        while True:
            try:
                with _http_budget(PREFLIGHT_REQUEST_S, max_retries=0):
                    self.client.search_experiments(max_results=1)
                return
            except Exception as exc:  # noqa: BLE001 - reported below with the cause
                refused = auth_refusal(exc)
                if refused is not None:
                    raise TrackingRefused(self._refusal(refused, exc)) from exc
                if time.monotonic() - start + PREFLIGHT_PAUSE_S > deadline_s:
                    server = self.uri.startswith(("http://", "https://"))
                    hint = ("Is the tracking server running (scripts/local-cluster status) and is its database "
                            "up? A server whose database is down answers HTTP 500 or not at all."
                            if server else "Is the store's file or database reachable from this machine?")
                    raise TrackingUnavailable(
                        f"MLflow tracking store {self.uri} did not answer for {deadline_s:.0f} s: "
                        f"{str(exc).splitlines()[0][:300]}. {hint} Nothing was computed; rerun the job "
                        "(Snakemake's retry does) once the store is back.") from exc
                log.warning("tracking store %s not answering (%s); trying again in %d s", self.uri,
                            str(exc).splitlines()[0][:200], PREFLIGHT_PAUSE_S)
                time.sleep(PREFLIGHT_PAUSE_S)

    def _refusal(self, status: int, exc: BaseException) -> str:
        user = os.environ.get("MLFLOW_TRACKING_USERNAME")
        if status == 403:
            hint = (f"The account {user!r} may not use this store: the server's admin grants it MANAGE on the "
                    "study's experiments (or default_permission = MANAGE in the server's auth config).")
        elif self.credentials:
            hint = (f"The user and password of {self.credentials} (${CREDENTIALS_ENV}) are not the server's "
                    "account: after a password change, copy the server's credentials file again "
                    "(scripts/local-cluster start writes both; docs/cluster.md).")
        elif user:
            hint = "The server refused MLFLOW_TRACKING_USERNAME/MLFLOW_TRACKING_PASSWORD."
        else:
            hint = (f"No credentials were given: set {CREDENTIALS_ENV} to the credentials file "
                    "(`scripts/local-cluster env` prints it; docs/cluster.md).")
        return (f"MLflow tracking server {self.uri} refused the request (HTTP {status}): "
                f"{str(exc).splitlines()[0][:300]}. {hint} Nothing was computed; a new attempt cannot help.")

    # ----------------------------------------------------------------------------- experiments
    def experiment_id(self, name: str, description: str | None = None) -> str:
        """Id of the experiment ``name``, created (or restored when deleted) if needed; race-safe. The
        experiment is tagged as model training (MLflow 3's runs view) and, with ``description``, described."""
        if name in self._exp_ids:
            return self._exp_ids[name]

        def get_or_create() -> str:
            exp = self.client.get_experiment_by_name(name)
            if exp is not None:
                if exp.lifecycle_stage == "deleted":
                    self.client.restore_experiment(exp.experiment_id)
                if exp.tags.get(EXPERIMENT_KIND) != MODEL_TRAINING or (
                        description and exp.tags.get(DESCRIPTION) != description):
                    self._describe(exp.experiment_id, description)
                return exp.experiment_id
            location = None
            if self.artifact_root:
                safe = name.replace("/", "_")
                location = (Path(self.artifact_root) / safe).resolve().as_uri()
            try:
                tags = {EXPERIMENT_KIND: MODEL_TRAINING, **({DESCRIPTION: description} if description else {})}
                return self.client.create_experiment(name, artifact_location=location, tags=tags)
            except Exception as exc:  # another process created it first
                if "already exists" in str(exc).lower() or "RESOURCE_ALREADY_EXISTS" in str(exc):
                    exp = self.client.get_experiment_by_name(name)
                    if exp is not None:
                        return exp.experiment_id
                raise

        eid = self.call(get_or_create)
        self._exp_ids[name] = eid
        return eid

    def _describe(self, experiment_id: str, description: str | None) -> None:
        self.client.set_experiment_tag(experiment_id, EXPERIMENT_KIND, MODEL_TRAINING)
        if description:
            self.client.set_experiment_tag(experiment_id, DESCRIPTION, description)

    def init_store(self, names: Iterable[str], descriptions: Mapping[str, str] | None = None) -> dict[str, str]:
        """The experiments ``names`` in the store (created when missing, described by ``descriptions``
        (name -> text); the store itself is created when the tracker opens it)."""
        return {n: self.experiment_id(n, (descriptions or {}).get(n)) for n in names}

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

    def delete_runs(self, runs: Iterable, end_running_as: str | None = None) -> int:
        """Delete ``runs``; returns how many. With ``end_running_as`` (e.g. "KILLED"), a run still RUNNING is
        ended with that status first: a deleted run keeps its status, and a job killed mid-run must not
        read as running for ever in the store's trash or in ``mlflow gc``'s listing."""
        return sum(self._delete(run.info.run_id, end_running_as if run.info.status in ("RUNNING", "SCHEDULED")
                                else None) for run in runs)

    def _delete(self, run_id: str, end_as: str | None = None) -> int:
        """Delete one run, ended first with status ``end_as`` when given; 0 where a concurrent cleanup deleted it
        first, else 1."""
        try:
            if end_as:
                self.call(self.client.set_terminated, run_id, end_as)
            self.call(self.client.delete_run, run_id)
            return 1
        except Exception as exc:  # already deleted by a concurrent cleanup
            if "deleted" not in str(exc).lower() and "not found" not in str(exc).lower():
                raise
            return 0

    def delete_slot(self, experiment_id: str, slot: str) -> int:
        """Delete every active run (parents and children) of a job slot, those of an attempt that died
        mid-run ended as KILLED; returns how many."""
        return self.delete_runs(self.search(experiment_id, f"tags.`{SLOT}` = '{slot}'"), end_running_as="KILLED")

    def dataset_run(self, experiment_id: str, slot: str, params: Mapping[str, Any],
                    tags: Mapping[str, Any] | None = None) -> str:
        """The parent run of one data set slot (experiment/dataset/variant/seed-realization), created when
        missing. After creating one it looks again and keeps the oldest it sees, so jobs that start
        together mostly agree on one. It never deletes a data set run, not even its own twin: between its
        create and its second look another job may have adopted that twin (a run's start time is the
        client's clock before a request that a busy server may hold back, so a twin created earlier can
        appear later), and deleting it would leave that job's models under a deleted parent. Twins are
        merged once every job has ended, by :meth:`merge_dataset_twins`."""
        query = f"tags.`{DATASET_SLOT}` = '{slot}' and tags.`{KIND}` = 'dataset'"
        found = self.search(experiment_id, query)
        if not found:
            self.create_run(experiment_id, run_name=slot.split("/", 1)[1],
                            tags={KIND: "dataset", DATASET_SLOT: slot, **(tags or {})}, params=params, finished=True)
            found = self.search(experiment_id, query)
        return _oldest(found).info.run_id

    def merge_dataset_twins(self, experiment_id: str) -> int:
        """Give every data set slot one parent run: the children of a twin (see :meth:`dataset_run`) move
        to the oldest parent of their slot, and the twin is deleted. Returns how many twins it merged."""
        by_slot: dict[str, list] = {}
        for run in self.search(experiment_id, f"tags.`{KIND}` = 'dataset'"):
            by_slot.setdefault(run.data.tags.get(DATASET_SLOT, ""), []).append(run)
        merged = 0
        for runs in by_slot.values():
            keep = _oldest(runs).info.run_id
            for twin in runs:
                if twin.info.run_id == keep:
                    continue
                for child in self.search(experiment_id, f"tags.`{PARENT}` = '{twin.info.run_id}'"):
                    self.call(self.client.set_tag, child.info.run_id, PARENT, keep)
                merged += self.delete_runs([twin])
        if merged:
            log.info("merged %d twin data set runs", merged)
        return merged

    def create_run(self, experiment_id: str, run_name: str, tags: Mapping[str, Any],
                   params: Mapping[str, Any] | None = None, metrics: Mapping[str, float] | None = None,
                   parent_id: str | None = None, finished: bool = False, time_ms: int | None = None) -> str:
        """Create a run with tags, params and metrics: create_run + log_batch (one call within MLflow's
        limits, which a model's row is) + set_terminated: three requests per run. ``time_ms``: its start
        (and, ``finished``, end) time and its metrics' timestamp, in ms since the epoch (default: now)."""
        tags = {k: str(v) for k, v in tags.items()}
        if parent_id:
            tags[PARENT] = parent_id
        run = self.call(self.client.create_run, experiment_id, start_time=time_ms, tags=tags, run_name=run_name)
        run_id = run.info.run_id
        self.log_metrics(run_id, metrics or {}, params=params, time_ms=time_ms)
        if finished:
            self.call(self.client.set_terminated, run_id, "FINISHED", end_time=time_ms)
        return run_id

    def log_finished_runs(self, experiment_id: str, runs: Iterable[ModelRun], parent_id: str | None = None
                          ) -> list[str]:
        """Log ``runs`` as FINISHED runs of the experiment, children of ``parent_id``; returns their ids, in
        order. A database store takes them in one transaction (:class:`_DatabaseRuns`), so a batch is in the
        store whole or not at all and a retry after "database is locked" writes it once; a tracking server as
        three requests each (:meth:`create_run`)."""
        runs = list(runs)
        if self.database is None:
            return [self.create_run(experiment_id, r.name, r.tags, r.params, r.metrics, parent_id, finished=True,
                                    time_ms=r.time_ms) for r in runs]
        ids = [uuid.uuid4().hex for _ in runs]  # MLflow's run ids, drawn here so that a retry reuses them
        if runs:
            self.call(self.database.insert, experiment_id, list(zip(ids, runs)), parent_id)
        return ids

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], tags: Mapping[str, Any] | None = None,
                    params: Mapping[str, Any] | None = None, time_ms: int | None = None) -> None:
        """Log metrics (NaN/inf and None dropped), params and tags in as few ``log_batch`` calls as
        MLflow's limits allow; ``time_ms``: the metrics' timestamp (default: now)."""
        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000) if time_ms is None else time_ms
        metrics, params, tags = _entries(metrics, params, tags)
        batches = log_batches([Metric(k, v, now, 0) for k, v in metrics.items()],
                              [Param(k, v) for k, v in params.items()], [RunTag(k, v) for k, v in tags.items()])
        for m, p, t in batches:
            self.call(self.client.log_batch, run_id, metrics=m, params=p, tags=t)

    def terminate(self, run_id: str, status: str = "FINISHED") -> None:
        self.call(self.client.set_terminated, run_id, status)

    def check_slot(self, experiment_id: str, slot: str, job_run_id: str, children: Iterable[str]) -> int:
        """Make the slot's runs exactly the job run and the model runs this job logged (``children``: their
        run ids): delete any other run of the slot, such as the twin of a create_run that
        a dropped connection made the client send twice, or a run of an earlier attempt; raise if a
        logged run is missing."""
        children = list(children)
        keep = {job_run_id, *children}
        if self.database is not None:
            found = self.call(self.database.slot_run_ids, experiment_id, slot)
        else:
            found = {r.info.run_id for r in self.search(experiment_id, f"tags.`{SLOT}` = '{slot}'")}
        extra = found - keep
        if extra:
            log.warning("removing %d duplicate/stray runs of %s", len(extra), slot)
            for run_id in sorted(extra):
                self._delete(run_id)
        missing = keep - found
        if missing:
            raise RuntimeError(f"{slot}: {len(missing)} of its runs are missing from the store after logging")
        return len(children)

    def log_artifacts(self, run_id: str, files: Iterable[str | Path], artifact_path: str | None = None):
        for f in files:
            self.call(self.client.log_artifact, run_id, str(f), artifact_path)


def _oldest(runs):
    """The run created first (ties: the smaller id), the one every job and the summary agree on."""
    return min(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id))
