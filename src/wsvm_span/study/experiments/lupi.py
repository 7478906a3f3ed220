"""The privileged-information job (Experiment 8): SVM+ against weighted SVMs (weights from a
Nadaraya-Watson estimate of P(y|x), learned on a validation sample, or Experiment 2's sigmoid of the
importance scores) and the plain SVM, with hyperparameters selected three ways: on a validation
sample (seed 003's protocol), by K-fold CV and by the span-rule (for SVM+ also its LOO rule), from one
training sample.

Protocol (``shared/spec/svm-plus.md``, seed 003's Section 6.3). A data set's training part is a pool;
a training-to-validation ratio t:v (``ratios``) and a training size n give a seeded, class-stratified
draw of n training and n v / t validation points from it (a data set with its own validation sample,
the W toy, draws the validation points from that sample instead). The largest n a ratio allows fills
the pool (or the validation sample), and ``train_fractions`` of it are the training sizes (the x axis
of the figures). For one seed and ratio every size draws from the same per-class permutations of the
pool: training points from their front, validation points from their back (or from the front of the
validation sample's), so the two never overlap. Every model is tested on the data set's test set.

One job = one data set, ratio, training size and seed (replicate); it evaluates every grid point of
every configured method that applies to the data set (``sigmoid`` needs importance scores,
``svm_plus`` privileged features) and writes one row per grid point (schema ``lupi`` of
``results_schema``). Hyperparameters per method:

- ``svm``: log2_C;  ``nw``: log2_C, tau (c_i = C p_i^tau, p_i the Nadaraya-Watson estimate of P(y_i | x_i)
  learned on the validation sample and evaluated at the training points, as the study did (svm-plus.md A),
  bandwidth by the validation sample's leave-one-out likelihood);
- ``sigmoid``: A, B, log2_C (Experiment 2's weights, floor ``sigma``);
- ``learned``: log2_C (the start c = C 1 of L-BFGS-B; the weights are learned on the validation sample
  with the smooth hinge of width ``learn.d``, at most ``learn.max_iter`` iterations);
- ``svm_plus``: log2_C, log2_gamma_plus (SVM+'s C and gamma) and log2_priv_gamma (the privileged RBF
  kernel's parameter, 2^log2_priv_gamma).

Every method also has the axis log2_kernel_scale: its RBF kernel's parameter is 2^log2_kernel_scale / d
(0: the study's 1/d; the W toy's W needs a narrower kernel). Exact LOO runs for every model of a
training sample of at most ``loo_max_train_size`` points.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, NamedTuple

import numpy as np

from wsvm_span.data import DATASETS

from ..grid import expand_axis, grid_point, grid_size
from ..results_schema import ROW_SCHEMAS, SchemaError, parse_ratio
from .base import JobIdentity, KindCapabilities, SplitProblem, evaluate_models, grid_job_memory_mb, warm_up_indices
from ..cost import STARTUP_SECONDS, TIME_PADDING, job_resources

__all__ = ["JOB", "KIND", "METHODS", "ROWS", "LupiJob", "LupiProblem", "evaluate", "parse_ratio", "plan", "prepare",
           "sample_sizes", "subsample"]

log = logging.getLogger(__name__)

KIND = "lupi"
ROWS = "lupi"
#: priced by :func:`calibrated_seconds` (its models differ by method, by laws measured with smo); trained by the
#: config's svm.engine
CAPABILITIES = KindCapabilities(prices_own_jobs=True, priced_engine="smo")
#: the sample sizes place a row (the x axis of the figures), they do not measure it
ROW_IDENTIFIERS = frozenset({"n_val", "train_fraction"})

#: method -> its grid axes (config keys of ``experiments.<exp>.grid``), in grid order; the kernel width of
#: every method is an axis: RBF parameter 2^log2_kernel_scale / d
METHODS: dict[str, tuple[str, ...]] = {
    "svm": ("log2_kernel_scale", "log2_C"),
    "nw": ("log2_kernel_scale", "log2_C", "tau"),
    "sigmoid": ("log2_kernel_scale", "A", "B", "log2_C"),
    "learned": ("log2_kernel_scale", "log2_C"),
    "svm_plus": ("log2_kernel_scale", "log2_priv_gamma", "log2_C", "log2_gamma_plus"),
}
#: what a method needs from the data set (``DatasetSpec`` flags)
NEEDS: dict[str, tuple[str, ...]] = {"sigmoid": ("has_scores",), "svm_plus": ("has_privileged",)}
#: the fewest points of each class in a training sample (5-fold CV needs both classes in every fold)
MIN_PER_CLASS = 5


def ratio_variant(ratio: str) -> str:
    """The ratio as a path component: "1:2" -> "1to2"."""
    t, v = parse_ratio(ratio)
    return f"{t}to{v}"


def sample_sizes(dataset: str, ratio: str, fractions) -> list[tuple[int, int]]:
    """(n_train, n_val) per training fraction: the largest training sample the ratio allows from the
    data set's pool (its training part; or, with a separate validation sample, min(pool, validation
    sample * t / v)), times each fraction; n_val = n_train * v / t (rounded down)."""
    spec = DATASETS[dataset]
    t, v = parse_ratio(ratio)
    largest = min(spec.n_train, spec.n_val * t // v) if spec.n_val else spec.n_train * t // (t + v)
    return [(n, n * v // t) for n in (int(math.floor(f * largest)) for f in fractions)]


def subsample(y, n_train: int, n_val: int, seed: int, key: str, y_val_pool=None) -> tuple[np.ndarray, np.ndarray]:
    """Seeded, class-stratified (training idx, validation idx) from the pool labels ``y`` (and
    ``y_val_pool`` when validation points come from a separate sample).

    Each class gets its share of n_train (and of n_val) by the largest remainder; one permutation per
    class (numpy's generator seeded by (seed, crc32(key))) gives the training points from its front and
    the validation points from its back (or from the front of the validation sample's permutation)."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(key.encode())])
    y = np.asarray(y)
    pools = [y] if y_val_pool is None else [y, np.asarray(y_val_pool)]
    perms = [{c: rng.permutation(np.flatnonzero(p == c)) for c in (-1.0, 1.0)} for p in pools]
    train = _stratified_take(perms[0], n_train, front=True)
    val = _stratified_take(perms[-1], n_val, front=y_val_pool is not None)
    if y_val_pool is None and np.intersect1d(train, val).size:
        raise ValueError(f"{n_train} training and {n_val} validation points do not fit in a pool of {y.size}")
    return train, val


def _stratified_take(perm: Mapping[float, np.ndarray], n: int, front: bool) -> np.ndarray:
    """n indices, each class's share by the largest remainder, from the front or the back of its permutation."""
    sizes = np.array([perm[-1.0].size, perm[1.0].size])
    quota = n * sizes / sizes.sum()
    take = np.floor(quota).astype(int)
    take[np.argsort(-(quota - take), kind="stable")[: n - take.sum()]] += 1
    if np.any(take > sizes):
        raise ValueError(f"cannot draw {n} points from classes of sizes {sizes.tolist()}")
    parts = [p[:k] if front else p[p.size - k:] for p, k in zip((perm[-1.0], perm[1.0]), take)]
    return np.sort(np.concatenate(parts)).astype(np.int64)


@dataclass(frozen=True)
class LupiJob(JobIdentity):
    """Every model of one data set, ratio, training size and replicate.

    grids : method -> its axes (name -> values; model ``i`` of a method is ``grid_point(axes, i)``);
        the methods that apply to the data set, in ``METHODS`` order
    n_train, n_val : the sample sizes; train_fraction : n_train / the largest the ratio allows
    loo : exact LOO for every model; learn_d, learn_max_iter : weight learning; sigma : sigmoid floor
    """

    kind: ClassVar[str] = KIND

    ratio: str
    n_train: int
    n_val: int
    train_fraction: float
    grids: dict[str, dict[str, list[float]]] = field(hash=False)
    engine: str
    qp_solver: str
    svm_plus_solver: str
    tol: float
    cv_folds: int
    cv_seed: int
    loo: bool
    learn_d: float
    learn_max_iter: int
    sigma: float

    @property
    def variant(self) -> str:
        return ratio_variant(self.ratio)

    @property
    def n_models(self) -> int:
        return sum(grid_size(axes) for axes in self.grids.values())

    #: a job runs all its models (the shared model loop, ``base.evaluate_models``, reads these)
    model_start: ClassVar[int] = 0

    @property
    def model_stop(self) -> int:
        return self.n_models

    def models(self):
        """(model index, method, grid point) of every row, in row order."""
        index = 0
        for method, axes in self.grids.items():
            for i in range(grid_size(axes)):
                yield index, method, grid_point(axes, i)
                index += 1

    @staticmethod
    def normalise(raw: dict) -> dict:
        raw["grids"] = {method: {k: [float(v) for v in vals] for k, vals in axes.items()}
                        for method, axes in raw["grids"].items()}
        return raw


# -------------------------------------------------------------------------------------------- planning
def _methods_for(spec: Mapping[str, Any], dataset: str) -> list[str]:
    data = DATASETS[dataset]
    return [m for m in METHODS if m in spec["methods"] and all(getattr(data, flag) for flag in NEEDS.get(m, ()))]


def _ratios(spec: Mapping[str, Any], dataset: str) -> list[str]:
    return list(spec.get("ratios_by_dataset", {}).get(dataset, spec["ratios"]))


def plan(cfg: Mapping[str, Any], experiment: str) -> list[LupiJob]:
    """The jobs of the experiment, in a deterministic order (no data is loaded)."""
    spec = cfg["experiments"][experiment]
    axes = {name: expand_axis(axis) for name, axis in spec["grid"].items()}
    jobs = []
    for dataset in spec["datasets"]:
        grids = {m: {a: axes[a] for a in METHODS[m]} for m in _methods_for(spec, dataset)}
        for ratio in _ratios(spec, dataset):
            sizes = sample_sizes(dataset, ratio, spec["train_fractions"])
            for rep, seed in enumerate(spec["seeds"]):
                for k, ((n_train, n_val), fraction) in enumerate(zip(sizes, spec["train_fractions"])):
                    jobs.append(LupiJob(
                        experiment=experiment, dataset=dataset, ratio=ratio, seed=int(seed), realization=1,
                        chunk=rep * len(sizes) + k, n_train=n_train, n_val=n_val, train_fraction=float(fraction),
                        grids=grids, engine=cfg["svm"]["engine"], qp_solver=cfg["svm"]["qp_solver"],
                        svm_plus_solver=spec["svm_plus_solver"], tol=float(cfg["svm"]["tol"]),
                        cv_folds=int(cfg["cv"]["folds"]),
                        cv_seed=int(cfg["cv"]["seed"]) + int(seed),
                        loo=n_train <= int(spec["loo_max_train_size"]), learn_d=float(spec["learn"]["d"]),
                        learn_max_iter=int(spec["learn"]["max_iter"]), sigma=float(spec["sigma"]),
                    ))
    return jobs


def config_problems(cfg: Mapping[str, Any], experiment: str):
    """Semantic checks of the experiment's block: data sets, ratios, sizes, methods and their axes."""
    spec = cfg["experiments"][experiment]
    where = f"experiments.{experiment}"
    for method in spec["methods"]:
        missing = [a for a in METHODS[method] if a not in spec["grid"]]
        if missing:
            yield f"{where}.grid: method {method!r} needs the axes {missing}"
    if len(set(spec["methods"])) != len(spec["methods"]):
        yield f"{where}.methods: has duplicates"
    if any(not 0 < f <= 1 for f in spec["train_fractions"]) or not spec["train_fractions"]:
        yield f"{where}.train_fractions: list fractions in (0, 1] of the largest training sample a ratio allows"
    if len(set(spec["seeds"])) != len(spec["seeds"]) or not spec["seeds"]:
        yield f"{where}.seeds: list at least one seed, without duplicates"
    unknown = [d for d in spec.get("ratios_by_dataset", {}) if d not in spec["datasets"]]
    if unknown:
        yield f"{where}.ratios_by_dataset: {unknown} are not in {where}.datasets"
    for dataset in spec["datasets"]:
        if dataset not in DATASETS:
            continue  # reported by the data set list check
        if not _methods_for(spec, dataset):
            yield f"{where}: no configured method applies to {dataset!r}"
        for ratio in _ratios(spec, dataset):
            for n_train, n_val in sample_sizes(dataset, ratio, spec["train_fractions"]):
                if n_train < 2 * max(MIN_PER_CLASS, int(cfg["cv"]["folds"])) or n_val < 2:
                    yield (f"{where}: {dataset!r} at ratio {ratio} gives a training sample of {n_train} and a "
                           f"validation sample of {n_val} points for some train fraction; raise the fraction")
                    break


# --------------------------------------------------------------------------------------------- running
@dataclass
class Kernels:
    """The kernel blocks of one RBF width: training (l x l), validation and test rows, the enclosing-ball
    diameter D and the CV folds' training kernels."""

    gamma: float
    K: np.ndarray
    K_val: np.ndarray
    K_test: np.ndarray
    D: float
    fold_kernels: Any


@dataclass
class LupiProblem(SplitProblem):
    """What every model of a job shares: the samples, their kernels per width, the CV folds, the NW
    estimate."""

    split: Any
    train: np.ndarray  # indices into the pool
    val: np.ndarray  # indices into the pool (or into the separate validation sample)
    y: np.ndarray
    y_val: np.ndarray
    kernels: dict[float, Kernels]  # log2_kernel_scale -> its kernels
    priv_kernels: dict[float, np.ndarray]  # log2_priv_gamma -> the privileged kernel (svm_plus)
    scores: np.ndarray | None
    folds: np.ndarray
    nw: Any  # the Nadaraya-Watson estimate (method "nw"), else None
    t_nw: float
    setup_s: float
    #: the last SVM+ model of each sweep along C (log2_kernel_scale, log2_priv_gamma, log2_gamma_plus): the start of
    #: the sweep's next C (the grid's slowest axis), warm starts that keep the solutions and cut the training's steps
    svm_plus_sweeps: dict[tuple[float, float, float], Any] = field(default_factory=dict)

    @property
    def l(self) -> int:
        return int(self.y.size)


def _axis_values(job: LupiJob, axis: str) -> list[float]:
    return sorted({v for axes in job.grids.values() for v in axes.get(axis, ())})


def prepare(job: LupiJob, settings) -> LupiProblem:
    """Load the split, draw the samples; the kernels of every configured width (with D, by the
    configured QP solver, and the CV folds' kernels), the privileged kernels and the NW estimate, once
    per job."""
    import wsvm_span as ws
    from wsvm_span.data import load_dataset
    from wsvm_span.svm_plus import nadaraya_watson
    from wsvm_span.utils.environment import single_threaded

    split = load_dataset(job.dataset, seed=job.seed, data_dir=settings.data_dir, mirror=settings.data_mirror)
    t0 = time.perf_counter()
    train, val = subsample(split.y_train, job.n_train, job.n_val, job.seed, f"{job.dataset}/{job.ratio}",
                           y_val_pool=split.y_val)
    X, y = split.X_train[train], split.y_train[train]
    X_val, y_val = (split.X_train, split.y_train) if split.X_val is None else (split.X_val, split.y_val)
    X_val, y_val = X_val[val], y_val[val]
    with single_threaded():
        folds = ws.stratified_folds(y, k=job.cv_folds, seed=job.cv_seed)
        kernels = {}
        for scale in _axis_values(job, "log2_kernel_scale"):
            gamma = 2.0**scale / int(split.d)
            K = ws.rbf_kernel(X, gamma=gamma)
            kernels[scale] = Kernels(gamma=gamma, K=K, K_val=ws.rbf_kernel(X_val, X, gamma=gamma),
                                     K_test=ws.rbf_kernel(split.X_test, X, gamma=gamma),
                                     D=ws.enclosing_ball_diameter(K, solver=job.qp_solver),
                                     fold_kernels=ws.FoldKernels(K, folds))
        priv = {v: ws.rbf_kernel(split.X_priv[train], gamma=2.0**v) for v in _axis_values(job, "log2_priv_gamma")}
        t_nw = time.perf_counter()
        # P(1|x) from the validation sample, evaluated at the training points (svm-plus.md A: the study's way)
        nw = nadaraya_watson(X_val, y_val, X_eval=X, y_eval=y) if "nw" in job.grids else None
        t_nw = time.perf_counter() - t_nw
        problem = LupiProblem(
            split=split, train=train, val=val, y=y, y_val=y_val, kernels=kernels, priv_kernels=priv,
            scores=None if split.scores is None else split.scores[train], folds=folds, nw=nw, t_nw=t_nw,
            setup_s=0.0)
        warm = warm_up_indices(y)
        if warm is not None:  # the engine's one-time initialisations, outside the models' timings
            ws.fit_svm(next(iter(kernels.values())).K[np.ix_(warm, warm)], y[warm], 1.0, engine=job.engine, tol=job.tol)
    problem.setup_s = time.perf_counter() - t0
    log.info("%s: l=%d validation=%d d=%d methods %s (%d models, exact LOO: %s)", job.slot, problem.l, val.size,
             problem.d, ",".join(job.grids), job.n_models, job.loo)
    return problem


#: the SVM+ routes (``experiments.exp8.svm_plus_solver``) that take a warm start along the job's C sweep
WARM_ROUTES = ("auto", "smo")


class GridPointResult(NamedTuple):
    """One grid point of one method, evaluated (``evaluate_grid_point``): the row's computed fields."""

    evaluation: Any  #: the selection rules' values (``svm_plus.SelectionEvaluation``)
    t_weights: float  #: seconds of computing the weights (weight learning; the NW estimate's share)
    gamma: float  #: the RBF parameter of the kernel
    n_unconverged_inner: int | None  #: learned weights' inner solves stopped at the step limit; None otherwise
    n_unconverged_fits: int  #: the model's training, CV and LOO retrainings stopped at the step limit


def evaluate_grid_point(job: LupiJob, problem: LupiProblem, method: str,
                        point: Mapping[str, float]) -> GridPointResult:
    """One grid point of one method: its weights, the model and every selection rule's value (a row's fields;
    the benchmarks time it model by model)."""
    import wsvm_span as ws
    from wsvm_span.engines import counting_step_limits
    from wsvm_span.svm_plus import (evaluate_svm_plus, evaluate_weighted, fit_svm_plus, learn_weights,
                                    probability_weights)

    p = problem
    k = p.kernels[point["log2_kernel_scale"]]
    C = 2.0 ** point["log2_C"]
    shared = dict(folds=p.folds, D=k.D, K_val=k.K_val, y_val=p.y_val, qp_solver=job.qp_solver, compute_loo=job.loo)
    if method == "svm_plus":
        K_priv, gamma_plus = p.priv_kernels[point["log2_priv_gamma"]], 2.0 ** point["log2_gamma_plus"]
        sweep = (point["log2_kernel_scale"], point["log2_priv_gamma"], point["log2_gamma_plus"])
        with counting_step_limits() as stopped:
            model = fit_svm_plus(k.K, K_priv, p.y, C, gamma_plus, solver=job.svm_plus_solver, qp_solver=job.qp_solver,
                                 check_input=False,
                                 # only the decomposition routes start from a neighbouring solution
                                 warm_start=p.svm_plus_sweeps.get(sweep) if job.svm_plus_solver in WARM_ROUTES else None)
            p.svm_plus_sweeps[sweep] = model
            ev = evaluate_svm_plus(k.K, K_priv, p.y, C, gamma_plus, k.K_test, p.split.y_test, engine=job.engine,
                                   solver=job.svm_plus_solver, model=model, **shared)
        return GridPointResult(ev, 0.0, k.gamma, None, len(stopped))
    t_weights, n_unconverged_inner = 0.0, None
    if method == "svm":
        weights = np.full(p.l, C)
    elif method == "nw":
        weights = probability_weights(p.nw.p, C, point["tau"])
        t_weights = p.t_nw / grid_size(job.grids["nw"])  # the one estimate, shared by the method's grid
    elif method == "sigmoid":
        weights = ws.sigmoid_weights(p.scores, point["A"], point["B"], C, sigma=job.sigma)
    elif method == "learned":
        t0 = time.perf_counter()
        learned = learn_weights(k.K, p.y, k.K_val, p.y_val, C, d=job.learn_d, max_iter=job.learn_max_iter,
                                engine=job.engine)
        t_weights = time.perf_counter() - t0
        weights, n_unconverged_inner = learned.c, learned.n_unconverged_inner
    else:
        raise ValueError(f"unknown method {method!r}; this wsvm-span knows {sorted(METHODS)}")
    with counting_step_limits() as stopped:
        ev = evaluate_weighted(k.K, p.y, weights, k.K_test, p.split.y_test, engine=job.engine, tol=job.tol,
                               fold_kernels=k.fold_kernels, **shared)
    return GridPointResult(ev, t_weights, k.gamma, n_unconverged_inner, len(stopped))


def evaluate(job: LupiJob, problem: LupiProblem, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Every model of the job (the shared model loop: one BLAS thread, progress lines); ``on_row(row)``
    after each."""
    import warnings

    from wsvm_span.svm_plus import unpolished_solutions

    columns = set(ROW_SCHEMAS[ROWS].names)
    models = {index: (method, point) for index, method, point in job.models()}

    def row_of(index: int) -> dict:
        method, point = models[index]
        result = evaluate_grid_point(job, problem, method, point)
        row = {**result.evaluation.as_dict(), **point, "t_weights": result.t_weights,
               "n_unconverged_inner": result.n_unconverged_inner, "n_unconverged_fits": result.n_unconverged_fits}
        row.update(experiment=job.experiment, dataset=job.dataset, method=method, ratio=job.ratio, seed=job.seed,
                   realization=job.realization, gamma=result.gamma, l=problem.l, n_val=job.n_val, d=problem.d,
                   train_fraction=job.train_fraction, model_index=index, chunk=job.chunk)
        unknown = set(row) - columns
        if unknown:
            raise SchemaError(f"row fields {sorted(unknown)} are not columns of the {ROWS!r} row schema")
        return row

    unpolished = unpolished_solutions()
    with warnings.catch_warnings():
        # weight learning warns when the validation sample is smaller than the training sample, which the
        # 2:1 ratio is by design; the rows carry both sizes
        warnings.filterwarnings("ignore", message=".*validation points for .* weights", category=UserWarning)
        rows = evaluate_models(job, log, row_of, on_row)
    stopped = [(_count(r.get("n_unconverged_inner")), _count(r.get("n_unconverged_fits"))) for r in rows]
    if any(inner or fits for inner, fits in stopped):
        log.warning("%s: SMO stopped at its step limit in %d models' weight learning (%d inner solves) and %d models' "
                    "trainings, CV folds or LOO retrainings (%d solves): the rows' n_unconverged_inner and "
                    "n_unconverged_fits", job.slot, sum(i > 0 for i, _ in stopped), sum(i for i, _ in stopped),
                    sum(f > 0 for _, f in stopped), sum(f for _, f in stopped))
    unpolished = unpolished_solutions() - unpolished
    if unpolished:
        log.warning("%s: %d SVM+ solutions (models, CV folds and LOO retrainings) kept unpolished: their in-bound / "
                    "bounded split is only accurate to the QP solver's tolerance (svm_plus.engine_kept_unpolished of "
                    "a row's engine marks such models)", job.slot, unpolished)
    return rows


def _count(value) -> int:
    """A row's count, 0 where it is null (not weight learning, or a row resumed from an earlier attempt's file)."""
    return int(value) if value is not None and value == value else 0


#: the committed parts (reproduced/paper-exp8-<part>) METHOD_LAWS is fitted on
METHOD_LAWS_PARTS: tuple[str, ...] = tuple("bdefghijklmnopqrstuvwx")
#: one-core CPU seconds of one model at l = 100 and its exponent in l, per method: (everything a model pays but
#: its exact LOO: the weights, training, validation, span bound and span-rule, K-fold CV, SVM+'s LOO rule) and
#: (its exact LOO), each a * (l / 100)^b. Least squares in log-log of the mean per model per (part, data set,
#: l, method) over Experiment 8's paper-size rows (reproduced/paper-exp8-b ... paper-exp8-x: spambase at
#: l = 29-1620 (breast_cancer's paper-exp8-a left out since its rerun for issue 42 ran at a load of 4-5, its CPU a
#: third of its wall), the W toy at l = 25-400 at all three ratios, mammographic's plain and NW weights at
#: l = 35-70; smo, SVM+ by its active-set solver), each part's rows' wall seconds scaled to CPU by its measured CPU
#: over its jobs' wall (0.40-1.0: the parts shared the machine): benchmarks/fit_lupi_laws.py, which prints them.
#: Per part, in-sample, the models' seconds come out -23% to +22% but for mammographic's (+334%: its learned
#: weights priced by DATASET_METHOD_LAWS).
#: SVM+'s exact LOO in these rows retrained its equivalent weighted SVM by LIBSVM; smo does that 2.5-5.4x faster
#: since (docs/experiments.md), which these laws do not see yet. The price before, LIBSVM's weight-grid laws at
#: the training size and SVM+ at 5 of them, missed the parts' whole CPU by -75% to +93%. Weight learning's cost
#: depends on the data (mammographic's degenerate inner solves), which these laws, fitted where it is 0.05-1.4 s,
#: do not see: DATASET_METHOD_LAWS replaces them there.
METHOD_LAWS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "svm": ((0.0059, 0.82), (0.0220, 1.59)),
    "nw": ((0.0045, 0.74), (0.0147, 1.26)),
    "sigmoid": ((0.0043, 0.77), (0.0134, 1.68)),
    "learned": ((0.0797, 0.76), (0.0180, 1.95)),
    "svm_plus": ((0.0849, 1.40), (0.2834, 1.75)),
}


#: The laws of a method on a data set where it costs what METHOD_LAWS does not see, in their form. Weight
#: learning on mammographic: its duplicate points (196 distinct of 280 at 2:1, 17 groups with both labels) and its
#: flat kernels at log2_kernel_scale 4-6 leave the inner solves degenerate, 11-103 per job's learned grid stopped
#: by SMO's step limit (one model 483 s of its job's 731 s at l = 280), and its exact LOO retrains such models.
#: Fitted on the whole learned grids of mammographic's jobs measured with smo by benchmarks/bench_lupi_cost.py
#: (docs/experiments.md, "Experiment 8 at paper size"): all but the exact LOO by least squares in log-log over five
#: jobs (2:1 at l = 140, 210, 280 twice, 1:2 at l = 140: 3.0-18.3 s per model, each job's mean -44% to +141% off
#: the law, the cost sits in 1-3 models of 40); the exact LOO at the geometric mean of the two jobs at l = 140 that
#: have it (2.8 and 6.2 s) with METHOD_LAWS' exponent. l < 140 is not measured. The jobs measured cost 25-116x what
#: METHOD_LAWS priced for them.
DATASET_METHOD_LAWS: dict[tuple[str, str], tuple[tuple[float, float], tuple[float, float]]] = {
    ("mammographic", "learned"): ((2.12, 1.66), (2.45, 1.59)),
}


def model_seconds(method: str, l: int, loo: bool, dataset: str | None = None) -> float:
    """One-core CPU seconds of one model of ``method`` at training size ``l`` by :data:`METHOD_LAWS` (by
    :data:`DATASET_METHOD_LAWS` where it has ``dataset``'s), its exact LOO included where ``loo``."""
    (a, b), (a_loo, b_loo) = DATASET_METHOD_LAWS.get((dataset, method), METHOD_LAWS[method])
    return a * (l / 100) ** b + (a_loo * (l / 100) ** b_loo if loo else 0.0)


def calibrated_seconds(job: LupiJob, cal) -> float:
    """One-core seconds of a job: every model by its method's law on the job's data set (:func:`model_seconds`),
    MLflow's cost per model and per job and the set-up from the cost calibration (``config.estimate``)."""
    seconds = sum(grid_size(axes) * (model_seconds(method, job.n_train, job.loo, job.dataset) + cal.model_overhead_s)
                  for method, axes in job.grids.items())
    a, b = cal.setup_law
    return seconds + a * DATASETS[job.dataset].n_train**b + cal.job_overhead_s


def run_params(job: LupiJob, problem: LupiProblem) -> dict[str, Any]:
    """The MLflow parent run's params of a job."""
    return {
        "experiment": job.experiment, "dataset": job.dataset, "ratio": job.ratio, "seed": job.seed,
        "realization": job.realization, "chunk": job.chunk, "l": problem.l, "n_val": job.n_val, "d": problem.d,
        "train_fraction": job.train_fraction, "n_models": job.n_models,
        "methods": ",".join(job.grids), "engine_requested": job.engine, "qp_solver_requested": job.qp_solver,
        "svm_plus_solver_requested": job.svm_plus_solver,
        "tol": job.tol, "cv_folds": job.cv_folds, "cv_seed": job.cv_seed, "loo": job.loo, "learn_d": job.learn_d,
        "learn_max_iter": job.learn_max_iter, "sigma": job.sigma,
        **{f"grid.{m}.{k}": f"{min(v)}:{max(v)}:{len(v)}" for m, axes in job.grids.items() for k, v in axes.items()},
    }


def row_params(job: LupiJob, row: Mapping[str, Any]) -> dict[str, Any]:
    """A model's MLflow params: its method, hyperparameters and index in the job."""
    return {"method": row["method"], **{k: row[k] for k in METHODS[row["method"]]}, "model_index": row["model_index"]}


def provenance(job: LupiJob, problem: LupiProblem) -> dict[str, Any]:
    """What the chunk file's provenance adds: setup time, the samples' indices, the NW bandwidth."""
    return {"setup_s": problem.setup_s, "train_indices": problem.train.tolist(), "val_indices": problem.val.tolist(),
            "t_nw": problem.t_nw, "nw_bandwidth": None if problem.nw is None else problem.nw.bandwidth}


def resources(cfg: Mapping[str, Any], job: LupiJob) -> dict[str, int]:
    """Scheduler hints: memory as a grid job's of the data set (its samples are at most the pool); the run time
    from this kind's own price (:func:`calibrated_seconds`), padded. The grid jobs' time model knows nothing of
    SVM+ or the exact LOO: it priced a bank_marketing job at 2:1, l = 200 at 7 s, and the config's minimum of 60
    minutes was then its limit, where the job ran 2,579 s on a shared core (its price here: 788 s, limit 134 min)."""
    from ..calibration import load_calibration

    secs = calibrated_seconds(job, load_calibration()) * TIME_PADDING + STARTUP_SECONDS
    return {**job_resources(cfg, job), "runtime": max(int(cfg["resources"]["runtime_min"]), math.ceil(secs / 60))}


#: peak memory: as a grid job's of the data set
job_memory_mb = grid_job_memory_mb

#: the job class of this kind
JOB = LupiJob
