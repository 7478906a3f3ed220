"""One grid point: train a model, measure its test error and compute every estimate of it, with
per-step timings."""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from .engines import AUTO, DEFAULT_TOL, fit_svm, get_engine
from .model import WeightedSVM
from .resampling import FoldKernels, FoldStarts, kfold_cv_error, leave_one_out
from .solution_path.uses import kfold_cv_by_path
from .span.estimates import analyse_spans, sv_count_bound, xi_alpha_bound
from .utils.validation import check_kernel


def test_error(model: WeightedSVM, K_test, y_test, *, check_input: bool = True) -> float:
    """Error rate of a model on held-out points (f = 0 counts as an error).

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K_test : array-like of shape (m, l)
        Kernel between the held-out points and the training set.
    y_test : array-like of shape (m,)
        Their labels in {-1, +1}.
    check_input : bool, default=True
        Scan K_test for NaN/inf (a grid that reuses one valid K_test skips it).

    Returns
    -------
    float
        The fraction of misclassified held-out points.

    Raises
    ------
    ValueError
        If K_test or y_test has the wrong shape, a label is not -1 or +1, or K_test is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> Xt = rng.normal(size=(20, 2))
    >>> yt = np.where(Xt[:, 0] > 0, 1.0, -1.0)
    >>> K_test = ws.rbf_kernel(Xt, X, gamma=0.5)
    >>> ws.test_error(model, K_test, yt)
    0.05
    """
    return float(np.mean(_misclassified(model, K_test, y_test, check_input)))


def test_error_by_class(model: WeightedSVM, K_test, y_test, *, check_input: bool = True) -> tuple[float, float]:
    """Error rates of a model on the held-out points of each class (f = 0 counts as an error).

    Their mean is the balanced test error, which weights both classes equally whatever their shares of the
    test set (what LOO estimates from a class-balanced training set).

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K_test : array-like of shape (m, l)
        Kernel between the held-out points and the training set.
    y_test : array-like of shape (m,)
        Their labels in {-1, +1}.
    check_input : bool, default=True
        Scan K_test for NaN/inf.

    Returns
    -------
    error_positive, error_negative : float
        The fraction of misclassified held-out points of class +1 and of class -1 (NaN for a class without
        held-out points).

    Raises
    ------
    ValueError
        If K_test or y_test has the wrong shape, a label is not -1 or +1, or K_test is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> model = ws.fit_svm(ws.rbf_kernel(X, gamma=0.5), y, C=1.0)
    >>> Xt = rng.normal(size=(20, 2))
    >>> yt = np.where(Xt[:, 0] > 0, 1.0, -1.0)
    >>> ws.test_error_by_class(model, ws.rbf_kernel(Xt, X, gamma=0.5), yt)
    (0.125, 0.0)
    """
    y_test = np.asarray(y_test, dtype=float)
    return _class_rates(_misclassified(model, K_test, y_test, check_input), y_test)


def _misclassified(model: WeightedSVM, K_test, y_test, check_input: bool) -> np.ndarray:
    y_test = np.asarray(y_test, dtype=float)
    if check_input:
        K_test = check_kernel(K_test, name="K_test", square=False)
        if y_test.shape != (K_test.shape[0],):
            raise ValueError(f"y_test has shape {y_test.shape}, expected ({K_test.shape[0]},)")
        if not np.isin(y_test, (-1.0, 1.0)).all():
            raise ValueError("y_test must hold labels in {-1, +1}")
    return -y_test * model.decision_function(K_test) >= 0


def _class_rates(wrong: np.ndarray, y_test: np.ndarray) -> tuple[float, float]:
    rates = []
    for cls in (1.0, -1.0):
        in_class = y_test == cls
        rates.append(float(np.mean(wrong[in_class])) if in_class.any() else math.nan)
    return rates[0], rates[1]


