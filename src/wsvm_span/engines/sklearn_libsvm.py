"""scikit-learn's LIBSVM (``SVC`` on a precomputed kernel): every weighting, the default engine.

scikit-learn's LIBSVM fork scales C per instance by ``sample_weight`` (C_i = C * w_i), so it is the
LIBSVM route for individual weights (Experiment 2). It is also the faster route for class weights:
the kernel is handed to LIBSVM as one array instead of LIBSVM node lists on every call
(benchmarks/bench_core.py measures the ratio).
"""
from __future__ import annotations

import numpy as np
from sklearn import config_context
from sklearn.svm import SVC

from .base import LIBSVM_CACHE_MB, Capabilities, fit_features_by_kernel


class SklearnLibsvm:
    name = "sklearn"
    description = "scikit-learn's LIBSVM (SVC, precomputed kernel): class and per-instance weights"
    capabilities = Capabilities(per_instance_weights=True)

    def solve(self, K, y, C, tol):
        # C_i = C * sample_weight_i in scikit-learn's LIBSVM fork: C = 1 gives C_i exactly.
        svc = SVC(C=1.0, kernel="precomputed", tol=tol, shrinking=True, cache_size=LIBSVM_CACHE_MB)
        # The problem reaching an engine is validated (fit_svm's check_input) or a slice of a validated
        # one: scikit-learn's own finiteness scan of K would repeat that check on every fit, and on a
        # 12k x 12k kernel it costs 40% of the fit (benchmarks/bench_search.py's MNIST notes).
        with config_context(assume_finite=True):
            svc.fit(K, y, sample_weight=C)
        alpha = np.zeros(K.shape[0])
        # dual_coef_ holds y_i a_i with classes_ = [-1, +1] and f > 0 meaning +1.
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        return alpha, float(svc.intercept_[0])

    def fit_features(self, X, y, C, gamma, tol):
        return fit_features_by_kernel(self, X, y, C, gamma, tol)
