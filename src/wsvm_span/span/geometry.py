"""The geometry of spans: S_p^2 of the support vectors of a weighted SVM (method.md sections 3 and 4).

Notation: M = in-bound SVs (0 < a_i < C_i), B = bounded SVs (a_i = C_i). For an SV p,
S_p^2 is the squared distance from phi(x_p) to an affine combination of the in-bound SVs
(other than p):

- without box constraints (span-rule, Corollary 1) it has a closed form from ONE
  inverse of the bordered matrix Kt = [[K_MM, 1], [1', 0]]:
  in-bound p: S_p^2 = 1 / (Kt^-1)_pp;  bounded p: S_p^2 = K_pp - v' Kt^-1 v, v = [K_Mp; 1];
- with the box constraints 0 <= a_i + y_i y_p a_p lambda_i <= C_i (span bound, Theorem 1)
  the closed form is kept when its lambda satisfies them and a QP is solved otherwise;
  the feasible set Lambda_p is empty exactly when Lemma 1 fails.
"""
from __future__ import annotations

import warnings
from functools import cached_property

import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

from .. import _native
from ..model import WeightedSVM
from ..solvers.qp import QPResult, solve_qp

#: smallest reciprocal condition number of K_RR for which its Cholesky inverse is used: the same
#: threshold at which LAPACK's solvers warn that a matrix is singular to working precision
MIN_RCOND = float(np.finfo(float).eps)
#: relative ridges (times max K_ii) tried in turn on K_RR when the bordered matrix is singular or
#: too ill-conditioned to factor after merging coincident points (very wide kernels). A ridge
#: changes S_p^2 by about ridge * (1 + ||lambda||^2); the second, larger one is a last resort.
RIDGES = (0.0, 1e-12, 1e-9)
#: squared feature-space distance (relative to max K_ii) below which two points coincide: far
#: below any real distance of scaled data, above the rounding of K_ii + K_jj - 2 K_ij (~1e-16)
COINCIDENT_RTOL = 1e-12
#: in-bound SVs up to which ``unconstrained_span2`` takes the compiled span: below it numpy's per-call overhead
#: dominates, above it LAPACK's blocked factorization wins (benchmarks/bench_span_small.py, one thread, two
#: runs: 22-24x faster at n* = 5, 5x at 20, 2x at 40, 0.97-1.09x at 64, 0.87-1.03x at 80, 0.6x at 160)
NATIVE_SPAN_MAX_INBOUND = 64
#: Lemma 1's sum is compared with 0 up to this fraction of sum_SV C_i (the C_i themselves are
#: rounded, and a sum that is 0 in exact arithmetic is the legitimate boundary case)
LEMMA1_RTOL = 1e-12
#: sum(ub) = 1 (Lemma 1 with equality: Lambda_p is one point) up to this fraction of sum |ub|
SINGLE_POINT_RTOL = 1e-12


