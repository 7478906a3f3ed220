"""The exact engine of the solution path (solution-path.md): LIBSVM, then an exact re-solve.

Training from scratch starts from scikit-learn's LIBSVM at the given tol, identifies O/M/I from its
alphas, re-solves the margin system exactly on them (repairing an inconsistent identification by a
path in the margin targets: ``active_set.homotopy.polish``, below the engines) and keeps the result
only when it passes the KKT check of the true problem; otherwise LIBSVM's solution is returned with a warning. Models of this engine are what
``wsvm_span.solution_path`` follows exactly: ``leave_one_out(..., method="path")`` and
``kfold_cv_error(..., method="path")`` start from them without a repair.
"""
from __future__ import annotations

import warnings

from ..active_set.homotopy import polish
from ..model import make_model
from .base import Capabilities, fit_features_by_kernel
from .sklearn_libsvm import SklearnLibsvm


class PathEngine:
    name = "path"
    description = ("scikit-learn's LIBSVM re-solved exactly on its identified sets and KKT-checked (the start"
                   " of the exact solution path): class and per-instance weights")
    capabilities = Capabilities(per_instance_weights=True, solution_path=True)

    def __init__(self):
        self._libsvm = SklearnLibsvm()

    def solve(self, K, y, C, tol):
        alpha, b = self._libsvm.solve(K, y, C, tol)
        start = make_model(K, y, C, alpha, b, engine=self._libsvm.name, tol=tol)
        alpha, b, kept_because = polish(start, K)
        if kept_because is not None:
            warnings.warn(f"engine 'path' returns LIBSVM's solution unpolished: {kept_because}",
                          RuntimeWarning, stacklevel=2)
        return alpha, b

    def fit_features(self, X, y, C, gamma, tol):
        return fit_features_by_kernel(self, X, y, C, gamma, tol)
