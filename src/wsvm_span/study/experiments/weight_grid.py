"""The weight-grid job (Experiments 1, 2 and 6): one chunk of the models of one data set's grid of
weights, one replicate. Every model is trained on all training points and gets its test error and
every estimate (span-rule, span bound, K-fold CV, xi-alpha, SV count, exact LOO for a seeded sample).

:class:`GridJob` is the one definition of what such a job computes: the planner builds it from the
config alone (no data is loaded, so planning the paper-size study is quick), the Snakemake rule passes
it to ``wsvm-span run-chunk`` as JSON, and the runner reads it back.
"""

from __future__ import annotations

import fnmatch
import logging
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from wsvm_span.data import DATASETS

from .. import catalog
from ..cost import job_resources, memory_mb
from ..grid import grid_axes, grid_point, grid_size
from ..results_schema import COLUMNS, SchemaError
from .base import (JobIdentity, KindCapabilities, SplitProblem, evaluate_models, grid_job_memory_mb, replicates,
                   warm_up_indices)

__all__ = ["GridJob", "GridProblem", "JOB", "KIND", "ROWS", "chunk_size", "config_problems", "engine", "evaluate",
           "evaluation_row", "experiment_datasets", "follows_path", "loo_models", "loo_selection", "model_weights",
           "plan", "prepare"]

log = logging.getLogger(__name__)

#: the kind's name (a job spec's "kind") and the row schema of its jobs (``results_schema.ROW_SCHEMAS``):
#: one row per trained model
KIND = "weight_grid"
ROWS = "model"
#: priced per model by the cost model; trained by the config's svm.engine (or the experiment's, per data set)
CAPABILITIES = KindCapabilities()
ROW_IDENTIFIERS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class GridJob(JobIdentity):
    """Models ``model_start .. model_stop - 1`` of one data set's grid, one replicate.

    axes : the grid (name -> values, in grid order; model ``i`` is ``grid_point(axes, i)``)
    engine, qp_solver, tol : how models are trained and span QPs solved (config ``svm``; the engine per data set
        where the experiment names one)
    cv_folds, cv_seed : the stratified folds of K-fold CV (the fold seed is ``cv.seed + seed``)
    loo_models : the model indices of this chunk that get exact LOO (decided by the planner from the
        config's ``loo`` settings and the data set's training size)
    sigma : the floor of the sigmoid weights (sigmoid weighting only)
    """

    kind: ClassVar[str] = KIND

    weighting: str
    model_start: int
    model_stop: int
    axes: dict[str, list[float]] = field(hash=False)
    engine: str
    qp_solver: str
    tol: float
    cv_folds: int
    cv_seed: int
    loo_models: tuple[int, ...]
    sigma: float | None = None

    @property
    def variant(self) -> str:
        return self.weighting

    @classmethod
    def normalise(cls, raw: dict) -> dict:
        raw = cls.normalise_axes(raw)
        raw["loo_models"] = tuple(int(i) for i in raw["loo_models"])
        return raw


# -------------------------------------------------------------------------------------------- planning
def experiment_datasets(cfg: Mapping[str, Any], experiment: str) -> list[str]:
    """The data sets an experiment of the config runs on (the ringnorm family expanded over its d and l);
    empty when the config leaves the experiment out.
    """
    spec = cfg["experiments"].get(experiment)
    if spec is None:
        return []
    if catalog.EXPERIMENTS[experiment].datasets == "ringnorm":
        return [f"ringnorm_d{d}_l{l}" for d in spec["d"] for l in spec["l"]]
    return list(spec["datasets"])


def _loo_fraction(cfg: Mapping[str, Any], experiment: str) -> float:
    override = cfg["experiments"].get(experiment, {}).get("loo_fraction")
    return float(cfg["loo"]["fraction"] if override is None else override)