class BorderedInverse:
    """Kt^-1 for the in-bound SVs, with coincident points merged.

    Points with phi(x_i) = phi(x_j) (duplicates: common in splice and image) make K_MM
    exactly singular. They span the same affine hull as one of them, so Kt is built on
    one representative per group of coincident in-bound SVs; an in-bound SV with a twin
    has S_p = 0 exactly (lambda = e_twin).

    Two representations, by how Kt was factored. From a Cholesky factor U of K_RR (U'U = K_RR, the
    common case) it keeps W = U^-1 and forms Kt^-1 only when asked (``inverse``): with u = W W' 1 and
    s = 1'u, Kt^-1 = [[W W' - u u'/s, u/s], [u'/s, -1/s]], so the span-rule's diagonal and the bounded
    SVs' quadratic forms need W alone, which costs half the flops of the full inverse. The
    symmetric-indefinite fallback forms Kt^-1 directly.

    inverse : ((r+1), (r+1)) inverse of [[K_RR + ridge I, 1], [1', 0]], R = representatives
    rep : (r,) positions (in the in-bound list) of the representatives
    rep_index : (n*,) position of each in-bound SV among the representatives, -1 if merged
    twin : (n*,) position of another in-bound SV at the same point, -1 if none
    ridge : ridge added to K_RR (0 unless it was numerically singular without duplicates)
    """

    def __init__(self, rep, rep_index, twin, ridge: float, *, cholesky_inverse=None, inverse=None):
        if (cholesky_inverse is None) == (inverse is None):
            raise ValueError("give exactly one of cholesky_inverse (W = U^-1) and inverse (Kt^-1)")
        self.rep, self.rep_index, self.twin, self.ridge = rep, rep_index, twin, float(ridge)
        self._W = cholesky_inverse
        if inverse is not None:
            self.inverse = inverse  # shadows the cached property below

    @cached_property
    def _border(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(W' 1, u = K_RR^-1 1, s = 1'u) of the Cholesky representation."""
        w1 = self._W.sum(axis=0)
        return w1, self._W @ w1, float(w1 @ w1)

    def diagonal(self) -> np.ndarray:
        """(r,) diagonal of Kt^-1 over the representatives: 1 / S_p^2 of in-bound SV p."""
        if self._W is None:
            return np.diag(self.inverse)[: self.rep.size].copy()
        _, u, s = self._border
        return np.einsum("ij,ij->i", self._W, self._W) - u * u / s

    def quadratic(self, K_Rq) -> np.ndarray:
        """(m,) v' Kt^-1 v for the columns v = [K_Rq[:, j]; 1] (K_Rq: (r, m))."""
        if self._W is None:
            V = np.vstack([K_Rq, np.ones((1, K_Rq.shape[1]))])
            return np.einsum("ij,ij->j", V, self.inverse @ V)
        w1, _, s = self._border
        Z = self._W.T @ K_Rq
        return np.einsum("ij,ij->j", Z, Z) - (w1 @ Z - 1.0) ** 2 / s

    @cached_property
    def inverse(self) -> np.ndarray:
        W = self._W
        n = W.shape[0]
        A, info = lapack.dlauum(W, lower=False)  # W W' in the upper triangle
        if info != 0:
            raise np.linalg.LinAlgError(f"LAPACK dlauum failed (info={info})")
        A = np.triu(A) + np.triu(A, 1).T
        _, u, s = self._border
        out = np.empty((n + 1, n + 1))
        out[:n, :n] = A - np.outer(u, u) / s
        out[:n, n] = out[n, :n] = u / s
        out[n, n] = -1.0 / s
        return out


def coincident_groups(K_MM) -> np.ndarray:
    """Group label of each point; equal labels mean phi(x_i) = phi(x_j). Shape (n,)."""
    K_MM = np.asarray(K_MM, dtype=float)
    n = K_MM.shape[0]
    diag = np.diag(K_MM)
    d2 = diag[:, None] + diag[None, :] - 2.0 * K_MM
    close = d2 <= COINCIDENT_RTOL * float(np.max(diag, initial=1.0))
    np.fill_diagonal(close, False)
    labels = np.arange(n)
    if not close.any():
        return labels
    # Union-find over the (few) coincident pairs.
    def root(x):
        while labels[x] != x:
            labels[x] = labels[labels[x]]
            x = labels[x]
        return x

    for a, b in zip(*np.nonzero(np.triu(close, k=1))):
        ra, rb = root(a), root(b)
        if ra != rb:
            labels[max(ra, rb)] = min(ra, rb)
    return np.array([root(x) for x in range(n)])


def _cholesky_inverse(K_RR) -> np.ndarray | None:
    """W = U^-1 for the Cholesky factor U of K_RR (U'U = K_RR), or None when K_RR is not numerically
    positive definite (then the bordered matrix needs the symmetric-indefinite route).

    A positive definite K_RR (distinct points, RBF kernel) is the common case, and a Cholesky
    factorization with a triangular inverse is several times faster than a symmetric-indefinite solve
    against the identity.
    """
    c, info = lapack.dpotrf(K_RR, lower=False, clean=True)
    if info != 0:
        return None
    rcond, info = lapack.dpocon(c, float(np.abs(K_RR).sum(axis=0).max()))
    if info != 0 or not rcond > MIN_RCOND:
        return None
    W, info = lapack.dtrtri(c, lower=False)
    if info != 0 or not np.isfinite(W).all():
        return None
    return W


def bordered_inverse(K_MM) -> BorderedInverse:
    """Invert the bordered kernel matrix of the in-bound SVs (symmetric indefinite).

    Works on the representatives of coincident groups: a Cholesky factorization of K_RR plus the
    Schur complement of the border when K_RR is numerically positive definite, else LAPACK's
    symmetric-indefinite solver (LDL'), with a tiny ridge on K_RR when it is still numerically
    singular (very wide kernels).
    """
    K_MM = np.asarray(K_MM, dtype=float)
    n_star = K_MM.shape[0]
    groups = coincident_groups(K_MM)
    twin = np.full(n_star, -1)
    if np.array_equal(groups, np.arange(n_star)):  # no coincident points (the common case): every one represents
        rep, rep_index = np.arange(n_star), np.arange(n_star)
        K_RR = K_MM
    else:
        labels, rep, counts = np.unique(groups, return_index=True, return_counts=True)
        rep = np.sort(rep)
        rep_index = np.full(n_star, -1)
        rep_index[rep] = np.arange(rep.size)
        # Iterate over the group LABELS (the union-find roots), not over positions in ``labels``: once one
        # group is merged, the two differ, and every later group would get the wrong members.
        for label in labels[counts > 1]:
            members = np.flatnonzero(groups == label)
            twin[members] = np.roll(members, 1)
        K_RR = K_MM[np.ix_(rep, rep)]
    n = rep.size
    if n:
        W = _cholesky_inverse(K_RR)
        if W is not None:
            return BorderedInverse(rep, rep_index, twin, 0.0, cholesky_inverse=W)
    scale = float(np.max(np.diag(K_RR), initial=1.0))
    for ridge in (r * scale for r in RIDGES):
        Kt = np.empty((n + 1, n + 1))
        Kt[:n, :n] = K_RR
        Kt[:n, :n].flat[:: n + 1] += ridge
        Kt[n, :n] = Kt[:n, n] = 1.0
        Kt[n, n] = 0.0
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sla.LinAlgWarning)
                inv = sla.solve(Kt, np.eye(n + 1), assume_a="sym", check_finite=False)
        except (np.linalg.LinAlgError, sla.LinAlgWarning):
            continue
        if np.isfinite(inv).all():
            return BorderedInverse(rep, rep_index, twin, ridge, inverse=0.5 * (inv + inv.T))
    raise np.linalg.LinAlgError("bordered kernel matrix of the in-bound SVs cannot be factored")


