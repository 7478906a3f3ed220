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
from dataclasses import dataclass

import numpy as np

from .. import _native
from .base import LIBSVM_CACHE_MB, Capabilities, fit_features_by_kernel
from .warm_start import Start, feasible_start

__all__ = ["Smo", "SmoReport", "max_iterations", "smo_solve"]


def max_iterations(l: int) -> int:
    """The step limit: LIBSVM's, max(10^7, 100 l); reaching it means a degenerate problem, not a slow one."""
    return max(10_000_000, 100 * l)


@dataclass(frozen=True)
class SmoReport:
    """How a solve ended. f(x) = sum_i a_i y_i K(x_i, x) - rho; gap = m(a) - M(a) over all variables at the
    end (<= tol when converged); objective = 1/2 a'Qa - e'a of the returned alpha. The work in kernel entries
    read (deterministic, for benchmarks on a busy machine): step_work by the steps, gradient_work by
    gradients computed from the support vectors (the start's, and the shrunk variables' on their return)."""

    rho: float
    n_iter: int
    converged: bool
    gap: float
    objective: float
    step_work: int
    gradient_work: int


def smo_solve(K, y, C, tol: float, *, alpha0=None, rows=None, cache_mb: float = LIBSVM_CACHE_MB):
    """(alpha, b, grad, report) of the problem (K, y, C) at stopping tolerance tol; the inputs are not
    validated beyond shapes (``fit_svm`` validates a problem; ``rows`` must index K). grad is the gradient
    Qa - e at the solution (y_t (f(x_t) - b) - 1).

    alpha0 : a start: a ``warm_start.Start`` (alpha feasible, gradient when known), or any finite (l,)
        vector (made feasible by ``feasible_start``); None: zero
    rows : (l,) int indices: the problem is K[rows][:, rows] (K stays whole; y, C, alpha0 are the
        subproblem's), None: K itself
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
    K = np.ascontiguousarray(K, dtype=np.float64)
    idx = None if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    grad = np.empty_like(alpha)
    report = SmoReport(*_native.solve(K, idx, y, C, alpha, grad0, grad, float(tol), True, max_iterations(y.shape[0]),
                                   float(cache_mb)))
    return alpha, -report.rho, grad, report


class Smo:
    name = "smo"
    description = ("this project's SMO (compiled, precomputed kernel): class and per-instance weights, starts from"
                   " a neighbouring solution (alpha0), trains on rows of a larger kernel without copying them")
    capabilities = Capabilities(per_instance_weights=True, warm_start=True, kernel_rows=True)

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
                          "opposite labels, an indefinite kernel)", RuntimeWarning, stacklevel=3)
        return alpha, b, grad

    def fit_features(self, X, y, C, gamma, tol):
        return fit_features_by_kernel(self, X, y, C, gamma, tol)