def loo_selection(cfg: Mapping[str, Any], experiment: str, dataset: str, n_models: int) -> frozenset[int]:
    """Model indices of a data set's grid in the seeded exact-LOO sample: the same for every chunking
    and every replicate (:func:`loo_models` applies the training-size limits)."""
    fraction = _loo_fraction(cfg, experiment)
    if fraction <= 0 or n_models == 0:
        return frozenset()
    n_sel = min(n_models, max(1, int(round(fraction * n_models))))
    if n_sel == n_models:
        return frozenset(range(n_models))
    rng = np.random.default_rng([int(cfg["loo"]["seed"]) & 0xFFFFFFFF, zlib.crc32(f"{experiment}/{dataset}".encode())])
    return frozenset(int(i) for i in rng.permutation(n_models)[:n_sel])


def loo_models(cfg: Mapping[str, Any], experiment: str, dataset: str, n_models: int) -> frozenset[int]:
    """The models of a data set's grid that get exact LOO: all of them on training sets up to
    ``loo.all_up_to`` points, none above ``loo.max_train_size``, else the seeded sample; none at all
    when the experiment's LOO fraction is 0."""
    if _loo_fraction(cfg, experiment) <= 0:
        return frozenset()
    l = int(DATASETS[dataset].n_train)
    largest = cfg["loo"]["max_train_size"]
    if largest is not None and l > int(largest):
        return frozenset()
    if l <= int(cfg["loo"]["all_up_to"]):
        return frozenset(range(n_models))
    return loo_selection(cfg, experiment, dataset, n_models)


#: the keys of a weight-grid experiment's block that take data-set name patterns (the others are one value)
_BY_DATASET_KEYS = ("chunk_size", "engine")


def _by_dataset(cfg: Mapping[str, Any], experiment: str, key: str, dataset: str):
    """The experiment's ``key`` for ``dataset``: its one value, or the value of the data-set name pattern
    (shell-style; at most one matches a data set) that matches it; None where the experiment leaves ``key`` out
    or no pattern matches."""
    own = cfg["experiments"][experiment].get(key)
    if isinstance(own, Mapping):
        return next((value for pattern, value in own.items() if fnmatch.fnmatchcase(dataset, pattern)), None)
    return own


def chunk_size(cfg: Mapping[str, Any], experiment: str, dataset: str) -> int:
    """Models per job of ``dataset`` in ``experiment``: the experiment's ``chunk_size`` (a number or data-set
    name patterns), else the config's ``chunk_size``."""
    return int(_by_dataset(cfg, experiment, "chunk_size", dataset) or cfg["chunk_size"])


def engine(cfg: Mapping[str, Any], experiment: str, dataset: str) -> str:
    """The engine that trains ``dataset``'s models in ``experiment``: the experiment's ``engine`` (a name or
    data-set name patterns), else the config's ``svm.engine``."""
    return _by_dataset(cfg, experiment, "engine", dataset) or cfg["svm"]["engine"]


def config_problems(cfg: Mapping[str, Any], experiment: str):
    """Data-set name patterns (``chunk_size``, ``engine``) that match none of the experiment's data sets (a typo
    would leave its data sets at the config's value unnoticed), and data sets that several patterns of one key
    match (which value they get would depend on the patterns' order, which the config hash does not see)."""
    names = experiment_datasets(cfg, experiment)
    for key in _BY_DATASET_KEYS:
        own = cfg["experiments"][experiment].get(key)
        if not isinstance(own, Mapping):
            continue
        for pattern in own:
            if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
                yield (f"experiments.{experiment}.{key}: pattern {pattern!r} matches none of the "
                       f"experiment's data sets ({', '.join(names)})")
        for name in names:
            matching = [pattern for pattern in own if fnmatch.fnmatchcase(name, pattern)]
            if len(matching) > 1:
                yield (f"experiments.{experiment}.{key}: data set {name!r} matches several patterns "
                       f"({', '.join(map(repr, matching))}); give each data set at most one")


