"""This project's SMO solver (``csrc/smo.c``): exact, and it starts from a neighbouring solution.

The same method as LIBSVM, implemented here from the papers: second-order working-set selection (Fan, Chen
and Lin, JMLR 2005), shrinking (Chang and Lin, ACM TIST 2011, 5.1) and LIBSVM's stopping rule, the
maximal violating pair's gap <= tol, so that its models and LIBSVM's at the same tol are equally exact.
What LIBSVM's bindings do not offer:

- ``alpha0``: a start from any dual vector, made feasible by :func:`~.warm_start.feasible_start`. From a
  neighbouring grid point's model, or from the full-data model for a CV fold or a leave-one-out retraining,
  SMO needs a fraction of the steps (``benchmarks/bench_smo.py``);
- ``rows``: the problem on the rows and columns ``rows`` of a larger kernel, read in place, so that CV folds
  and leave-one-out retrainings need no copy of their kernel;
- the GIL is released while it runs, so folds or grid points can train on several cores at once.

It reads the precomputed kernel in double precision (LIBSVM caches it as float), keeps kernel rows over the
active set in a per-thread cache, and keeps no G_bar (see ``csrc/smo.c``).
"""
from __future__ import annotations

import warnings
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from .. import _native
from ..kernels import RBFRows
from ..model import BOUND_RTOL
from .base import LIBSVM_CACHE_MB, Capabilities, StepLimitWarning, fit_features_by_kernel
from .warm_start import Start, feasible_start

__all__ = ["Smo", "SmoReport", "max_iterations", "smo_solve"]


def max_iterations(l: int) -> int:
    """The step limit: LIBSVM's, max(10^7, 100 l); reaching it means a degenerate problem, not a slow one."""
    return max(10_000_000, 100 * l)


@dataclass(frozen=True)
class SmoReport:
    """How a solve ended, and the work it did.

    Parameters
    ----------
    rho : float
        f(x) = sum_i a_i y_i K(x_i, x) - rho.
    n_iter : int
        Steps (pairs of alphas moved).
    converged : bool
        The gap reached tol (False: stopped at ``max_iterations``).
    gap : float
        m(a) - M(a), the maximal violating pair's gap over all variables at the end (<= tol when converged).
    objective : float
        1/2 a'Qa - e'a at the returned alpha.
    step_work : int
        Kernel entries read by the steps (the active set's size summed over the steps): deterministic, for
        benchmarks on a busy machine.
    gradient_work : int
        Kernel entries read to compute gradients from alphas (the start's, when not given; the shrunk
        variables' on their return).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span.engines.smo import smo_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> alpha, b, grad, report = smo_solve(ws.rbf_kernel(X, gamma=0.5), y, np.ones(30), 1e-7)
    >>> report.converged and report.gap <= 1e-7
    True
    """

    rho: float
    n_iter: int
    converged: bool
    gap: float
    objective: float
    step_work: int
    gradient_work: int


