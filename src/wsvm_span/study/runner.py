"""The grid job: one chunk of the models of one (experiment, data set, weighting, seed, realization).

The job loads the split, computes the kernel cache, the CV folds and the per-training-set constants
(D, R^2) once, then evaluates every model of its chunk with ``wsvm_span.evaluate_model`` under one
BLAS thread, logging each model as a child run of the job's parent run.  The chunk's parquet file is
written last and atomically, so a chunk file exists only for a job whose MLflow runs are complete.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import provenance
from .config import canonical_json, grid_point, job_slot
from .schema import COLUMNS, SchemaError, rows_to_table, write_rows_atomic
from .tracking import COMPLETE, KEY, KIND, MODEL_INDEX, SLOT, Tracker, experiment_name

__all__ = ["ChunkOptions", "ChunkResult", "evaluation_row", "run_chunk"]

log = logging.getLogger(__name__)


@dataclass
class ChunkOptions:
    """Where data come from and where runs go (settings that do not change the results)."""

    data_dir: str | None = None
    data_mirror: str | None = None
    tracking_uri: str | None = None
    experiment_prefix: str = "wsvm-span"
    artifact_root: str | None = None
    child_runs: bool = True
    config_hash: str = "unknown"


@dataclass
class ChunkResult:
    n_models: int
    wall_s: float
    compute_s: float
    tracking_s: float
    load_s: float
    parent_run_id: str | None
    rows: list[dict] = field(repr=False, default_factory=list)

    @property
    def tracking_share(self) -> float:
        return self.tracking_s / self.wall_s if self.wall_s > 0 else math.nan


def _weights(ws, spec: Mapping[str, Any], split, point: Mapping[str, float]):
    if spec["weighting"] == "class":
        return ws.class_weights(split.y_train, 2.0 ** point["log2_C_plus"], 2.0 ** point["log2_C_minus"])
    if split.scores is None:
        raise ValueError(f"{split.name} has no importance scores; sigmoid weights need them")
    return ws.sigmoid_weights(split.scores, point["A"], point["B"], 2.0 ** point["log2_C"], sigma=spec["sigma"])


def evaluation_row(values: Mapping[str, Any]) -> dict[str, Any]:
    """The schema columns of one ``ModelEvaluation.as_dict()``; a field that is not a column of the
    results schema is an error (schema and evaluation must not drift apart silently)."""
    unknown = [k for k in values if k not in COLUMNS]
    if unknown:
        raise SchemaError(
            f"ModelEvaluation field(s) {', '.join(map(repr, unknown))} are not columns of the results schema; "
            "add them to wsvm_span/study/schema.py (ROW_SCHEMA) or drop them from ModelEvaluation"
        )
    return dict(values)


def _warm_up(ws, K, y, spec, split, point) -> None:
    """Train and evaluate once on a small subsample before timing, so that lazy imports and one-time
    initialisations (LIBSVM bindings, QP solver) are not charged to the first model (Table 6)."""
    import numpy as np

    idx = np.concatenate([np.flatnonzero(y == 1)[:12], np.flatnonzero(y == -1)[:12]])
    if len(np.unique(y[idx])) < 2:
        return
    C = _weights(ws, spec, split, point)[idx]
    Ks = K[np.ix_(idx, idx)]
    try:
        ws.evaluate_model(Ks, y[idx], C, Ks[:4], y[idx][:4], folds=np.arange(len(idx)) % 2,
                          D=ws.enclosing_ball_diameter(Ks, solver=spec["svm"]["qp_solver"]),
                          R2=ws.kernel_radius2(Ks),
                          engine=spec["svm"]["engine"], qp_solver=spec["svm"]["qp_solver"], compute_loo=True,
                          tol=float(spec["svm"]["tol"]))
    except Exception as exc:  # noqa: BLE001 - a warm-up only; the real evaluation reports errors
        log.debug("warm-up failed: %s", exc)


def run_chunk(spec: Mapping[str, Any], output: str | Path | None, options: ChunkOptions | None = None,
              tracking: bool = True) -> ChunkResult:
    """Run one grid job described by ``spec`` (see :func:`wsvm_span.study.config.plan_jobs`) and write
    its rows to ``output`` (skipped when None). Returns the rows and the time split."""
    import wsvm_span as ws
    from wsvm_span.data import load_dataset

    options = options or ChunkOptions()
    t_start = time.perf_counter()
    exp, dataset, weighting = spec["experiment"], spec["dataset"], spec["weighting"]
    seed, realization, chunk = int(spec["seed"]), int(spec["realization"]), int(spec["chunk"])
    start, stop = (int(v) for v in spec["models"])
    axes = spec["axes"]
    slot = job_slot(exp, dataset, weighting, seed, realization, chunk)
    spec_hash = hashlib.sha256(canonical_json(dict(spec)).encode()).hexdigest()
    job_key = f"{slot}@{spec_hash[:16]}"
    loo_models = set(int(i) for i in spec.get("loo_models", []))
    max_loo_l = spec["loo"]["max_train_size"]
    all_loo_l = int(spec["loo"].get("all_up_to", 0))

    t0 = time.perf_counter()
    split = load_dataset(dataset, seed=seed, realization=realization, data_dir=options.data_dir,
                         mirror=options.data_mirror)
    load_s = time.perf_counter() - t0
    l, d = int(len(split.y_train)), int(split.d)
    if l <= all_loo_l and (max_loo_l is None or l <= int(max_loo_l)):
        loo_models = set(range(start, stop))
    elif max_loo_l is not None and l > int(max_loo_l):
        loo_models = set()
    gamma = 1.0 / d
    data_sha = provenance.data_sha256(split.checksums)
    qp_requested = spec["svm"]["qp_solver"]
    qp_name = ws.qp_solver_name(qp_requested)
    libs = provenance.library_versions()
    code = provenance.code_version()
    log.info("%s: l=%d d=%d models %d..%d (%d with exact LOO) qp=%s", slot, l, d, start, stop - 1,
             sum(start <= i < stop for i in loo_models), qp_name)

    rows: list[dict] = []
    engines, solvers = set(), set()
    t0 = time.perf_counter()
    with ws.single_threaded():  # one processor: parallel jobs must not oversubscribe the cores
        # D (enclosing ball) is computed by the configured QP solver
        cache = ws.KernelCache(split.X_train, gamma, X_test=split.X_test, qp_solver=qp_requested)
        K, K_test = cache.train, cache.test
        folds = ws.stratified_folds(split.y_train, k=int(spec["cv"]["folds"]), seed=int(spec["cv"]["seed"]) + seed)
        D, R2 = cache.diameter, cache.radius2
        _warm_up(ws, K, split.y_train, spec, split, grid_point(axes, start))
    t_setup = time.perf_counter() - t0

    tracker = parent_id = eid = None
    if tracking and options.tracking_uri:
        tracker = Tracker(options.tracking_uri, options.artifact_root)
        eid = tracker.experiment_id(experiment_name(options.experiment_prefix, exp))
        removed = tracker.delete_slot(eid, slot)
        if removed:
            log.info("%s: deleted %d runs of an earlier attempt", slot, removed)
        tags = {
            KIND: "job", SLOT: slot, KEY: job_key, COMPLETE: "false",
            "code_version": code, "config_hash": options.config_hash, "spec_hash": spec_hash,
            "data_sha256": data_sha, "data_files": canonical_json(dict(split.checksums or {}))[:5000],
            "qp_solver": qp_name, "engine": spec["svm"]["engine"],
            **{f"lib.{k}": v for k, v in libs.items()},
            **{f"machine.{k}": v for k, v in provenance.machine_info().items()},
        }
        params = {
            "experiment": exp, "dataset": dataset, "weighting": weighting, "seed": seed,
            "realization": realization, "chunk": chunk, "model_start": start, "model_stop": stop,
            "n_models": stop - start, "l": l, "d": d, "gamma": gamma, "tol": spec["svm"]["tol"],
            "engine_requested": spec["svm"]["engine"], "qp_solver_requested": qp_requested,
            "cv_folds": spec["cv"]["folds"], "cv_seed": spec["cv"]["seed"] + seed,
            "n_loo": sum(start <= i < stop for i in loo_models),
            **{f"grid.{k}": f"{min(v)}:{max(v)}:{len(v)}" for k, v in axes.items()},
        }
        if "sigma" in spec:
            params["sigma"] = spec["sigma"]
        parent_id = tracker.create_run(eid, run_name=slot, tags=tags, params=params)

    try:
        t0 = time.perf_counter()
        tracked_before = tracker.seconds if tracker is not None else 0.0
        with ws.single_threaded():
            for idx in range(start, stop):
                point = grid_point(axes, idx)
                C = _weights(ws, spec, split, point)
                compute_loo = idx in loo_models
                ev = ws.evaluate_model(K, split.y_train, C, K_test, split.y_test, folds=folds, D=D, R2=R2,
                                       engine=spec["svm"]["engine"], qp_solver=qp_requested,
                                       compute_loo=compute_loo, tol=float(spec["svm"]["tol"]),
                                       check_input=False)  # K comes from KernelCache: valid by construction
                values = ev.as_dict()
                row = evaluation_row(values)
                row.update(point)
                row.update(experiment=exp, dataset=dataset, weighting=weighting, seed=seed,
                           realization=realization, gamma=gamma, l=l, d=d, model_index=idx, chunk=chunk)
                rows.append(row)
                engines.add(ev.engine)
                solvers.add(ev.qp_solver)
                if tracker is not None and options.child_runs:
                    metrics = {k: values[k] for k in values if k not in ("engine", "qp_solver")}
                    tracker.create_run(
                        eid, run_name=f"{slot}/m{idx}",
                        tags={KIND: "model", SLOT: slot, MODEL_INDEX: idx, "engine": ev.engine,
                              "qp_solver": ev.qp_solver, "code_version": code,
                              "config_hash": options.config_hash},
                        params={**point, "model_index": idx}, metrics=metrics, parent_id=parent_id,
                        finished=True)
        compute_s = time.perf_counter() - t0 - ((tracker.seconds - tracked_before) if tracker is not None else 0.0)
        if tracker is not None:
            if options.child_runs:
                tracker.check_children(eid, slot, parent_id, range(start, stop))
            wall = time.perf_counter() - t_start
            tracker.log_metrics(parent_id, {
                "wall_s": wall, "load_s": load_s, "setup_s": t_setup, "tracking_s": tracker.seconds,
                "tracking_share": tracker.seconds / wall, "n_models": len(rows),
            }, tags={COMPLETE: "true", "engine": ",".join(sorted(engines)),
                     "qp_solver": ",".join(sorted(solvers))})
            tracker.terminate(parent_id, "FINISHED")
    except BaseException:
        if tracker is not None and parent_id is not None:
            try:
                tracker.terminate(parent_id, "FAILED")
            except Exception:  # noqa: BLE001 - best effort; a rerun deletes the slot anyway
                pass
        raise

    wall = time.perf_counter() - t_start
    tracking_s = tracker.seconds if tracker is not None else 0.0
    result = ChunkResult(n_models=len(rows), wall_s=wall, compute_s=compute_s, tracking_s=tracking_s,
                         load_s=load_s, parent_run_id=parent_id, rows=rows)
    if output is not None:
        prov = {
            "slot": slot, "job_key": job_key, "spec_hash": spec_hash, "config_hash": options.config_hash,
            "code_version": code, "data_sha256": data_sha, "data_files": dict(split.checksums or {}),
            "machine": provenance.machine_info(), "library_versions": libs, "qp_solver": sorted(solvers),
            "engine": sorted(engines), "wall_s": wall, "compute_s": compute_s, "tracking_s": tracking_s,
            "load_s": load_s, "setup_s": t_setup, "mlflow_parent_run_id": parent_id, "mlflow_experiment": (
                experiment_name(options.experiment_prefix, exp) if tracker is not None else None),
        }
        write_rows_atomic(rows_to_table(rows, provenance=prov), output)
    log.info("%s: %d models in %.1fs (compute %.1fs, tracking %.2fs = %.1f%%)", slot, len(rows), wall,
             compute_s, tracking_s, 100 * result.tracking_share)
    return result
