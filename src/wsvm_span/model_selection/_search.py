"""Hyperparameter search for the SVM scored by the span-rule: ``SpanSearchCV``.

A drop-in for ``GridSearchCV(SVC(), param_grid)`` that trains ONE model per grid point on all the
training data and scores it by a leave-one-out estimate computed from that model (method.md
sections 2-4), instead of five CV refits. It follows ``BaseSearchCV``'s conventions: ``cv_results_``
(built by BaseSearchCV's own formatter, so the keys and ranks are GridSearchCV's), ``best_params_``,
``best_score_``, ``best_index_``, ``refit`` (bool or a callable returning the index, which is where the
study's tie rule plugs in: ``TieRule``), ``best_estimator_`` (a plain ``sklearn.svm.SVC`` refit on all
the data), ``n_jobs`` through joblib, ``verbose`` progress and scikit-learn's fit callbacks.

Any number of classes: two train one weighted SVM per point (labels +1 = classes_[1]); more train
LIBSVM's one-vs-one classifier on the same shared kernel and score it by the multiclass estimates of
``wsvm_span.multiclass`` (multiclass.md: each machine's per-SV span-rule LOO values put into the vote),
so ``best_estimator_`` (an ``SVC``, one-vs-one as well) predicts what the scored model votes.

Scores follow scikit-learn's "greater is better": ``test_score = 1 - estimate``, the estimated
leave-one-out accuracy for the span-rule (a lower bound of it for the span bound, which can exceed 1).
Every estimate is one number over all l training points, so ``n_splits_ = 1`` and cv_results_ has one
``split0_test_score`` column: its keys equal GridSearchCV's for a single split.

Any of SVC's kernels (grid keys ``kernel``, ``gamma``, ``degree``, ``coef0`` with SVC's meanings, or the template's):
linear, poly, rbf, sigmoid, a callable, or one precomputed kernel given as X.

Work shared across the grid (the speed levers): the squared distances ||x_i - x_j||^2 (RBF) and the inner
products <x_i, x_j> (linear, poly, sigmoid) are computed once per search (one GEMM each), each kernel (exp(-gamma
D2) once per gamma, the others once per gamma, degree and coef0) once and shared by every C and weighting of it
(with R^2 of the xi-alpha bound, the enclosing-ball diameter of the span bound, both from that kernel's Gram
matrix, and, for criterion="cv_error", the folds' kernels); LIBSVM trains on it as a precomputed kernel; the
span-rule needs one factorization per model; the trainer (``engine="smo"``) starts each C of a kernel from
the previous C's solution, and each CV fold from its grid point's model. With that trainer on two classes the
RBF kernel is computed row by row as it is read (``kernels.RBFRows``): training reads the rows of the points that
enter a working set, the span-rule and f the support vectors' rows, so at mnist_2_9's larger gammas most rows
are never computed; R^2 comes from the largest squared distance, and an estimate that needs more (CV, LOO, the
span bound's D) completes the kernel first. Where not even the squared distances fit (``cache_size``), the same
``RBFRows`` is a row cache of fixed size on the features (``RBFRows.cached``): no l x l array at all, the span-rule
from the SVs' kernel blocks, R^2 from the largest squared distance found in row blocks, held-out errors in blocks,
CV folds and LOO retrainings on the cache's rows restricted to their points; with more classes each one-vs-one
machine trains on the cache's rows restricted to its points, and the machines' R_ij^2 come from the largest squared
distances between the classes.

The second door, for plain ``GridSearchCV``: ``make_span_scorer()`` with ``cv=WholeTrainingSet()``
scores each fitted ``SVC`` by its span-rule.
"""
from __future__ import annotations

import numbers
import time
from copy import deepcopy
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import get_active_backend
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils import get_tags
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

import wsvm_span as ws
from wsvm_span.engines import ENGINE_NAMES, Capabilities, get_engine
from wsvm_span.engines.warm_start import Solved, rescaled_start
from wsvm_span.kernels import (_BLOCK_ELEMENTS, KERNEL_NAMES, PRODUCT_KERNELS, KernelSpec, RBFRows,
                                class_max_squared_distances, max_squared_distance, rbf_from_squared_distances,
                                squared_distances)
from wsvm_span.model import decision_values, make_model
from wsvm_span.tie_rules import TIE_ATOL, TIE_RTOL, TIE_RULES
from wsvm_span.utils.validation import check_kernel

from . import _sklearn_compat as compat
from ._grid import CRITERIA, DEFAULT_ENGINE, FREE_CRITERIA, gridpy_param_grid
from ._memory import (AVAILABLE, SearchMemory, SearchMemoryError, check_memory, check_point_memory, memory_limit,
                      parallel_plan, row_loo_bytes, row_point_bytes, search_memory)
from ._multiclass import OneVsOneKernels
from ._nadaraya_watson import nadaraya_watson_label_probability, nadaraya_watson_weights
from ._progress import SearchProgress
from ._sklearn_compat import BaseSearchCV, HasMethods, Interval, StrOptions

__all__ = ["SpanSearchCV", "TieRule", "WholeTrainingSet", "estimate_errors", "make_span_scorer"]

#: grid keys: SVC's own (C, class_weight and the kernel's) and the project's weighting schemes
KERNEL_KEYS = ("kernel", "gamma", "degree", "coef0")
SVC_KEYS = ("C", "class_weight") + KERNEL_KEYS
SCHEME_KEYS = ("C_plus", "C_minus", "sigmoid_A", "sigmoid_B", "sigmoid_sigma", "nw_bandwidth", "nw_tau")
GRID_KEYS = SVC_KEYS + SCHEME_KEYS
#: LIBSVM stopping tolerance of the default estimator. The span-rule reads y_p f(x_p) and the
#: in-bound/bounded split from the solution (method.md section 1: train tight). Measured on the 7 x 4
#: C x gamma grid of benchmarks/bench_search.py --levers: at 1e-5 the span-rule equals tol 1e-7's on
#: 28/28 points of splice, adult, spambase and skin_nonskin (same selection, 10-25% less CPU); at
#: 1e-4 on 28, 28, 27 and 28; SVC's default 1e-3 only on 21, 25, 21 and 26.
DEFAULT_TOL = 1e-5
#: the estimates that read the training kernel only at the support vectors' rows (the span-rule: K among
#: them; xi-alpha: R^2 and the model's margins): with these alone the kernel's other rows are never computed
ROW_CRITERIA = frozenset({"span_rule", "xi_alpha_bound", "sv_count_bound"})
#: what a row cache (no l x l array) computes: those, K-fold CV (each fold trained on the cache's rows restricted
#: to its training points, its held-out errors from blocks of rows) and the exact LOO (each retraining likewise)
CACHE_CRITERIA = ROW_CRITERIA | {"cv_error", "loo_error"}
#: criteria that measure the data in feature space: the span bound's D (the smallest enclosing ball, a QP that is
#: convex only for a positive semidefinite kernel) and the xi-alpha bound's R^2. Measured on six 60-point problems
#: with the sigmoid kernel (gamma 0.01, 0.05, 0.2, 1; coef0 -1, 0, 1; C 0.5, 8, 100): the enclosing-ball QP failed
#: on 48 of the 72 kernels, and the xi-alpha value fell below the exact LOO error on 4 of the 216 models, so it
#: bounds nothing there. The span-rule (the KKT system's identity, no distance) is computed: it differed from the
#: exact LOO error by 5.8 points on average (median 1.7, max 63; RBF on the same problems: 2.5, 1.7, 15)
PSD_CRITERIA = frozenset({"span_bound", "xi_alpha_bound"})
#: what a row cache cannot give without the whole kernel, criterion by criterion (the refusal's words)
WHOLE_KERNEL_CRITERIA = {
    "span_bound": "its D is the diameter of the smallest ball enclosing all l points in feature space, a QP over "
                  "the whole l x l kernel",
}
#: the study's tie rules (wsvm_span.tie_rules.TIE_RULES), in the order its CLI lists them
TIE_RULE_NAMES = tuple(TIE_RULES)


# ------------------------------------------------------------------------------------- tie rule
class TieRule:
    """A ``refit`` callable: among the candidates tied at the best ``score_key``, the one whose ``key`` (an error,
    lower is better) is the worst, the best or the lower median.

    These are the study's tie rules (method.md section 6; ``wsvm_span.tie_rules.TIE_RULES``). With
    ``key="test_error"`` (SpanSearchCV's column when fit gets ``heldout=(X_test, y_test)``) it reproduces the
    study's reporting rule; any other numeric ``cv_results_`` column works too, in plain GridSearchCV as well.
    Called with ``cv_results_``, it returns the index of the chosen candidate (the first one, in grid order,
    with that value).

    Parameters
    ----------
    rule : {"worst", "best", "median"}, default="worst"
        Which ``key`` value to pick among the tied candidates.
    key : str, default="test_error"
        The ``cv_results_`` column the rule ranks the tied candidates by.
    score_key : str, default="mean_test_score"
        The column whose best value defines the tie (greater is better; scores within the study's tie
        tolerances are tied).

    Raises
    ------
    ValueError
        If ``rule`` is unknown; when called, if ``key`` is not a column or no candidate has a finite score.

    Examples
    --------
    >>> from wsvm_span.model_selection import TieRule
    >>> results = {"mean_test_score": [0.9, 0.8, 0.9], "test_error": [0.10, 0.05, 0.20]}
    >>> TieRule("worst")(results), TieRule("best")(results)
    (2, 0)
    """

    def __init__(self, rule: str = "worst", key: str = "test_error", score_key: str = "mean_test_score"):
        if rule not in TIE_RULE_NAMES:
            raise ValueError(f"tie rule must be one of {TIE_RULE_NAMES}, got {rule!r}")
        self.rule, self.key, self.score_key = rule, key, score_key

    def __repr__(self) -> str:
        return f"TieRule(rule={self.rule!r}, key={self.key!r}, score_key={self.score_key!r})"

    def tied(self, cv_results) -> np.ndarray:
        """Indices of the candidates tied at the best score (NaN scores never tie)."""
        scores = np.asarray(cv_results[self.score_key], dtype=float)
        if not np.isfinite(scores).any():
            raise ValueError(f"no candidate has a finite {self.score_key}: every fit failed")
        best = np.nanmax(scores)
        return np.flatnonzero(np.isclose(scores, best, rtol=TIE_RTOL, atol=TIE_ATOL))

    def __call__(self, cv_results) -> int:
        if self.key not in cv_results:
            raise ValueError(
                f"tie rule key {self.key!r} is not a cv_results_ column; for 'test_error' pass "
                "fit(..., heldout=(X_test, y_test)) to SpanSearchCV"
            )
        tied = self.tied(cv_results)
        values = np.asarray(cv_results[self.key], dtype=float)[tied]
        target = TIE_RULES[self.rule](values)
        return int(tied[np.flatnonzero(values == target)[0]])


