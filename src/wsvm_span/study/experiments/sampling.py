"""The sampling-trainer job (Experiment 9, random-sampling.md): training time and memory of the randomized
sampling engine against full LIBSVM (scikit-learn's, evaluating the RBF itself) and LIBSVM on a precomputed
kernel where that kernel fits, on large training sets; and one span-rule selection grid against K-fold CV.

A job is one data set at one training size l (``sizes`` of the config: a number, or "all"): every C of the
grid (``log2_C``; C_i = C, the RBF parameter of the data set, 1/d) is trained by every configured engine, the
reference engine first, and each (C, engine) is a row (schema ``sampling`` of ``results_schema``): wall and
CPU seconds, peak memory (resident-set high-water mark over the fit, ``engines.measure``), the sampling
engine's rounds and final sample, the SV counts, the largest KKT violation of the FULL problem on all l
points, the test error, and the largest difference of the test-set decision values from the reference
engine's (with the size of the symmetric difference of the SV sets). A precomputed-kernel engine runs only
where the l x l kernel (8 l^2 bytes) fits ``precomputed_max_mb``; otherwise its row says why it was skipped.

The job of ``span_grid`` (one data set and size) adds, on each sampling row, the span-rule of the sampled
model from its SVs only (``span_rule_from_svs``) with its time, and the K-fold CV of the same C with LIBSVM:
``cv_folds_run`` of the ``cv_folds`` folds are run; with all of them the row has the CV error and its
measured time, with fewer the time is the projection (mean fold time x cv_folds) and the CV error is NaN.

Training sets. ``skin_nonskin`` (whose study split trains on 500 rows) pools all 245,057 rows, rescaled to
[0, 1] by their own min and max, and holds out a seeded test set of ``test_size`` rows; "all" is the rest
(245,057 - test_size rows). Other registry data sets use their split (e.g. ``mnist_2_9``: 11,907 training
points, its test set). A size below the training pool takes the first l points of one seeded permutation,
so the sizes of a data set are nested. ``ringnorm_d<d>`` is Experiment 6's generator with l training points
(data set ``ringnorm_d<d>_l<l>``) and its 2000 test points.
"""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from wsvm_span.data import DATASETS

from ..grid import expand_axis
from .base import JobIdentity, KindCapabilities, evaluate_models, warm_up_indices

__all__ = ["JOB", "KIND", "POOLED", "ROWS", "LargeProblem", "SamplingJob", "calibrated_seconds", "config_problems",
           "evaluate", "job_memory_mb", "large_training_set", "plan", "prepare", "provenance", "resources", "rough_seconds",
           "row_params", "run_params"]

log = logging.getLogger(__name__)

KIND = "sampling"
ROWS = "sampling"
#: priced by :func:`calibrated_seconds`; its jobs train with the engines of their own config block
CAPABILITIES = KindCapabilities(prices_own_jobs=True, trains_with_config_engine=False)
ROW_IDENTIFIERS: frozenset[str] = frozenset()
#: data sets whose rows are pooled (training and test parts of the study's split) before the test set is held
#: out: skin_nonskin's study split trains on 500 of its 245,057 rows
POOLED = ("skin_nonskin",)
#: a ``sizes`` key for Experiment 6's generator, ringnorm_d<d>
RINGNORM_KEY = re.compile(r"^ringnorm_d([1-9][0-9]*)$")
ALL = "all"
#: the row's ``status`` when the engine ran
OK = "ok"