def unconstrained_span2(model: WeightedSVM, K, inverse: BorderedInverse | None = None, *,
                        rows=None) -> np.ndarray:
    """S_p^2 without box constraints for every SV, in the order of ``model.support``.

    inf where the in-bound set offers no affine combination (n* = 0, or p is the only
    in-bound SV). Returns an (n,) array. ``rows``: the model's points as indices into K (a
    one-vs-one machine in the whole training kernel), read in place; None: K is the model's own.
    Only the in-bound block and the in-bound x bounded block of K are read either way.

    Without ``inverse``, a machine of at most NATIVE_SPAN_MAX_INBOUND in-bound SVs takes the compiled span
    (``_native.span2_unconstrained``): the same Cholesky route without numpy's per-call overhead, which is most
    of the time of the small machines of one-vs-one models. Where its K_RR is not numerically positive definite
    it answers None and the route below is taken.
    """
    K = np.asarray(K, dtype=float)
    sv, M = model.support, model.inbound
    s2 = np.full(sv.shape[0], np.inf)
    if M.size == 0:
        return s2
    rows = np.arange(model.alpha.size) if rows is None else np.asarray(rows)
    in_K = rows[M]
    pos = np.searchsorted(sv, M)
    is_inbound = np.zeros(sv.shape[0], dtype=bool)
    is_inbound[pos] = True
    others = np.flatnonzero(~is_inbound)
    if inverse is None and M.size <= NATIVE_SPAN_MAX_INBOUND and K.flags.c_contiguous:
        spans = _native.span2_unconstrained(K, in_K.astype(np.int64, copy=False),
                                            rows[sv[others]].astype(np.int64, copy=False), COINCIDENT_RTOL, MIN_RCOND)
        if spans is not None:  # else K_RR is not numerically positive definite: the general route below
            s2[pos], s2[others] = spans
            return s2
    fac = inverse or bordered_inverse(K[in_K[:, None], in_K])
    R = rows[M[fac.rep]]
    diag = fac.diagonal()[fac.rep_index]  # merged points (rep_index -1) are set below
    with np.errstate(divide="ignore"):
        # (Kt^-1)_pp = 1 / S_p^2 > 0; a non-positive value means no affine hull (n* = 1).
        s2[pos] = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), np.inf)
    s2[pos[fac.twin >= 0]] = 0.0
    if others.size:
        q = rows[sv[others]]
        s2[others] = K[q, q] - fac.quadratic(K[R[:, None], q])
    return np.maximum(s2, 0.0)


