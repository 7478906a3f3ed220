"""The standard-span job (Experiment 10, standard-svm-span.md): the original span results for the standard
SVM (every C_i = C), reproduced with the study's machinery.

A job is one replicate (a seeded split or training subset) of one task of the config's ``tasks``: every
point of the task's grid over the RBF width sigma (K(x, x') = exp(-||x - x'||^2 / (2 sigma^2))) and log2 C
is trained on all training points; each row holds the test error, the span-rule, the span bound in its
standard form (and the separable form S D / (l rho^2) when no SV is bounded), the exact leave-one-out
error, the three sizes D (all training points), D_SV (in-bound SVs) and S (the span), SV counts and the
per-step timings (one thread). Its three parts are views of these rows: span vs diameters against sigma,
the estimators' curves against each varied hyperparameter (model selection), and the cost per model.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from wsvm_span.data import DATASETS

from ..cost import STARTUP_SECONDS, TIME_PADDING, approx_sizes, estimated_seconds, memory_mb
from ..grid import expand_axis, grid_point, grid_size
from ..results_schema import STANDARD_HYPERPARAMETERS
from .base import JobIdentity, KindCapabilities, SplitProblem, evaluate_models, grid_job_memory_mb, warm_up_indices

__all__ = ["JOB", "KIND", "LOO_METHODS", "ROWS", "StandardSpanJob", "config_problems", "evaluate", "plan",
           "prepare", "provenance", "resources", "row_params", "run_params", "sigma_gamma", "task_seeds"]

log = logging.getLogger(__name__)

#: the kind's name and its row schema (``results_schema.ROW_SCHEMAS``): one row per trained standard SVM
KIND = "standard_span"
ROWS = "standard_model"
#: priced per model by the cost model; trained by the config's svm.engine
CAPABILITIES = KindCapabilities()
ROW_IDENTIFIERS: frozenset[str] = frozenset()
#: the third part of the job's paths: every model has C_i = C
VARIANT = "standard"


def _loo(method: str):
    def run(model, K):
        from wsvm_span.resampling import leave_one_out

        return leave_one_out(model, K, check_input=False, method=method)
    return run


#: exact leave-one-out methods by config name (``experiments.<exp>.loo_method``), each (model, K) ->
#: ``resampling.LeaveOneOut``: "retrain" (LIBSVM without each SV) or "path" (the exact solution path
#: c_p -> 0 from the model: the same errors, issue 9); "none" skips exact LOO. ``t_loo`` times the one
#: chosen, so the cost table of a run with "path" against one with "retrain" compares the two.
LOO_METHODS: dict[str, Callable[[Any, np.ndarray], Any]] = {m: _loo(m) for m in ("retrain", "path")}
NO_LOO = "none"


def sigma_gamma(sigma: float) -> float:
    """The RBF parameter of exp(-||x - x'||^2 / (2 sigma^2)) in the library's exp(-gamma ||x - x'||^2)."""
    return 1.0 / (2.0 * sigma * sigma)


@dataclass(frozen=True)
class StandardSpanJob(JobIdentity):
    """Models ``model_start .. model_stop - 1`` of one task's grid (axes sigma, log2_C), one replicate.

    axes : the task's grid (model ``i`` is ``grid_point(axes, i)``; log2_C varies fastest)
    engine, qp_solver, tol : how models are trained and span QPs solved (config ``svm``)
    loo_method : a name of :data:`LOO_METHODS`, or "none"
    """

    kind: ClassVar[str] = KIND

    model_start: int
    model_stop: int
    axes: dict[str, list[float]] = field(hash=False)
    engine: str
    qp_solver: str
    tol: float
    loo_method: str

    @property
    def variant(self) -> str:
        return VARIANT

    @property
    def loo_models(self) -> tuple[int, ...]:
        """The models of this job with exact LOO (all of them, unless the method is "none")."""
        return () if self.loo_method == NO_LOO else tuple(range(self.model_start, self.model_stop))

    @classmethod
    def normalise(cls, raw: dict) -> dict:
        return cls.normalise_axes(raw)


# -------------------------------------------------------------------------------------------- planning
def _axes(task: Mapping[str, Any]) -> dict[str, list[float]]:
    return {name: expand_axis(task[name]) for name in STANDARD_HYPERPARAMETERS}


def task_seeds(task: Mapping[str, Any]) -> list[int]:
    """The seeds of a task's replicates: ``first_seed`` .. ``first_seed + replicates - 1``."""
    first = int(task.get("first_seed", 0))
    return list(range(first, first + int(task["replicates"])))


def plan(cfg: Mapping[str, Any], experiment: str) -> list[StandardSpanJob]:
    """One job per replicate and chunk of each task, in config order (no data is loaded)."""
    spec = cfg["experiments"][experiment]
    size = int(spec.get("chunk_size") or cfg["chunk_size"])
    jobs = []
    for dataset, task in spec["tasks"].items():
        axes = _axes(task)
        n = grid_size(axes)
        n_chunks = -(-n // size)
        for rep, seed in enumerate(task_seeds(task)):
            for j in range(n_chunks):
                jobs.append(StandardSpanJob(
                    experiment=experiment, dataset=dataset, seed=seed, realization=1, chunk=rep * n_chunks + j,
                    model_start=j * size, model_stop=min(n, (j + 1) * size), axes=axes,
                    engine=cfg["svm"]["engine"], qp_solver=cfg["svm"]["qp_solver"], tol=float(cfg["svm"]["tol"]),
                    loo_method=spec["loo_method"]))
    return jobs


def config_problems(cfg: Mapping[str, Any], experiment: str):
    """The checks of the experiment's block that its schema cannot express."""
    from ..dataset_names import valid_names_text
    from ..grid import axis_problems as _axis_problems

    spec = cfg["experiments"][experiment]
    if spec["loo_method"] not in (*LOO_METHODS, NO_LOO):
        yield (f"experiments.{experiment}.loo_method: unknown method {spec['loo_method']!r}; "
               f"use one of {[*LOO_METHODS, NO_LOO]}")
    for dataset, task in spec["tasks"].items():
        where = f"experiments.{experiment}.tasks.{dataset}"
        if dataset not in DATASETS:
            yield f"{where}: unknown data set {dataset!r}; valid names: {valid_names_text()}"
            continue
        if task["replicates"] > 1 and not DATASETS[dataset].uses_seed:
            yield (f"{where}.replicates: {dataset!r} has one fixed split (its split does not depend on the seed);"
                   " use replicates: 1")
        for name in STANDARD_HYPERPARAMETERS:
            problems = list(_axis_problems(f"{where}.{name}", task[name]))
            yield from problems
            if name == "sigma" and not problems and min(expand_axis(task[name])) <= 0:
                yield f"{where}.sigma: the RBF width sigma must be positive"


def resources(cfg: Mapping[str, Any], job: StandardSpanJob) -> dict[str, int]:
    """Scheduler hints: one sigma's training and test kernels and a leave-one-out slice; the run time of
    training plus one retraining per training point and model (exact LOO), padded."""
    l, m = approx_sizes(job.dataset)
    loo_factor = 1 + (l if job.loo_models else 0)
    secs = estimated_seconds(job) * loo_factor * TIME_PADDING + STARTUP_SECONDS
    return {
        "mem_mb": max(int(cfg["resources"]["mem_mb_min"]),
                      int(math.ceil(memory_mb(l, m, None) / 100.0) * 100)),
        "runtime": max(int(cfg["resources"]["runtime_min"]), int(math.ceil(secs / 60))),
    }


# --------------------------------------------------------------------------------------------- running
@dataclass
class StandardProblem(SplitProblem):
    """What every model of a job shares: the split, and the kernels and D of the sigma in use (the models
    are in grid order, sigma slowest, so one sigma's kernels are computed once and dropped after)."""

    split: Any
    qp_solver: str
    setup_s: float = 0.0
    _sigma: float | None = None
    _kernels: Any = None

    def kernels(self, sigma: float):
        """The ``KernelCache`` of RBF width sigma (train, test, D)."""
        import wsvm_span as ws

        if sigma != self._sigma:
            self._kernels = ws.KernelCache(self.split.X_train, sigma_gamma(sigma), X_test=self.split.X_test,
                                           qp_solver=self.qp_solver)
            self._sigma = sigma
        return self._kernels


def prepare(job: StandardSpanJob, settings) -> StandardProblem:
    """The split of the job's replicate, and a warm-up so that one-time initialisations are not charged to
    the first model's timings."""
    from wsvm_span.data import load_dataset
    from wsvm_span.utils.environment import single_threaded

    split = load_dataset(job.dataset, seed=job.seed, realization=job.realization, data_dir=settings.data_dir,
                         mirror=settings.data_mirror)
    problem = StandardProblem(split=split, qp_solver=job.qp_solver)
    t0 = time.perf_counter()
    with single_threaded():
        _warm_up(job, problem)
    problem.setup_s = time.perf_counter() - t0
    log.info("%s: l=%d d=%d models %d..%d engine=%s loo=%s", job.slot, problem.l, problem.d, job.model_start,
             job.model_stop - 1, job.engine, job.loo_method)
    return problem


def _warm_up(job: StandardSpanJob, problem: StandardProblem) -> None:
    """Train and evaluate once on a small subsample at the job's first grid point."""
    y = problem.split.y_train
    idx = warm_up_indices(y)
    if idx is None:
        return
    point = grid_point(job.axes, job.model_start)
    import wsvm_span as ws

    K = ws.rbf_kernel(problem.split.X_train[idx], None, sigma_gamma(point["sigma"]))
    try:
        _evaluate_model(job, K, y[idx], 2.0 ** point["log2_C"], K[:4], y[idx][:4],
                        ws.enclosing_ball_diameter(K, solver=job.qp_solver))
    except Exception as exc:  # noqa: BLE001 - a warm-up only; the real evaluation reports errors
        log.debug("warm-up failed: %s", exc)


def _evaluate_model(job: StandardSpanJob, K, y, C: float, K_test, y_test, D: float) -> dict[str, Any]:
    """Train one standard SVM and compute the row's estimates, sizes, counts and timings."""
    import wsvm_span as ws

    t0 = time.perf_counter()
    model = ws.fit_svm(K, y, C, engine=job.engine, tol=job.tol, check_input=False)
    t_train = time.perf_counter() - t0
    spans = ws.analyse_spans(model, K, D=D, qp_solver=job.qp_solver)
    loo, t_loo = math.nan, math.nan
    if job.loo_method != NO_LOO:
        t0 = time.perf_counter()
        loo = LOO_METHODS[job.loo_method](model, K).loo_error
        t_loo = time.perf_counter() - t0
    return {
        "engine": model.engine, "qp_solver": spans.qp_solver,
        "test_error": ws.test_error(model, K_test, y_test, check_input=False),
        "span_rule": spans.span_rule,
        "span_bound": ws.span_bound_standard(model, spans=spans),
        "span_bound_separable": ws.span_bound_separable(model, spans=spans) if spans.n_bounded == 0 else math.nan,
        "loo_error": loo,
        "S": spans.S if spans.n_inbound >= 2 else math.nan,
        "D": spans.D,
        "D_SV": ws.inbound_diameter(model, K, qp_solver=job.qp_solver),
        "n_sv": spans.n_sv, "n_inbound": spans.n_inbound, "n_bounded": spans.n_bounded,
        "n_empty_lambda": spans.n_empty_lambda, "n_qp": spans.n_qp,
        "t_train": t_train, "t_span_rule": spans.t_span_rule, "t_span_bound": spans.t_span_bound, "t_loo": t_loo,
    }


def evaluate(job: StandardSpanJob, problem: StandardProblem, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Train and evaluate every model of the chunk (one BLAS thread); ``on_row(row)`` after each."""
    split = problem.split

    def row_of(idx: int) -> dict:
        point = grid_point(job.axes, idx)
        kernels = problem.kernels(point["sigma"])
        row = _evaluate_model(job, kernels.train, split.y_train, 2.0 ** point["log2_C"], kernels.test,
                              split.y_test, kernels.diameter)
        row.update(point)
        row.update(experiment=job.experiment, dataset=job.dataset, seed=job.seed, realization=job.realization,
                   gamma=sigma_gamma(point["sigma"]), l=problem.l, d=problem.d, model_index=idx, chunk=job.chunk)
        return row

    return evaluate_models(job, log, row_of, on_row)


def run_params(job: StandardSpanJob, problem: StandardProblem) -> dict[str, Any]:
    """The MLflow parent run's params of a job."""
    return {
        "experiment": job.experiment, "dataset": job.dataset, "variant": VARIANT, "seed": job.seed,
        "realization": job.realization, "chunk": job.chunk, "model_start": job.model_start,
        "model_stop": job.model_stop, "n_models": job.n_models, "l": problem.l, "d": problem.d,
        "kernel": "exp(-||x - x'||^2 / (2 sigma^2))", "gamma": "1 / (2 sigma^2)", "tol": job.tol,
        "engine_requested": job.engine, "qp_solver_requested": job.qp_solver, "loo_method": job.loo_method,
        **{f"grid.{k}": f"{min(v)}:{max(v)}:{len(v)}" for k, v in job.axes.items()},
    }


def row_params(job: StandardSpanJob, row: Mapping[str, Any]) -> dict[str, Any]:
    """A model's MLflow params: sigma, log2 C and its index in the grid."""
    return {**{k: row[k] for k in STANDARD_HYPERPARAMETERS}, "model_index": row["model_index"]}


def provenance(job: StandardSpanJob, problem: StandardProblem) -> dict[str, Any]:
    """What the chunk file's provenance adds for this kind."""
    return {"setup_s": problem.setup_s, "loo_method": job.loo_method}


#: the job class of this kind
#: peak memory: the grid job's kernels of the data set (no CV folds)
job_memory_mb = grid_job_memory_mb

JOB = StandardSpanJob
