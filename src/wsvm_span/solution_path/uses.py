"""Uses of the solution path (solution-path.md, "Uses wanted in this project").

1. exact leave-one-out: for every SV p follow c -> c - c_p e_p (``loo_by_path``);
   K-fold CV: zero a whole fold's weights (``kfold_cv_by_path``);
2. grid sweeps: a class-weight grid walked row by row in snake order (``sweep_class_grid``),
   chords through arbitrary weight vectors, e.g. the sigmoid weights (``sweep_chords``);
3. the validation error along a segment, piecewise constant (``validation_error_pieces``), and its exact
   optimal theta (``best_theta_on_segment``).

Every path ends in a KKT-checked solution or in LIBSVM's (reported per path).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..engines import AUTO, DEFAULT_TOL, fit_svm
from ..model import WeightedSVM
from ..loo_results import LeaveOneOut
from ..utils.validation import check_kernel, check_labels, check_weights
from ..weights import class_weights
from .solver import (
    REFACTOR_EVERY,
    PathResult,
    check_path_options,
    follow_path,
    path_end,
    start_or_reason,
)


@dataclass(frozen=True)
class PathLeaveOneOut(LeaveOneOut):
    """``LeaveOneOut`` computed by paths (``loo_by_path``), plus per-SV path statistics.

    Parameters
    ----------
    support : ndarray of int, shape (n,)
        The SVs of the full model.
    decision_loo : ndarray of shape (n,)
        f^p(x_p), the decision value at x_p of the model without x_p (the end of the path c_p -> 0).
    sets_unchanged : ndarray of bool, shape (n,)
        True where the path's final in-bound and bounded sets are the model's minus p.
    loo_error : float
        Fraction of l with y_p f^p(x_p) <= 0.
    n_events : ndarray of int, shape (n,)
        Events of the path of each SV (0 where none was needed).
    fallbacks : tuple
        Per SV: None, or why that SV's path ended in LIBSVM.
    t_total : float
        Seconds for all SVs (start included).

    Attributes
    ----------
    n_fallbacks : int
        The paths that ended in LIBSVM.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> loo = sp.loo_by_path(model, K)
    >>> loo.loo_error == ws.loo_error(K, y, 1.0), loo.n_fallbacks
    (True, 0)
    """

    n_events: np.ndarray
    fallbacks: tuple
    t_total: float

    @property
    def n_fallbacks(self) -> int:
        return sum(reason is not None for reason in self.fallbacks)


@dataclass(frozen=True)
class PathCV:
    """K-fold CV by paths (``kfold_cv_by_path``).

    Parameters
    ----------
    cv_error : float
        Fraction of l (f = 0 counts as an error).
    n_events : ndarray of int, shape (k,)
        Events of each fold's path.
    fallbacks : tuple
        Per fold: None, or why its path ended in LIBSVM.
    t_total : float
        Seconds.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> folds = ws.stratified_folds(y, 5, seed=0)
    >>> sp.kfold_cv_by_path(model, K, folds).cv_error == ws.kfold_cv_error(K, y, 1.0, folds=folds)
    True
    """

    cv_error: float
    n_events: np.ndarray
    fallbacks: tuple
    t_total: float


def loo_by_path(model: WeightedSVM, K, *, max_events: int | None = None,
                refactor_every: int = REFACTOR_EVERY, ridge: float | None = None,
                check_input: bool = True) -> PathLeaveOneOut:
    """Exact leave-one-out of ``model`` by one path per SV p (c_p -> 0), all from one exact start.

    Same fields and conventions as ``resampling.leave_one_out``; ``sets_unchanged`` compares the path's final
    in-bound and bounded sets with the model's (minus p).

    Parameters
    ----------
    model : WeightedSVM
        The model trained on all l points.
    K : array-like of shape (l, l)
        Its training kernel.
    max_events, refactor_every, ridge : optional
        As in :func:`follow_path`.
    check_input : bool, default=True
        Validate K.

    Returns
    -------
    PathLeaveOneOut
        The LOO decision values and error, with each path's events and fallback.

    Raises
    ------
    PathStartError
        If the model's start cannot be made exact.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> sp.loo_by_path(model, K).loo_error
    0.15
    """
    t0 = time.perf_counter()
    K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    y, C, l = model.y, model.C, model.n_train
    max_events, refactor_every = check_path_options(l, max_events, refactor_every)
    start = start_or_reason(model, K, ridge)
    sv = model.support
    f_loo = np.empty(sv.size)
    unchanged = np.zeros(sv.size, dtype=bool)
    n_events = np.zeros(sv.size, dtype=np.int64)
    fallbacks: list[str | None] = [None] * sv.size
    inbound, bounded = set(model.inbound.tolist()), set(model.bounded.tolist())
    for t, p in enumerate(sv):
        if np.count_nonzero(y == y[p]) == 1:
            # Removing p leaves one class: the reduced SVM is undefined, count an error.
            f_loo[t] = -y[p]
            continue
        c_new = C.copy()
        c_new[p] = 0.0
        end = path_end(model, K, c_new, start, max_events, refactor_every)
        f_loo[t] = end.decision[p]
        unchanged[t] = (set(end.inbound.tolist()) == inbound - {p}
                        and set(end.bounded.tolist()) == bounded - {p})
        n_events[t] = end.events.shape[0]
        fallbacks[t] = end.fallback
    error = float(np.sum(-y[sv] * f_loo >= 0)) / l
    return PathLeaveOneOut(support=sv, decision_loo=f_loo, sets_unchanged=unchanged, loo_error=error,
                           n_events=n_events, fallbacks=tuple(fallbacks),
                           t_total=time.perf_counter() - t0)


def kfold_cv_by_path(model: WeightedSVM, K, folds, *, max_events: int | None = None,
                     refactor_every: int = REFACTOR_EVERY, ridge: float | None = None,
                     check_input: bool = True) -> PathCV:
    """K-fold CV of the weights ``model.C`` by paths from the full model.

    Fold k's model is the end of the path that sets the fold's weights to 0 (the SVM trained on the other
    folds).

    Parameters
    ----------
    model : WeightedSVM
        The model trained on all l points.
    K : array-like of shape (l, l)
        Its training kernel.
    folds : array-like of int, shape (l,)
        Fold ids, e.g. ``stratified_folds(y, 5, seed)``.
    max_events, refactor_every, ridge : optional
        As in :func:`follow_path`.
    check_input : bool, default=True
        Validate K.

    Returns
    -------
    PathCV
        The CV error, each fold's events and fallback.

    Raises
    ------
    ValueError
        If the folds are not (l,), or a fold's training part holds a single class.
    PathStartError
        If the model's start cannot be made exact.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> sp.kfold_cv_by_path(model, K, ws.stratified_folds(y, 5, seed=0)).cv_error
    0.15
    """
    t0 = time.perf_counter()
    K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    y, C, l = model.y, model.C, model.n_train
    folds = np.asarray(folds)
    if folds.shape != (l,):
        raise ValueError(f"folds must have shape ({l},), got {folds.shape}")
    max_events, refactor_every = check_path_options(l, max_events, refactor_every)
    start = start_or_reason(model, K, ridge)
    errors = 0
    n_events, fallbacks = [], []
    for fold in np.unique(folds):
        held = folds == fold
        if np.all(y[~held] == y[~held][0]):
            raise ValueError(f"fold {fold}'s training part holds a single class; use fewer folds")
        c_new = np.where(held, 0.0, C)
        end = path_end(model, K, c_new, start, max_events, refactor_every)
        errors += int(np.sum(-y[held] * end.decision[held] >= 0))
        n_events.append(end.events.shape[0])
        fallbacks.append(end.fallback)
    return PathCV(cv_error=errors / l, n_events=np.asarray(n_events), fallbacks=tuple(fallbacks),
                  t_total=time.perf_counter() - t0)


@dataclass(frozen=True)
class Segment:
    """One path segment of a sweep: from node ``source`` to node ``target`` (positions in the sweep's order).

    Parameters
    ----------
    source, target : int
        The segment's nodes.
    n_events : int
        Its events.
    mean_margin_size : float
        Mean ``|M|`` along it.
    t_total : float
        Seconds.
    fallback : str or None
        Why its end was replaced by LIBSVM, or None.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> W = np.stack([ws.class_weights(y, c, 1.0) for c in (1.0, 2.0)])
    >>> segment = sp.sweep_chords(K, y, W).segments[0]
    >>> segment.source, segment.target, segment.fallback
    (0, 1, None)
    """

    source: int
    target: int
    n_events: int
    mean_margin_size: float
    t_total: float
    fallback: str | None


@dataclass(frozen=True)
class ChordSweep:
    """Models at the nodes of a chain of chords (``sweep_chords``).

    Parameters
    ----------
    models : list of WeightedSVM
        ``models[i]`` at ``weight_vectors[i]``.
    segments : list of Segment
        The segments between consecutive nodes.
    t_first_fit : float
        Seconds of the first (LIBSVM) training.
    t_total : float
        Seconds of the whole sweep.

    Attributes
    ----------
    n_events : int
        Events over all segments.
    n_fallbacks : int
        Segments whose end was replaced by LIBSVM.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> W = np.stack([ws.class_weights(y, c, 1.0) for c in (1.0, 2.0, 4.0)])
    >>> sweep = sp.sweep_chords(K, y, W)
    >>> len(sweep.models), sweep.n_fallbacks
    (3, 0)
    """

    models: list
    segments: list
    t_first_fit: float
    t_total: float

    @property
    def n_events(self) -> int:
        return sum(s.n_events for s in self.segments)

    @property
    def n_fallbacks(self) -> int:
        return sum(s.fallback is not None for s in self.segments)


def sweep_chords(K, y, weight_vectors, *, model: WeightedSVM | None = None, tol: float = DEFAULT_TOL,
                 engine: str = AUTO, check_input: bool = True, **path_options) -> ChordSweep:
    """Exact models at a chain of weight vectors, each reached by a straight path (chord) from the previous one.

    The first is trained by LIBSVM (``tol``, ``engine``) unless ``model`` is given. For weights that are not
    linear in their parameter (the sigmoid of Experiment 2) the models are exact at the nodes.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    weight_vectors : array-like of shape (N, l)
        The weights at the nodes.
    model : WeightedSVM, optional
        The model at the first node (default: trained by LIBSVM).
    tol : float, default=1e-7
        LIBSVM's tolerance for the first model (and for fallbacks).
    engine : str, default="auto"
        LIBSVM's engine.
    check_input : bool, default=True
        Validate K and y.
    **path_options
        Options of :func:`follow_path`.

    Returns
    -------
    ChordSweep
        The models at the nodes and the segments between them.

    Raises
    ------
    ValueError
        If the weight vectors are not (N, l), or ``model`` was trained at other weights than the first.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> W = np.stack([ws.class_weights(y, c, 1.0) for c in (1.0, 2.0, 4.0)])
    >>> sweep = sp.sweep_chords(K, y, W)
    >>> bool(np.allclose(sweep.models[-1].alpha, ws.fit_svm(K, y, W[-1]).alpha, atol=1e-4))
    True
    """
    t0 = time.perf_counter()
    K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    y = check_labels(y, K.shape[0])
    W = np.asarray(weight_vectors, dtype=float)
    if W.ndim != 2 or W.shape[1] != K.shape[0] or W.shape[0] < 1:
        raise ValueError(f"weight_vectors must have shape (N >= 1, {K.shape[0]}), got {W.shape}")
    for row in W:
        check_weights(row, K.shape[0], name="weight_vectors row")
    if model is None:
        model = fit_svm(K, y, W[0], engine=engine, tol=tol, check_input=False)
    elif not np.array_equal(model.C, W[0]):
        raise ValueError("model was trained at other weights than weight_vectors[0]")
    t_first = time.perf_counter() - t0
    models, segments = [model], []
    start = None
    for i in range(1, W.shape[0]):
        res: PathResult = follow_path(models[-1], K, W[i], start=start, check_input=False, **path_options)
        start = res.next_start  # the exact end goes on as it is (None: start afresh)
        models.append(res.model)
        segments.append(Segment(i - 1, i, res.n_events, res.mean_margin_size, res.t_total, res.fallback))
    return ChordSweep(models=models, segments=segments, t_first_fit=t_first,
                      t_total=time.perf_counter() - t0)


def snake_order(n_rows: int, n_cols: int) -> list[tuple[int, int]]:
    """Grid nodes row by row, every other row reversed.

    Consecutive nodes differ in one coordinate, so each path segment changes one class's weight.

    Parameters
    ----------
    n_rows, n_cols : int
        The grid's shape.

    Returns
    -------
    list of tuple of int
        (row, column) of every node, in walking order.

    Examples
    --------
    >>> from wsvm_span.solution_path import snake_order
    >>> snake_order(2, 3)
    [(0, 0), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0)]
    """
    return [(i, j) for i in range(n_rows)
            for j in (range(n_cols) if i % 2 == 0 else range(n_cols - 1, -1, -1))]


@dataclass(frozen=True)
class GridSweep:
    """A class-weight grid by paths (``sweep_class_grid``).

    Parameters
    ----------
    models : list of list of WeightedSVM
        ``models[i][j]`` at C+ = 2^log2_c_plus[i], C- = 2^log2_c_minus[j].
    order : list of tuple of int
        The snake order walked.
    sweep : ChordSweep
        Its chord sweep.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> grid = sp.sweep_class_grid(K, y, [0.0, 1.0], [0.0, 1.0])
    >>> grid.order
    [(0, 0), (0, 1), (1, 1), (1, 0)]
    """

    models: list
    order: list
    sweep: ChordSweep


def sweep_class_grid(K, y, log2_c_plus, log2_c_minus, *, tol: float = DEFAULT_TOL, engine: str = AUTO,
                     check_input: bool = True, **path_options) -> GridSweep:
    """Every model of the class-weight grid (C+, C-) = (2^log2_c_plus[i], 2^log2_c_minus[j]) by paths.

    The first model is trained by LIBSVM, every other by one path segment from its predecessor in snake
    order (:func:`snake_order`).

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    log2_c_plus, log2_c_minus : sequence of float
        The grid's axes.
    tol : float, default=1e-7
        LIBSVM's tolerance for the first model.
    engine : str, default="auto"
        LIBSVM's engine.
    check_input : bool, default=True
        Validate K and y.
    **path_options
        Options of :func:`follow_path`.

    Returns
    -------
    GridSweep
        The grid's models.

    Raises
    ------
    ValueError
        If an axis is not a finite 1-d sequence.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> grid = sp.sweep_class_grid(K, y, [0.0, 1.0], [0.0, 1.0])
    >>> m = grid.models[1][0]
    >>> bool(np.allclose(m.alpha, ws.fit_svm(K, y, ws.class_weights(y, 2.0, 1.0)).alpha, atol=1e-4))
    True
    """
    K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    y = check_labels(y, K.shape[0])
    lp = np.atleast_1d(np.asarray(log2_c_plus, dtype=float))
    lm = np.atleast_1d(np.asarray(log2_c_minus, dtype=float))
    if lp.ndim != 1 or lm.ndim != 1 or not (np.isfinite(lp).all() and np.isfinite(lm).all()):
        raise ValueError("log2_c_plus and log2_c_minus must be finite 1-D sequences")
    order = snake_order(lp.size, lm.size)
    W = np.stack([class_weights(y, 2.0 ** lp[i], 2.0 ** lm[j]) for i, j in order])
    sweep = sweep_chords(K, y, W, tol=tol, engine=engine, check_input=False, **path_options)
    models = [[None] * lm.size for _ in range(lp.size)]
    for (i, j), m in zip(order, sweep.models):
        models[i][j] = m
    return GridSweep(models=models, order=order, sweep=sweep)


@dataclass(frozen=True)
class BestTheta:
    """The validation-optimal theta of a segment c(theta) = c_old + theta (c_new - c_old).

    Parameters
    ----------
    theta : float
        The midpoint of ``interval``.
    interval : tuple of float
        (lo, hi), the first theta interval where the smallest error is attained (open unless lo == hi).
    error : float
        The smallest validation error over theta in [0, 1] (f = 0 counts as an error).
    path : PathResult
        The segment's path (with the tracked validation decision values).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> Xv = rng.normal(size=(20, 2))
    >>> yv = np.where(Xv[:, 0] > 0, 1.0, -1.0)
    >>> best = sp.best_theta_on_segment(model, K, ws.class_weights(y, 4.0, 1.0), ws.rbf_kernel(Xv, X, gamma=0.5), yv)
    >>> best.error, bool(best.interval[0] <= best.theta <= best.interval[1])
    (0.0, True)
    """

    theta: float
    interval: tuple[float, float]
    error: float
    path: PathResult


def best_theta_on_segment(model: WeightedSVM, K, c_new, K_val, y_val, *, check_input: bool = True,
                          **path_options) -> BestTheta:
    """Exact validation-optimal theta along the segment from ``model.C`` to ``c_new``.

    f(x_v) is piecewise linear in theta along the path, so the validation error is piecewise constant with
    breakpoints where some f(x_v) = 0; every piece is scanned.

    Parameters
    ----------
    model : WeightedSVM
        The model at c_old = ``model.C``.
    K : array-like of shape (l, l)
        Its training kernel.
    c_new : float or array-like of shape (l,)
        The segment's end.
    K_val : array-like of shape (m, l)
        Kernel between validation and training points.
    y_val : array-like of shape (m,)
        Validation labels.
    check_input : bool, default=True
        Validate the inputs.
    **path_options
        Options of :func:`follow_path`.

    Returns
    -------
    BestTheta
        The best theta, its interval and error, and the path.

    Raises
    ------
    ValueError
        If K_val or y_val does not fit.
    RuntimeError
        If the segment's path failed (then the exact best theta is unknown).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> Xv = rng.normal(size=(20, 2))
    >>> yv = np.where(Xv[:, 0] > 0, 1.0, -1.0)
    >>> best = sp.best_theta_on_segment(model, K, ws.class_weights(y, 4.0, 1.0), ws.rbf_kernel(Xv, X, gamma=0.5), yv)
    >>> round(best.theta, 4), best.error
    (0.0444, 0.0)
    """
    K_val = check_kernel(K_val, name="K_val", square=False) if check_input else np.asarray(K_val)
    y_val = np.asarray(y_val, dtype=float)
    if y_val.shape != (K_val.shape[0],) or not np.isin(y_val, (-1.0, 1.0)).all():
        raise ValueError(f"y_val must hold {K_val.shape[0]} labels in {{-1, +1}}")
    res = follow_path(model, K, c_new, K_track=K_val, check_input=check_input, **path_options)
    if res.fallback is not None:
        raise RuntimeError(
            f"the path of this segment failed ({res.fallback}); the exact best theta is unknown"
        )
    error, lo, hi = _min_piecewise_error(res.track_theta, -y_val * res.track_f)
    return BestTheta(theta=0.5 * (lo + hi), interval=(lo, hi), error=error, path=res)


def validation_error_pieces(track_theta, track_f, y_val) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The validation error along a path, exactly: piecewise constant in theta (solution-path.md, use 3).

    f(x_v) is linear in theta between the path's breakpoints, so the error changes only where some f(x_v)
    crosses 0; this returns every open interval of theta in (0, 1) on which it is constant.

    Parameters
    ----------
    track_theta : array-like of shape (P,)
        The path's breakpoints (``PathResult.track_theta``; repeated values mark jumps of b).
    track_f : array-like of shape (P, m)
        The validation points' decision values there (``PathResult.track_f``).
    y_val : array-like of shape (m,)
        Validation labels in {-1, +1}.

    Returns
    -------
    lo, hi : ndarray of shape (Q,)
        The pieces (lo, hi), in order, covering (0, 1) except the crossing points.
    error : ndarray of shape (Q,)
        The validation error on each (f = 0 counts as an error).

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.solution_path import validation_error_pieces
    >>> # one validation point (y = +1) whose f goes from -1 to 1: an error until theta = 0.5
    >>> lo, hi, err = validation_error_pieces([0.0, 1.0], [[-1.0], [1.0]], [1.0])
    >>> lo.tolist(), hi.tolist(), err.tolist()
    ([0.0, 0.5], [0.5, 1.0], [1.0, 0.0])
    """
    thetas = np.asarray(track_theta, dtype=float)
    y_val = np.asarray(y_val, dtype=float)
    margins = -y_val * np.asarray(track_f, dtype=float)
    pieces = list(_error_pieces(thetas, margins))
    lo, hi, counts = (np.array([p[k] for p in pieces], dtype=float) for k in (1, 2, 0))
    return lo, hi, counts / y_val.size


