"""MOSEK (commercial interior point, the original study's solver): used when a license is present."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from .result import QPResult

name = "mosek"
LICENSE_ENV = "MOSEKLM_LICENSE_FILE"


def license_path() -> Path | None:
    """The MOSEK license file MOSEK itself would use, if it exists."""
    env = os.environ.get(LICENSE_ENV)
    candidates = [Path(p) for p in env.split(os.pathsep)] if env else []
    candidates.append(Path.home() / "mosek" / "mosek.lic")
    for path in candidates:
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=1)
def availability() -> tuple[bool, str]:
    """(usable, why): MOSEK needs the package AND a license it can check out."""
    try:
        import mosek
    except ImportError as exc:  # pragma: no cover - mosek is a declared dependency
        return False, f"the mosek package is not installed ({exc})"
    if license_path() is None:
        return False, f"no MOSEK license file: set {LICENSE_ENV} to its path or put it at ~/mosek/mosek.lic"
    try:
        with mosek.Env() as env:
            env.checkoutlicense(mosek.feature.pts)
    except mosek.Error as exc:
        return False, f"MOSEK license check failed ({exc}); check {LICENSE_ENV}"
    return True, "licensed"


def solve(P, q, A_eq, b_eq, lb, ub, G, h, tol) -> QPResult:  # pragma: no cover - needs a license
    import mosek

    n = q.shape[0]
    k = A_eq.shape[0]
    with mosek.Env() as env, env.Task() as task:
        task.appendvars(n)
        task.appendcons(k + G.shape[0])
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
        for i in range(G.shape[0]):
            nz = np.flatnonzero(G[i])
            task.putarow(k + i, nz.tolist(), G[i, nz].tolist())
            task.putconbound(k + i, mosek.boundkey.up, 0.0, float(h[i]))
        task.putobjsense(mosek.objsense.minimize)
        task.optimize()
        prosta = task.getprosta(mosek.soltype.itr)
        solsta = task.getsolsta(mosek.soltype.itr)
        if solsta == mosek.solsta.optimal:
            x = np.array(task.getxx(mosek.soltype.itr))
            # MOSEK's duals y satisfy P x + q - A'y - s_l + s_u = 0 (its Lagrangian subtracts
            # y'(Ax - b)), so the multipliers of solve_qp's convention are nu = -y.
            nu = -np.array(task.gety(mosek.soltype.itr))[:k]
            return QPResult(x, float(0.5 * x @ P @ x + q @ x), "optimal", name, eq_dual=nu)
        if prosta in (mosek.prosta.prim_infeas, mosek.prosta.prim_and_dual_infeas) or \
                solsta == mosek.solsta.prim_infeas_cer:
            return QPResult(None, float("nan"), "infeasible", name)
        return QPResult(None, float("nan"), f"failed:{solsta}", name)
