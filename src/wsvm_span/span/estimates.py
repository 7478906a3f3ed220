"""Leave-one-out estimates computed from ONE trained model (method.md sections 2-4): the span-rule,
the span bound, the xi-alpha bound and the SV-count bound; for the standard SVM (every C_i = C,
standard-svm-span.md) the standard form of the span bound, its separable form and D_SV.

All values are fractions of l, with theta(t) = 1 for t >= 0 (ties count as errors).
``analyse_spans`` does the work shared by the span-rule and the span bound and returns
every intermediate quantity (per-SV S_p^2, Lemma 1 per in-bound SV, the counts n_sv,
n_inbound, n_bounded, n_empty_lambda, S, D, timings); the scalar functions are thin views of it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..kernels import kernel_radius2, rbf_kernel
from ..model import WeightedSVM
from ..solvers.enclosing_ball import enclosing_ball_diameter
from ..solvers.qp import qp_solver_name
from ..utils.validation import check_features, check_int
from .geometry import (
    BorderedInverse,
    affine_span_qp,
    bordered_inverse,
    box_limit_rows,
    box_span_qp,
    closed_form_lambda_rows,
    lemma1_holds,
    project_rows_to_box_hyperplane,
    unconstrained_span2,
)

#: the closed-form lambda "satisfies the box" up to this fraction of the box's size (plus an
#: absolute floor): LIBSVM's alphas are tolerance-accurate, and rejecting a lambda that is
#: feasible to rounding would only cost an unnecessary QP, never change S
BOX_FEASIBILITY_RTOL = 1e-9
BOX_FEASIBILITY_ATOL = 1e-12

#: the size of the enclosing ball in Theorem 1's max(D, 1/sqrt(C_p)) (method.md, the note under Theorem 1):
#: "diameter" is the proven bound (Lemma 2 needs D); "radius" puts R = D/2 in its place, which reproduces
#: the original study's span-bound selections (its Table 2) but is NOT a bound of the LOO error. The
#: radius is a study-compatibility setting only: the diameter is the default everywhere.
SPAN_BOUND_BALLS = ("diameter", "radius")


@dataclass(frozen=True)
class SpanAnalysis:
    """Everything the span-rule and the span bound of one model are made of (analyse_spans returns it).

    Per-SV arrays follow ``support`` (n,); per-in-bound-SV arrays follow ``inbound`` (n*,).

    Parameters
    ----------
    l : int
        Training points.
    support, inbound, bounded : ndarray of int
        The model's SVs (n), in-bound SVs (n*, 0 < a_i < C_i) and bounded SVs (m, a_i = C_i).
    span2_rule : ndarray of shape (n,)
        S_p^2 without box constraints (inf when undefined).
    rule_errors : ndarray of bool, shape (n,)
        True where a_p S_p^2 - y_p f(x_p) >= 0 (a predicted LOO error).
    lemma1 : ndarray of bool, shape (n*,)
        True where Lambda_p is non-empty.
    closed_form_feasible : ndarray of bool, shape (n*,)
        True where the closed-form lambda satisfies the box.
    span2_box : ndarray of shape (n*,)
        Box-constrained S_p^2; nan where Lambda_p is empty, or where the QP was skipped because it
        provably cannot change S (unless ``all_box_spans``).
    S : float
        The span: max of the box-constrained S_p over the in-bound SVs.
    D : float
        Enclosing-ball diameter of the training set.
    n_qp : int
        Box-constrained QPs solved.
    n_qp_failed : int
        Of them, those the QP solver could not solve (neither optimal nor infeasible): each such S_p^2 is
        replaced by an upper bound (the objective at the closed-form lambda projected onto the box), so S
        and the span bound are then upper bounds of theirs.
    qp_solver : str
        The QP solver that ran.
    ridge : float
        Ridge added to K_MM to factor it (0 unless singular).
    span_rule, span_bound : float
        The span-rule and Theorem 1's bound with the diameter D, fractions of l.
    span_bound_radius : float
        The same sum with the radius D/2 in place of D: the original study's variant (see
        :data:`SPAN_BOUND_BALLS`), NOT a bound of the LOO error.
    t_span_rule, t_span_bound : float
        Their times (s).

    Attributes
    ----------
    n_sv, n_inbound, n_bounded : int
        n, n* and m.
    n_empty_lambda : int
        k, the in-bound SVs with an empty Lambda_p.
    no_inbound : bool
        n* = 0: the span is undefined and every SV counts as an error.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> spans = ws.analyse_spans(model, K)
    >>> spans.n_sv, spans.n_inbound, spans.n_bounded, spans.n_empty_lambda
    (22, 7, 15, 0)
    """

    l: int
    support: np.ndarray
    inbound: np.ndarray
    bounded: np.ndarray
    span2_rule: np.ndarray
    rule_errors: np.ndarray
    lemma1: np.ndarray
    closed_form_feasible: np.ndarray
    span2_box: np.ndarray
    S: float
    D: float
    n_qp: int
    qp_solver: str
    ridge: float
    span_rule: float
    span_bound: float
    span_bound_radius: float
    t_span_rule: float
    t_span_bound: float
    n_qp_failed: int = 0

    @property
    def n_sv(self) -> int:
        return int(self.support.shape[0])

    @property
    def n_inbound(self) -> int:
        return int(self.inbound.shape[0])

    @property
    def n_bounded(self) -> int:
        return int(self.bounded.shape[0])

    @property
    def n_empty_lambda(self) -> int:
        return int((~self.lemma1).sum())

    @property
    def no_inbound(self) -> bool:
        return self.n_inbound == 0


def analyse_spans(
    model: WeightedSVM,
    K,
    *,
    D: float | None = None,
    qp_solver: str = "auto",
    all_box_spans: bool = False,
) -> SpanAnalysis:
    """Span-rule and span bound of a trained model, with every intermediate quantity.

    The span-rule needs one factorization of the bordered matrix of the in-bound SVs (method.md section 4);
    the span bound starts from the same closed form and solves the box-constrained QP only for the in-bound
    SVs whose closed form violates the box, and only when that could change S.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K : array-like of shape (l, l)
        The training kernel the model was trained on.
    D : float or None, default=None
        Enclosing-ball diameter of the training set; computed here when None (pass it to share it across
        a grid).
    qp_solver : str, default="auto"
        QP solver of the box-constrained spans and of D (``wsvm_span.solvers.qp.SOLVERS``).
    all_box_spans : bool, default=False
        Solve the box-constrained QP for every in-bound SV whose closed form violates the box, even when it
        cannot change S (for per-SV studies).

    Returns
    -------
    SpanAnalysis
        Per-SV spans, Lemma 1 per in-bound SV, the counts, S, D, both estimates and their times.

    Raises
    ------
    ValueError
        If K is not the (l, l) kernel of the model's training set.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> spans = ws.analyse_spans(model, K)
    >>> spans.span_rule, round(spans.span_bound, 3), round(spans.S, 3), round(spans.D, 3)
    (0.175, 0.524, 1.069, 1.797)
    """
    K = np.asarray(K, dtype=float)
    l = model.n_train
    if K.shape != (l, l):
        raise ValueError(f"K must be the ({l}, {l}) training kernel of the model, got {K.shape}")
    solver = qp_solver_name(qp_solver)
    sv, M, B = model.support, model.inbound, model.bounded
    a = model.alpha

    # --- span-rule (Corollary 1): one factorization for all SVs ---------------------
    t0 = time.perf_counter()
    inverse = bordered_inverse(K[np.ix_(M, M)]) if M.size else None
    span2, rule_errors = span_rule_errors(model, K, inverse)
    span_rule = float(rule_errors.sum()) / l
    t_closed = time.perf_counter() - t0

    # --- span bound (Theorem 1): closed form first, QP only where the box binds ------
    t1 = time.perf_counter()
    if D is None:
        D = enclosing_ball_diameter(K, solver=solver)
    lemma1 = lemma1_holds(model)
    span2_box = np.full(M.size, np.nan)
    feasible, upper = _screen_box_constraints(model, K, inverse, lemma1)
    span2_box[feasible] = span2[np.searchsorted(sv, M[feasible])]
    pending = [(upper[j], j) for j in np.flatnonzero(lemma1 & ~feasible)]
    best = float(np.nanmax(span2_box, initial=-np.inf)) if feasible.any() else -np.inf
    n_qp = n_qp_failed = 0
    for bound, j in sorted(pending, reverse=True):
        # The closed form (a lower bound) is infeasible here; a feasible lambda gives an
        # upper bound. If even that cannot beat the current max, S does not depend on it.
        if bound <= best and not all_box_spans:
            continue
        res = box_span_qp(model, K, M[j], solver=solver)
        n_qp += 1
        if res.status == "optimal":
            span2_box[j] = res.objective
            best = max(best, res.objective)
        elif res.status == "infeasible":
            raise RuntimeError(
                f"span QP infeasible for in-bound SV {M[j]} although Lemma 1 holds; "
                "the SVM solution is not accurate enough (lower the training tolerance)"
            )
        else:
            # Clarabel stopped with DualInfeasible on an SV of a converted SVM+ model whose weight is ~1e-9 of C
            # (its box reaches +-5e9 while K_RR's smallest eigenvalue is 2e-10). The projected closed form's
            # objective, an upper bound of S_p^2, stands in: the span bound stays an upper bound.
            span2_box[j] = bound
            best = max(best, bound)
            n_qp_failed += 1
    nonempty = lemma1
    n_empty_lambda = int((~nonempty).sum())
    S = float(np.sqrt(best)) if nonempty.any() else 0.0
    bounds = {ball: _theorem1(S, D / 2.0 if ball == "radius" else D, a[M[nonempty]], model.C[M[nonempty]],
                              n_empty_lambda, B.size, l) for ball in SPAN_BOUND_BALLS}
    t_box = time.perf_counter() - t1

    return SpanAnalysis(
        l=l, support=sv, inbound=M, bounded=B, span2_rule=span2, rule_errors=rule_errors,
        lemma1=lemma1, closed_form_feasible=feasible, span2_box=span2_box, S=S, D=float(D),
        n_qp=n_qp, qp_solver=solver, ridge=inverse.ridge if inverse else 0.0,
        span_rule=span_rule, span_bound=bounds["diameter"], span_bound_radius=bounds["radius"],
        t_span_rule=t_closed, t_span_bound=t_closed + t_box, n_qp_failed=n_qp_failed,
    )


def _theorem1(S: float, size: float, alpha_inbound, C_inbound, k: int, m: int, l: int) -> float:
    """( S sum_p max(size, 1/sqrt(C_p)) a_p + k + m ) / l over the in-bound SVs with Lambda_p non-empty
    (Theorem 1 with size = D)."""
    weight = np.maximum(size, 1.0 / np.sqrt(C_inbound))
    return float((S * float(np.sum(weight * alpha_inbound)) + k + m) / l)


def _screen_box_constraints(model, K, inverse, lemma1, block: int = 256):
    """For every in-bound SV with Lambda_p non-empty: does the closed-form lambda satisfy
    the box (then it is the constrained optimum), and if not, an upper bound of the
    box-constrained S_p^2 (the objective at the projection of lambda onto the feasible set).

    Vectorised over blocks of in-bound SVs. Returns (feasible (n*,) bool, upper (n*,)).
    """
    M = model.inbound
    feasible = np.zeros(M.size, dtype=bool)
    upper = np.full(M.size, np.nan)
    todo = np.flatnonzero(lemma1)
    if todo.size == 0:
        return feasible, upper
    K_MM = K[np.ix_(M, M)]
    for start in range(0, todo.size, block):
        rows = todo[start:start + block]
        lam = closed_form_lambda_rows(inverse, rows)
        LB, UB = box_limit_rows(model, rows)
        slack = BOX_FEASIBILITY_RTOL * np.maximum(np.abs(LB), np.abs(UB)) + BOX_FEASIBILITY_ATOL
        ok = np.all((lam >= LB - slack) & (lam <= UB + slack), axis=1)
        feasible[rows[ok]] = True
        if (~ok).any():
            bad = ~ok
            X = project_rows_to_box_hyperplane(lam[bad], LB[bad], UB[bad])
            upper[rows[bad]] = np.einsum("ij,ij->i", X @ K_MM, X)
    return feasible, upper


def span_rule(model: WeightedSVM, K, *, method: str = "closed-form", qp_solver: str = "auto") -> float:
    """Span-rule estimate of the LOO error (Corollary 1): #{SV p : a_p S_p^2 >= y_p f(x_p)} / l.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K : array-like of shape (l, l)
        Its training kernel.
    method : {"closed-form", "qp"}, default="closed-form"
        "closed-form": one factorization for all SVs (method.md section 4); "qp": one QP per SV, the
        original study's formulation (a slow reference).
    qp_solver : str, default="auto"
        QP solver of ``method="qp"``.

    Returns
    -------
    float
        The estimated LOO error, a fraction of l (with no in-bound SV, every SV counts as an error).

    Raises
    ------
    ValueError
        If ``method`` is unknown or K does not match the model.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.span_rule(model, K)
    0.175
    >>> ws.loo_error(K, y, 1.0)  # the exact LOO error, by retraining without each SV
    0.15
    """
    K = np.asarray(K, dtype=float)
    if method == "closed-form":
        _, errors = span_rule_errors(model, K)
    elif method == "qp":
        sv = model.support
        if model.inbound.size == 0:
            return sv.size / model.n_train
        span2 = np.array([_qp_span2(model, K, p, qp_solver) for p in sv])
        errors = model.alpha[sv] * span2 - model.margins[sv] >= 0
    else:
        raise ValueError(f"method must be 'closed-form' or 'qp', got {method!r}")
    return float(errors.sum()) / model.n_train


def _qp_span2(model, K, p, solver) -> float:
    res = affine_span_qp(model, K, p, solver=solver)
    return res.objective if res.status == "optimal" else np.inf


def span_rule_errors(model: WeightedSVM, K, inverse: BorderedInverse | None = None):
    """(S_p^2 without box, predicted LOO error) for every SV, in ``model.support`` order.

    With no in-bound SV the span is undefined and every SV counts as an error.
    """
    sv, M = model.support, model.inbound
    if M.size == 0:
        return np.full(sv.size, np.inf), np.ones(sv.size, dtype=bool)
    span2 = unconstrained_span2(model, K, inverse)
    with np.errstate(invalid="ignore"):
        errors = model.alpha[sv] * span2 - model.margins[sv] >= 0
    return span2, errors


#: bounded SVs per block in ``span_rule_from_svs``: each block's kernel is (n* + block)^2, so the
#: block stays small beside the n* x n* factorization it reuses
SPAN_BLOCK_ROWS = 2048


def span_rule_from_svs(model: WeightedSVM, X, gamma: float, *, block_rows: int | None = None) -> float:
    """The span-rule of an RBF model from kernel blocks of its SVs only: ``span_rule(model, K)`` without K.

    The closed form reads K only among the SVs, so l can be far beyond an l x l kernel. The bordered matrix
    of the in-bound SVs is factored once (n* x n* kernel); the bounded SVs go through in blocks of
    ``block_rows``, each as the model restricted to (in-bound + block), whose kernel is (n* + block)^2. The
    count is divided by the full l.

    Parameters
    ----------
    model : WeightedSVM
        An RBF model trained on X (e.g. by ``fit_features``).
    X : array-like of shape (l, d)
        Its training features.
    gamma : float
        Its RBF parameter.
    block_rows : int or None, default=None
        Bounded SVs per block (default ``SPAN_BLOCK_ROWS``).

    Returns
    -------
    float
        The span-rule, a fraction of l.

    Raises
    ------
    ValueError
        If X does not have the model's l rows.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.span_rule_from_svs(model, X, gamma=0.5) == ws.span_rule(model, K)
    True
    """
    X = check_features(X, name="X")
    l = model.n_train
    if X.shape[0] != l:
        raise ValueError(f"X has {X.shape[0]} rows, the model {l} training points")
    M, B = model.inbound, model.bounded
    if M.size == 0:  # the span is undefined: every SV counts as an error (span_rule_errors)
        return model.support.size / l
    K_MM = rbf_kernel(X[M], None, gamma)
    inverse = bordered_inverse(K_MM)
    block_rows = SPAN_BLOCK_ROWS if block_rows is None else check_int(block_rows, "block_rows")
    errors = 0
    for start in range(0, max(B.size, 1), block_rows):
        Q = B[start:start + block_rows]
        idx = np.concatenate([M, Q])
        K_MQ = rbf_kernel(X[M], X[Q], gamma)
        K = np.block([[K_MM, K_MQ], [K_MQ.T, rbf_kernel(X[Q], None, gamma)]])
        _, wrong = span_rule_errors(model.restricted(idx), K, inverse)
        # the in-bound SVs come first in every block: count them once
        errors += int(wrong[M.size:].sum()) + (int(wrong[:M.size].sum()) if start == 0 else 0)
    return errors / l


def span_bound(model: WeightedSVM, K, *, D: float | None = None, qp_solver: str = "auto",
               ball: str = "diameter") -> float:
    """Span bound of the LOO error for weighted SVM (Theorem 1); it can exceed 1.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K : array-like of shape (l, l)
        Its training kernel.
    D : float or None, default=None
        Enclosing-ball diameter of the training set (computed when None).
    qp_solver : str, default="auto"
        QP solver (``wsvm_span.solvers.qp.SOLVERS``).
    ball : {"diameter", "radius"}, default="diameter"
        "diameter": Theorem 1, an upper bound of the LOO error. "radius": the original study's variant
        with D/2 in place of D, which reproduces its Table 2 selections; NOT a bound, a
        study-compatibility setting only (:data:`SPAN_BOUND_BALLS`).

    Returns
    -------
    float
        The bound, a fraction of l.

    Raises
    ------
    ValueError
        If K does not match the model, or ``ball`` is not one of :data:`SPAN_BOUND_BALLS`.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> round(ws.span_bound(model, K), 3)
    0.524
    """
    if ball not in SPAN_BOUND_BALLS:
        raise ValueError(f"ball must be one of {SPAN_BOUND_BALLS}, got {ball!r}")
    spans = analyse_spans(model, K, D=D, qp_solver=qp_solver)
    return spans.span_bound if ball == "diameter" else spans.span_bound_radius


#: the C_i of a standard SVM are one number; they may differ by the rounding of how each was computed
#: (e.g. 2.0 ** log2_C per instance), never by more than this fraction of max C_i
STANDARD_C_RTOL = 1e-12


def standard_C(model: WeightedSVM) -> float:
    """The C of a standard SVM (every C_i = C); a ValueError when the weights differ."""
    C = model.C
    if float(C.max() - C.min()) > STANDARD_C_RTOL * float(C.max()):
        raise ValueError(
            f"the standard-SVM form needs every C_i equal, got C_i in [{C.min():.6g}, {C.max():.6g}]; "
            "use span_bound (Theorem 1 for weighted SVM) for instance weights"
        )
    return float(C.max())


def _spans_of(model: WeightedSVM, K, D, qp_solver, spans: SpanAnalysis | None) -> SpanAnalysis:
    if spans is None:
        if K is None:
            raise ValueError("pass the model's training kernel K, or its SpanAnalysis as spans=")
        return analyse_spans(model, K, D=D, qp_solver=qp_solver)
    if spans.l != model.n_train or not np.array_equal(spans.support, model.support):
        raise ValueError("spans is the SpanAnalysis of another model; pass the one analyse_spans gave for this model")
    return spans


def span_bound_standard(model: WeightedSVM, K=None, *, D: float | None = None, qp_solver: str = "auto",
                        spans: SpanAnalysis | None = None) -> float:
    """Theorem 1 for the standard SVM (every C_i = C; standard-svm-span.md).

    The bound is ( S max(D, 1/sqrt(C)) sum_{in-bound p} a_p + m ) / l, where Lemma 1 always holds (no k
    term). It equals :func:`span_bound` on such a model, and can exceed 1.

    Parameters
    ----------
    model : WeightedSVM
        A model with every C_i equal.
    K : array-like of shape (l, l) or None, default=None
        Its training kernel (not used when ``spans`` is given).
    D : float or None, default=None
        Enclosing-ball diameter (computed when None).
    qp_solver : str, default="auto"
        QP solver.
    spans : SpanAnalysis or None, default=None
        The model's :func:`analyse_spans` result when already computed (then K, D and qp_solver are not used).

    Returns
    -------
    float
        The bound, a fraction of l.

    Raises
    ------
    ValueError
        If the C_i differ, or neither K nor a matching ``spans`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.span_bound_standard(model, K) == ws.span_bound(model, K)
    True
    """
    C = standard_C(model)
    spans = _spans_of(model, K, D, qp_solver, spans)
    a_inbound = float(model.alpha[model.inbound].sum())
    return (spans.S * max(spans.D, 1.0 / np.sqrt(C)) * a_inbound + spans.n_bounded) / model.n_train


def span_bound_separable(model: WeightedSVM, K=None, *, D: float | None = None, qp_solver: str = "auto",
                         spans: SpanAnalysis | None = None) -> float:
    """The span bound for separable data (C effectively infinite): S D / (l rho^2), 1/rho^2 = sum_i a_i.

    Parameters
    ----------
    model : WeightedSVM
        A model without bounded SVs (the hard-margin SVM).
    K : array-like of shape (l, l) or None, default=None
        Its training kernel (not used when ``spans`` is given).
    D : float or None, default=None
        Enclosing-ball diameter (computed when None).
    qp_solver : str, default="auto"
        QP solver.
    spans : SpanAnalysis or None, default=None
        As in :func:`span_bound_standard`.

    Returns
    -------
    float
        The bound, a fraction of l.

    Raises
    ------
    ValueError
        If the model has a bounded SV (a_i = C_i), or neither K nor a matching ``spans`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> hard = ws.fit_svm(K, y, C=1e6)
    >>> hard.bounded.size
    0
    >>> bool(ws.span_bound_separable(hard, K) >= ws.span_rule(hard, K))
    True
    """
    if model.bounded.size:
        raise ValueError(
            f"the separable form needs a model without bounded SVs (C effectively infinite); this one has "
            f"{model.bounded.size} SVs with a_i = C_i: use span_bound_standard, or train with a larger C"
        )
    spans = _spans_of(model, K, D, qp_solver, spans)
    return spans.S * spans.D * float(model.alpha.sum()) / model.n_train


def inbound_diameter(model: WeightedSVM, K, *, qp_solver: str = "auto") -> float:
    """D_SV: the diameter of the smallest sphere enclosing the in-bound SVs in feature space.

    It is the exact enclosing ball of K_MM; every span S_p of an in-bound SV is at most D_SV.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K : array-like of shape (l, l)
        Its training kernel.
    qp_solver : str, default="auto"
        QP solver.

    Returns
    -------
    float
        D_SV: 0 with one in-bound SV, nan with none (nothing to enclose).

    Raises
    ------
    ValueError
        If K does not match the model.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> bool(ws.analyse_spans(model, K).S <= ws.inbound_diameter(model, K))
    True
    """
    M = model.inbound
    if M.size == 0:
        return float("nan")
    K = np.asarray(K, dtype=float)
    if K.shape != (model.n_train, model.n_train):
        raise ValueError(f"K must be the ({model.n_train}, {model.n_train}) training kernel of the model, got {K.shape}")
    return enclosing_ball_diameter(K[np.ix_(M, M)], solver=qp_solver)


def xi_alpha_bound(model: WeightedSVM, K=None, *, R2: float | None = None) -> float:
    """The xi-alpha bound: #{p : 2 a_p R^2 + xi_p - 1 >= 0} / l, R^2 = max K - min K.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.
    K : array-like of shape (l, l) or None, default=None
        Its training kernel (for R^2).
    R2 : float or None, default=None
        R^2, when already computed (then K is not needed).

    Returns
    -------
    float
        The bound, a fraction of l.

    Raises
    ------
    ValueError
        If neither K nor R2 is given.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.xi_alpha_bound(model, K)
    0.425
    """
    if R2 is None:
        if K is None:
            raise ValueError("xi_alpha_bound needs the training kernel K or R2")
        R2 = kernel_radius2(K)
    return float(np.sum(2.0 * model.alpha * R2 + model.slacks - 1.0 >= 0)) / model.n_train


def sv_count_bound(model: WeightedSVM) -> float:
    """The SV-count bound: n / l.

    Parameters
    ----------
    model : WeightedSVM
        The trained model.

    Returns
    -------
    float
        The fraction of training points that are support vectors.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.sv_count_bound(model)
    0.55
    """
    return model.support.shape[0] / model.n_train
