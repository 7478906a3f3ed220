"""One grid point: train a model, measure its test error and compute every estimate of it, with
per-step timings."""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from .engines import AUTO, DEFAULT_TOL, fit_svm, get_engine
from .model import WeightedSVM
from .resampling import FoldKernels, kfold_cv_error, leave_one_out
from .solution_path.uses import kfold_cv_by_path
from .span.estimates import analyse_spans, sv_count_bound, xi_alpha_bound
from .utils.validation import check_kernel


def test_error(model: WeightedSVM, K_test, y_test, *, check_input: bool = True) -> float:
    """Error rate on held-out points; K_test: (m, l) test-by-train kernel; f = 0 counts as an error.

    check_input=False skips scanning K_test for NaN/inf (a grid reuses one valid K_test).
    """
    y_test = np.asarray(y_test, dtype=float)
    if check_input:
        K_test = check_kernel(K_test, name="K_test", square=False)
        if y_test.shape != (K_test.shape[0],):
            raise ValueError(f"y_test has shape {y_test.shape}, expected ({K_test.shape[0]},)")
        if not np.isin(y_test, (-1.0, 1.0)).all():
            raise ValueError("y_test must hold labels in {-1, +1}")
    return float(np.mean(-y_test * model.decision_function(K_test) >= 0))


@dataclass(frozen=True)
class ModelEvaluation:
    """The test error, the estimates of it (fractions of l; span_bound may exceed 1), SV counts and
    timings (s) of one model.

    t_span_bound includes the closed form it starts from (t_span_rule's work), so it is
    the full cost of the span bound on its own.
    """

    test_error: float
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
) -> ModelEvaluation:
    """Train on (K, y, C) and compute the test error, span-rule, span bound, K-fold CV, xi-alpha
    bound, SV-count bound and (optionally) the exact LOO error.

    K : (l, l) training kernel; K_test : (m, l) test-by-train kernel; folds : (l,) CV fold
    ids shared by the grid; D, R2 : per-training-set constants (enclosing-ball diameter,
    xi-alpha radius), computed once by the caller. check_input=False skips validating K
    (costly for large l) when the caller built it, e.g. with ``KernelCache``. fold_kernels : the
    folds' training kernels sliced once for the grid (``FoldKernels(K, folds)``). An engine that
    follows the solution path (``engine="path"``) gets its CV and LOO models by paths from the model.
    """
    t0 = time.perf_counter()
    model = fit_svm(K, y, C, engine=engine, tol=tol, check_input=check_input)
    t_train = time.perf_counter() - t0
    return evaluate_fitted(model, K, K_test, y_test, t_train=t_train, folds=folds, D=D, R2=R2, qp_solver=qp_solver,
                           compute_loo=compute_loo, tol=tol, check_input=check_input, fold_kernels=fold_kernels)


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
) -> ModelEvaluation:
    """``evaluate_model`` of a model obtained otherwise (e.g. the end of a solution path from a neighbouring
    grid point), ``t_train`` the seconds it took; K is its training kernel (K is not validated again: the
    model was trained on it). CV and LOO retrain with the model's engine (``tol``), or follow paths from
    the model when that engine follows the solution path."""
    spans = analyse_spans(model, K, D=D, qp_solver=qp_solver)
    # the same exact models as retraining with that engine, reached from this one
    method = "path" if get_engine(model.engine).capabilities.solution_path else "retrain"
    t0 = time.perf_counter()
    if method == "path":
        cv = kfold_cv_by_path(model, K, folds, check_input=False).cv_error
    else:
        cv = kfold_cv_error(K, model.y, model.C, folds=folds, engine=model.engine, tol=tol, check_input=False,
                            fold_kernels=fold_kernels)
    t_cv = time.perf_counter() - t0
    loo, t_loo = math.nan, math.nan
    if compute_loo:
        t0 = time.perf_counter()
        loo = leave_one_out(model, K, check_input=False, method=method).loo_error
        t_loo = time.perf_counter() - t0
    return ModelEvaluation(
        test_error=test_error(model, K_test, y_test, check_input=check_input),
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