def classifier_search_tags(search, template):
    """The tags of a search that fits its classifier itself: a classifier with ``template``'s classifier and input
    tags (BaseSearchCV's own tags would ask a None estimator)."""
    tags = super(BaseSearchCV, search).__sklearn_tags__()
    template_tags = get_tags(template)
    tags.estimator_type = "classifier"
    tags.classifier_tags = deepcopy(template_tags.classifier_tags)
    tags.input_tags.pairwise = template_tags.input_tags.pairwise
    tags.input_tags.sparse = template_tags.input_tags.sparse
    return tags


def check_tie_rule(search, heldout) -> None:
    """A search's ``tie_rule`` against its ``refit`` and the held-out data it ranks ties by (``SpanSearchCV``,
    ``SVMPlusSearchCV``)."""
    if search.tie_rule is not None and callable(search.refit):
        raise ValueError("give either tie_rule or a callable refit, not both")
    if search.tie_rule is not None and heldout is None:
        raise ValueError(f"tie_rule={search.tie_rule!r} ranks tied candidates by their held-out error: "
                         "pass fit(..., heldout=(X_test, y_test)), or leave tie_rule=None")


def choose_best(search, results) -> None:
    """Set a search's ``best_index_``, ``best_params_`` and (unless ``refit`` is callable, as in GridSearchCV)
    ``best_score_`` from its ``cv_results_``: by ``tie_rule`` where set, else by a callable ``refit``, else the
    first best-ranked candidate in grid order."""
    chooser = TieRule(search.tie_rule) if search.tie_rule is not None else search.refit
    if callable(chooser):
        search.best_index_ = compat.select_best_index(chooser, results)
    else:
        search.best_index_ = int(results["rank_test_score"].argmin())
    if not callable(search.refit):
        search.best_score_ = float(results["mean_test_score"][search.best_index_])
    search.best_params_ = results["params"][search.best_index_]


# --------------------------------------------------------------------------- per-point estimates
def estimate_errors(model, K, wanted, *, D=None, R2=None, folds=None, fold_kernels=None, fold_starts=None) -> dict:
    """Error estimates of one trained model (fractions of l) for the criteria in ``wanted``,
    plus the free ones (xi-alpha, SV count). Shared by the search and the scorer. CV and LOO retrain
    with the model's engine; one that starts from a neighbouring solution starts each fold from the
    model (and from the fold's previous model along a grid walk: ``fold_starts``)."""
    out = {"xi_alpha_bound": ws.xi_alpha_bound(model, K, R2=R2), "sv_count_bound": ws.sv_count_bound(model)}
    if "span_bound" in wanted:
        analysis = ws.analyse_spans(model, K, D=D)
        out["span_rule"], out["span_bound"] = analysis.span_rule, analysis.span_bound
    elif "span_rule" in wanted:
        # a row cache holds no l x l array: the span-rule reads K only among the SVs, computed in blocks from the
        # features (span_rule_from_svs: the n* x n* factorization, the bounded SVs in blocks)
        out["span_rule"] = (ws.span_rule(model, K) if not _row_cache(K)
                            else ws.span_rule_from_svs(model, K.X, K.gamma))
    if "cv_error" in wanted:
        out["cv_error"] = ws.kfold_cv_error(K, model.y, model.C, folds=folds, engine=model.engine, tol=model.tol,
                                            check_input=False, fold_kernels=fold_kernels, model=model,
                                            fold_starts=fold_starts)
    if "loo_error" in wanted:
        out["loo_error"] = ws.leave_one_out(model, K, check_input=False).loo_error
    return out


def _row_cache(K) -> bool:
    return isinstance(K, RBFRows) and not K.in_place