def _error_pieces(thetas, margins):
    """(error count, lo, hi) of every open piece of theta on which the count is constant, in order, with
    margins = -y_v f(x_v) of shape (P, m) linear between the breakpoints ``thetas`` (P,)."""
    for k in range(thetas.size - 1):
        t0, t1 = float(thetas[k]), float(thetas[k + 1])
        if not t1 > t0:
            continue  # a jump of b (empty margin): no interval
        m0, m1 = margins[k], margins[k + 1]
        # on the open piece just after t0: an error where m > 0, or m = 0 and not decreasing
        count = int(np.count_nonzero((m0 > 0) | ((m0 == 0) & (m1 >= 0))))
        cross = np.flatnonzero(m0 * m1 < 0)
        tau = t0 + (t1 - t0) * m0[cross] / (m0[cross] - m1[cross])
        order = np.argsort(tau, kind="stable")
        tau = tau[order]
        steps = np.where(m1[cross][order] > 0, 1, -1)
        counts = count + np.concatenate([[0], np.cumsum(steps)])
        ends = np.concatenate([[t0], tau, [t1]])
        for c, lo, hi in zip(counts, ends[:-1], ends[1:]):
            if hi > lo:
                yield int(c), float(lo), float(hi)


def _min_piecewise_error(thetas, margins) -> tuple[float, float, float]:
    """Smallest mean(margins >= 0) over theta, with margins (P, m) linear between the
    breakpoints ``thetas`` (P,); returns (error, lo, hi) of the first best interval."""
    m = margins.shape[1]
    best = (np.count_nonzero(margins[0] >= 0), 0.0, 0.0)  # the closed end theta = 0
    last = (np.count_nonzero(margins[-1] >= 0), 1.0, 1.0)
    for c, lo, hi in _error_pieces(thetas, margins):
        if c < best[0]:
            best = (c, lo, hi)
    if last[0] < best[0]:
        best = last
    return best[0] / m, best[1], best[2]
