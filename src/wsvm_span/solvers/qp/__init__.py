"""The one QP-solver switch: MOSEK when licensed, Clarabel otherwise (method.md section 5).

Every QP of the project has the same shape,

    minimize 1/2 x' P x + q' x   s.t.  A_eq x = b_eq,  lb <= x <= ub  (,  G x <= h),

with a dense symmetric P of modest size (the in-bound SVs of one model, a working set
of the enclosing-ball problem, the SVM+ dual). ``solve_qp`` returns the minimiser, a
status that distinguishes "optimal" from "infeasible" (the span bound needs the latter
to agree with Lemma 1) and the multipliers of the equality constraints (the SVM+ dual
reads its two biases from them).

One module per backend (``clarabel_backend``, ``mosek_backend``), each with ``name``,
``availability() -> (usable, why)`` and ``solve(...) -> QPResult``; one registry
(:data:`BACKENDS`, preferred first) and one dispatch point (:func:`solve_qp`).
"""
from __future__ import annotations

import numpy as np

from . import clarabel_backend, mosek_backend
from .mosek_backend import LICENSE_ENV
from .result import QPResult

__all__ = ["BACKENDS", "LICENSE_ENV", "QPResult", "SOLVERS", "SolverUnavailableError", "available_solvers",
           "qp_fallback_reason", "qp_solver_name", "solve_qp"]

#: backends by name, in the order "auto" prefers them
BACKENDS = {b.name: b for b in (mosek_backend, clarabel_backend)}
#: every name ``qp_solver=`` accepts; feeds the config schema's enum of ``svm.qp_solver``
SOLVERS: tuple[str, ...] = ("auto", *sorted(BACKENDS))

#: default duality-gap / feasibility tolerance: the span QPs' objectives are squared distances
#: compared with closed forms to ~1e-10, so the solver must be at least that accurate
DEFAULT_TOL = 1e-10


class SolverUnavailableError(RuntimeError):
    """The requested QP solver cannot run here (e.g. MOSEK without a license)."""


def available_solvers() -> dict[str, str]:
    """{backend: why it is or is not usable here}."""
    return {name: backend.availability()[1] for name, backend in BACKENDS.items()}


def qp_solver_name(requested: str = "auto") -> str:
    """Resolve a solver request to the backend that will run.

    "auto" gives the first usable backend (MOSEK when a working license is present, else
    Clarabel); naming an unusable backend raises ``SolverUnavailableError`` saying why.
    """
    if requested not in SOLVERS:
        raise ValueError(f"qp_solver must be one of {SOLVERS}, got {requested!r}")
    if requested != "auto":
        usable, why = BACKENDS[requested].availability()
        if not usable:
            raise SolverUnavailableError(f"qp_solver={requested!r} was requested but {why}")
        return requested
    return next(name for name, backend in BACKENDS.items() if backend.availability()[0])


def qp_fallback_reason() -> str | None:
    """Why "auto" did not pick the preferred backend (None when it did)."""
    preferred = next(iter(BACKENDS.values()))
    usable, why = preferred.availability()
    return None if usable else why


def solve_qp(P, q, A_eq, b_eq, lb=None, ub=None, solver: str = "auto", tol: float = DEFAULT_TOL,
             *, G=None, h=None) -> QPResult:
    """Solve the convex QP above.

    P : (n, n) symmetric PSD, q : (n,), A_eq : (k, n), b_eq : (k,),
    lb / ub : (n,) bounds (+-inf or None for free variables),
    G : (r, n) and h : (r,) general inequality rows G x <= h (None for none).
    """
    P = np.asarray(P, dtype=float)
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    A_eq = np.atleast_2d(np.asarray(A_eq, dtype=float))
    b_eq = np.atleast_1d(np.asarray(b_eq, dtype=float))
    lb = np.full(n, -np.inf) if lb is None else np.asarray(lb, dtype=float)
    ub = np.full(n, np.inf) if ub is None else np.asarray(ub, dtype=float)
    if (G is None) != (h is None):
        raise ValueError("G and h come together (G x <= h): pass both or neither")
    G = np.zeros((0, n)) if G is None else np.atleast_2d(np.asarray(G, dtype=float))
    h = np.zeros(0) if h is None else np.atleast_1d(np.asarray(h, dtype=float))
    if G.shape != (h.shape[0], n):
        raise ValueError(f"G must have shape ({h.shape[0]}, {n}) to match h and x, got {G.shape}")
    return BACKENDS[qp_solver_name(solver)].solve(P, q, A_eq, b_eq, lb, ub, G, h, tol)