class _SharedKernel:
    """What every grid point of one kernel (one gamma of the RBF) shares: the training kernel, the held-out block,
    R^2 of the xi-alpha bound, the enclosing-ball diameter D of the span bound (both from this kernel's Gram
    matrix: its entries and its diagonal) and the CV folds' kernels (each only when a wanted criterion needs it),
    computed once before the points of that kernel run; and how a point is trained and estimated on them (two
    classes: one weighted SVM, labels y in {-1, +1}; more: ``_multiclass.OneVsOneKernels``, labels as class
    positions).

    The training kernel may be filled on demand (``kernels.RBFRows``, with ``max_d2`` for R^2): the trainer
    computes the rows it reads, estimates that read K only at the support vectors' rows (``ROW_CRITERIA``) ask
    for those, and any other estimate has the kernel completed first. On a row cache (``RBFRows.cached``: no l x l
    array) only ``CACHE_CRITERIA`` are computed (the search refuses the others first): the span-rule from the SVs'
    kernel blocks, each point first checking its blocks against ``point_budget`` bytes (``_memory.row_point_bytes``),
    R^2 from the largest squared distance, the CV folds on the cache's rows restricted to their training points
    (started from the point's model, ``resampling.kfold_cv_error``), the held-out error from blocks of the held-out
    rows (``X_held``)."""

    def __init__(self, train, test, *, wanted, folds, max_d2=None, X_held=None, point_budget=None):
        self.train, self.test = train, test
        self.X_held, self.point_budget = X_held, point_budget
        if _row_cache(train):
            self.radius2 = train.radius2(max_d2)
            self.diameter = self.fold_kernels = None
            return
        if isinstance(train, RBFRows):
            self.radius2 = train.radius2(max_d2)
            full = train.complete() if not wanted <= ROW_CRITERIA else None
        else:
            self.radius2 = ws.kernel_radius2(train)
            full = train
        self.diameter = ws.enclosing_ball_diameter(full) if "span_bound" in wanted else None
        self.fold_kernels = ws.FoldKernels(full, folds) if "cv_error" in wanted else None

    def fit_model(self, y, C, tol, engine, previous=None):
        start = None if previous is None else rescaled_start(Solved.from_model(previous), C, self.train)
        return ws.fit_svm(self.train, y, C, engine=engine, tol=tol, check_input=False, alpha0=start)

    def estimates(self, model, wanted, folds, fold_starts=None) -> dict:
        K = self.train
        if _row_cache(K) and "span_rule" in wanted:
            check_point_memory(row_point_bytes(model.inbound.size, model.bounded.size), self.point_budget,
                               f"span-rule on {model.inbound.size:,} in-bound SVs")
        if _row_cache(K) and "loo_error" in wanted:
            check_point_memory(row_loo_bytes(model.inbound.size, model.bounded.size), self.point_budget,
                               f"exact LOO on {model.inbound.size:,} in-bound SVs")
        if isinstance(K, RBFRows) and K.in_place:
            K = K.rows(model.support) if wanted <= ROW_CRITERIA else K.complete()
        return estimate_errors(model, K, wanted, D=self.diameter, R2=self.radius2, folds=folds,
                               fold_kernels=self.fold_kernels, fold_starts=fold_starts)

    @staticmethod
    def training_accuracy(model) -> float:
        return float(np.mean(model.margins > 0))

    def heldout_error(self, model, y_held) -> float:
        if _row_cache(self.train):
            # f on the held-out rows in blocks against the SVs (no m x l block), read as ws.test_error reads it
            K = self.train
            f = decision_values(model, K.X, self.X_held, K.gamma,
                                block_rows=max(1, _BLOCK_ELEMENTS // max(1, model.support.size)))
            return float(np.mean(-y_held * f >= 0))
        return ws.test_error(model, self.test, y_held, check_input=False)


class _Kernels:
    """The training kernel (and held-out block) of every kernel of the grid, from what they share computed once per
    search (one GEMM each): the squared distances ||x_i - x_j||^2 for the RBF kernels (exp(-gamma D2) per gamma),
    the inner products <x_i, x_j> for linear, poly and sigmoid (their formulas per gamma, degree and coef0); a
    callable computes its own.

    Each kernel is written into the same two buffers (``reuse``) when the points of one kernel all finish before
    the next kernel starts: a fresh l x l array per kernel would pay its page faults again (a callable's arrays
    are its own and are never written into). With ``on_demand`` an RBF training kernel is a ``kernels.RBFRows``,
    its rows computed as they are read (issue 21: at mnist_2_9's larger gammas a grid row of C reads a fraction
    of them). With ``cache_mb`` (RBF only: the search checked it) no l x l array is computed: each kernel is an
    ``RBFRows.cached`` row cache of that many MB on the features, R^2 comes from the largest squared distance found
    in row blocks (``largest_squared_distances``: between the classes, with ``class_index``, for the one-vs-one
    machines), and the held-out rows are read in blocks by the estimates (no held-out block here).
    """

    def __init__(self, X, X_held, specs, *, reuse: bool = True, on_demand: bool = False,
                 cache_mb: float | None = None, max_d2=None, class_index=None):
        names = {spec.name for spec in specs}
        self.X, self.X_held = X, X_held
        self.reuse, self.on_demand, self.cache_mb = reuse, on_demand, cache_mb
        self._train = self._held = None
        if cache_mb is not None:
            self.sq_norms = np.einsum("ij,ij->i", X, X)
            # O(l^2 d): a search whose tasks run elsewhere finds it once and gives it to every task
            self.max_d2 = largest_squared_distances(X, class_index, self.sq_norms) if max_d2 is None else max_d2
            self.train_d2 = self.held_d2 = self.train_products = self.held_products = None
            return
        rbf = "rbf" in names
        self.train_d2 = squared_distances(X) if rbf else None
        self.held_d2 = None if X_held is None or not rbf else squared_distances(X_held, X)
        products = bool(names & PRODUCT_KERNELS)
        # X @ X.T is exactly symmetric (numpy computes it with SYRK), so are the kernels computed from it
        self.train_products = X @ X.T if products else None
        self.held_products = None if X_held is None or not products else X_held @ X.T
        # R^2 of every gamma from it, without the whole kernel (RBFRows.radius2)
        self.max_d2 = float(self.train_d2.max()) if on_demand and rbf else None

    def at(self, spec: KernelSpec):
        """(training kernel, held-out block or None) of ``spec``; with ``reuse``, valid until the next call
        (without, new arrays: kernels computed at once in threads)."""
        if spec.name == "callable":
            train = check_kernel(spec.block(self.X), name="the callable kernel's training Gram matrix")
            held = None
            if self.X_held is not None:
                held = check_kernel(spec.block(self.X_held, self.X), name="the callable kernel's held-out block",
                                    square=False)
                if held.shape != (self.X_held.shape[0], self.X.shape[0]):
                    raise ValueError(f"the callable kernel's held-out block has shape {held.shape}, expected "
                                     f"{(self.X_held.shape[0], self.X.shape[0])}")
            return train, held
        out = self._train if self.reuse else None
        held_out = self._held if self.reuse else None
        held = None
        if self.cache_mb is not None:
            train = RBFRows.cached(self.X, spec.gamma, self.cache_mb, sq_norms=self.sq_norms, out=out)
            self._train = train.slots if self.reuse else None
            return train, None
        if spec.name == "rbf":
            if self.on_demand:
                train = RBFRows(self.train_d2, spec.gamma, out=out)
                self._train = train.array if self.reuse else None
            else:
                train = rbf_from_squared_distances(self.train_d2, spec.gamma, out=out)
                self._train = train if self.reuse else None
            if self.held_d2 is not None:
                held = rbf_from_squared_distances(self.held_d2, spec.gamma, out=held_out)
        else:
            train = spec.from_products(self.train_products, out=out)
            self._train = train if self.reuse else None
            if self.held_products is not None:
                held = spec.from_products(self.held_products, out=held_out)
        if self.reuse:
            self._held = held
        return train, held


def largest_squared_distances(X, class_index=None, sq_norms=None):
    """What R^2 needs on a row cache: the largest squared distance (two classes: ``class_index`` None), or the
    (k, k) largest between the classes (the one-vs-one machines' R_ij^2). O(l^2 d), once per search."""
    if class_index is None:
        return max_squared_distance(X, sq_norms)
    return class_max_squared_distances(X, class_index, sq_norms)


def _kernels_of(spec: KernelSpec, X, X_held, class_index, cache: _Kernels | None, *, wanted,
                folds, point_budget=None) -> _SharedKernel | OneVsOneKernels:
    """What the points of ``spec`` share: its kernel from ``cache`` (or X itself for a precomputed kernel), for two
    classes (``class_index`` None) or the one-vs-one machines of more. ``point_budget``: on a row cache, the bytes a
    point's span-rule may take."""
    train, test = (X, X_held) if cache is None else cache.at(spec)
    if _row_cache(train) and not wanted <= CACHE_CRITERIA:
        raise ValueError(f"a row cache computes only {sorted(CACHE_CRITERIA)}, not {sorted(wanted - CACHE_CRITERIA)}")
    max_d2 = None if cache is None else cache.max_d2
    if class_index is not None:
        return OneVsOneKernels(train, test, class_index=class_index, wanted=wanted, folds=folds, max_d2=max_d2,
                               X_held=X_held, point_budget=point_budget)
    return _SharedKernel(train, test, wanted=wanted, folds=folds, max_d2=max_d2, X_held=X_held,
                         point_budget=point_budget)


def _kernel_task(spec: KernelSpec, walks, *, X, X_held, y, class_index, on_demand, wanted, folds,
                 options, cache_mb=None, max_d2=None, point_budget=None) -> tuple[float, list[list[dict]]]:
    """One task of a search whose backend runs tasks in other processes or machines (``ships_tasks``): the ``walks``
    (each a list of points: index, C_i, grid point, callback context) of one kernel, in turn. The task receives X,
    never a kernel: it computes its kernel where it runs (from X: the squared distances or inner products, then the
    rows, on demand where the engine reads them so) and returns only its points' results, so what travels is X, the
    labels and the points' C_i (O(l d + l) per task, where the kernel is l x l). A precomputed kernel is X itself,
    and travels. With ``cache_mb`` the task's kernel is a row cache of that size (``SpanSearchCV``'s ``cache_size``),
    computed from X where it runs too, R^2 from ``max_d2``, the largest squared distance, which the search finds
    once for all its tasks. Returns (the seconds its kernel took, each walk's results)."""
    t0 = time.perf_counter()
    cache = None if spec.name == "precomputed" else _Kernels(X, X_held, [spec], on_demand=on_demand,
                                                             cache_mb=cache_mb, max_d2=max_d2,
                                                             class_index=class_index)
    kernels = _kernels_of(spec, X, X_held, class_index, cache, wanted=wanted, folds=folds,
                          point_budget=point_budget)
    elapsed = time.perf_counter() - t0
    return elapsed, [_evaluate_walk(kernels, y, points, **options) for points in walks]


def active_backend():
    """The joblib backend a search's ``Parallel(prefer="threads")`` runs on: the one set by ``joblib.parallel_config``
    (or ``parallel_backend``) around ``fit``, else threads. Asked as ``Parallel`` asks it, so it is that backend."""
    backend, _ = get_active_backend(prefer="threads")
    return backend


def ships_tasks(backend) -> bool:
    """Whether ``backend`` runs tasks outside this process, pickling their arguments (loky, multiprocessing, dask,
    ray): only the threading and sequential backends share the search's memory (joblib's ``supports_sharedmem``)."""
    return not getattr(backend, "supports_sharedmem", False)


def shipping_parallel(backend, n_jobs, pre_dispatch) -> Parallel:
    """The ``Parallel`` of a search whose tasks ``backend`` ships: it yields each task's result as it arrives (in task
    order) where the backend can, so that the search prints its progress lines then, else it returns the list."""
    return_as = "generator" if getattr(backend, "supports_return_generator", False) else "list"
    return Parallel(n_jobs=n_jobs, prefer="threads", pre_dispatch=pre_dispatch, return_as=return_as)


def _kernel_label(spec: KernelSpec) -> str:
    """A kernel and the parameters it reads, for the progress lines."""
    read = {"rbf": ("gamma",), "poly": ("gamma", "degree", "coef0"), "sigmoid": ("gamma", "coef0")}.get(spec.name, ())
    shown = ", ".join(f"{key}={getattr(spec, key)!r}" for key in read)
    name = getattr(spec.function, "__name__", "callable") if spec.name == "callable" else spec.name
    return f"kernel={name}" + (f" ({shown})" if shown else "")


class _Walk:
    """Grid points of one kernel trained in turn, each from its predecessor's solution (issue 21: alpha
    seeding, for engines with ``capabilities.warm_start``): the model from the previous model with its
    bounded alphas moved to the new weights, its CV folds from it and from the folds' previous models
    (``FoldStarts``). A walk goes down the C axis (``_walks``): the larger C's solution, clipped to the
    smaller box, is the better start (measured in SMO steps over the 7 x 4 grids of splice and mnist_2_9:
    265,085 and 206,033 walking down, 270,930 and 225,086 walking up, 293,546 and 223,532 from zero; the
    search's CPU time on waveform 1.75 s down against 1.99 s up; docs/engines.md). The walk's first point, the
    largest C, starts from zero."""

    def __init__(self, warm: bool):
        self.warm = warm
        self.previous = None
        self.fold_starts = ws.FoldStarts() if self.warm else None

    def start(self):
        return self.previous if self.warm else None

    def restart(self):
        """After a failed point: the next starts cold."""
        self.previous = None
        self.fold_starts = ws.FoldStarts() if self.warm else None


def _walks(members: list[int], resolved, candidates, warm: bool) -> list[list[int]]:
    """The points of one kernel as walks. With an engine that starts from a neighbouring solution (``warm``):
    the points that differ only in the scale of their weights (``C``, else ``C_plus``), in descending order of
    it; else every point alone. They depend on the grid only, so neither do the results (not on n_jobs)."""
    if not warm:
        return [[i] for i in members]
    lines: dict[str, list[int]] = {}
    for i in members:
        lines.setdefault(c_line(candidates[i])[1], []).append(i)
    return [sorted(line, key=lambda i: -float(np.mean(resolved[i][1]))) for line in lines.values()]


def c_line(params: dict) -> tuple[str | None, str]:
    """(the grid key that scales a candidate's weights: ``C``, else ``C_plus``, else None; a key of its other
    parameters): the candidates with the same key differ only along that axis (a walk, ``_walks``; the C
    neighbours of ``HalvingSpanSearchCV``'s survival rule)."""
    axis = "C" if "C" in params else "C_plus" if "C_plus" in params else None
    return axis, repr(sorted((k, repr(v)) for k, v in params.items() if k != axis))


def _evaluate_walk(kernels, y, points, *, engine, warm, **options) -> list[dict]:
    """The points (index, C_i, params, callback context) of one walk, in its order (each from its predecessor's
    solution when the engine starts from one: ``warm``)."""
    walk = _Walk(warm)
    return [_evaluate(kernels, y, C, params, ctx=ctx, engine=engine, walk=walk, **options)
            for _, C, params, ctx in points]


def finish_point(result, params, *, fit_time, score_time, test_score, train_score, return_train_score, verbose,
                 name, progress, criterion, value) -> None:
    """One grid point's times and scores, under the keys BaseSearchCV's formatter reads, and at verbose >= 1 its
    progress line: the points done, the point, its estimate and times, the search's time so far and the time left
    at its rate so far (``progress``: the search's ``SearchProgress``; ``SpanSearchCV``, ``SVMPlusSearchCV``)."""
    result.update(fit_time=fit_time, score_time=score_time, test_scores=test_score)
    if return_train_score:
        result["train_scores"] = train_score
    if verbose > 0:
        announce_point(params, name=name, progress=progress, criterion=criterion, value=value, fit_time=fit_time,
                       score_time=score_time)


def announce_point(params, *, name, progress, criterion, value, fit_time, score_time) -> None:
    """The progress line of one finished grid point (``finish_point``; for a task that ran in another process, the
    search prints it when the task's results arrive)."""
    done, times = progress.tick()
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    print(f"[{name} {done}] END {shown}; {criterion}={value:.4f}; fit={fit_time:.2f}s "
          f"estimate={score_time:.2f}s; {times}", flush=True)


def _evaluate(kernels, y, C, params, *, wanted, criterion, tol, folds, y_held, return_train_score,
              error_score, verbose, progress, ctx, search, engine, walk):
    """Train one grid point on the shared kernel (from the walk's previous model where the engine starts
    from one) and estimate its error; never raises unless error_score == "raise" (a failed point scores
    ``error_score``, as in GridSearchCV, and the walk's next point starts cold)."""
    if ctx is not None:
        ctx.call_on_fit_task_begin(estimator=search)
    result = {"fit_error": None, "estimates": {}, "n_sv": np.nan, "n_inbound": np.nan,
              "n_bounded": np.nan, "test_error": np.nan}
    t0 = time.perf_counter()
    fit_time = score_time = 0.0
    try:
        model = kernels.fit_model(y, C, tol, engine, walk.start())
        walk.previous = model
        fit_time = time.perf_counter() - t0
        t1 = time.perf_counter()
        est = kernels.estimates(model, wanted, folds, walk.fold_starts)
        score_time = time.perf_counter() - t1
        result.update(estimates=est, n_sv=model.support.size, n_inbound=model.inbound.size,
                      n_bounded=model.bounded.size)
        test_score = 1.0 - est[criterion]
        train_score = kernels.training_accuracy(model) if return_train_score else np.nan
        if y_held is not None:
            result["test_error"] = kernels.heldout_error(model, y_held)
    except Exception as exc:
        if error_score == "raise":
            raise
        fit_time = time.perf_counter() - t0
        walk.restart()
        result["fit_error"] = f"{type(exc).__name__}: {exc}"
        test_score = train_score = error_score
    finish_point(result, params, fit_time=fit_time, score_time=score_time, test_score=test_score,
                 train_score=train_score, return_train_score=return_train_score, verbose=verbose,
                 name="SpanSearchCV", progress=progress, criterion=criterion,
                 value=result["estimates"].get(criterion, np.nan))
    if ctx is not None:
        ctx.call_on_fit_task_end(estimator=search)
    return result


# --------------------------------------------------------------------------------- the estimator
def _points(plan: "_Plan", walk, contexts=None) -> list[tuple]:
    """The points of a walk as ``_evaluate_walk`` takes them: (index, C_i, grid point, callback context or None)."""
    return [(i, plan.resolved[i][1], plan.candidates[i], None if contexts is None else contexts[i]) for i in walk]


@dataclass
class _Plan:
    """What ``SpanSearchCV._plan`` decides before a search allocates: its template, validated problem, wanted
    estimates, candidates with their C_i and kernels, CV folds, the candidates of each kernel and their walks, and
    the engine's capabilities."""

    svc: SVC
    prob: dict
    wanted: set
    candidates: list
    resolved: list
    folds: np.ndarray | None
    groups: dict
    walks: dict
    capabilities: Capabilities
    #: the row cache's MB (None: the whole kernel), and what max_memory leaves a point's span-rule beside the
    #: search's arrays on it (None: no limit); set by ``SpanSearchCV._check_memory``
    cache_mb: float | None = None
    point_budget: int | None = None

    @property
    def most_walks(self) -> int:
        """The most walks of one kernel: the points that can run at once on it."""
        return max(len(walks) for walks in self.walks.values())


class SpanSearchCV(BaseSearchCV):
    """Grid search over ``SVC`` (any of its kernels) scored by the span-rule.

    Parameters
    ----------
    estimator : sklearn.svm.SVC or None
        Template of every model and of ``best_estimator_`` (its tol, cache_size, C, class_weight, kernel, gamma,
        degree, coef0 are the defaults of what the grid does not set). None means ``SVC(tol=DEFAULT_TOL)``
        (the RBF kernel, gamma="scale"). With kernel="precomputed", X is the (n, n) training kernel (and the
        grid sets no kernel key).
    param_grid : dict or list of dicts, default LIBSVM grid.py's C x gamma grid (110 points)
        Keys: ``C``, ``class_weight`` (SVC's meaning: C_i = C * class_weight[y_i]); the kernel's, with SVC's
        meanings and defaults: ``kernel`` ("linear" <x, z>, "poly" (gamma <x, z> + coef0)^degree, "rbf"
        exp(-gamma ||x - z||^2), "sigmoid" tanh(gamma <x, z> + coef0), or a callable ``f(X, Z)`` returning the
        Gram block), ``gamma`` (a positive number, "scale" = 1 / (d X.var()) or "auto" = 1 / d), ``degree``,
        ``coef0``; a key the point's kernel does not read is ignored, as in SVC (and kept as a column);
        ``C_plus``/``C_minus`` (two classes only: class weights C+ for classes_[1], C- for classes_[0];
        instead of C and class_weight); ``sigmoid_A``, ``sigmoid_B`` (and ``sigmoid_sigma``): C_i = max(C / (1 +
        exp(-A (q_i - B))), sigma) with importance scores q passed as ``fit(..., scores=q)``;
        ``nw_bandwidth``, ``nw_tau`` (two classes only): C_i = C * p_i^tau with p_i the Nadaraya-Watson
        probability of the observed label. Any ``sample_weight`` multiplies C_i, as in SVC.
    criterion : {"span_rule", "span_bound", "xi_alpha_bound", "sv_count_bound", "cv_error", "loo_error"}
        The estimate minimised (the library's names). "cv_error" is K-fold CV on the shared kernel
        with the folds of ``cv``; "loo_error" the exact leave-one-out error (retrains without each SV).
        With more than two classes each is the multiclass estimate of ``wsvm_span.multiclass`` (the span
        bound, xi-alpha and SV-count bounds as union bounds over the machines). The span bound (its D, the
        smallest ball enclosing the data in feature space) and the xi-alpha bound (its R^2) need a positive
        semidefinite kernel: with a sigmoid kernel in the grid they are refused (as criterion or extra
        criterion); the span-rule, the exact LOO error and CV are computed as for any kernel. A callable is
        taken to be positive semidefinite, as SVC takes it; where it is not, the span bound's enclosing-ball QP
        can fail, and that point scores ``error_score``.
    extra_criteria : tuple of str
        More estimates to compute at every point and report (a ``cv_results_`` column each).
    tie_rule : {"worst", "best", "median"} or None
        None: GridSearchCV's convention (the first best candidate in grid order). Otherwise the
        study's rule over held-out errors (``TieRule``): needs ``fit(..., heldout=(X_test, y_test))``.
    cv : int or splitter
        Folds of criterion "cv_error" (as in GridSearchCV; they must partition the data).
    n_jobs, pre_dispatch : int or None, and int or str
        joblib threads (the trainers and LAPACK release the GIL): over the kernels (one per gamma of the RBF)
        when there are at least n_jobs of them, else over the walks (points) of one kernel, which share it.
        Under a joblib backend that runs tasks in other processes or machines (``joblib.parallel_config(
        backend="dask")``, "ray", "loky"), each task receives X, the labels and its points' C_i, computes its own
        kernel where it runs and returns its points' results: no kernel is sent (docs/distributed.md). The
        results do not depend on n_jobs or the backend.
    refit : bool or callable
        Refit ``best_estimator_`` on all the data; a callable picks ``best_index_`` from ``cv_results_``.
    verbose : int
        >= 1: a summary line with the memory estimate, then one line per grid point as it finishes (the points
        done, the point, its estimate and times, the time so far and the time left at the rate so far); >= 2: also
        one line per kernel.
    error_score : "raise" or float
        Score of a point whose fit or estimate fails.
    return_train_score : bool
        Add the training accuracy of each model (``split0_train_score``...).
    engine : str, default="smo"
        The trainer of the grid points and of their CV and LOO retrainings (``wsvm_span.engines.ENGINE_NAMES``),
        at the template's ``tol`` with LIBSVM's stopping rule. "smo", this project's SMO, walks the C axis of
        each kernel in descending order, each point starting from the previous point's solution and each CV
        fold from its point's model (``n_jobs`` cuts the walks into pieces); "sklearn" is scikit-learn's
        LIBSVM, every training from zero. ``best_estimator_`` is an ``SVC`` either way.
    max_memory : "available", float or None, default="available"
        The most memory (MB, 2^20 bytes) the search may take: ``fit`` estimates its peak first (``memory_estimate``:
        the kernels, the trainer's caches, the estimates' arrays of every thread at work, an upper bound) and raises
        ``SearchMemoryError`` (a ``MemoryError``) before computing any kernel where the estimate exceeds it, naming
        what would need less. "available": the memory available to the process when ``fit`` starts (the kernel's
        MemAvailable, within the cgroup's limit of a container or a SLURM job); None: no check. Under a backend that
        ships tasks (``n_jobs``) the estimate is one task's, what a worker needs for each task it runs at once (one
        kernel), compared with the memory available here.
    cache_size : float or None, default=None
        The kernel row cache, in MB (as ``SVC``'s ``cache_size``). None: the whole kernel where the search's memory
        estimate fits ``max_memory`` (the results of every search before this option, bit for bit), else a row cache
        of the template's ``cache_size`` MB when the search can run on one and that fits. A number: a row cache of
        that size. On a row cache no l x l array is held (memory O(l d + cache_size)): the RBF kernel's rows are
        computed from X in blocks (BLAS) as SMO reads them, the least recently used evicted; the span-rule, the
        xi-alpha and SV-count bounds come from the models' support vectors' rows (R^2 from the largest squared
        distance, found in row blocks once per search), the held-out error from blocks of held-out rows. The values
        equal the whole kernel's up to the rounding of the inner products (another BLAS summation order), so the
        models and estimates equal the whole-kernel search's to the solver's tolerance (docs/selecting.md,
        "Large training sets"). It runs any number of classes (more than two: each one-vs-one machine trained by SMO
        on the cache's rows restricted to its points, its span-rule from its SVs' blocks, the decision values from
        the SVs' rows in blocks), the RBF kernel, ``engine="smo"`` and the criteria span_rule, xi_alpha_bound,
        sv_count_bound, cv_error (each fold trained on the cache's rows restricted to its training points, warm-started
        from the point's model for two classes; a fold's machines on a row cache of the fold's points) and loo_error
        (each retraining likewise); anything else (span_bound, whose D needs the smallest ball around all l points;
        other kernels) is refused before anything is allocated. Each grid point checks its span-rule's (exact LOO's)
        arrays (they grow as its (largest machine's) in-bound SVs squared) against what ``max_memory`` leaves, and
        scores ``error_score`` with a ``SearchMemoryError`` where they do not fit.

    Attributes
    ----------
    cv_results_, best_index_, best_params_, best_score_, best_estimator_, refit_time_, n_splits_,
    scorer_, multimetric_ : as in GridSearchCV. ``cv_results_`` also holds every estimate computed
    under its library name (``span_rule``, ``xi_alpha_bound``, ...), ``n_sv``, ``n_inbound``, ``n_bounded`` (with
    more than two classes: the points that are such an SV of at least one machine), ``kernel_time`` (the time of
    the shared work of that point's kernel: the kernel and what is computed from it, where the RBF kernel's
    rows are computed on demand only what precedes the first point, each row counting in the fit time of the point
    that first reads it; ``kernel_time_`` sums it over the kernels, plus the squared distances and inner products
    computed once per search; under a backend that ships tasks, each task's kernel from X) and, with held-out
    data, ``test_error``.
    best_instance_weights_ : (l,) the C_i of the selected model.

    Raises
    ------
    ValueError
        From ``fit``: a target that is not a classification target, one class left after removing
        zero-weight points, an unknown grid key, an incomplete weighting scheme or a two-class scheme
        (``C_plus``/``C_minus``, ``nw_*``) on more classes, non-positive C_i, ``tie_rule`` without
        ``heldout``, a precomputed X that is not square, an unknown kernel or a kernel parameter out of SVC's
        range, kernel keys with a precomputed kernel, the span bound or xi-alpha bound with a sigmoid kernel,
        ``cache_size`` for a search the row cache cannot run (the message names the criterion or setting).
    SearchMemoryError
        From ``fit``, before any kernel is computed: the memory estimate exceeds ``max_memory`` (on a row cache,
        also per grid point before its span-rule allocates: that point scores ``error_score``).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from wsvm_span.model_selection import SpanSearchCV
    >>> X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    >>> search = SpanSearchCV(param_grid={"C": [0.5, 8.0], "gamma": [0.05, 0.5]}).fit(X, y)
    >>> search.best_params_
    {'C': 0.5, 'gamma': 0.5}
    >>> round(search.best_score_, 3)  # 1 - span-rule: the estimated leave-one-out accuracy
    0.942
    >>> search.predict(X[:4]).tolist() == search.best_estimator_.predict(X[:4]).tolist()
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "param_grid": [dict, list, None],
        "criterion": [StrOptions(set(CRITERIA))],
        "extra_criteria": [tuple, list],
        "tie_rule": [StrOptions(set(TIE_RULE_NAMES)), None],
        "cv": ["cv_object"],
        "n_jobs": [numbers.Integral, None],
        "refit": ["boolean", callable],
        "verbose": ["verbose"],
        "pre_dispatch": [numbers.Integral, str],
        "error_score": [StrOptions({"raise"}), numbers.Real],
        "return_train_score": ["boolean"],
        "engine": [StrOptions(set(ENGINE_NAMES))],
        "max_memory": [StrOptions({AVAILABLE}), Interval(numbers.Real, 0, None, closed="neither"), None],
        "cache_size": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, estimator=None, param_grid=None, *, criterion="span_rule", extra_criteria=(),
                 tie_rule=None, cv=5, n_jobs=None, refit=True, verbose=0, pre_dispatch="2*n_jobs",
                 error_score=np.nan, return_train_score=False, engine=DEFAULT_ENGINE, max_memory=AVAILABLE,
                 cache_size=None):
        super().__init__(estimator=estimator, n_jobs=n_jobs, refit=refit, cv=cv, verbose=verbose,
                         pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score)
        self.param_grid = param_grid
        self.criterion = criterion
        self.extra_criteria = extra_criteria
        self.tie_rule = tie_rule
        self.engine = engine
        self.max_memory = max_memory
        self.cache_size = cache_size

    # ----------------------------------------------------------------------------- scikit-learn seams
    def __sklearn_tags__(self):
        return classifier_search_tags(self, self.estimator if isinstance(self.estimator, SVC) else SVC())

    def get_metadata_routing(self):
        # fit consumes sample_weight, scores and heldout itself: nothing is routed onwards.
        return self._get_metadata_request()

    def _template(self) -> SVC:
        if self.estimator is None:
            return SVC(tol=DEFAULT_TOL)
        if not isinstance(self.estimator, SVC):
            raise ValueError(f"SpanSearchCV searches sklearn.svm.SVC models, got {type(self.estimator).__name__}")
        kernel = self.estimator.kernel
        if not callable(kernel) and kernel not in (*KERNEL_NAMES, "precomputed"):
            raise ValueError(f"SpanSearchCV supports SVC's kernels {KERNEL_NAMES}, 'precomputed' or a callable, "
                             f"got {kernel!r}")
        return clone(self.estimator)

    @property
    def precomputed(self) -> bool:
        return getattr(self.estimator, "kernel", "rbf") == "precomputed"

    # ------------------------------------------------------------------------------------------ fit
    @compat.fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, *, scores=None, heldout=None):
        """Search the grid.

        X : (n, d) features (dense or sparse) or, for a precomputed kernel, the (n, n) training kernel
        y : (n,) labels of two or more classes
        sample_weight : (n,) non-negative; multiplies C_i. Zero-weight points are removed first (as
            LIBSVM does), so every estimate is over the points that remain
        scores : (n,) importance scores in [0, 1] for the sigmoid weighting (grid keys sigmoid_*)
        heldout : (X_test, y_test) or None: adds the held-out error of every point (``test_error``)
            and is what ``tie_rule`` ranks ties by; for a precomputed kernel X_test is (m, n)

        Raises ``SearchMemoryError`` (a MemoryError) before any kernel is computed where the search's memory
        estimate (``memory_estimate``) exceeds ``max_memory``.
        """
        plan = self._plan(X, y, sample_weight, scores, heldout)
        memory, limit = self._check_memory(plan)
        n = len(plan.candidates)
        if self.verbose > 0:
            where = "kernel matrix(es)" if plan.cache_mb is None else f"row cache(s) of {plan.cache_mb:g} MB"
            print(f"Fitting 1 model for each of {n} candidates ({self.criterion}) on {len(plan.groups)} "
                  f"{where}, totalling {n} fits; memory about {memory.summary()} ({limit})", flush=True)
        root = compat.init_callback_context(self, max_subtasks=n + bool(self.refit))
        out, kernel_time = self._search(plan, [root.subcontext(task_name="candidate-evaluation") for _ in range(n)])
        compat.warn_or_raise_about_fit_failures(out, self.error_score)

        # the span bound's analysis yields the span-rule too (estimate_errors)
        wanted, prob = plan.wanted, plan.prob
        reported = wanted | ({"span_rule"} if "span_bound" in wanted else set())
        more = {c: [o["estimates"].get(c, np.nan) for o in out] for c in CRITERIA if c in reported}
        for key in ("n_sv", "n_inbound", "n_bounded"):
            more[key] = [o[key] for o in out]
        more["kernel_time"] = kernel_time
        if prob["y_held"] is not None:
            more["test_error"] = [o["test_error"] for o in out]
        results = compat.format_results(self, plan.candidates, out, more)

        choose_best(self, results)
        svc_params, C_best, _ = plan.resolved[self.best_index_]
        self.best_instance_weights_ = C_best

        if self.refit:
            # after _search returned, its kernels are released: the refit's LIBSVM is a phase of its own (_memory)
            self.best_estimator_ = clone(plan.svc).set_params(**svc_params)
            factor = C_best / self._native_C(plan.svc, svc_params, prob)
            refit_weight = None if np.all(factor == 1.0) else factor
            refit_ctx = root.subcontext(task_name="refit-with-best-params")
            with refit_ctx.propagate_callback_context(self.best_estimator_):
                refit_ctx.call_on_fit_task_begin(estimator=self, X=prob["X"], y=prob["y_orig"])
                t0 = time.time()
                self.best_estimator_.fit(prob["X"], prob["y_orig"], sample_weight=refit_weight)
                self.refit_time_ = time.time() - t0
            refit_ctx.call_on_fit_task_end(estimator=self, X=prob["X"], y=prob["y_orig"])

        self.scorer_ = check_scoring(plan.svc)
        self.multimetric_ = False
        self.n_splits_ = 1
        self.cv_results_ = results
        return self

    def memory_estimate(self, X, y, sample_weight=None, *, scores=None, heldout=None) -> SearchMemory:
        """The memory ``fit`` with these arguments would take at its peak, estimated without training or computing
        any kernel (an upper bound: ``_memory``'s module doc; docs/selecting.md, "Memory and progress").

        Parameters
        ----------
        X, y, sample_weight, scores, heldout : array-like, and as for ``fit``
            The arguments ``fit`` would get.

        Returns
        -------
        SearchMemory
            Its terms (``summary()``: the total and the largest terms in MB); ``nbytes`` is the estimate, what ``fit``
            compares with ``max_memory``.

        Raises
        ------
        ValueError
            For the inputs and parameters ``fit`` refuses.
        """
        self._validate_params()
        plan = self._plan(X, y, sample_weight, scores, heldout)
        settings, _ = self._choose_storage(plan, memory_limit(self.max_memory)[0])
        return search_memory(**settings)

    # ----------------------------------------------------------------------------------- fit helpers
    def _plan(self, X, y, sample_weight, scores, heldout) -> _Plan:
        """The search's validated problem and candidates, its kernels and walks: everything decided before
        anything large is allocated."""
        svc = self._template()
        prob = self._validate_problem(svc, X, y, sample_weight, scores, heldout)
        wanted = {self.criterion, *self.extra_criteria, *FREE_CRITERIA}
        if not wanted <= set(CRITERIA):
            raise ValueError(f"extra_criteria must be among {CRITERIA}, got {list(self.extra_criteria)}")
        check_tie_rule(self, heldout)
        candidates = list(ParameterGrid(gridpy_param_grid() if self.param_grid is None else self.param_grid))
        if not candidates:
            raise ValueError("param_grid is empty: no candidate to evaluate")
        resolved = [self._resolve(params, svc, prob) for params in candidates]
        indefinite = sorted({spec.name for _, _, spec in resolved if not spec.positive_semidefinite})
        refused = sorted(PSD_CRITERIA & {self.criterion, *self.extra_criteria})
        if indefinite and refused:
            raise ValueError(f"{refused} measure the data in feature space, which the {indefinite} kernel (not "
                             "positive semidefinite) does not have: select by span_rule, loo_error or cv_error")
        # the points of one kernel (its resolved parameters: KernelSpec) share it
        groups: dict[KernelSpec, list[int]] = {}
        for i, (_, _, spec) in enumerate(resolved):
            groups.setdefault(spec, []).append(i)
        capabilities = get_engine(self.engine).capabilities
        return _Plan(svc=svc, prob=prob, wanted=wanted, candidates=candidates, resolved=resolved,
                     folds=self._folds(prob) if "cv_error" in wanted else None, groups=groups,
                     walks={spec: _walks(members, resolved, candidates, capabilities.warm_start)
                            for spec, members in groups.items()},
                     capabilities=capabilities)

    def _row_cache_refusal(self, plan: _Plan) -> str | None:
        """Why this search cannot run on a row cache (None: it can)."""
        names = sorted({spec.name for spec in plan.groups})
        if self.precomputed or names != ["rbf"]:
            return (f"the row cache computes RBF rows from the features; this grid's kernels are {names} (the other "
                    "kernels on the row cache are not built yet)")
        if not plan.capabilities.rows_on_demand:
            return f"engine={self.engine!r} trains on a whole kernel; engine='smo' reads kernel rows on demand"
        whole = sorted(WHOLE_KERNEL_CRITERIA.keys() & plan.wanted)
        if whole:
            return "; ".join(f"criterion {c!r} needs the whole kernel: {WHOLE_KERNEL_CRITERIA[c]}" for c in whole)
        return None

    def _choose_storage(self, plan: _Plan, limit: int | None) -> tuple[dict, str | None]:
        """(``search_memory``'s settings, why not on a row cache): the whole kernel or a row cache (``cache_size``'s
        rule: a number asks for the cache, None takes it only where the whole kernel's estimate exceeds ``limit``
        and the search can run on it). A ValueError where cache_size asks for what the cache cannot run."""
        settings = self._memory_settings(plan)
        why = self._row_cache_refusal(plan)
        if self.cache_size is not None:
            if why:
                raise ValueError(f"cache_size={self.cache_size!r}: this search cannot run on a row cache: {why}")
            return dict(settings, cache_mb=float(self.cache_size)), None
        if why or limit is None or search_memory(**settings).nbytes <= limit:
            return settings, why
        return dict(settings, cache_mb=float(plan.svc.cache_size)), None

    def _check_memory(self, plan: _Plan) -> tuple[SearchMemory, str]:
        """The search's storage chosen (``plan.cache_mb``, ``plan.point_budget``) and its estimate checked against
        ``max_memory`` (``_memory.check_memory``: a ``SearchMemoryError`` where it exceeds it, naming, where the
        whole kernel was refused, why the row cache cannot run the search either)."""
        limit, _ = memory_limit(self.max_memory)
        settings, why = self._choose_storage(plan, limit)
        try:
            memory, source = check_memory(settings, self.max_memory)
        except SearchMemoryError as refused:
            if settings.get("cache_mb") is None and why and self.cache_size is None:
                raise SearchMemoryError(f"{refused} Nor can it run on a row cache (cache_size): {why}.") from None
            raise
        plan.cache_mb = settings.get("cache_mb")
        if plan.cache_mb is not None and limit is not None:
            # one point's span-rule in each thread at work (the estimate counted their blocks at n* = 0 already)
            _, kernels_at_once, threads = parallel_plan(settings["n_jobs"], settings["n_kernels"], settings["walks"])
            plan.point_budget = (limit - memory.nbytes) // (kernels_at_once * threads) + row_point_bytes(0)
        return memory, source

    def _memory_settings(self, plan: _Plan) -> dict:
        """``_memory.search_memory``'s arguments for this search."""
        prob = plan.prob
        return dict(l=prob["y"].shape[0], d=prob["X_dense"].shape[1],
                    class_sizes=None if prob["classes"].size == 2 else np.bincount(prob["class_index"]).tolist(),
                    heldout=0 if prob["X_held"] is None else prob["X_held"].shape[0],
                    kernels={spec.name for spec in plan.groups}, n_kernels=len(plan.groups),
                    walks=plan.most_walks,
                    # a shipped task holds one kernel (in the worker that runs it), whatever n_jobs
                    n_jobs=1 if ships_tasks(active_backend()) else effective_n_jobs(self.n_jobs),
                    criteria=plan.wanted, cv_folds=plan.folds,
                    engine=self.engine, sparse=sp.issparse(prob["X"]), refit=bool(self.refit),
                    refit_cache_mb=plan.svc.cache_size)

    def _search(self, plan: _Plan, contexts) -> tuple[list[dict], np.ndarray]:
        """Every candidate's result and its kernel's time (``kernel_time_`` set). The kernels live in this call
        only, and each kernel's shared work (its CV folds' kernels) is released before the next kernel's is built:
        what ``_memory`` counts. Under a backend that runs tasks in other processes or machines (``ships_tasks``:
        dask, ray, loky) every task computes its own kernel from X (``_kernel_task``) instead."""
        prob, groups, walks = plan.prob, plan.groups, plan.walks
        n = len(plan.candidates)
        out: list[dict | None] = [None] * n
        kernel_time = np.zeros(n)
        backend = active_backend()
        n_jobs = effective_n_jobs(self.n_jobs)
        # the walks are fixed by the grid, so the results do not depend on n_jobs or the backend; parallel over the
        # kernels (n_jobs kernels in memory at once) when there are enough of them, else over the walks of one kernel
        # at a time (one kernel, shared)
        across_kernels, _, _ = parallel_plan(n_jobs, len(groups), plan.most_walks)
        progress = SearchProgress(n)
        # rows on demand: the engine reads the kernel only through the solver that fills them (smo), two classes
        # (the one-vs-one machines take the whole kernel)
        on_demand = plan.capabilities.rows_on_demand and prob["classes"].size == 2
        class_index = None if prob["classes"].size == 2 else prob["class_index"]
        options = dict(wanted=plan.wanted, criterion=self.criterion, tol=plan.svc.tol, folds=plan.folds,
                       y_held=prob["y_held"], return_train_score=self.return_train_score,
                       error_score=self.error_score, verbose=self.verbose, progress=progress, search=self,
                       engine=self.engine, warm=plan.capabilities.warm_start)
        how = dict(across_kernels=across_kernels, on_demand=on_demand, class_index=class_index)
        if ships_tasks(backend):
            shared, per_task = 0.0, self._search_shipped(plan, contexts, options, backend=backend, n_jobs=n_jobs, **how)
        else:
            shared, per_task = self._search_here(plan, contexts, options, **how)
        self.kernel_time_ = shared
        for spec, task_walks, elapsed, walks_out in per_task:
            self.kernel_time_ += elapsed
            for walk, walk_out in zip(task_walks, walks_out):
                kernel_time[walk] = elapsed
                for i, res in zip(walk, walk_out):
                    out[i] = res
        return out, kernel_time

    def _search_here(self, plan: _Plan, contexts, options, *, across_kernels, on_demand, class_index):
        """The search in this process's memory (joblib threads): the squared distances and inner products computed
        once for every kernel (``_Kernels``), a kernel shared by the threads that run its walks. Returns the seconds
        of those products and, per kernel: (the kernel, its walks, its seconds, each walk's results)."""
        prob, groups, walks = plan.prob, plan.groups, plan.walks
        t0 = time.perf_counter()
        cache = None if self.precomputed else _Kernels(prob["X_dense"], prob["X_held"], groups,
                                                       reuse=not across_kernels, on_demand=on_demand,
                                                       cache_mb=plan.cache_mb, class_index=class_index)
        products = time.perf_counter() - t0
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads", pre_dispatch=self.pre_dispatch)

        def points(walk):
            return _points(plan, walk, contexts)

        def shared_kernel(spec):
            t0 = time.perf_counter()
            kernels = _kernels_of(spec, prob["X_dense"], prob["X_held"], class_index, cache, wanted=plan.wanted,
                                  folds=plan.folds, point_budget=plan.point_budget)
            elapsed = time.perf_counter() - t0
            self._say_kernel(spec, elapsed, len(groups[spec]))
            return kernels, elapsed

        def one_kernel(spec):
            kernels, elapsed = shared_kernel(spec)
            return elapsed, [_evaluate_walk(kernels, prob["y"], points(walk), **options) for walk in walks[spec]]

        def walks_in_parallel(spec):
            kernels, elapsed = shared_kernel(spec)
            return elapsed, parallel(delayed(_evaluate_walk)(kernels, prob["y"], points(walk), **options)
                                     for walk in walks[spec])

        if across_kernels:
            per_kernel = parallel(delayed(one_kernel)(spec) for spec in groups)
        else:
            per_kernel = (walks_in_parallel(spec) for spec in groups)
        return products, ((spec, walks[spec], elapsed, walks_out)
                          for spec, (elapsed, walks_out) in zip(groups, per_kernel))

    def _search_shipped(self, plan: _Plan, contexts, options, *, backend, n_jobs, across_kernels, on_demand,
                        class_index):
        """The search as tasks that run in other processes or machines (dask, ray, loky: ``ships_tasks``): one task
        per kernel when there are at least n_jobs kernels, else each kernel's walks dealt into min(n_jobs, walks)
        tasks, each of which computes that kernel (from X, where it runs: ``_kernel_task``). The progress lines
        (verbose) and the fit callbacks run here, as the tasks' results arrive: a callback's state is this
        process's (``wsvm-span select``'s progress line), and a task ships neither it nor the search. Yields, per
        task, what ``_search_here`` returns per kernel."""
        prob, groups, walks = plan.prob, plan.groups, plan.walks
        tasks = []
        for spec in groups:
            pieces = 1 if across_kernels else max(1, min(n_jobs, len(walks[spec])))
            tasks += [(spec, walks[spec][j::pieces]) for j in range(pieces)]
        # a task prints nothing (its stdout is a worker's) and calls no callback: its points are announced here
        shipped_options = {**options, "verbose": 0, "progress": None, "search": None}

        max_d2 = None if plan.cache_mb is None else largest_squared_distances(prob["X_dense"], class_index)
        parallel = shipping_parallel(backend, self.n_jobs, self.pre_dispatch)
        # X and y as arguments of their own: joblib's dask backend sends an array argument to the cluster once
        # (scatter) and every task reads it from there
        runs = parallel(delayed(_kernel_task)(spec, [_points(plan, walk) for walk in task_walks], X=prob["X_dense"],
                                              X_held=prob["X_held"], y=prob["y"], class_index=class_index,
                                              on_demand=on_demand, wanted=plan.wanted, folds=plan.folds,
                                              options=shipped_options, cache_mb=plan.cache_mb, max_d2=max_d2,
                                              point_budget=plan.point_budget)
                        for spec, task_walks in tasks)
        for (spec, task_walks), (elapsed, walks_out) in zip(tasks, runs):
            self._say_kernel(spec, elapsed, sum(map(len, task_walks)))
            for walk, walk_out in zip(task_walks, walks_out):
                for i, res in zip(walk, walk_out):
                    contexts[i].call_on_fit_task_begin(estimator=self)
                    if self.verbose > 0:
                        announce_point(plan.candidates[i], name="SpanSearchCV", progress=options["progress"],
                                       criterion=self.criterion, value=res["estimates"].get(self.criterion, np.nan),
                                       fit_time=res["fit_time"], score_time=res["score_time"])
                    contexts[i].call_on_fit_task_end(estimator=self)
            yield spec, task_walks, elapsed, walks_out

    def _say_kernel(self, spec: KernelSpec, elapsed: float, n_points: int) -> None:
        """At verbose > 1, a kernel's line: its parameters, its seconds and its points."""
        if self.verbose > 1:
            print(f"[SpanSearchCV] {_kernel_label(spec)}: kernel {elapsed:.2f}s, {n_points} points", flush=True)

    def _validate_problem(self, svc, X, y, sample_weight, scores, heldout) -> dict:
        X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        if self.precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(f"with kernel='precomputed', X must be the square (n, n) training kernel, "
                             f"got shape {X.shape}")
        sw = compat.check_sample_weight(sample_weight, X)
        keep = sw > 0
        if scores is not None:
            scores = check_array(scores, ensure_2d=False, dtype=np.float64, input_name="scores")
            if scores.shape != (X.shape[0],):
                raise ValueError(f"scores must have shape ({X.shape[0]},), got {scores.shape}")
            scores = scores[keep]
        X_fit = X[np.ix_(keep, keep)] if self.precomputed else X[keep]
        y_fit, sw = y[keep], sw[keep]
        classes, class_index = np.unique(y_fit, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"the training set needs samples of at least 2 classes (after removing "
                             f"zero-weight points), got {classes.size} class: {classes.tolist()}")
        # two classes: one weighted SVM on y in {-1, +1} (+1 = classes_[1]); more: the one-vs-one
        # machines of wsvm_span.multiclass on class positions
        y_fit_model = np.where(class_index == 1, 1.0, -1.0) if classes.size == 2 else class_index
        X_held = y_held = None
        if heldout is not None:
            X_held, y_held_orig = heldout
            X_held = check_array(X_held, accept_sparse="csr", dtype=np.float64, input_name="heldout X")
            width = X.shape[0] if self.precomputed else X.shape[1]
            if X_held.shape[1] != width:
                raise ValueError(f"heldout X has {X_held.shape[1]} columns, expected {width}")
            y_held_orig = np.asarray(y_held_orig)
            if y_held_orig.shape != (X_held.shape[0],) or not np.isin(y_held_orig, classes).all():
                raise ValueError(f"heldout y must have one label of {classes.tolist()} per heldout row")
            held_index = np.searchsorted(classes, y_held_orig)
            y_held = np.where(held_index == 1, 1.0, -1.0) if classes.size == 2 else held_index
            X_held = X_held[:, keep] if self.precomputed else X_held
        dense = X_fit.toarray() if sp.issparse(X_fit) else X_fit
        if self.precomputed:
            dense = check_kernel(dense, name="X (precomputed training kernel)")
        return {"X": X_fit, "X_dense": dense, "y": y_fit_model, "y_orig": y_fit, "classes": classes,
                "class_index": class_index, "sample_weight": sw, "scores": scores, "nw": {},
                "X_held": None if X_held is None else (X_held.toarray() if sp.issparse(X_held) else X_held),
                "y_held": y_held}

    def _resolve(self, params, svc, prob):
        """(SVC parameters for the refit, C_i of the search, its kernel) of one candidate."""
        unknown = set(params) - set(GRID_KEYS)
        if unknown:
            raise ValueError(f"unknown param_grid key(s) {sorted(unknown)}; allowed: {list(GRID_KEYS)}")
        svc_params = {k: params[k] for k in SVC_KEYS if k in params}
        binary = prob["classes"].size == 2
        if {"C_plus", "C_minus"} & set(params):
            if not binary:
                raise ValueError("C_plus and C_minus weigh the two classes of a binary problem; with "
                                 f"{prob['classes'].size} classes give class_weight (a dict or 'balanced')")
            if not {"C_plus", "C_minus"} <= set(params) or {"C", "class_weight"} & set(params):
                raise ValueError("C_plus and C_minus go together and replace C and class_weight")
            c_plus, c_minus = params["C_plus"], params["C_minus"]
            if not (c_plus > 0 and c_minus > 0):
                raise ValueError(f"class weights must be positive, got C_plus={c_plus!r}, C_minus={c_minus!r}")
            classes = prob["classes"]
            svc_params.update(C=1.0, class_weight={classes[1]: float(c_plus), classes[0]: float(c_minus)})
        native = self._native_C(svc, svc_params, prob)
        C = native.copy()
        if {"sigmoid_A", "sigmoid_B", "sigmoid_sigma"} & set(params):
            if not {"sigmoid_A", "sigmoid_B"} <= set(params):
                raise ValueError("the sigmoid weighting needs both sigmoid_A and sigmoid_B")
            if prob["scores"] is None:
                raise ValueError("the sigmoid weighting needs importance scores: fit(X, y, scores=q)")
            c = svc_params.get("C", svc.C)
            # without sigmoid_sigma, sigmoid_weights' default floor (the study's)
            floor = {"sigma": params["sigmoid_sigma"]} if "sigmoid_sigma" in params else {}
            C *= ws.sigmoid_weights(prob["scores"], params["sigmoid_A"], params["sigmoid_B"], c, **floor) / c
        if {"nw_bandwidth", "nw_tau"} & set(params):
            if not {"nw_bandwidth", "nw_tau"} <= set(params):
                raise ValueError("the Nadaraya-Watson weighting needs both nw_bandwidth and nw_tau")
            if self.precomputed:
                raise ValueError("the Nadaraya-Watson weighting needs features, not a precomputed kernel")
            if not binary:
                raise ValueError("the Nadaraya-Watson weighting is defined for two classes (labels in {-1, +1})")
            h = float(params["nw_bandwidth"])
            if h not in prob["nw"]:
                prob["nw"][h] = nadaraya_watson_label_probability(prob["X_dense"], prob["y"], h)
            C *= nadaraya_watson_weights(prob["nw"][h], params["nw_tau"])
        C *= prob["sample_weight"]
        if not (np.all(np.isfinite(C)) and np.all(C > 0)):
            raise ValueError(f"candidate {params} gives non-positive or non-finite instance weights C_i")
        return svc_params, C, self._kernel_spec(svc, svc_params, prob)

    @staticmethod
    def _native_C(svc, svc_params, prob) -> np.ndarray:
        """C * class_weight[y_i], the part of C_i that SVC's own parameters express."""
        C = svc_params.get("C", svc.C)
        if not C > 0:
            raise ValueError(f"C must be positive, got {C!r}")
        per_class = compute_class_weight(svc_params.get("class_weight", svc.class_weight),
                                         classes=prob["classes"], y=prob["y_orig"])
        return float(C) * per_class[prob["class_index"]]

    def _kernel_spec(self, svc, svc_params, prob) -> KernelSpec:
        """The candidate's kernel: the grid's kernel keys over the template's, with SVC's meanings."""
        if self.precomputed:
            given = sorted(set(KERNEL_KEYS) & set(svc_params))
            if given:
                raise ValueError(f"{given} have no meaning with kernel='precomputed' (X is the kernel): drop them "
                                 "from param_grid")
            return KernelSpec("precomputed")
        kernel = svc_params.get("kernel", svc.kernel)
        if isinstance(kernel, str) and kernel == "precomputed":
            raise ValueError("kernel='precomputed' is the estimator's kernel (X is then the training kernel), not a "
                             "grid value: give SpanSearchCV(SVC(kernel='precomputed'), ...)")
        return KernelSpec.from_svc_params(kernel, prob["X_dense"], gamma=svc_params.get("gamma", svc.gamma),
                                          degree=svc_params.get("degree", svc.degree),
                                          coef0=svc_params.get("coef0", svc.coef0))

    def _folds(self, prob) -> np.ndarray:
        """Fold id of every point from the ``cv`` splitter (must be a partition, as K-fold is)."""
        splitter = check_cv(self.cv, prob["y_orig"], classifier=True)
        return fold_ids(splitter.split(prob["X_dense"], prob["y_orig"]), prob["y"].shape[0])


def fold_ids(splits, n: int) -> np.ndarray:
    """The fold of each of n points, from splits that partition them (each point held out once, each fold trained
    on all the others: K-fold splitters); a ValueError otherwise."""
    folds = np.full(n, -1)
    for k, (train, test) in enumerate(splits):
        if (folds[test] >= 0).any() or train.size + test.size != n:
            raise ValueError("criterion='cv_error' needs folds that partition the data (K-fold splitters)")
        folds[test] = k
    if (folds < 0).any():
        raise ValueError("criterion='cv_error' needs folds that partition the data (K-fold splitters)")
    return folds


# -------------------------------------------------------------------- scorer for plain GridSearchCV
class WholeTrainingSet:
    """A one-split "CV" whose train and test parts are both the whole training set.

    For ``GridSearchCV(SVC(), grid, scoring=make_span_scorer(), cv=WholeTrainingSet())``: every grid point is
    trained once on all the data and scored by the span-rule of that model.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.model_selection import WholeTrainingSet
    >>> [(train.tolist(), test.tolist()) for train, test in WholeTrainingSet().split(np.zeros((3, 2)))]
    [([0, 1, 2], [0, 1, 2])]
    """

    def split(self, X, y=None, groups=None):
        everything = np.arange(len(X) if not hasattr(X, "shape") else X.shape[0])
        yield everything, everything

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return 1

    def __repr__(self) -> str:
        return "WholeTrainingSet()"


def make_span_scorer(criterion: str = "span_rule"):
    """A scorer ``f(estimator, X, y, sample_weight=None) -> 1 - estimate`` of a fitted ``SVC`` (or a Pipeline
    ending in one), evaluated on ITS OWN training set (use ``cv=WholeTrainingSet()``).

    The model's C_i are rebuilt from C, ``class_weight_`` and ``sample_weight`` (route it to the scorer); its
    dual solution and intercept are read from the SVC (scikit-learn's ``dual_coef_`` holds y_i a_i with
    ``classes_[1]`` positive).

    Parameters
    ----------
    criterion : {"span_rule", "span_bound", "xi_alpha_bound", "sv_count_bound"}, default="span_rule"
        The estimate.

    Returns
    -------
    callable
        The scorer. Called, it raises a ValueError for a model that is not a fitted binary SVC (any kernel;
        the span bound and xi-alpha bound not with a sigmoid one: ``SpanSearchCV``'s criterion), or for data
        that are not the model's own training set.

    Raises
    ------
    ValueError
        If ``criterion`` is not one of those above.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.svm import SVC
    >>> from wsvm_span.model_selection import WholeTrainingSet, make_span_scorer
    >>> X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    >>> search = GridSearchCV(SVC(tol=1e-5), {"C": [0.5, 8.0], "gamma": [0.05, 0.5]},
    ...                       scoring=make_span_scorer(), cv=WholeTrainingSet()).fit(X, y)
    >>> search.best_params_, round(float(search.best_score_), 3)
    ({'C': 0.5, 'gamma': 0.5}, 0.942)
    """
    if criterion not in CRITERIA or criterion == "cv_error":
        raise ValueError(f"criterion must be one of {[c for c in CRITERIA if c != 'cv_error']}, got {criterion!r}")

    def span_scorer(estimator, X, y, sample_weight=None):
        svc = estimator
        if isinstance(estimator, Pipeline):
            X = estimator[:-1].transform(X)
            svc = estimator[-1]
        if not isinstance(svc, SVC):
            raise ValueError(f"the span scorer needs a fitted SVC, got {type(svc).__name__}")
        check_is_fitted(svc)
        if len(svc.classes_) != 2:
            raise ValueError("the span scorer handles binary classification only")
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        X_dense = X.toarray() if sp.issparse(X) else X
        n = X.shape[0]
        # SVC keeps its support vectors' features for a named kernel (not for a precomputed or callable one)
        named = isinstance(svc.kernel, str) and svc.kernel != "precomputed"
        if svc.shape_fit_[0] != n or (named and not _same_rows(svc.support_vectors_, X[svc.support_])):
            raise ValueError("the span scorer must see the model's own training set: use cv=WholeTrainingSet()")
        spec = KernelSpec.from_svc_params(svc.kernel, X_dense, gamma=compat.svc_gamma(svc), degree=svc.degree,
                                          coef0=svc.coef0)
        if not spec.positive_semidefinite and criterion in PSD_CRITERIA:
            raise ValueError(f"{criterion} measures the data in feature space, which the {spec.name} kernel (not "
                             "positive semidefinite) does not have")
        if spec.name == "precomputed":
            K = check_kernel(X_dense, name="X (precomputed training kernel)")
        else:
            K = check_kernel(spec.block(X_dense), name=f"the {spec.name} kernel's training Gram matrix")
        y_pm = np.where(np.asarray(y) == svc.classes_[1], 1.0, -1.0)
        sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if sw.shape != (n,) or not np.all(sw > 0):
            raise ValueError("the span scorer needs positive sample weights, one per training point")
        C = svc.C * svc.class_weight_[(y_pm > 0).astype(int)] * sw
        alpha = np.zeros(n)
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        model = make_model(K, y_pm, C, alpha, float(svc.intercept_[0]), engine="sklearn", tol=svc.tol)
        return 1.0 - estimate_errors(model, K, {criterion})[criterion]

    span_scorer.__name__ = f"{criterion}_scorer"
    return span_scorer


def _same_rows(A, B) -> bool:
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    B = B.toarray() if sp.issparse(B) else np.asarray(B)
    return A.shape == B.shape and np.array_equal(A, B)