def smo_solve(K, y, C, tol: float, *, alpha0=None, rows=None, cache_mb: float = LIBSVM_CACHE_MB):
    """Solve the weighted C-SVM dual by SMO, from zero or from a start, on K or on rows of it.

    The inputs are not validated beyond shapes and index ranges (``fit_svm`` validates a problem).

    Parameters
    ----------
    K : ndarray of shape (L, L) or kernels.RBFRows
        The kernel (C-contiguous float64 is used in place; anything else is converted). An ``RBFRows`` is
        read on demand: the solver has each row computed before it reads it (in place, or in its row cache).
    y : ndarray of shape (l,)
        Labels in {-1, +1}.
    C : ndarray of shape (l,)
        Upper bounds C_i > 0.
    tol : float
        The stopping tolerance: the maximal violating pair's gap (LIBSVM's ``-e``).
    alpha0 : ndarray of shape (l,) or warm_start.Start, optional
        A start: any finite vector (made feasible by ``feasible_start``) or a ``Start`` (feasible, with the
        gradient when known); None: zero.
    rows : ndarray of int, shape (l,), optional
        The problem is K[rows][:, rows], read in place (y, C, alpha0 are the subproblem's); None: K itself.
    cache_mb : float, default=200
        Kernel rows over the active set, per thread (kept between calls).

    Returns
    -------
    alpha : ndarray of shape (l,)
        The solution.
    b : float
        The bias of f(x) = sum_i a_i y_i K(x_i, x) + b.
    grad : ndarray of shape (l,)
        The gradient Qa - e at the solution: y_t (f(x_t) - b) - 1.
    report : SmoReport
        How it ended.

    Raises
    ------
    ValueError
        If the shapes disagree, rows leaves K, or alpha0 holds NaN or inf.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span.engines.smo import smo_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> alpha, b, grad, report = smo_solve(K, y, np.ones(30), 1e-7)
    >>> again = smo_solve(K, y, np.ones(30), 1e-7, alpha0=alpha)[3]
    >>> again.n_iter  # the optimum is its own start
    0
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    grad0 = None
    if alpha0 is None:
        alpha = np.zeros(y.shape[0])
    elif isinstance(alpha0, Start):
        alpha = np.array(alpha0.alpha, dtype=np.float64)
        grad0 = None if alpha0.grad is None else np.ascontiguousarray(alpha0.grad, dtype=np.float64)
    else:
        alpha = feasible_start(alpha0, y, C)
    source = None
    if isinstance(K, RBFRows):
        # rows on demand: in place (K is its buffer) or from a row cache (no K at all)
        source, K = K, K.array
        if not source.in_place:
            # the solver's active-set slots are a second cache of kernel rows: no larger than the row cache
            cache_mb = min(cache_mb, source.cache_mb)
    if K is not None:
        K = np.ascontiguousarray(K, dtype=np.float64)
        if source is not None and K is not source.array:
            raise ValueError("an RBFRows kernel must hold a C-contiguous float64 array")
    idx = None if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    grad = np.empty_like(alpha)
    # a row cache computes the rows the solver misses in blocks of its problem's rows (RBFRows.reading)
    with source.reading(idx) if source is not None else nullcontext():
        report = SmoReport(*_native.solve(K, idx, y, C, alpha, grad0, grad, float(tol), BOUND_RTOL, True,
                                          max_iterations(y.shape[0]), float(cache_mb), source))
    return alpha, -report.rho, grad, report


class Smo:
    name = "smo"
    description = ("this project's SMO (compiled, precomputed kernel): class and per-instance weights, starts from"
                   " a neighbouring solution (alpha0), trains on rows of a larger kernel without copying them")
    capabilities = Capabilities(per_instance_weights=True, warm_start=True, kernel_rows=True,
                                rows_on_demand=True)

    def solve(self, K, y, C, tol, *, alpha0=None, rows=None):
        """(alpha, b); see :meth:`solve_warm`."""
        alpha, b, _ = self.solve_warm(K, y, C, tol, alpha0=alpha0, rows=rows)
        return alpha, b

    def solve_warm(self, K, y, C, tol, *, alpha0=None, rows=None):
        """(alpha, b, grad): :func:`smo_solve`, with a warning when the step limit stopped it."""
        alpha, b, grad, report = smo_solve(K, y, C, tol, alpha0=alpha0, rows=rows)
        if not report.converged:
            warnings.warn(f"engine 'smo' stopped at its step limit ({report.n_iter} steps) with the gap "
                          f"{report.gap:.3g} > tol {tol:g}: the problem is degenerate (duplicate points with "
                          "opposite labels, an indefinite kernel)", StepLimitWarning, stacklevel=3)
        return alpha, b, grad

    def fit_features(self, X, y, C, gamma, tol):
        return fit_features_by_kernel(self, X, y, C, gamma, tol)
