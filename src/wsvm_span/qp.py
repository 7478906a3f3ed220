"""The one QP-solver switch: MOSEK when licensed, Clarabel otherwise (method.md section 5).

Every QP of the project has the same shape,

    minimize 1/2 x' P x + q' x   s.t.  A_eq x = b_eq,  lb <= x <= ub,

with a dense symmetric P of modest size (the in-bound SVs of one model, or a working
set of the enclosing-ball problem). ``solve_qp`` returns the minimiser and a status
that distinguishes "optimal" from "infeasible" (the span bound needs the latter to
agree with Lemma 1).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

SOLVERS = ("auto", "clarabel", "mosek")
LICENSE_ENV = "MOSEKLM_LICENSE_FILE"


class SolverUnavailableError(RuntimeError):
    """The requested QP solver cannot run here (e.g. MOSEK without a license)."""


@dataclass(frozen=True)
class QPResult:
    x: np.ndarray | None
    objective: float  # 1/2 x'Px + q'x, nan unless status == "optimal"
    status: str  # "optimal", "infeasible" or "failed:<solver status>"
    solver: str


def mosek_license_path() -> Path | None:
    """The MOSEK license file MOSEK itself would use, if it exists."""
    env = os.environ.get(LICENSE_ENV)
    candidates = [Path(p) for p in env.split(os.pathsep)] if env else []
    candidates.append(Path.home() / "mosek" / "mosek.lic")
    for path in candidates:
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=1)
def _mosek_usable() -> tuple[bool, str]:
    try:
        import mosek
    except ImportError as exc:  # pragma: no cover - mosek is a declared dependency
        return False, f"the mosek package is not installed ({exc})"
    if mosek_license_path() is None:
        return False, (
            f"no MOSEK license file: set {LICENSE_ENV} to its path or put it at ~/mosek/mosek.lic"
        )
    try:
        with mosek.Env() as env:
            env.checkoutlicense(mosek.feature.pts)
    except mosek.Error as exc:
        return False, f"MOSEK license check failed ({exc}); check {LICENSE_ENV}"
    return True, "licensed"


def qp_solver_name(requested: str = "auto") -> str:
    """Resolve a solver request to the solver that will run: "mosek" or "clarabel".

    "auto" gives MOSEK when a working license is present and Clarabel otherwise;
    "mosek" without a license raises ``SolverUnavailableError`` naming the license variable.
    """
    if requested not in SOLVERS:
        raise ValueError(f"qp_solver must be one of {SOLVERS}, got {requested!r}")
    if requested == "clarabel":
        return "clarabel"
    usable, why = _mosek_usable()
    if requested == "mosek" and not usable:
        raise SolverUnavailableError(f"qp_solver='mosek' was requested but {why}")
    return "mosek" if usable else "clarabel"


def qp_fallback_reason() -> str | None:
    """Why "auto" fell back to Clarabel (None when MOSEK is used)."""
    usable, why = _mosek_usable()
    return None if usable else why


def solve_qp(P, q, A_eq, b_eq, lb=None, ub=None, solver: str = "auto", tol: float = 1e-10) -> QPResult:
    """Solve the convex QP above.

    P : (n, n) symmetric PSD, q : (n,), A_eq : (k, n), b_eq : (k,),
    lb / ub : (n,) bounds (+-inf or None for free variables).
    """
    P = np.asarray(P, dtype=float)
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    A_eq = np.atleast_2d(np.asarray(A_eq, dtype=float))
    b_eq = np.atleast_1d(np.asarray(b_eq, dtype=float))
    lb = np.full(n, -np.inf) if lb is None else np.asarray(lb, dtype=float)
    ub = np.full(n, np.inf) if ub is None else np.asarray(ub, dtype=float)
    name = qp_solver_name(solver)
    if name == "mosek":
        return _solve_mosek(P, q, A_eq, b_eq, lb, ub)
    return _solve_clarabel(P, q, A_eq, b_eq, lb, ub, tol)


def _solve_clarabel(P, q, A_eq, b_eq, lb, ub, tol) -> QPResult:
    import clarabel

    n = q.shape[0]
    # Clarabel: A x + s = b with s in cones; rows: equalities (zero cone), x <= ub, -x <= -lb.
    has_ub = np.isfinite(ub)
    has_lb = np.isfinite(lb)
    eye = sp.identity(n, format="csc")
    A = sp.vstack([sp.csc_matrix(A_eq), eye[has_ub], -eye[has_lb]], format="csc")
    b = np.concatenate([b_eq, ub[has_ub], -lb[has_lb]])
    cones = [clarabel.ZeroConeT(A_eq.shape[0])]
    n_ineq = int(has_ub.sum() + has_lb.sum())
    if n_ineq:
        cones.append(clarabel.NonnegativeConeT(n_ineq))
    P_upper = sp.triu(sp.csc_matrix(P), format="csc")
    status = "Unsolved"
    # Badly scaled boxes (a_p tiny next to large C_i) can stall the interior point at the
    # tightest tolerance: retry looser before giving up.
    for attempt_tol in (tol, 1e-8, 1e-6):
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.max_threads = 1
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = attempt_tol
        settings.max_iter = 300
        solution = clarabel.DefaultSolver(P_upper, q, A, b, cones, settings).solve()
        status = str(solution.status).split(".")[-1]
        if status in ("Solved", "AlmostSolved"):
            x = np.asarray(solution.x)
            return QPResult(x, float(0.5 * x @ P @ x + q @ x), "optimal", "clarabel")
        if status in ("PrimalInfeasible", "AlmostPrimalInfeasible"):
            return QPResult(None, float("nan"), "infeasible", "clarabel")
    return QPResult(None, float("nan"), f"failed:{status}", "clarabel")


def _solve_mosek(P, q, A_eq, b_eq, lb, ub) -> QPResult:  # pragma: no cover - needs a license
    import mosek

    n = q.shape[0]
    with mosek.Env() as env, env.Task() as task:
        task.appendvars(n)
        task.appendcons(A_eq.shape[0])
        for j in range(n):
            lo, hi = lb[j], ub[j]
            if np.isfinite(lo) and np.isfinite(hi):
                key = mosek.boundkey.ra
            elif np.isfinite(lo):
                key = mosek.boundkey.lo
            elif np.isfinite(hi):
                key = mosek.boundkey.up
            else:
                key = mosek.boundkey.fr
            task.putvarbound(j, key, float(lo) if np.isfinite(lo) else 0.0,
                             float(hi) if np.isfinite(hi) else 0.0)
        task.putclist(list(range(n)), q.tolist())
        rows, cols = np.tril_indices(n)
        task.putqobj(rows.tolist(), cols.tolist(), P[rows, cols].tolist())
        for i in range(A_eq.shape[0]):
            nz = np.flatnonzero(A_eq[i])
            task.putarow(i, nz.tolist(), A_eq[i, nz].tolist())
            task.putconbound(i, mosek.boundkey.fx, float(b_eq[i]), float(b_eq[i]))
        task.putobjsense(mosek.objsense.minimize)
        task.optimize()
        prosta = task.getprosta(mosek.soltype.itr)
        solsta = task.getsolsta(mosek.soltype.itr)
        if solsta == mosek.solsta.optimal:
            x = np.array(task.getxx(mosek.soltype.itr))
            return QPResult(x, float(0.5 * x @ P @ x + q @ x), "optimal", "mosek")
        if prosta in (mosek.prosta.prim_infeas, mosek.prosta.prim_and_dual_infeas) or \
                solsta == mosek.solsta.prim_infeas_cer:
            return QPResult(None, float("nan"), "infeasible", "mosek")
        return QPResult(None, float("nan"), f"failed:{solsta}", "mosek")
