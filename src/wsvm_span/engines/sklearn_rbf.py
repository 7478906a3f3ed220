"""scikit-learn's LIBSVM evaluating the RBF kernel itself (``SVC(kernel="rbf")``): training from
features without the l x l kernel, the full-LIBSVM baseline for large l (issue 12).

LIBSVM computes kernel rows on demand and keeps the recent ones in a row cache of ``cache_mb``;
on a precomputed kernel a row is only a copy, here it costs d flops per entry, so the cache is
set large. The training decision values are computed in kernel blocks against the SVs
(``model.make_model_from_features``).
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.svm import SVC

from ..model import make_model_from_features
from .base import DEFAULT_TOL, Capabilities

#: LIBSVM's kernel row cache (MB) when it evaluates the kernel itself: a cached row saves l kernel
#: evaluations; 1 GiB holds ~2,000 rows of l = 2^16 (float32), small beside the data
DEFAULT_CACHE_MB = 1024


def libsvm_rbf(X, y, C, gamma: float, tol: float, cache_mb: float) -> tuple[np.ndarray, float]:
    """(alpha, b) from scikit-learn's LIBSVM with its own RBF kernel on the validated (X, y, C)."""
    svc = SVC(C=1.0, kernel="rbf", gamma=gamma, tol=tol, shrinking=True, cache_size=cache_mb)
    svc.fit(X, y, sample_weight=C)  # C_i = C * sample_weight_i = C_i
    alpha = np.zeros(y.shape[0])
    # dual_coef_ holds y_i a_i with classes_ = [-1, +1] and f > 0 meaning +1.
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, float(svc.intercept_[0])


class SklearnRbf:
    name = "sklearn-rbf"
    description = ("scikit-learn's LIBSVM computing the RBF kernel itself (row cache, no l x l kernel): "
                   "class and per-instance weights; features only")
    capabilities = Capabilities(per_instance_weights=True, precomputed_kernel=False)

    def fit_features(self, X, y, C, gamma, tol, *, cache_mb: float = DEFAULT_CACHE_MB):
        tol = DEFAULT_TOL if tol is None else tol
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol!r}")
        if not cache_mb > 0:
            raise ValueError(f"cache_mb must be positive, got {cache_mb!r}")
        t0 = time.perf_counter()
        alpha, b = libsvm_rbf(X, y, C, gamma, tol, cache_mb)
        return make_model_from_features(X, y, C, alpha, b, gamma=gamma, engine=self.name, tol=tol,
                                        fit_time=time.perf_counter() - t0)