def lemma1_holds(model: WeightedSVM) -> np.ndarray:
    """Lemma 1 for every in-bound SV p: (n*,) bool, True where Lambda_p is non-empty.

    sum_{in-bound i != p, y_i = y_p} C_i + y_p sum_{bounded i} y_i C_i >= 0.
    """
    M, B = model.inbound, model.bounded
    y, C = model.y, model.C
    same_class_total = {s: float(C[M][y[M] == s].sum()) for s in (-1.0, 1.0)}
    bounded_signed = float(np.sum(y[B] * C[B]))
    yp = y[M]
    value = np.array([same_class_total[s] for s in yp]) - C[M] + yp * bounded_signed
    scale = float(C[model.support].sum()) if model.support.size else 1.0
    return value >= -LEMMA1_RTOL * scale


def box_limit_rows(model: WeightedSVM, rows) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on lambda over ALL in-bound SVs for the span problems of in-bound SVs ``rows``.

    rows : (q,) positions in ``model.inbound``. Returns (LB, UB), each (q, n*): row t holds
    the bounds from 0 <= a_i + y_i y_p a_p lambda_i <= C_i for p = inbound[rows[t]], and
    lambda_p = -1 fixed (LB = UB = -1) in p's own column.
    """
    M = model.inbound
    rows = np.asarray(rows, dtype=int)
    a, C, y = model.alpha[M], model.C[M], model.y[M]
    same = y[rows][:, None] * y[None, :] > 0
    ap = a[rows][:, None]
    LB = np.where(same, -a[None, :], (a - C)[None, :]) / ap
    UB = np.where(same, (C - a)[None, :], a[None, :]) / ap
    LB[np.arange(rows.size), rows] = UB[np.arange(rows.size), rows] = -1.0
    return LB, UB


def box_limits(model: WeightedSVM, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds on lambda_i, i in M \\ {p}, from 0 <= a_i + y_i y_p a_p lambda_i <= C_i.

    Returns (others, lb, ub): the training indices M \\ {p} and their bounds.
    """
    M = model.inbound
    j = int(np.searchsorted(M, p))
    LB, UB = box_limit_rows(model, [j])
    return np.delete(M, j), np.delete(LB[0], j), np.delete(UB[0], j)


