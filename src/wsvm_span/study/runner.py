"""Running one job of any kind (``study.experiments``), in a few named steps:

1. ``kind.prepare``: what every row of the job shares (the split, its kernels, ...), computed once;
2. :class:`JobRuns`: the job's MLflow runs (a parent run per job, a child run per row), replacing the
   runs of an earlier attempt of the same slot;
3. ``kind.evaluate``: every row of the chunk, with progress lines in the job's log; the rows' runs are logged
   in batches (at most :data:`FLUSH_RUNS`, at least every :data:`FLUSH_S`) and the last at the job's end;
4. :func:`write_chunk`: the rows and their provenance, written last and atomically, so a chunk file
   exists only for a job whose MLflow runs are complete.

Under a workflow, :func:`run_attempt` wraps these in one attempt of the job (``study.attempts``): its own
log, the slot's lock, a record of how it ended (the retry policy reads it), and the rows that an earlier
attempt of the same workflow run finished, put back instead of computed again.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pyarrow as pa

from . import provenance
from .attempts import (FATAL, NOT_RETRIED_STATUS, OK, Attempt, JobFiles, SlotLock, append_record, classify, forget,
                       keep, not_retried, read_records, restore_kept)
from .catalog import mlflow_description
from .config import RuntimeSettings, canonical_json
from .experiments import PLACING_COLUMNS, kind_of
from .results_schema import ROW_SCHEMAS, rows_to_table, write_rows_atomic
from .tracking import COMPLETE, JOB_RUN, KEY, KIND, MODEL_INDEX, SLOT, ModelRun, Tracker, experiment_name

__all__ = ["ChunkResult", "FLUSH_RUNS", "FLUSH_S", "JobRuns", "run_attempt", "run_chunk", "write_chunk"]

log = logging.getLogger(__name__)

#: a job logs its model runs in batches (one transaction each in a database store): a batch is written once it
#: has this many runs, which holds a shared SQLite store for about a second (0.9-1.2 s for 1,000 runs of an
#: Experiment 8 job on the loaded 2-core machine), far within the 20 s that MLflow lets other jobs wait for it ...
FLUSH_RUNS = 1000
#: ... or once this many seconds have passed since the last, so that a long job's models show in the UI as it
#: runs; the rest at the job's end
FLUSH_S = 60.0


@dataclass
class ChunkResult:
    n_models: int
    wall_s: float
    compute_s: float
    tracking_s: float
    load_s: float
    parent_run_id: str | None
    rows: list[dict] = field(repr=False, default_factory=list)
    kept_from_attempt: int | None = None  # the rows were an earlier attempt's (nothing was computed)

    @property
    def tracking_share(self) -> float:
        return self.tracking_s / self.wall_s if self.wall_s > 0 else math.nan


def _qp_solver_name(requested: str | None) -> str:
    from wsvm_span.solvers.qp import qp_solver_name

    return qp_solver_name(requested or "auto")


class JobRuns:
    """The MLflow runs of one job (layout: ``study.tracking``): finds or creates its data set's parent run,
    deletes the runs of an earlier attempt of its slot, opens the job run (provenance tags, the kind's
    params), logs one finished model run per row under the data set's run (the kind's row params; the
    numeric columns as metrics) in batches (:data:`FLUSH_RUNS`, :data:`FLUSH_S`), checks at the end that the
    slot holds exactly the runs it logged, and marks the job run complete (or FAILED on error). A job killed
    between two batches leaves its job run incomplete and some of its model runs, which its rerun deletes."""

    def __init__(self, job, settings: RuntimeSettings, prepared, data_sha: str, tracker: Tracker,
                 attempt: Attempt | None = None):
        self.job, self.settings, self.kind, self.tracker = job, settings, kind_of(job), tracker
        # which cluster job and attempt logged the runs (shown in the UI beside the run)
        self.attempt_tags = attempt.tags() if attempt is not None else {}
        self.experiment_id = self.tracker.experiment_id(experiment_name(settings.experiment_prefix, job.experiment),
                                                        mlflow_description(job.experiment))
        self.dataset_id = self.tracker.dataset_run(
            self.experiment_id, job.dataset_slot,
            params={"experiment": job.experiment, "dataset": job.dataset, "variant": job.variant, "seed": job.seed,
                    "realization": job.realization},
            tags={"config_hash": settings.config_hash})
        self.children: list[str] = []  # the model runs this job logged
        self.pending: list[ModelRun] = []  # the model runs still to log (the next batch)
        self.flushed_at = time.monotonic()
        removed = self.tracker.delete_slot(self.experiment_id, job.slot)
        if removed:
            log.info("%s: deleted %d runs of an earlier attempt", job.slot, removed)
        self.code = provenance.code_version()
        schema = ROW_SCHEMAS[self.kind.ROWS]
        self.numeric = [f.name for f in schema
                        if (pa.types.is_floating(f.type) or pa.types.is_integer(f.type))
                        and f.name not in PLACING_COLUMNS | self.kind.ROW_IDENTIFIERS]
        tags = {
            KIND: "job", SLOT: job.slot, KEY: f"{job.slot}@{job.spec_hash[:16]}", COMPLETE: "false",
            "code_version": self.code, "config_hash": settings.config_hash, "spec_hash": job.spec_hash,
            "data_sha256": data_sha, "data_files": canonical_json(dict(prepared.checksums))[:5000],
            "qp_solver": _qp_solver_name(getattr(job, "qp_solver", None)), "engine": getattr(job, "engine", ""),
            **{f"lib.{k}": v for k, v in provenance.library_versions().items()},
            **{f"machine.{k}": v for k, v in provenance.machine_info().items()},
            **self.attempt_tags,
        }
        self.parent_id = self.tracker.create_run(self.experiment_id, run_name=job.slot, tags=tags,
                                                 params=self.kind.run_params(job, prepared), parent_id=self.dataset_id)

    @property
    def seconds(self) -> float:
        return self.tracker.seconds

    def log_row(self, row: Mapping[str, Any]) -> None:
        if not self.settings.child_runs:
            return
        idx = row["model_index"]
        tags = {KIND: "model", SLOT: self.job.slot, JOB_RUN: self.parent_id, MODEL_INDEX: idx,
                "dataset": self.job.dataset, "code_version": self.code, "config_hash": self.settings.config_hash,
                **self.attempt_tags}
        tags.update({k: row[k] for k in ("engine", "qp_solver") if k in row})
        params = self.kind.row_params(self.job, row)
        metrics = {k: row[k] for k in self.numeric if k in row and k not in params}
        # named for the UI, where it shows under its data set's run
        self.pending.append(ModelRun(f"{self.job.dataset} m{idx}", tags, params, metrics, int(time.time() * 1000)))
        if len(self.pending) >= FLUSH_RUNS or time.monotonic() - self.flushed_at >= FLUSH_S:
            self.flush()

    def flush(self) -> None:
        """Log the pending model runs (one batch)."""
        self.children += self.tracker.log_finished_runs(self.experiment_id, self.pending, parent_id=self.dataset_id)
        self.pending = []
        self.flushed_at = time.monotonic()

    def finish(self, rows: list[dict], timings: Mapping[str, float]) -> None:
        self.flush()
        self.tracker.check_slot(self.experiment_id, self.job.slot, self.parent_id, self.children)
        tags = {COMPLETE: "true"}
        tags.update({k: ",".join(sorted({str(r[k]) for r in rows})) for k in ("engine", "qp_solver")
                     if rows and k in rows[0]})
        self.tracker.log_metrics(self.parent_id, {**timings, "tracking_s": self.tracker.seconds,
                                                  "tracking_share": self.tracker.seconds / timings["wall_s"],
                                                  "n_models": len(rows)}, tags=tags)
        self.tracker.terminate(self.parent_id, "FINISHED")

    def fail(self) -> None:
        try:
            self.tracker.terminate(self.parent_id, "FAILED")
        except Exception:  # noqa: BLE001 - best effort; a rerun deletes the slot anyway
            pass


def write_chunk(rows: list[dict], output: str | Path, record: Mapping[str, Any], rows_kind: str) -> None:
    """The rows with their provenance, atomically."""
    write_rows_atomic(rows_to_table(rows, provenance=record, kind=rows_kind), output)


def run_chunk(job, output: str | Path | None, settings: RuntimeSettings | None = None,
              attempt: Attempt | None = None, files: JobFiles | None = None) -> ChunkResult:
    """Run one job and write its rows to ``output`` (skipped when None). Returns the rows and the time
    split (preparation, compute, tracking). ``attempt``: which attempt this is (its runs are tagged with
    it); ``files``: the job's attempt files, with which a finished earlier attempt's rows are put back
    instead of computed (:func:`wsvm_span.study.attempts.restore_kept`) and a finished chunk is kept."""
    settings = settings or RuntimeSettings()
    kind = kind_of(job)
    t_start = time.perf_counter()
    tracker = None
    if settings.tracking_enabled and settings.tracking_uri:
        # first: a store that does not answer fails the job (TrackingUnavailable) before anything is computed
        tracker = Tracker(settings.tracking_uri, settings.artifact_root, sqlite_wal=settings.sqlite_wal)
    if files is not None and attempt is not None and output is not None:
        experiment_id = None
        if tracker is not None:
            experiment_id = tracker.experiment_id(experiment_name(settings.experiment_prefix, job.experiment),
                                                  mlflow_description(job.experiment))
        kept = restore_kept(files, job, attempt, settings.config_hash, tracker, experiment_id, settings.child_runs)
        if kept is not None:
            log.info("%s: kept the %d rows that attempt %d of this workflow run finished (its MLflow runs are "
                     "complete): nothing computed again", job.slot, job.n_models, kept["kept_from_attempt"])
            return ChunkResult(n_models=job.n_models, wall_s=time.perf_counter() - t_start, compute_s=0.0,
                               tracking_s=tracker.seconds if tracker else 0.0, load_s=0.0,
                               parent_run_id=kept.get("mlflow_parent_run_id"),
                               kept_from_attempt=kept["kept_from_attempt"])
        forget(files)  # computed afresh below: no older rows stay beside it
    t_prepare = time.perf_counter()
    prepared = kind.prepare(job, settings)
    prepare_s = time.perf_counter() - t_prepare
    data_sha = provenance.data_sha256(prepared.checksums)

    runs = JobRuns(job, settings, prepared, data_sha, tracker, attempt) if tracker is not None else None
    try:
        t0 = time.perf_counter()
        tracked_before = runs.seconds if runs else 0.0
        rows = kind.evaluate(job, prepared, runs.log_row if runs else None)
        compute_s = time.perf_counter() - t0 - ((runs.seconds - tracked_before) if runs else 0.0)
        if runs:
            runs.finish(rows, {"wall_s": time.perf_counter() - t_start, "prepare_s": prepare_s})
    except BaseException:
        if runs:
            runs.fail()
        raise

    wall = time.perf_counter() - t_start
    tracking_s = runs.seconds if runs else 0.0
    extra = kind.provenance(job, prepared)
    load_s = prepare_s - float(extra.get("setup_s", 0.0))
    result = ChunkResult(n_models=len(rows), wall_s=wall, compute_s=compute_s, tracking_s=tracking_s,
                         load_s=load_s, parent_run_id=runs.parent_id if runs else None, rows=rows)
    if output is not None:
        write_chunk(rows, output, {
            "kind": job.kind, "slot": job.slot, "job_key": f"{job.slot}@{job.spec_hash[:16]}",
            "spec_hash": job.spec_hash, "config_hash": settings.config_hash,
            "code_version": provenance.code_version(), "data_sha256": data_sha,
            "data_files": dict(prepared.checksums), "machine": provenance.machine_info(),
            "library_versions": provenance.library_versions(),
            "qp_solver": sorted({r["qp_solver"] for r in rows if "qp_solver" in r}),
            "engine": sorted({r["engine"] for r in rows if "engine" in r}), "wall_s": wall, "compute_s": compute_s,
            "tracking_s": tracking_s, "load_s": load_s, "prepare_s": prepare_s, "n_models": len(rows),
            "memory_limit_mb": settings.memory_mb, "mlflow_parent_run_id": result.parent_run_id,
            "mlflow_experiment": experiment_name(settings.experiment_prefix, job.experiment) if runs else None,
            **({"attempt": attempt.as_record()} if attempt is not None else {}),
            **extra,
        }, kind.ROWS)
        if files is not None:
            keep(files)
    log.info("%s: %d rows in %.1fs (compute %.1fs, tracking %.2fs = %.1f%%)", job.slot, len(rows), wall,
             compute_s, tracking_s, 100 * result.tracking_share)
    return result


def run_attempt(spec: str, output: str | Path, settings: RuntimeSettings, attempt: Attempt, files: JobFiles,
                slot_wait_s: float) -> tuple[int, ChunkResult | None]:
    """One attempt of the job of ``spec`` (its JSON) under a workflow (module doc): stop at once when the
    previous attempt of this workflow run failed for good; else read the spec, hold the slot's lock
    (waiting up to ``slot_wait_s`` for another holder), run the job, and record how it ended. Returns
    (exit status, result); an exception is recorded with its verdict and raised again."""
    from .experiments import job_from_json

    log.info("wsvm-span run-chunk: %s", attempt.describe())
    fatal = not_retried(files, attempt)
    if fatal is not None:  # the attempt that failed, not one that was not retried after it
        failed = fatal.get("failed_attempt", fatal["attempt"])
        log.error("not retried: attempt %d of this workflow run failed with an error that a new attempt or bigger "
                  "limits cannot fix:\n    %s\nIts log: %s. Fix the cause, then run snakemake again.",
                  failed, fatal.get("error", "?"), fatal.get("log", "beside this one"))
        append_record(files, attempt, "end", verdict=FATAL, error=fatal.get("error"), not_retried=True,
                      failed_attempt=failed, log=fatal.get("log"))
        return NOT_RETRIED_STATUS, None
    lock = SlotLock(files, attempt)
    try:
        job = job_from_json(spec)
        log.info("job %s", job.slot)
        lock.acquire(slot_wait_s)
    except BaseException as exc:
        append_record(files, attempt, "end", verdict=classify(exc), error=_one_line(exc),
                      log=str(files.attempt_log(attempt)))
        raise
    try:
        if attempt.number == 1 and not read_records(files, attempt.workflow_run):
            files.records.unlink(missing_ok=True)  # a new workflow run: the records of earlier ones go
        append_record(files, attempt, "start")
        try:
            result = run_chunk(job, output, settings, attempt=attempt, files=files)
        except BaseException as exc:
            append_record(files, attempt, "end", verdict=classify(exc), error=_one_line(exc),
                          log=str(files.attempt_log(attempt)))
            raise
        append_record(files, attempt, "end", verdict=OK, spec_hash=job.spec_hash,
                      kept_from_attempt=result.kept_from_attempt, log=str(files.attempt_log(attempt)))
        return 0, result
    finally:
        lock.release()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]
