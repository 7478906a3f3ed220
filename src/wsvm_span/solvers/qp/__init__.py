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
    """The requested QP solver cannot run here (e.g. MOSEK without a license); the message says why.

    Examples
    --------
    >>> from wsvm_span.solvers.qp import SolverUnavailableError
    >>> issubclass(SolverUnavailableError, RuntimeError)
    True
    """


def available_solvers() -> dict[str, str]:
    """Every QP backend with why it is or is not usable here.

    Returns
    -------
    dict of str to str
        {backend: "installed", or why not (not installed, no license)}.

    Examples
    --------
    >>> from wsvm_span.solvers.qp import available_solvers
    >>> available_solvers()["clarabel"]
    'installed'
    """
    return {name: backend.availability()[1] for name, backend in BACKENDS.items()}


def qp_solver_name(requested: str = "auto") -> str:
    """Resolve a solver request to the backend that will run.

    Parameters
    ----------
    requested : str, default="auto"
        A name of :data:`SOLVERS`. "auto" gives the first usable backend (MOSEK when a working license is
        present, else Clarabel).

    Returns
    -------
    str
        The backend's name.

    Raises
    ------
    ValueError
        If the name is not one of :data:`SOLVERS`.
    SolverUnavailableError
        If the named backend cannot run here (the message says why, e.g. the license variable to set).

    Examples
    --------
    >>> from wsvm_span.solvers.qp import qp_solver_name
    >>> qp_solver_name("clarabel")
    'clarabel'
    >>> qp_solver_name() in ("mosek", "clarabel")
    True
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
    """Why "auto" did not pick the preferred backend (MOSEK).

    Returns
    -------
    str or None
        The reason (e.g. no license file), or None when it did.

    Examples
    --------
    >>> from wsvm_span.solvers.qp import qp_fallback_reason, qp_solver_name
    >>> (qp_fallback_reason() is None) == (qp_solver_name() == "mosek")
    True
    """
    preferred = next(iter(BACKENDS.values()))
    usable, why = preferred.availability()
    return None if usable else why


def solve_qp(P, q, A_eq, b_eq, lb=None, ub=None, solver: str = "auto", tol: float = DEFAULT_TOL,
             *, G=None, h=None) -> QPResult:
    """Solve the convex QP  minimize 1/2 x' P x + q' x  s.t.  A_eq x = b_eq,  lb <= x <= ub,  G x <= h.

    Parameters
    ----------
    P : array-like of shape (n, n)
        Symmetric positive semidefinite.
    q : array-like of shape (n,)
        Linear term.
    A_eq : array-like of shape (k, n)
        Equality rows.
    b_eq : array-like of shape (k,)
        Their right-hand sides.
    lb, ub : array-like of shape (n,) or None, default=None
        Bounds (+-inf, or None, for free variables).
    solver : str, default="auto"
        A name of :data:`SOLVERS`.
    tol : float, default=1e-10
        Duality-gap and feasibility tolerance.
    G : array-like of shape (r, n) or None, default=None
        Inequality rows G x <= h (with ``h``).
    h : array-like of shape (r,) or None, default=None
        Their right-hand sides.

    Returns
    -------
    QPResult
        ``x``, ``objective``, ``status`` ("optimal", "infeasible" or "failed:<solver status>"), the solver
        that ran and the equality multipliers ``eq_dual``.

    Raises
    ------
    ValueError
        If G and h do not come together or their shapes disagree, or the solver name is unknown.
    SolverUnavailableError
        If the named solver cannot run here.

    Examples
    --------
    >>> from wsvm_span.solvers.qp import solve_qp
    >>> res = solve_qp([[2.0, 0.0], [0.0, 2.0]], [0.0, 0.0], [[1.0, 1.0]], [1.0], lb=[0.0, 0.0],
    ...                solver="clarabel")
    >>> res.status, res.x.round(6).tolist(), round(res.objective, 6)
    ('optimal', [0.5, 0.5], 0.5)
    >>> solve_qp([[2.0]], [0.0], [[1.0]], [2.0], lb=[0.0], ub=[1.0], solver="clarabel").status
    'infeasible'
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
