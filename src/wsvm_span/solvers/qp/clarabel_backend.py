"""Clarabel (open-source interior point): the default QP backend, always available."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .result import QPResult

name = "clarabel"

#: Badly scaled boxes (a_p tiny next to large C_i) can stall the interior point at the tightest
#: tolerance: each solve retries at these looser tolerances before giving up.
RETRY_TOLERANCES = (1e-8, 1e-6)
#: iteration cap per attempt (well-posed span and ball QPs converge in 10-40 iterations)
MAX_ITER = 300


def availability() -> tuple[bool, str]:
    return True, "installed"


def solve(P, q, A_eq, b_eq, lb, ub, G, h, tol) -> QPResult:
    import clarabel

    n = q.shape[0]
    k = A_eq.shape[0]
    # Clarabel: A x + s = b with s in cones; rows: equalities (zero cone), x <= ub, -x <= -lb,
    # G x <= h. Its dual z satisfies P x + q + A'z = 0, so z[:k] are the equality multipliers.
    has_ub = np.isfinite(ub)
    has_lb = np.isfinite(lb)
    eye = sp.identity(n, format="csc")
    A = sp.vstack([sp.csc_matrix(A_eq), eye[has_ub], -eye[has_lb], sp.csc_matrix(G)], format="csc")
    b = np.concatenate([b_eq, ub[has_ub], -lb[has_lb], h])
    cones = [clarabel.ZeroConeT(k)]
    n_ineq = int(has_ub.sum() + has_lb.sum()) + G.shape[0]
    if n_ineq:
        cones.append(clarabel.NonnegativeConeT(n_ineq))
    P_upper = sp.triu(sp.csc_matrix(P), format="csc")
    status = "Unsolved"
    for attempt_tol in (tol, *RETRY_TOLERANCES):
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.max_threads = 1
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = attempt_tol
        settings.max_iter = MAX_ITER
        solution = clarabel.DefaultSolver(P_upper, q, A, b, cones, settings).solve()
        status = str(solution.status).split(".")[-1]
        if status in ("Solved", "AlmostSolved"):
            x = np.asarray(solution.x)
            return QPResult(x, float(0.5 * x @ P @ x + q @ x), "optimal", name, eq_dual=np.asarray(solution.z[:k]))
        if status in ("PrimalInfeasible", "AlmostPrimalInfeasible"):
            return QPResult(None, float("nan"), "infeasible", name)
    return QPResult(None, float("nan"), f"failed:{status}", name)