@dataclass(frozen=True)
class ModelEvaluation:
    """The test error, the estimates of it, SV counts and timings of one model (``evaluate_model``).

    Its field names are the result rows' columns and the MLflow metrics. Estimates are fractions of l (the span
    bound may exceed 1); times are seconds; ``t_span_bound`` includes the closed form it starts from
    (``t_span_rule``'s work), so it is the full cost of the span bound on its own.

    Parameters
    ----------
    test_error, span_rule, span_bound, cv_error, xi_alpha_bound, sv_count_bound, loo_error : float
        The test error and each estimate (``loo_error`` NaN when not computed).
    test_error_positive, test_error_negative : float
        The test error on the held-out points of class +1 and of class -1 (``test_error_by_class``).
    span_bound_radius : float
        Theorem 1's sum with the radius D/2 in place of the diameter D: the original study's variant
        (``SpanAnalysis.span_bound_radius``), NOT a bound of the LOO error.
    cv_folds : int
        The folds of ``cv_error``.
    n_sv, n_inbound, n_bounded, n_empty_lambda, n_qp : int
        n, n*, m, k (in-bound SVs with an empty Lambda_p) and the box-constrained QPs solved.
    t_train, t_span_rule, t_span_bound, t_cv, t_loo : float
        Times (s).
    engine, qp_solver : str
        The engine and QP solver that ran.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> Xt = rng.normal(size=(20, 2))
    >>> yt = np.where(Xt[:, 0] > 0, 1.0, -1.0)
    >>> K_test = ws.rbf_kernel(Xt, X, gamma=0.5)
    >>> folds = ws.stratified_folds(y, 5, seed=0)
    >>> ev = ws.evaluate_model(K, y, 1.0, K_test, yt, folds=folds, D=ws.enclosing_ball_diameter(K),
    ...                        R2=ws.kernel_radius2(K), compute_loo=True)
    >>> ev.as_dict()["span_rule"], ev.loo_error, ev.cv_error
    (0.175, 0.15, 0.15)
    """

    test_error: float
    test_error_positive: float
    test_error_negative: float
    span_rule: float
    span_bound: float
    span_bound_radius: float  # the study's variant with D/2 (analyse_spans): not a bound
    cv_error: float
    xi_alpha_bound: float
    sv_count_bound: float
    loo_error: float  # nan when not computed
    cv_folds: int
    n_sv: int
    n_inbound: int
    n_bounded: int
    n_empty_lambda: int
    n_qp: int
    t_train: float
    t_span_rule: float
    t_span_bound: float
    t_cv: float
    t_loo: float  # nan when not computed
    engine: str
    qp_solver: str

    def as_dict(self) -> dict:
        return asdict(self)


def evaluate_model(
    K,
    y,
    C,
    K_test,
    y_test,
    *,
    folds,
    D: float,
    R2: float,
    engine: str = AUTO,
    qp_solver: str = "auto",
    compute_loo: bool = False,
    tol: float = DEFAULT_TOL,
    check_input: bool = True,
    fold_kernels: FoldKernels | None = None,
    alpha0=None,
    fold_starts: FoldStarts | None = None,
) -> ModelEvaluation:
    """One grid point: train on (K, y, C), then compute the test error, span-rule, span bound, K-fold CV,
    xi-alpha bound, SV-count bound and (optionally) the exact LOO error, with timings.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : float or array-like of shape (l,)
        Positive instance weights.
    K_test : array-like of shape (m, l)
        Test-by-train kernel.
    y_test : array-like of shape (m,)
        Test labels.
    folds : array-like of int, shape (l,)
        CV fold ids, shared by the grid.
    D : float
        Enclosing-ball diameter of the training set (computed once by the caller).
    R2 : float
        R^2 of the xi-alpha bound (computed once by the caller).
    engine : str, default="auto"
        The engine; an engine that follows the solution path (``"path"``) gets its CV and LOO models by paths
        from the model; one that starts from a neighbouring solution (``"smo"``) starts its CV and LOO
        retrainings from the model.
    qp_solver : str, default="auto"
        QP solver of the span bound.
    compute_loo : bool, default=False
        Also compute the exact LOO error (retraining without each SV).
    tol : float, default=1e-7
        The engine's stopping tolerance.
    check_input : bool, default=True
        Validate K (costly for large l; skip it when the caller built K, e.g. with ``KernelCache``).
    fold_kernels : FoldKernels, optional
        The folds' training kernels, sliced once for the grid.
    alpha0 : ndarray or warm_start.Start, optional
        The model's start (engines with ``warm_start``), e.g. the previous grid point's
        (``engines.warm_start.rescaled_start``).
    fold_starts : FoldStarts, optional
        The folds' previous models along a grid walk (engines with ``warm_start``).

    Returns
    -------
    ModelEvaluation
        Every number of the grid point.

    Raises
    ------
    ValueError
        If the inputs are invalid.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> Xt = rng.normal(size=(20, 2))
    >>> yt = np.where(Xt[:, 0] > 0, 1.0, -1.0)
    >>> K_test = ws.rbf_kernel(Xt, X, gamma=0.5)
    >>> folds = ws.stratified_folds(y, 5, seed=0)
    >>> ev = ws.evaluate_model(K, y, 1.0, K_test, yt, folds=folds, D=ws.enclosing_ball_diameter(K),
    ...                        R2=ws.kernel_radius2(K))
    >>> ev.test_error, ev.span_rule, ev.cv_error, ev.n_sv
    (0.05, 0.175, 0.15, 22)
    """
    t0 = time.perf_counter()
    model = fit_svm(K, y, C, engine=engine, tol=tol, check_input=check_input, alpha0=alpha0)
    t_train = time.perf_counter() - t0
    return evaluate_fitted(model, K, K_test, y_test, t_train=t_train, folds=folds, D=D, R2=R2, qp_solver=qp_solver,
                           compute_loo=compute_loo, tol=tol, check_input=check_input, fold_kernels=fold_kernels,
                           fold_starts=fold_starts)


