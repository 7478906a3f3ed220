"""Helpers (no tests): the box-constrained span S_p^2 of method.md section 3, written here from the model's
(alpha, C, y) and the kernel alone, and solved by a general QP solver (Clarabel, called directly), as the
oracle of the library's spans (``wsvm_span.span``); nothing here calls the library's span code.

    S_p^2 = min || phi(x_p) - sum_{i in M, i != p} lambda_i phi(x_i) ||^2
            s.t. sum_i lambda_i = 1,  0 <= a_i + y_i y_p a_p lambda_i <= C_i  (in-bound i != p),

M the in-bound SVs (0 < a_i < C_i). Lambda_p is empty exactly when Lemma 1 fails:
sum_{i in M, i != p, y_i = y_p} C_i + y_p sum_{bounded i} y_i C_i < 0.
"""

from __future__ import annotations

import numpy as np

#: the solver's tolerances: far below the 1e-6 relative agreement the tests ask for
QP_TOL = 1e-10


def box(alpha, C, y, inbound, p):
    """(others, lb, ub): the in-bound SVs other than p and the limits of their lambda_i, solved here from
    0 <= a_i + y_i y_p a_p lambda_i <= C_i: with s = y_i y_p a_p, lambda_i in [-a_i/s, (C_i - a_i)/s] for
    s > 0 and [(C_i - a_i)/s, -a_i/s] for s < 0."""
    others = np.array([i for i in inbound if i != p], dtype=int)
    s = y[others] * y[p] * alpha[p]
    low, high = -alpha[others] / s, (C[others] - alpha[others]) / s
    return others, np.minimum(low, high), np.maximum(low, high)


def lemma1(alpha, C, y, inbound, bounded, p) -> bool:
    same = sum(C[i] for i in inbound if i != p and y[i] == y[p])
    return bool(same + y[p] * sum(y[i] * C[i] for i in bounded) >= -1e-12 * float(np.sum(C)))


def box_span2(K, alpha, C, y, inbound, p) -> tuple[str, float]:
    """("optimal", S_p^2) or ("infeasible", nan), by Clarabel on the QP written above."""
    import clarabel
    import scipy.sparse as sp

    K = np.asarray(K, dtype=float)
    others, lb, ub = box(alpha, C, y, inbound, p)
    n = others.size
    if n == 0:
        return "infeasible", float("nan")
    if abs(ub.sum() - 1.0) <= 1e-12 * max(1.0, float(np.abs(ub).sum())):
        # sum lambda = 1 only at the upper corner: Lambda_p is that one point
        lam = ub
        return "optimal", float(K[p, p] - 2 * lam @ K[others, p] + lam @ K[np.ix_(others, others)] @ lam)
    P = sp.csc_matrix(np.triu(2.0 * K[np.ix_(others, others)]))
    q = -2.0 * K[others, p]
    A = sp.csc_matrix(np.vstack([np.ones((1, n)), np.eye(n), -np.eye(n)]))
    b = np.concatenate([[1.0], ub, -lb])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = QP_TOL
    settings.max_iter = 500
    solution = clarabel.DefaultSolver(P, q, A, b, [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(2 * n)],
                                      settings).solve()
    status = str(solution.status)
    if "Infeasible" in status:
        return "infeasible", float("nan")
    assert status in ("Solved", "AlmostSolved"), status
    return "optimal", max(float(solution.obj_val) + float(K[p, p]), 0.0)


def affine_span2(K, inbound, p) -> float:
    """S_p^2 without the box (Corollary 1): min || phi(x_p) - sum lambda_i phi(x_i) ||^2 over the in-bound SVs
    i != p with sum lambda_i = 1, from the stationarity system [[2 K_OO, 1], [1', 0]] [lambda; nu] = [2 K_Op; 1]
    (least squares: coincident points make it singular, any solution gives the distance); inf with no
    in-bound SV other than p."""
    K = np.asarray(K, dtype=float)
    others = np.array([i for i in inbound if i != p], dtype=int)
    if others.size == 0:
        return float("inf")
    n = others.size
    A = np.block([[2 * K[np.ix_(others, others)], np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    lam = np.linalg.lstsq(A, np.concatenate([2 * K[others, p], [1.0]]), rcond=None)[0][:n]
    return max(float(K[p, p] - 2 * lam @ K[others, p] + lam @ K[np.ix_(others, others)] @ lam), 0.0)


def theorem1(K, alpha, C, y, inbound, bounded, D) -> float:
    """Theorem 1 assembled from the spans above: (S sum_p max(D, 1/sqrt(C_p)) a_p + k + m) / l over the
    in-bound SVs whose Lambda_p is non-empty (k: those whose Lambda_p is empty; m: bounded SVs)."""
    ok = [p for p in inbound if lemma1(alpha, C, y, inbound, bounded, p)]
    spans = [box_span2(K, alpha, C, y, inbound, p)[1] for p in ok]
    S = float(np.sqrt(max(spans))) if ok else 0.0
    total = sum(max(D, 1.0 / np.sqrt(C[p])) * alpha[p] for p in ok)
    return (S * total + (len(inbound) - len(ok)) + len(bounded)) / len(y)