@dataclass(frozen=True)
class SamplingJob(JobIdentity):
    """Every (C, engine) of one data set at one training size.

    size : l as configured ("all" or a number as text)
    engines : feature engine names, the reference first
    span : this job is the span grid's: span-rule and K-fold CV on the sampling rows
    """

    kind: ClassVar[str] = KIND

    size: str
    log2_C: tuple[float, ...]
    engines: tuple[str, ...]
    tol: float
    cache_mb: float
    r0: int
    precomputed_max_mb: float
    test_size: int
    span: bool
    cv_folds: int
    cv_folds_run: int

    @property
    def variant(self) -> str:
        return f"l{self.size}"

    @property
    def model_start(self) -> int:
        return 0

    @property
    def model_stop(self) -> int:
        """Every (C, engine) of the grid: one job per data set and size."""
        return len(self.log2_C) * len(self.engines)

    @property
    def reference(self) -> str:
        return self.engines[0]

    def point(self, index: int) -> tuple[float, str]:
        """(log2 C, engine) of row ``index``: C slowest, the engines in order (the reference first)."""
        return self.log2_C[index // len(self.engines)], self.engines[index % len(self.engines)]

    @staticmethod
    def normalise(raw: dict) -> dict:
        raw["log2_C"] = tuple(float(v) for v in raw["log2_C"])
        raw["engines"] = tuple(raw["engines"])
        return raw


# -------------------------------------------------------------------------------------------- planning
def _datasets(key: str, sizes) -> list[tuple[str, str]]:
    """(data set, size) pairs of one ``sizes`` entry."""
    m = RINGNORM_KEY.match(key)
    if m:
        return [(f"{key}_l{int(s)}", str(int(s))) for s in sizes]
    return [(key, str(s)) for s in sizes]


def plan(cfg: Mapping[str, Any], experiment: str) -> list[SamplingJob]:
    """One job per data set and size, in config order (no data is loaded)."""
    spec = cfg["experiments"][experiment]
    engines = (spec["reference"], *[e for e in spec["engines"] if e != spec["reference"]])
    grid = spec.get("span_grid") or {}
    jobs = []
    for key, sizes in spec["sizes"].items():
        for dataset, size in _datasets(key, sizes):
            span = bool(grid) and grid["dataset"] == key and str(grid["size"]) == size
            jobs.append(SamplingJob(
                experiment=experiment, dataset=dataset, seed=int(cfg["seeds"][0]), realization=1, chunk=0, size=size,
                log2_C=tuple(expand_axis(spec["log2_C"])), engines=engines, tol=float(cfg["svm"]["tol"]),
                cache_mb=float(spec["cache_mb"]), r0=int(spec["r0"]),
                precomputed_max_mb=float(spec["precomputed_max_mb"]), test_size=int(spec["test_size"]), span=span,
                cv_folds=int(grid.get("cv_folds", 0)) if span else 0,
                cv_folds_run=int(grid.get("cv_folds_run", 0)) if span else 0))
    return jobs


def _pool_size(key: str, test_size: int) -> int | None:
    """Training points of "all" for a registry data set (None for the generator)."""
    if RINGNORM_KEY.match(key):
        return None
    spec = DATASETS[key]
    return int(spec.n_train + spec.n_test - test_size) if key in POOLED else int(spec.n_train)


def config_problems(cfg: Mapping[str, Any], experiment: str):
    """The checks of the experiment's block that its schema cannot express."""
    from wsvm_span.engines import FEATURE_ENGINE_NAMES

    from ..dataset_names import valid_names_text
    from ..grid import axis_problems as _axis_problems

    spec = cfg["experiments"][experiment]
    where = f"experiments.{experiment}"
    engines = [*spec["engines"], spec["reference"]]
    for engine in engines:
        if engine not in FEATURE_ENGINE_NAMES or engine == "auto":
            yield f"{where}.engines: unknown engine {engine!r}; use names of {list(FEATURE_ENGINE_NAMES[1:])}"
    yield from _axis_problems(f"{where}.log2_C", spec["log2_C"])
    for key, sizes in spec["sizes"].items():
        if RINGNORM_KEY.match(key):
            if any(s == ALL for s in sizes):
                yield f"{where}.sizes.{key}: the generator has no 'all'; give the training sizes l"
            continue
        if key not in DATASETS:
            yield f"{where}.sizes: unknown data set {key!r}; valid names: {valid_names_text()} or ringnorm_d<d>"
            continue
        pool = _pool_size(key, int(spec["test_size"]))
        too_big = [s for s in sizes if s != ALL and int(s) > pool]
        if too_big:
            yield f"{where}.sizes.{key}: {too_big} exceed the {pool} training points of {key!r} (use 'all')"
    grid = spec.get("span_grid")
    if grid:
        if grid["dataset"] not in spec["sizes"] or grid["size"] not in spec["sizes"][grid["dataset"]]:
            yield (f"{where}.span_grid: {grid['dataset']!r} at size {grid['size']!r} is not among {where}.sizes; "
                   "the span grid runs on one of the configured jobs")
        if "sampling" not in spec["engines"]:
            yield f"{where}.span_grid: needs the sampling engine in {where}.engines (the span-rule of its models)"
        if not 1 <= grid["cv_folds_run"] <= grid["cv_folds"]:
            yield f"{where}.span_grid.cv_folds_run must be between 1 and cv_folds = {grid['cv_folds']}"


#: resident size of an idle job (interpreter, numpy/scipy/sklearn/mlflow; MB), and headroom over the estimate
BASE_MEMORY_MB = 600
MEMORY_HEADROOM = 1.5
#: one-thread CPU seconds of one fit at l = 2^12 and its exponent in l, per engine: least squares in log-log of the
#: mean over C = 1, 2^5, 2^10 at each size, over Experiment 9's paper-size rows (reproduced/paper-exp9-a and
#: paper-exp9-b: ringnorm_d20 and skin_nonskin at l = 2^12 ... 2^17, all of skin_nonskin and mnist_2_9; the
#: precomputed engine up to l = 2^14, its kernel included). The law before, 1.0 s at 2^12 for every engine, priced
#: those parts at 0.72 and 2.21 CPU-hours against 0.23 and 0.28 measured. An engine not measured takes the dearest.
ENGINE_LAWS = {"sampling": (0.30, 1.52), "sklearn-rbf": (0.13, 1.63), "sklearn": (0.36, 2.27), "libsvm": (0.36, 2.27)}
#: the span grid's K-fold CV trains LIBSVM evaluating the RBF itself on (K - 1) / K of the points
CV_ENGINE = "sklearn-rbf"
TIME_PADDING = 10


def _approx_l(job: SamplingJob) -> int:
    if job.size != ALL:
        return int(job.size)
    return _pool_size(job.dataset, job.test_size)


def resources(cfg: Mapping[str, Any], job: SamplingJob) -> dict[str, int]:
    """Scheduler hints: the data, LIBSVM's row caches, the precomputed kernel where it runs; run time from
    the engines' power laws (padded)."""
    mem = job_memory_mb(job)
    secs = rough_seconds(job) * TIME_PADDING
    return {"mem_mb": max(int(cfg["resources"]["mem_mb_min"]), int(math.ceil(mem / 100.0) * 100)),
            "runtime": max(int(cfg["resources"]["runtime_min"]), int(math.ceil(secs / 60)) + 2)}


def job_memory_mb(job: SamplingJob) -> float:
    """Peak memory of a job (MB): the precomputed kernel where it runs, LIBSVM's row cache, the data. Measured
    (reproduced/paper-exp9-b, Snakemake's max_rss): 2,363 MB at l = 2^14 with the 2 GiB kernel, 862-1,417 MB at
    l = 2^15 ... 240,961 without it; this prices them at 5,200 and 2,200-2,500 MB."""
    from wsvm_span.engines.measure import PRECOMPUTED_ENGINES, kernel_mib

    l = _approx_l(job)
    precomputed = any(e in PRECOMPUTED_ENGINES for e in job.engines) and kernel_mib(l) <= job.precomputed_max_mb
    # one kernel (sklearn's LIBSVM reads the l x l array in place), one row cache alive at a time (a sample's,
    # the reference's or a CV fold's: up to cache_mb or all l rows in float32), ~64 float64 per point (data,
    # f, alpha, the draws)
    kernel = kernel_mib(l) if precomputed else 0.0
    cache = min(job.cache_mb, kernel_mib(l) / 2)
    return BASE_MEMORY_MB + (cache + kernel + 64.0 * l * 8 / 2**20) * MEMORY_HEADROOM


def _fit_seconds(engine: str, l: float) -> float:
    a, b = ENGINE_LAWS.get(engine, max(ENGINE_LAWS.values(), key=lambda law: law[0] * 32**law[1]))
    return a * (l / 4096) ** b


def rough_seconds(job: SamplingJob) -> float:
    """One-thread seconds of a job by the engines' power laws (``ENGINE_LAWS``, unpadded): every fit that runs
    (a precomputed engine above ``precomputed_max_mb`` is skipped), and the span grid's CV folds."""
    from wsvm_span.engines.measure import PRECOMPUTED_ENGINES, kernel_mib

    l = _approx_l(job)
    per_C = sum(_fit_seconds(e, l) for e in job.engines
                if e not in PRECOMPUTED_ENGINES or kernel_mib(l) <= job.precomputed_max_mb)
    if job.span:
        per_C += job.cv_folds_run * _fit_seconds(CV_ENGINE, l * (job.cv_folds - 1) / job.cv_folds)
    return len(job.log2_C) * per_C


def calibrated_seconds(job: SamplingJob, cal) -> float:
    """``wsvm-span estimate``'s price of a job: this kind is not in the cost calibration (its per-model
    costs depend on l, not on the data set's registry size), so the rough law of ``rough_seconds``."""
    return rough_seconds(job)


# --------------------------------------------------------------------------------------------- data
def large_training_set(dataset: str, size: str | int, seed: int, test_size: int, data_dir=None, mirror=None):
    """(X, y, X_test, y_test, gamma, checksums) of ``dataset`` at training size ``size`` (see the module
    docstring: pooled rows for skin_nonskin, nested seeded prefixes)."""
    from wsvm_span.data import load_dataset
    from wsvm_span.data.scaling import MinMaxScaler01

    split = load_dataset(dataset, seed=seed, data_dir=data_dir, mirror=mirror)
    rng = np.random.default_rng(seed)
    if dataset in POOLED:
        if not np.all(np.ptp(split.X_train, axis=0) > 0):
            raise ValueError(f"{dataset}: a feature is constant on the split's training rows; cannot pool")
        # the split scales every row by its training rows' min/max, an invertible affine map: rescaling the
        # union by its own min/max gives exactly the raw rows scaled to [0, 1]
        X = MinMaxScaler01().fit_transform(np.vstack([split.X_train, split.X_test]))
        y = np.concatenate([split.y_train, split.y_test])
        order = rng.permutation(y.size)
        test, pool = order[:test_size], order[test_size:]
        X_test, y_test, X, y = X[test], y[test], X[pool], y[pool]
    else:
        X, y, X_test, y_test = split.X_train, split.y_train, split.X_test, split.y_test
    if size != ALL and int(size) < y.size:
        keep = rng.permutation(y.size)[:int(size)]
        X, y = X[keep], y[keep]
    elif size != ALL and int(size) > y.size:
        raise ValueError(f"{dataset} has {y.size} training points, fewer than l = {size}")
    return (np.ascontiguousarray(X), np.ascontiguousarray(y), np.ascontiguousarray(X_test),
            np.ascontiguousarray(y_test), split.gamma, dict(split.checksums or {}))


@dataclass
class LargeProblem:
    """A job's training and test sets."""

    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    gamma: float
    checksums: dict
    setup_s: float = 0.0

    @property
    def l(self) -> int:
        return int(self.y.size)

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def prepare(job: SamplingJob, settings) -> LargeProblem:
    """The training and test sets, and a warm-up fit of every engine on a small subsample."""
    X, y, X_test, y_test, gamma, checksums = large_training_set(
        job.dataset, job.size, job.seed, job.test_size, settings.data_dir, settings.data_mirror)
    problem = LargeProblem(X, y, X_test, y_test, gamma, checksums)
    t0 = time.perf_counter()
    idx = warm_up_indices(y)
    if idx is not None:
        from wsvm_span.engines.measure import measure_fit

        for engine in job.engines:
            measure_fit(X[idx], y[idx], 1.0, gamma=gamma, engine=engine, tol=job.tol, cache_mb=job.cache_mb)
    problem.setup_s = time.perf_counter() - t0
    log.info("%s: l=%d d=%d test=%d engines=%s", job.slot, problem.l, problem.d, y_test.size, ",".join(job.engines))
    return problem


# --------------------------------------------------------------------------------------------- running
def _skip_reason(job: SamplingJob, engine: str, l: int) -> str | None:
    from wsvm_span.engines.measure import PRECOMPUTED_ENGINES, kernel_mib

    if engine in PRECOMPUTED_ENGINES and kernel_mib(l) > job.precomputed_max_mb:
        return (f"skipped: the l x l kernel needs {kernel_mib(l):.0f} MiB > precomputed_max_mb = "
                f"{job.precomputed_max_mb:g}")
    return None


def _span_and_cv(job: SamplingJob, problem: LargeProblem, model, C: float) -> dict[str, Any]:
    """Span-rule from the SVs (timed) and the K-fold CV of the same C (measured or projected)."""
    import wsvm_span as ws
    from wsvm_span.engines.measure import cv_fold
    from wsvm_span.utils.environment import single_threaded

    with single_threaded():
        t0 = time.perf_counter()
        span_rule = ws.span_rule_from_svs(model, problem.X, problem.gamma)
        t_span = time.perf_counter() - t0
    folds = ws.stratified_folds(problem.y, job.cv_folds, seed=job.seed)
    runs = [cv_fold(problem.X, problem.y, C, gamma=problem.gamma, folds=folds, fold=k, tol=job.tol,
                    cache_mb=job.cache_mb) for k in range(job.cv_folds_run)]
    complete = job.cv_folds_run == job.cv_folds
    return {"span_rule": span_rule, "t_span_rule": t_span,
            "cv_error": sum(r[1] for r in runs) / problem.l if complete else math.nan,
            "t_cv": float(np.mean([r[0] for r in runs])) * job.cv_folds,
            "cv_folds": job.cv_folds, "cv_folds_run": job.cv_folds_run}


def evaluate(job: SamplingJob, problem: LargeProblem, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Every (C, engine) of the job, the reference engine first for each C; ``on_row(row)`` after each."""
    from wsvm_span.engines.measure import kernel_mib, load_average, measure_fit
    from wsvm_span.model import decision_values

    reference: dict[float, tuple[np.ndarray, set]] = {}

    def row_of(idx: int) -> dict:
        log2_C, engine = job.point(idx)
        C = 2.0 ** log2_C
        row = {"experiment": job.experiment, "dataset": job.dataset, "seed": job.seed, "realization": job.realization,
               "log2_C": log2_C, "gamma": problem.gamma, "engine": engine, "kernel_mb": kernel_mib(problem.l),
               "cv_folds": 0, "cv_folds_run": 0, "load_avg": load_average(), "l": problem.l, "d": problem.d,
               "model_index": idx, "chunk": job.chunk}
        skip = _skip_reason(job, engine, problem.l)
        if skip:
            return {**row, "status": skip}
        options = {"r0": job.r0} if engine == "sampling" else {}
        m = measure_fit(problem.X, problem.y, C, gamma=problem.gamma, engine=engine, tol=job.tol, seed=job.seed,
                        cache_mb=job.cache_mb, **options)
        model, cert = m.model, m.certificate
        f_test = decision_values(model, problem.X, problem.X_test, problem.gamma)
        svs = set(model.support.tolist())
        if engine == job.reference:
            reference[log2_C] = (f_test, svs)
        ref = reference.get(log2_C)
        row.update(
            status=OK, test_error=float(np.mean(-problem.y_test * f_test >= 0)), t_train=m.t_train,
            cpu_train=m.cpu_train, peak_mem_mb=m.peak_mem_mb, n_sv=model.support.size, n_inbound=model.inbound.size,
            n_bounded=model.bounded.size,
            kkt_violation=max(cert.max_zero, cert.max_inbound, cert.max_bounded), kkt_tol_effective=cert.tol_effective,
            decision_diff=float(np.max(np.abs(f_test - ref[0]))) if ref and engine != job.reference else math.nan,
            n_sv_diff=len(svs ^ ref[1]) if ref and engine != job.reference else math.nan)
        if m.record is not None:
            row.update(n_rounds=m.record.n_rounds, final_sample_size=m.record.final_sample_size,
                       final_n_distinct=m.record.final_n_distinct)
            if job.span:
                row.update(_span_and_cv(job, problem, model, C))
        return row

    return evaluate_models(job, log, row_of, on_row)


def run_params(job: SamplingJob, problem: LargeProblem) -> dict[str, Any]:
    """The MLflow parent run's params of a job."""
    from wsvm_span.engines.measure import MEMORY_METHOD

    return {
        "experiment": job.experiment, "dataset": job.dataset, "variant": job.variant, "seed": job.seed,
        "size": job.size, "l": problem.l, "d": problem.d, "n_test": int(problem.y_test.size),
        "kernel": "exp(-gamma ||x - x'||^2)", "gamma": problem.gamma, "tol": job.tol,
        "engines": ",".join(job.engines), "reference": job.reference, "cache_mb": job.cache_mb, "r0": job.r0,
        "precomputed_max_mb": job.precomputed_max_mb, "memory_method": MEMORY_METHOD, "span_grid": job.span,
        "cv_folds": job.cv_folds, "cv_folds_run": job.cv_folds_run,
        "grid.log2_C": f"{min(job.log2_C)}:{max(job.log2_C)}:{len(job.log2_C)}",
    }


def row_params(job: SamplingJob, row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's MLflow params: log2 C, the engine, whether it ran, its index."""
    return {k: row[k] for k in ("log2_C", "engine", "status", "model_index")}


def provenance(job: SamplingJob, problem: LargeProblem) -> dict[str, Any]:
    """What the chunk file's provenance adds for this kind."""
    from wsvm_span.engines.measure import MEMORY_METHOD

    return {"setup_s": problem.setup_s, "memory_method": MEMORY_METHOD, "reference": job.reference,
            "n_test": int(problem.y_test.size)}


#: the job class of this kind
JOB = SamplingJob