def evaluate_fitted(
    model: WeightedSVM,
    K,
    K_test,
    y_test,
    *,
    t_train: float,
    folds,
    D: float,
    R2: float,
    qp_solver: str = "auto",
    compute_loo: bool = False,
    tol: float = DEFAULT_TOL,
    check_input: bool = True,
    fold_kernels: FoldKernels | None = None,
    fold_starts: FoldStarts | None = None,
) -> ModelEvaluation:
    """:func:`evaluate_model` of a model obtained otherwise (e.g. the end of a solution path from a
    neighbouring grid point).

    K is not validated again (the model was trained on it). CV and LOO retrain with the model's engine
    (``tol``), or follow paths from the model when that engine follows the solution path.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K : array-like of shape (l, l)
        Its training kernel.
    K_test : array-like of shape (m, l)
        Test-by-train kernel.
    y_test : array-like of shape (m,)
        Test labels.
    t_train : float
        The seconds it took to obtain the model.
    folds : array-like of int, shape (l,)
        CV fold ids.
    D, R2 : float
        Enclosing-ball diameter and the xi-alpha bound's R^2 of the training set.
    qp_solver : str, default="auto"
        QP solver of the span bound.
    compute_loo : bool, default=False
        Also compute the exact LOO error.
    tol : float, default=1e-7
        Tolerance of the models retrained for CV and LOO.
    check_input : bool, default=True
        Validate K_test.
    fold_kernels : FoldKernels, optional
        The folds' training kernels, sliced once for the grid.
    fold_starts : FoldStarts, optional
        The folds' previous models along a grid walk (engines with ``warm_start``).

    Returns
    -------
    ModelEvaluation
        Every number of the grid point.

    Raises
    ------
    ValueError
        If K_test or y_test is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> Xt = rng.normal(size=(20, 2))
    >>> yt = np.where(Xt[:, 0] > 0, 1.0, -1.0)
    >>> K_test = ws.rbf_kernel(Xt, X, gamma=0.5)
    >>> folds = ws.stratified_folds(y, 5, seed=0)
    >>> ev = ws.evaluate_fitted(model, K, K_test, yt, t_train=model.fit_time, folds=folds,
    ...                         D=ws.enclosing_ball_diameter(K), R2=ws.kernel_radius2(K))
    >>> ev.span_rule, ev.engine
    (0.175, 'sklearn')
    """
    spans = analyse_spans(model, K, D=D, qp_solver=qp_solver)
    # the same exact models as retraining with that engine, reached from this one
    method = "path" if get_engine(model.engine).capabilities.solution_path else "retrain"
    t0 = time.perf_counter()
    if method == "path":
        cv = kfold_cv_by_path(model, K, folds, check_input=False).cv_error
    else:
        cv = kfold_cv_error(K, model.y, model.C, folds=folds, engine=model.engine, tol=tol, check_input=False,
                            fold_kernels=fold_kernels, model=model, fold_starts=fold_starts)
    t_cv = time.perf_counter() - t0
    loo, t_loo = math.nan, math.nan
    if compute_loo:
        t0 = time.perf_counter()
        loo = leave_one_out(model, K, check_input=False, method=method).loo_error
        t_loo = time.perf_counter() - t0
    y_test = np.asarray(y_test, dtype=float)
    wrong = _misclassified(model, K_test, y_test, check_input)
    error_positive, error_negative = _class_rates(wrong, y_test)
    return ModelEvaluation(
        test_error=float(np.mean(wrong)),
        test_error_positive=error_positive,
        test_error_negative=error_negative,
        span_rule=spans.span_rule,
        span_bound=spans.span_bound,
        span_bound_radius=spans.span_bound_radius,
        cv_error=cv,
        xi_alpha_bound=xi_alpha_bound(model, R2=R2),
        sv_count_bound=sv_count_bound(model),
        loo_error=loo,
        cv_folds=int(np.unique(folds).size),
        n_sv=spans.n_sv,
        n_inbound=spans.n_inbound,
        n_bounded=spans.n_bounded,
        n_empty_lambda=spans.n_empty_lambda,
        n_qp=spans.n_qp,
        t_train=t_train,
        t_span_rule=spans.t_span_rule,
        t_span_bound=spans.t_span_bound,
        t_cv=t_cv,
        t_loo=t_loo,
        engine=model.engine,
        qp_solver=spans.qp_solver,
    )
