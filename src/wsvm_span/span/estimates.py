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


@dataclass(frozen=True)
class SpanAnalysis:
    """Everything the span-rule and the span bound of one model are made of.

    Per-SV arrays follow ``support`` (n,); per-in-bound-SV arrays follow ``inbound`` (n*,).

    span2_rule : (n,) S_p^2 without box constraints (inf when undefined)
    rule_errors : (n,) True where a_p S_p^2 - y_p f(x_p) >= 0 (a predicted LOO error)
    lemma1 : (n*,) True where Lambda_p is non-empty
    closed_form_feasible : (n*,) True where the closed-form lambda satisfies the box
    span2_box : (n*,) box-constrained S_p^2; nan where Lambda_p is empty, or where the
        QP was skipped because it provably cannot change S (unless ``all_box_spans``)
    n_sv : SVs (n);  n_inbound : in-bound SVs (n*);  n_bounded : bounded SVs (m)
    n_empty_lambda : in-bound SVs with empty Lambda_p (k);  S : max box-constrained S_p
    D : enclosing-ball diameter;  n_qp : box-constrained QPs solved
    no_inbound : n* = 0 (the span is undefined; every SV is counted as an error)
    ridge : ridge added to K_MM to factor Kt (0 unless singular)
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
    t_span_rule: float
    t_span_bound: float

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
    """Span-rule and span bound of a trained model, with all intermediate quantities.

    K : (l, l) training kernel the model was trained on. D : enclosing-ball diameter of
    the training set (computed here when None; pass it to share it across a grid).
    all_box_spans : solve the box-constrained QP for every in-bound SV whose closed form
    violates the box, even when it cannot change S (for per-SV studies).
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
    n_qp = 0
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
            raise RuntimeError(f"span QP for in-bound SV {M[j]} failed: {res.status}")
    nonempty = lemma1
    n_empty_lambda = int((~nonempty).sum())
    S = float(np.sqrt(best)) if nonempty.any() else 0.0
    weight = np.maximum(D, 1.0 / np.sqrt(model.C[M[nonempty]]))
    span_bound = (S * float(np.sum(weight * a[M[nonempty]])) + n_empty_lambda + B.size) / l
    t_box = time.perf_counter() - t1

    return SpanAnalysis(
        l=l, support=sv, inbound=M, bounded=B, span2_rule=span2, rule_errors=rule_errors,
        lemma1=lemma1, closed_form_feasible=feasible, span2_box=span2_box, S=S, D=float(D),
        n_qp=n_qp, qp_solver=solver, ridge=inverse.ridge if inverse else 0.0,
        span_rule=span_rule, span_bound=float(span_bound),
        t_span_rule=t_closed, t_span_bound=t_closed + t_box,
    )


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
    """Span-rule estimate of the LOO error (Corollary 1): #{SV p: a_p S_p^2 >= y_p f(x_p)} / l.

    method : "closed-form" (one factorization for all SVs, method.md section 4) or "qp"
        (one QP per SV, the original study's formulation; a slow reference).
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
    if inverse is None:
        inverse = bordered_inverse(K[np.ix_(M, M)])
    span2 = unconstrained_span2(model, K, inverse)
    with np.errstate(invalid="ignore"):
        errors = model.alpha[sv] * span2 - model.margins[sv] >= 0
    return span2, errors


#: bounded SVs per block in ``span_rule_from_svs``: each block's kernel is (n* + block)^2, so the
#: block stays small beside the n* x n* factorization it reuses
SPAN_BLOCK_ROWS = 2048


def span_rule_from_svs(model: WeightedSVM, X, gamma: float, *, block_rows: int | None = None) -> float:
    """``span_rule(model, K)`` of an RBF model trained on features X ((l, d)), from kernel blocks of
    its SVs only: the closed form reads K only among the SVs, so l can be far beyond an l x l kernel.

    The bordered matrix of the in-bound SVs is factored once (n* x n* kernel); the bounded SVs go
    through in blocks of ``block_rows`` (default SPAN_BLOCK_ROWS), each as the model restricted to
    (in-bound + block), whose kernel is (n* + block)^2. The count is divided by the full l.
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


def span_bound(model: WeightedSVM, K, *, D: float | None = None, qp_solver: str = "auto") -> float:
    """Span bound of the LOO error for weighted SVM (Theorem 1); can exceed 1."""
    return analyse_spans(model, K, D=D, qp_solver=qp_solver).span_bound


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
    """Theorem 1 for the standard SVM (every C_i = C; standard-svm-span.md):

        ( S max(D, 1/sqrt(C)) sum_{in-bound p} a_p + m ) / l,

    where Lemma 1 always holds (no k term). Equal to :func:`span_bound` on such a model; can exceed 1.
    ``spans``: the model's :func:`analyse_spans` result when already computed (then K, D and qp_solver
    are not used).
    """
    C = standard_C(model)
    spans = _spans_of(model, K, D, qp_solver, spans)
    a_inbound = float(model.alpha[model.inbound].sum())
    return (spans.S * max(spans.D, 1.0 / np.sqrt(C)) * a_inbound + spans.n_bounded) / model.n_train


def span_bound_separable(model: WeightedSVM, K=None, *, D: float | None = None, qp_solver: str = "auto",
                         spans: SpanAnalysis | None = None) -> float:
    """The span bound for separable data (C effectively infinite): S D / (l rho^2), 1/rho^2 = sum_i a_i.

    Only a model without bounded SVs (a_i = C_i) is the hard-margin SVM; for any other a ValueError
    says so. ``spans`` as in :func:`span_bound_standard`.
    """
    if model.bounded.size:
        raise ValueError(
            f"the separable form needs a model without bounded SVs (C effectively infinite); this one has "
            f"{model.bounded.size} SVs with a_i = C_i: use span_bound_standard, or train with a larger C"
        )
    spans = _spans_of(model, K, D, qp_solver, spans)
    return spans.S * spans.D * float(model.alpha.sum()) / model.n_train


def inbound_diameter(model: WeightedSVM, K, *, qp_solver: str = "auto") -> float:
    """D_SV: the diameter of the smallest sphere enclosing the in-bound SVs in feature space (the exact
    enclosing ball of K_MM). Every span S_p of an in-bound SV is at most D_SV. 0 with one in-bound SV;
    nan with none (nothing to enclose).
    """
    M = model.inbound
    if M.size == 0:
        return float("nan")
    K = np.asarray(K, dtype=float)
    if K.shape != (model.n_train, model.n_train):
        raise ValueError(f"K must be the ({model.n_train}, {model.n_train}) training kernel of the model, got {K.shape}")
    return enclosing_ball_diameter(K[np.ix_(M, M)], solver=qp_solver)


def xi_alpha_bound(model: WeightedSVM, K=None, *, R2: float | None = None) -> float:
    """xi-alpha bound: #{p: 2 a_p R^2 + xi_p - 1 >= 0} / l, R^2 = max K - min K."""
    if R2 is None:
        if K is None:
            raise ValueError("xi_alpha_bound needs the training kernel K or R2")
        R2 = kernel_radius2(K)
    return float(np.sum(2.0 * model.alpha * R2 + model.slacks - 1.0 >= 0)) / model.n_train


def sv_count_bound(model: WeightedSVM) -> float:
    """n / l."""
    return model.support.shape[0] / model.n_train
