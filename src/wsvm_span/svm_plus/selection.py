"""Model selection for SVM+ and for the weighted SVMs it is compared with (Experiment 8): one grid
point, trained once on the training sample, with every quantity a selection rule needs.

``evaluate_svm_plus`` trains SVM+ once and computes, from that one model,

- ``span_rule``, ``span_bound``: the weighted-SVM span-rule and span bound (``analyse_spans``) of
  the equivalent weighted SVM (same alpha and f, weights c_i = C + a~_i);
- ``loo_rule``: the SVM+ leave-one-out rule (``loo.loo_rule``: exact LOO of SVM+ when the active
  sets do not change);

and by retraining: ``cv_error`` (K-fold CV of SVM+, SVM+ retrained on the folds) and, with
``compute_loo``, ``loo_error`` (exact LOO of SVM+, SVM+ retrained without each point) and
``loo_converted`` (exact LOO of the equivalent weighted SVM, LIBSVM retrained with its weights held
fixed). ``evaluate_weighted`` does the same for a weighted SVM with given weights (its ``loo_rule``
and ``loo_converted`` are NaN: its span-rule is its own rule). Both measure the error on a
validation sample (the seed's selection protocol) and on the test set.

What the weighted-SVM estimates of SVM+ estimate. The weighted SVM keeps its weights fixed when a
point is left out; SVM+ does not (``loo`` module doc: leaving x_p out of SVM+ moves every c_i). The
span-rule of the converted model is therefore an estimate of ``loo_converted``, not of the LOO error
of SVM+; the rows carry both so that the difference is measured. The weighted-SVM columns of SVM+
include the zero-weight training errors (``equivalence.zero_weight_errors``): LOO errors of the
converted model that its estimators, which never count a non-SV, do not see.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..engines import AUTO, fit_svm
from ..evaluation import test_error
from ..resampling import FoldKernels, kfold_cv_error as weighted_kfold_cv_error, leave_one_out as weighted_leave_one_out
from ..span.estimates import analyse_spans
from .equivalence import ZERO_WEIGHT, svm_plus_weights, to_weighted_svm, zero_weight_errors
from .loo import leave_one_out, loo_rule
from .model import SVMPlus
from .solver import SMO, fit_svm_plus, kept_unpolished

#: An SVM+ row's ``engine``: this prefix, then the ``SVMPlus.solver`` that trained it.
SVM_PLUS_ENGINE_PREFIX = "svm+:"


def engine_kept_unpolished(engine: str) -> bool:
    """Whether a row's ``engine`` (``SelectionEvaluation.engine``) is an SVM+ model kept at the QP solver's
    unpolished solution (``kept_unpolished`` of its solver); False for a weighted SVM's engine.

    Parameters
    ----------
    engine : str
        The row's engine.

    Returns
    -------
    bool
        True for "svm+:clarabel", "svm+:clarabel-low-rank", ...

    Examples
    --------
    >>> from wsvm_span.svm_plus import engine_kept_unpolished
    >>> [engine_kept_unpolished(e) for e in ("svm+:clarabel", "svm+:active-set", "smo")]
    [True, False, False]
    """
    solver = engine.removeprefix(SVM_PLUS_ENGINE_PREFIX)
    return solver != engine and kept_unpolished(solver)


@dataclass(frozen=True)
class SelectionEvaluation:
    """One grid point of one method of Experiment 8: its errors, every estimate of its error from the training
    sample, SV counts and timings.

    Estimates are fractions of l (NaN where not computed or not defined); times are seconds. ``t_span_bound``
    includes the closed form of ``t_span_rule``; ``t_loo`` covers ``loo_converted`` too.

    Parameters
    ----------
    test_error, val_error, cv_error, span_rule, span_bound, loo_rule, loo_error, loo_converted : float
        The errors and estimates (``loo_converted``: exact LOO of SVM+'s equivalent weighted SVM with its
        weights held fixed).
    cv_folds : int
        The folds of ``cv_error``.
    n_sv, n_inbound, n_bounded, n_zero_weight : int
        SV counts, and the points whose (equivalent) weight is 0.
    t_train, t_val, t_cv, t_span_rule, t_span_bound, t_loo_rule, t_loo : float
        Times (s).
    engine : str
        The trainer (a LIBSVM engine, or the SVM+ solver that ran).
    qp_solver : str
        The QP solver of the span bound.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> ev = svm_plus.evaluate_weighted(K, y, 1.0, K, y, folds=ws.stratified_folds(y, 5, seed=0),
    ...                                 D=ws.enclosing_ball_diameter(K))
    >>> ev.engine, bool(np.isnan(ev.loo_rule))
    ('sklearn', True)
    """

    test_error: float
    val_error: float
    cv_error: float
    span_rule: float
    span_bound: float
    loo_rule: float
    loo_error: float
    loo_converted: float
    cv_folds: int
    n_sv: int
    n_inbound: int
    n_bounded: int
    n_zero_weight: int
    t_train: float
    t_val: float
    t_cv: float
    t_span_rule: float
    t_span_bound: float
    t_loo_rule: float
    t_loo: float
    engine: str
    qp_solver: str

    def as_dict(self) -> dict:
        return asdict(self)


def kfold_cv_error(K, K_priv, y, C: float, gamma: float, folds, *, solver: str = "auto",
                   model: SVMPlus | None = None) -> float:
    """K-fold CV error of SVM+: retrain SVM+ on each fold's training part, count errors on its held-out part
    (f = 0 counts as an error).

    Parameters
    ----------
    K, K_priv : array-like of shape (l, l)
        Ordinary and privileged kernels.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C, gamma : float
        The SVM+ hyperparameters.
    folds : array-like of int, shape (l,)
        Fold ids.
    solver : str, default="auto"
        As in :func:`fit_svm_plus`.
    model : SVMPlus, optional
        The model of the same C and gamma on all l points, when the caller has it: under the "auto" and "smo"
        routes each fold starts from it (``fit_svm_plus``'s ``warm_start``), a fold's problem being the full one less
        a fold's points (the same solutions, fewer active-set iterations).

    Returns
    -------
    float
        The CV error, a fraction of l.

    Raises
    ------
    ValueError
        If a fold's training part holds a single class.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> folds = ws.stratified_folds(y, 5, seed=0)
    >>> round(svm_plus.kfold_cv_error(K, K_priv, y, 1.0, 1.0, folds), 4)
    0.1667
    >>> svm_plus.kfold_cv_error(K, K_priv, y, 1.0, 1.0, folds, model=model) == 0.16666666666666666
    True
    """
    folds = np.asarray(folds)
    y = np.asarray(y, dtype=float)
    warm = model is not None and solver in ("auto", SMO)
    errors = 0
    for fold in np.unique(folds):
        held = np.flatnonzero(folds == fold)
        train = np.flatnonzero(folds != fold)
        if np.all(y[train] == y[train][0]):
            raise ValueError(f"fold {fold}'s training part holds a single class; use fewer folds")
        fold_model = fit_svm_plus(K[np.ix_(train, train)], K_priv[np.ix_(train, train)], y[train], C, gamma,
                                  solver=solver, check_input=False, warm_start=model if warm else None,
                                  warm_start_points=train if warm else None)
        errors += int(np.sum(-y[held] * fold_model.decision_function(K[np.ix_(held, train)]) >= 0))
    return errors / y.size


def _held_out_error(model, K_rows, y_rows) -> tuple[float, float]:
    """(error, seconds) on a held-out sample; (nan, nan) without one."""
    if K_rows is None:
        return math.nan, math.nan
    t0 = time.perf_counter()
    return test_error(model, K_rows, y_rows, check_input=False), time.perf_counter() - t0


def evaluate_svm_plus(
    K, K_priv, y, C: float, gamma: float, K_test, y_test, *, folds, D: float, K_val=None, y_val=None,
    solver: str = "auto", qp_solver: str = "auto", compute_loo: bool = False, engine: str = AUTO,
    model: SVMPlus | None = None,
) -> SelectionEvaluation:
    """One grid point of SVM+: train it and compute its test and validation errors, the span-rule and span bound
    of its equivalent weighted SVM, its LOO rule, K-fold CV and, with ``compute_loo``, its exact LOO error and
    that of the equivalent weighted SVM (retrained by ``engine``).

    The kernels are not validated (a grid builds them once); ``fit_svm_plus`` validates a single problem.

    Parameters
    ----------
    K, K_priv : array-like of shape (l, l)
        Ordinary and privileged training kernels.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C, gamma : float
        The SVM+ hyperparameters.
    K_test : array-like of shape (m, l)
        Test-by-training kernel.
    y_test : array-like of shape (m,)
        Test labels.
    folds : array-like of int, shape (l,)
        CV fold ids.
    D : float
        Enclosing-ball diameter of K (span bound).
    K_val, y_val : array-like or None, default=None
        A validation sample (None: none).
    solver : str, default="auto"
        As in :func:`fit_svm_plus`.
    qp_solver : str, default="auto"
        QP solver.
    compute_loo : bool, default=False
        Also compute the exact LOO errors.
    engine : str, default="auto"
        The engine that retrains the equivalent weighted SVM without each of its SVs (``loo_converted``): "smo"
        starts each retraining from the SVM+ solution; "auto" is LIBSVM from zero. SVM+ itself is trained by
        ``solver``.
    model : SVMPlus, optional
        The grid point's model where the caller trained it (a sweep along C, each point warm-started from the last:
        ``fit_svm_plus(..., warm_start=)``); its ``fit_time`` is the row's ``t_train``. None: trained here by
        ``solver``.

    Returns
    -------
    SelectionEvaluation
        Every number of the grid point.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> ev = svm_plus.evaluate_svm_plus(K, K_priv, y, 1.0, 1.0, K, y, folds=ws.stratified_folds(y, 5, seed=0),
    ...                                 D=ws.enclosing_ball_diameter(K))
    >>> ev.loo_rule, ev.engine.startswith("svm+")
    (0.2, True)
    """
    y = np.asarray(y, dtype=float)
    l = y.size
    if model is None:
        model = fit_svm_plus(K, K_priv, y, C, gamma, solver=solver, qp_solver=qp_solver, check_input=False)
    elif (model.C, model.gamma) != (C, gamma) or not np.array_equal(model.y, y):
        raise ValueError(f"model was trained at C = {model.C}, gamma = {model.gamma} (or on other labels), not at this "
                         f"grid point's C = {C}, gamma = {gamma}")
    t_train = model.fit_time
    weighted = to_weighted_svm(model, K, engine=engine)
    spans = analyse_spans(weighted, K, D=D, qp_solver=qp_solver)
    zero_errors = zero_weight_errors(model) / l
    t0 = time.perf_counter()
    rule = loo_rule(model, K, K_priv).error
    t_loo_rule = time.perf_counter() - t0
    t0 = time.perf_counter()
    cv = kfold_cv_error(K, K_priv, y, C, gamma, folds, solver=solver, model=model)
    t_cv = time.perf_counter() - t0
    loo, converted, t_loo = math.nan, math.nan, math.nan
    if compute_loo:
        t0 = time.perf_counter()
        loo = leave_one_out(model, K, K_priv).error
        converted = weighted_leave_one_out(weighted, K, check_input=False).loo_error + zero_errors
        t_loo = time.perf_counter() - t0
    val_error, t_val = _held_out_error(model, K_val, y_val)
    return SelectionEvaluation(
        test_error=_held_out_error(model, K_test, y_test)[0], val_error=val_error, cv_error=cv,
        span_rule=spans.span_rule + zero_errors, span_bound=spans.span_bound + zero_errors, loo_rule=rule,
        loo_error=loo, loo_converted=converted, cv_folds=int(np.unique(folds).size), n_sv=spans.n_sv,
        n_inbound=spans.n_inbound, n_bounded=spans.n_bounded,
        n_zero_weight=int(np.count_nonzero(svm_plus_weights(model) == 0.0)), t_train=t_train, t_val=t_val,
        t_cv=t_cv, t_span_rule=spans.t_span_rule, t_span_bound=spans.t_span_bound, t_loo_rule=t_loo_rule,
        t_loo=t_loo, engine=f"{SVM_PLUS_ENGINE_PREFIX}{model.solver}", qp_solver=spans.qp_solver,
    )


def evaluate_weighted(
    K, y, C, K_test, y_test, *, folds, D: float, K_val=None, y_val=None, engine: str = AUTO,
    qp_solver: str = "auto", tol: float = 1e-7, compute_loo: bool = False, fold_kernels: FoldKernels | None = None,
) -> SelectionEvaluation:
    """:func:`evaluate_svm_plus` for a weighted SVM with weights C, trained by ``engine``.

    Test and validation errors, span-rule, span bound, K-fold CV with the same weights and (with
    ``compute_loo``) the exact LOO error; ``loo_rule`` and ``loo_converted`` are NaN. Weights at most
    ``equivalence.ZERO_WEIGHT`` (learned weights reach this bound) count as 0: such a point is left out of
    training (LIBSVM leaves ~1e-301 alphas on it, which would make it a spurious in-bound SV of the span
    computation); it never changes the model, so it is a leave-one-out error exactly when the model
    misclassifies it, and those errors are added to the span-rule, span bound and exact LOO. The CV folds keep
    every point (a held-out zero-weight point is classified like any other). D stays the full sample's
    diameter, an upper bound of the kept points' one.

    Parameters
    ----------
    K : array-like of shape (l, l)
        Training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : float or array-like of shape (l,)
        Weights, >= 0.
    K_test : array-like of shape (m, l)
        Test-by-training kernel.
    y_test : array-like of shape (m,)
        Test labels.
    folds : array-like of int, shape (l,)
        CV fold ids.
    D : float
        Enclosing-ball diameter of K.
    K_val, y_val : array-like or None, default=None
        A validation sample (None: none).
    engine : str, default="auto"
        The engine.
    qp_solver : str, default="auto"
        QP solver of the span bound.
    tol : float, default=1e-7
        The engine's tolerance.
    compute_loo : bool, default=False
        Also compute the exact LOO error.
    fold_kernels : FoldKernels, optional
        The folds' kernels, sliced once for a grid.

    Returns
    -------
    SelectionEvaluation
        Every number of the grid point.

    Raises
    ------
    ValueError
        If the weights are 0 on every point of one class.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> ev = svm_plus.evaluate_weighted(K, y, 1.0, K, y, folds=ws.stratified_folds(y, 5, seed=0),
    ...                                 D=ws.enclosing_ball_diameter(K))
    >>> ev.span_rule == ws.span_rule(ws.fit_svm(K, y, 1.0), K)
    True
    """
    y = np.asarray(y, dtype=float)
    C = np.broadcast_to(np.asarray(C, dtype=float), y.shape).astype(float)
    keep = np.flatnonzero(C > ZERO_WEIGHT)
    dropped = np.flatnonzero(C <= ZERO_WEIGHT)
    if np.unique(y[keep]).size < 2:
        raise ValueError("the weights are 0 on every point of one class: no SVM can be trained on the rest")

    def kept_columns(block):
        return block if not dropped.size else block[:, keep]

    K_fit = kept_columns(K[keep] if dropped.size else K)
    t0 = time.perf_counter()
    model = fit_svm(K_fit, y[keep], C[keep], engine=engine, tol=tol, check_input=False)
    t_train = time.perf_counter() - t0
    spans = analyse_spans(model, K_fit, D=D, qp_solver=qp_solver)
    f_dropped = K[np.ix_(dropped, keep)] @ model.coef + model.b
    zero_errors = float(np.sum(-y[dropped] * f_dropped >= 0)) / y.size
    t0 = time.perf_counter()
    cv = weighted_kfold_cv_error(K, y, C, folds=folds, engine=model.engine, tol=tol, check_input=False,
                                 fold_kernels=fold_kernels)
    t_cv = time.perf_counter() - t0
    loo, t_loo = math.nan, math.nan
    if compute_loo:
        t0 = time.perf_counter()
        # leave_one_out counts errors over the kept points: rescale to fractions of l
        loo = weighted_leave_one_out(model, K_fit, check_input=False).loo_error * keep.size / y.size + zero_errors
        t_loo = time.perf_counter() - t0
    scale = keep.size / y.size  # the span estimates are fractions of the kept points
    val_error, t_val = _held_out_error(model, None if K_val is None else kept_columns(K_val), y_val)
    return SelectionEvaluation(
        test_error=_held_out_error(model, kept_columns(K_test), y_test)[0], val_error=val_error, cv_error=cv,
        span_rule=spans.span_rule * scale + zero_errors, span_bound=spans.span_bound * scale + zero_errors,
        loo_rule=math.nan, loo_error=loo, loo_converted=math.nan, cv_folds=int(np.unique(folds).size),
        n_sv=spans.n_sv, n_inbound=spans.n_inbound, n_bounded=spans.n_bounded, n_zero_weight=int(dropped.size),
        t_train=t_train, t_val=t_val, t_cv=t_cv, t_span_rule=spans.t_span_rule, t_span_bound=spans.t_span_bound,
        t_loo_rule=math.nan, t_loo=t_loo, engine=model.engine, qp_solver=spans.qp_solver,
    )