def closed_form_lambda_rows(inverse: BorderedInverse, rows) -> np.ndarray:
    """Minimisers of the unconstrained span problems of in-bound SVs ``rows`` ((q, n*)).

    From the KKT system of min lambda' K lambda s.t. 1'lambda = 0, lambda_p = -1 on the
    representatives: lambda_R = -(column p of Kt^-1)[:r] / (Kt^-1)_pp, 0 on merged
    points; an SV with a twin takes lambda = e_twin (S_p = 0). Row t has -1 at rows[t].
    """
    rows = np.asarray(rows, dtype=int)
    n_star, r = inverse.twin.size, inverse.rep.size
    lam = np.zeros((rows.size, n_star))
    twin = inverse.twin[rows]
    plain = twin < 0
    reps = inverse.rep_index[rows[plain]]
    cols = inverse.inverse[:r, reps]
    lam[np.ix_(np.flatnonzero(plain), inverse.rep)] = (-cols / inverse.inverse[reps, reps]).T
    has_twin = np.flatnonzero(~plain)
    lam[has_twin, twin[~plain]] = 1.0
    lam[np.arange(rows.size), rows] = -1.0
    return lam


def box_span_qp(model: WeightedSVM, K, p: int, solver: str = "auto") -> QPResult:
    """S_p^2 of in-bound SV p by a QP over lambda_i, i in M \\ {p} (the original method).

    minimize K_pp - 2 lambda' K_rp + lambda' K_rr lambda  s.t. sum lambda = 1 and the box
    constraints. The result's objective is S_p^2 (status "infeasible" when Lambda_p is
    empty).
    """
    others, lb, ub = box_limits(model, p)
    if others.size and abs(ub.sum() - 1.0) <= SINGLE_POINT_RTOL * max(1.0, float(np.abs(ub).sum())):
        # Lemma 1 holds with equality: Lambda_p is the single point lambda = ub, which an
        # interior-point solver can only approach; evaluate it directly.
        K = np.asarray(K, dtype=float)
        value = float(K[p, p] - 2.0 * ub @ K[others, p] + ub @ K[np.ix_(others, others)] @ ub)
        return QPResult(ub, max(value, 0.0), "optimal", "closed-form")
    return _affine_distance_qp(K, p, others, lb, ub, solver)


def affine_span_qp(model: WeightedSVM, K, p: int, solver: str = "auto") -> QPResult:
    """Unconstrained S_p^2 of ANY SV p by a QP (reference for the closed form)."""
    M = model.inbound
    return _affine_distance_qp(K, p, M[M != p], None, None, solver)


def _affine_distance_qp(K, p, others, lb, ub, solver) -> QPResult:
    K = np.asarray(K, dtype=float)
    n = others.shape[0]
    if n == 0:
        return QPResult(None, float("nan"), "infeasible", "none")
    K_rr = K[np.ix_(others, others)]
    res = solve_qp(2.0 * K_rr, -2.0 * K[others, p], np.ones((1, n)), [1.0], lb, ub, solver=solver)
    if res.status != "optimal":
        return res
    return QPResult(res.x, max(res.objective + float(K[p, p]), 0.0), "optimal", res.solver)


#: bisection steps of the projection: 64 halvings take the bracket to double-precision resolution
PROJECTION_BISECTIONS = 64


def project_rows_to_box_hyperplane(V, LB, UB, iters: int = PROJECTION_BISECTIONS) -> np.ndarray:
    """Row-wise Euclidean projection of V onto {sum_j x_j = 0, LB <= x <= UB} ((q, n) each).

    x = clip(v - tau, lb, ub), with tau found by bisection (the row sum is monotone in
    tau). Rows whose set is empty (sum LB > 0 or sum UB < 0) must not be passed.
    """
    lo = np.min(V - UB, axis=1) - 1.0
    hi = np.max(V - LB, axis=1) + 1.0
    for _ in range(iters):
        tau = 0.5 * (lo + hi)
        too_big = np.clip(V - tau[:, None], LB, UB).sum(axis=1) > 0.0
        lo = np.where(too_big, tau, lo)
        hi = np.where(too_big, hi, tau)
    return np.clip(V - (0.5 * (lo + hi))[:, None], LB, UB)
