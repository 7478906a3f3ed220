"""One grid point: train a model and compute every estimator, with per-step timings."""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass


from .estimators import analyse_spans, sv_count_bound, test_error, xi_alpha_bound
from .resampling import kfold_cv_error, leave_one_out
from .svm import fit_svm


@dataclass(frozen=True)
class ModelEvaluation:
    """Estimators (fractions of l; span_bound may exceed 1), SV counts and timings (s).

    t_span_bound includes the closed form it starts from (t_span_rule's work), so it is
    the full cost of the span bound on its own.
    """

    test_error: float
    span_rule: float
    span_bound: float
    cv5: float
    xi_alpha: float
    sv_bound: float
    loo_exact: float  # nan when not computed
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
    engine: str = "auto",
    qp_solver: str = "auto",
    compute_loo: bool = False,
    tol: float = 1e-7,
    check_input: bool = True,
) -> ModelEvaluation:
    """Train on (K, y, C) and compute test error, span-rule, span bound, CV, xi-alpha,
    SV bound and (optionally) the exact LOO error.

    K : (l, l) training kernel; K_test : (m, l) test-by-train kernel; folds : (l,) CV fold
    ids shared by the grid; D, R2 : per-training-set constants (enclosing-ball diameter,
    xi-alpha radius), computed once by the caller. check_input=False skips validating K
    (costly for large l) when the caller built it, e.g. with ``KernelCache``.
    """
    t0 = time.perf_counter()
    model = fit_svm(K, y, C, engine=engine, tol=tol, check_input=check_input)
    t_train = time.perf_counter() - t0
    spans = analyse_spans(model, K, D=D, qp_solver=qp_solver)
    t0 = time.perf_counter()
    cv = kfold_cv_error(K, model.y, model.C, folds=folds, engine=engine, tol=tol, check_input=False)
    t_cv = time.perf_counter() - t0
    loo, t_loo = math.nan, math.nan
    if compute_loo:
        t0 = time.perf_counter()
        loo = leave_one_out(model, K, engine=engine, check_input=False).error
        t_loo = time.perf_counter() - t0
    return ModelEvaluation(
        test_error=test_error(model, K_test, y_test, check_input=check_input),
        span_rule=spans.span_rule,
        span_bound=spans.span_bound,
        cv5=cv,
        xi_alpha=xi_alpha_bound(model, R2=R2),
        sv_bound=sv_count_bound(model),
        loo_exact=loo,
        n_sv=spans.n,
        n_inbound=spans.n_star,
        n_bounded=spans.m,
        n_empty_lambda=spans.k,
        n_qp=spans.n_qp,
        t_train=t_train,
        t_span_rule=spans.t_span_rule,
        t_span_bound=spans.t_span_bound,
        t_cv=t_cv,
        t_loo=t_loo,
        engine=model.engine,
        qp_solver=spans.qp_solver,
    )