def plan(cfg: Mapping[str, Any], experiment: str) -> list[GridJob]:
    """The jobs of one weight-grid experiment, in a deterministic order (no data is loaded)."""
    axes = grid_axes(cfg, experiment)
    n = grid_size(axes)
    weighting = catalog.EXPERIMENTS[experiment].weighting
    sigma = cfg["experiments"][experiment].get("sigma") if weighting == "sigmoid" else None
    jobs = []
    for dataset in experiment_datasets(cfg, experiment):
        size = chunk_size(cfg, experiment, dataset)
        trained_by = engine(cfg, experiment, dataset)
        n_chunks = -(-n // size)
        with_loo = loo_models(cfg, experiment, dataset, n)
        for rep, (seed, realization) in enumerate(replicates(cfg, dataset)):
            for j in range(n_chunks):
                start, stop = j * size, min(n, (j + 1) * size)
                jobs.append(GridJob(
                    experiment=experiment, dataset=dataset, weighting=weighting, seed=seed, realization=realization,
                    chunk=rep * n_chunks + j, model_start=start, model_stop=stop, axes=axes,
                    engine=trained_by, qp_solver=cfg["svm"]["qp_solver"], tol=float(cfg["svm"]["tol"]),
                    cv_folds=int(cfg["cv"]["folds"]), cv_seed=int(cfg["cv"]["seed"]) + seed,
                    loo_models=tuple(sorted(i for i in with_loo if start <= i < stop)), sigma=sigma,
                ))
    return jobs


# --------------------------------------------------------------------------------------------- running
@dataclass
class GridProblem(SplitProblem):
    """What every model of a job shares: the split, its kernels, the CV folds, D and R^2."""

    split: Any
    K: np.ndarray
    K_test: np.ndarray
    folds: np.ndarray
    D: float
    R2: float
    gamma: float
    setup_s: float
    fold_kernels: Any = None  # the CV folds' kernels, sliced once when they fit the job's memory


def model_weights(job: GridJob, split, point: Mapping[str, float]) -> np.ndarray:
    """The instance weights C_i of one grid point under the job's weighting scheme."""
    import wsvm_span as ws

    if job.weighting == "class":
        return ws.class_weights(split.y_train, 2.0 ** point["log2_C_plus"], 2.0 ** point["log2_C_minus"])
    if split.scores is None:
        raise ValueError(f"{split.name} has no importance scores; sigmoid weights need them")
    return ws.sigmoid_weights(split.scores, point["A"], point["B"], 2.0 ** point["log2_C"], sigma=job.sigma)


def prepare(job: GridJob, settings) -> GridProblem:
    """The split of the job's replicate; kernels, folds, D (by the configured QP solver) and R^2, once per
    job, and the CV folds' kernels when they fit in the job's memory limit; then a warm-up so that
    one-time initialisations are not charged to the first model's timings (Table 6)."""
    import wsvm_span as ws
    from wsvm_span.data import load_dataset
    from wsvm_span.utils.environment import single_threaded

    split = load_dataset(job.dataset, seed=job.seed, realization=job.realization, data_dir=settings.data_dir,
                         mirror=settings.data_mirror)
    t0 = time.perf_counter()
    gamma = 1.0 / int(split.d)  # the study's RBF width (experiments.md)
    with single_threaded():  # one processor: parallel jobs must not oversubscribe the cores
        cache = ws.KernelCache(split.X_train, gamma, X_test=split.X_test, qp_solver=job.qp_solver)
        problem = GridProblem(
            split=split, K=cache.train, K_test=cache.test,
            folds=ws.stratified_folds(split.y_train, k=job.cv_folds, seed=job.cv_seed),
            D=cache.diameter, R2=cache.radius2, gamma=gamma, setup_s=0.0)
        need = memory_mb(len(split.y_train), len(split.y_test), job.cv_folds)
        if settings.memory_mb is None or need <= settings.memory_mb:
            problem.fold_kernels = ws.FoldKernels(problem.K, problem.folds)
        else:
            log.info("%s: CV folds sliced per model (their cached kernels need ~%.0f MB, the job has %s MB)",
                     job.slot, need, settings.memory_mb)
        _warm_up(job, problem)
    problem.setup_s = time.perf_counter() - t0
    log.info("%s: l=%d d=%d models %d..%d (%d with exact LOO) engine=%s", job.slot, problem.l, problem.d,
             job.model_start, job.model_stop - 1, len(job.loo_models), job.engine)
    return problem


def _warm_up(job: GridJob, problem: GridProblem) -> None:
    """Train and evaluate once on a small subsample of the job's first grid point."""
    import wsvm_span as ws

    y = problem.split.y_train
    idx = warm_up_indices(y)
    if idx is None:
        return
    C = model_weights(job, problem.split, grid_point(job.axes, job.model_start))[idx]
    Ks = problem.K[np.ix_(idx, idx)]
    try:
        ws.evaluate_model(Ks, y[idx], C, Ks[:4], y[idx][:4], folds=np.arange(len(idx)) % 2,
                          D=ws.enclosing_ball_diameter(Ks, solver=job.qp_solver), R2=ws.kernel_radius2(Ks),
                          engine=job.engine, qp_solver=job.qp_solver, compute_loo=True, tol=job.tol)
    except Exception as exc:  # noqa: BLE001 - a warm-up only; the real evaluation reports errors
        log.debug("warm-up failed: %s", exc)


def evaluation_row(values: Mapping[str, Any]) -> dict[str, Any]:
    """The schema columns of one ``ModelEvaluation.as_dict()``; a field that is not a column of the
    results schema is an error (schema and evaluation must not drift apart silently)."""
    unknown = [k for k in values if k not in COLUMNS]
    if unknown:
        raise SchemaError(
            f"ModelEvaluation field(s) {', '.join(map(repr, unknown))} are not columns of the results schema; "
            "add them to wsvm_span/study/results_schema.py (ROW_SCHEMA) or drop them from ModelEvaluation"
        )
    return dict(values)


def follows_path(job: GridJob) -> bool:
    """Whether the job's engine follows the solution path: then its models after the first are reached by
    path segments (chords) from their predecessors in the chunk, and CV and LOO are done by paths."""
    from wsvm_span.engines import get_engine

    return get_engine(job.engine).capabilities.solution_path


class _PathChain:
    """The models of a chunk by the solution path: the first trained by the job's engine, every other the
    end of a chord from the previous model (its exact end state carried on as the next chord's start).
    A chord that exceeds its event cap (degenerate data cycling) does not fail the job: that model is
    trained afresh, as the chunk's first was, and the chain goes on from it."""

    #: event cap of one chord (None: the solver's default, proportional to l)
    max_events: int | None = None

    def __init__(self, job: GridJob, problem: GridProblem):
        self.job, self.problem = job, problem
        self.model = self.start = None

    def next(self, C) -> tuple[Any, float, dict[str, Any]]:
        """(model at weights C, seconds, its path columns: empty for a model trained afresh)."""
        from wsvm_span.engines import fit_svm
        from wsvm_span.solution_path import PathEventLimitError, follow_path

        K, y = self.problem.K, self.problem.split.y_train
        t0 = time.perf_counter()
        if self.model is not None:
            try:
                res = follow_path(self.model, K, C, start=self.start, max_events=self.max_events,
                                  check_input=False)
            except PathEventLimitError as exc:
                log.warning("%s: a path segment was abandoned, the model is trained afresh: %s",
                            self.job.slot, exc)
                self.model = None
        if self.model is None:
            self.model, self.start = fit_svm(K, y, C, engine=self.job.engine, tol=self.job.tol,
                                             check_input=False), None
            return self.model, time.perf_counter() - t0, {}
        seconds = time.perf_counter() - t0
        if res.fallback is not None:
            log.warning("%s: a path segment fell back to LIBSVM: %s", self.job.slot, res.fallback)
        self.model, self.start = res.model, res.next_start
        return self.model, seconds, {"n_path_events": res.n_events, "t_path": seconds}


class _WarmChain:
    """The models of a chunk with an engine that starts from a neighbouring solution (``warm_start``), in grid
    order: each model from the previous one's alphas with its bounded alphas moved to the new weights
    (``rescaled_start``), each CV fold from the model or its own previous fold model (``FoldStarts``). The
    chain starts afresh in every job, so a model's start depends on where its chunk starts; the optimum
    reached does not (to the tolerance)."""

    def __init__(self):
        import wsvm_span as ws

        self.previous = None
        self.fold_starts = ws.FoldStarts()

    def start(self, K, C):
        from wsvm_span.engines.warm_start import Solved, rescaled_start

        return None if self.previous is None else rescaled_start(Solved.from_model(self.previous), C, K)


def evaluate(job: GridJob, problem: GridProblem, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Train and evaluate every model of the chunk (one BLAS thread); ``on_row(row)`` is called after each
    (the job's MLflow child run). Logs progress lines. With an engine that follows the solution path the
    models come from a :class:`_PathChain` (grid order) and carry its path columns; with one that starts from
    a neighbouring solution they come from a :class:`_WarmChain`."""
    import wsvm_span as ws
    from wsvm_span.engines import get_engine

    split = problem.split
    chain = _PathChain(job, problem) if follows_path(job) else None
    warm = _WarmChain() if get_engine(job.engine).capabilities.warm_start else None

    def row_of(idx: int) -> dict:
        point = grid_point(job.axes, idx)
        C = model_weights(job, split, point)
        shared = dict(folds=problem.folds, D=problem.D, R2=problem.R2, qp_solver=job.qp_solver,
                      compute_loo=idx in job.loo_models, tol=job.tol, fold_kernels=problem.fold_kernels,
                      check_input=False)  # K comes from KernelCache: valid by construction
        path_columns: dict[str, Any] = {}
        if chain is None and warm is not None:
            t0 = time.perf_counter()
            model = ws.fit_svm(problem.K, split.y_train, C, engine=job.engine, tol=job.tol, check_input=False,
                               alpha0=warm.start(problem.K, C))
            warm.previous = model
            ev = ws.evaluate_fitted(model, problem.K, problem.K_test, split.y_test, t_train=time.perf_counter() - t0,
                                    fold_starts=warm.fold_starts, **shared)
        elif chain is None:
            ev = ws.evaluate_model(problem.K, split.y_train, C, problem.K_test, split.y_test, engine=job.engine,
                                   **shared)
        else:
            model, seconds, path_columns = chain.next(C)
            ev = ws.evaluate_fitted(model, problem.K, problem.K_test, split.y_test, t_train=seconds, **shared)
        row = evaluation_row(ev.as_dict())
        row.update(path_columns)
        row.update(point)
        row.update(experiment=job.experiment, dataset=job.dataset, weighting=job.weighting, seed=job.seed,
                   realization=job.realization, gamma=problem.gamma, l=problem.l, d=problem.d,
                   model_index=idx, chunk=job.chunk)
        return row

    return evaluate_models(job, log, row_of, on_row)


def run_params(job: GridJob, problem: GridProblem) -> dict[str, Any]:
    """The MLflow parent run's params of a job."""
    params = {
        "experiment": job.experiment, "dataset": job.dataset, "weighting": job.weighting, "seed": job.seed,
        "realization": job.realization, "chunk": job.chunk, "model_start": job.model_start,
        "model_stop": job.model_stop, "n_models": job.n_models, "l": problem.l, "d": problem.d,
        "gamma": problem.gamma, "tol": job.tol, "engine_requested": job.engine,
        "qp_solver_requested": job.qp_solver, "cv_folds": job.cv_folds, "cv_seed": job.cv_seed,
        "n_loo": len(job.loo_models), "models_by_path": follows_path(job),
        **{f"grid.{k}": f"{min(v)}:{max(v)}:{len(v)}" for k, v in job.axes.items()},
    }
    if job.sigma is not None:
        params["sigma"] = job.sigma
    return params


def row_params(job: GridJob, row: Mapping[str, Any]) -> dict[str, Any]:
    """A model's MLflow params: its hyperparameters and its index in the grid."""
    return {**{k: row[k] for k in job.axes}, "model_index": row["model_index"]}


def provenance(job: GridJob, problem: GridProblem) -> dict[str, Any]:
    """What the chunk file's provenance adds for this kind."""
    return {"setup_s": problem.setup_s, "fold_cache": problem.fold_kernels is not None}


#: scheduler hints and peak memory: the grid job's kernels (``cost``)
resources = job_resources
job_memory_mb = grid_job_memory_mb

#: the job class of this kind
JOB = GridJob
