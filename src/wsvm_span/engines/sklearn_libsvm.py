"""scikit-learn's LIBSVM (``SVC`` on a precomputed kernel): every weighting, the default engine.

scikit-learn's LIBSVM fork scales C per instance by ``sample_weight`` (C_i = C * w_i), so it is the
LIBSVM route for individual weights (Experiment 2). It is also the faster route for class weights:
the kernel is handed to LIBSVM as one array instead of LIBSVM node lists on every call
(benchmarks/bench_core.py measures the ratio).

For a multiclass problem it trains LIBSVM's one-vs-one machines in ONE call on the whole kernel
(``solve_one_vs_one``): LIBSVM points each machine at rows of that kernel, where training the machines
one by one would copy a kernel slice per machine (3x the time on 5,000 MNIST points, 10 classes).
"""
from __future__ import annotations

import numpy as np
from sklearn import config_context
from sklearn.svm import SVC

from .base import LIBSVM_CACHE_MB, Capabilities, fit_features_by_kernel


class SklearnLibsvm:
    name = "sklearn"
    description = "scikit-learn's LIBSVM (SVC, precomputed kernel): class and per-instance weights"
    capabilities = Capabilities(per_instance_weights=True, one_vs_one=True)

    def solve(self, K, y, C, tol):
        svc = _fit(K, y, C, tol)
        alpha = np.zeros(K.shape[0])
        # dual_coef_ holds y_i a_i with classes_ = [-1, +1] and f > 0 meaning +1.
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        return alpha, float(svc.intercept_[0])

    def solve_one_vs_one(self, K, class_index, C, tol):
        svc = _fit(K, class_index, C, tol)
        k = svc.classes_.size
        # LIBSVM's layout (sklearn's SVC docs, "multi-class classification"): the SVs are grouped by
        # class; the coefficients y_p a_p of class i's SVs in machine (i, j) are in row j - 1 of
        # dual_coef_, those of class j's SVs in row i; machine (i, j) labels class i +1.
        start = np.concatenate([[0], np.cumsum(svc.n_support_)])
        alpha, b = np.zeros((k * (k - 1) // 2, K.shape[0])), np.empty(k * (k - 1) // 2)
        m = 0
        for i in range(k):
            for j in range(i + 1, k):
                for row, cls in ((j - 1, i), (i, j)):
                    part = slice(start[cls], start[cls + 1])
                    alpha[m, svc.support_[part]] = np.abs(svc.dual_coef_[row, part])
                # intercept_ is LIBSVM's -rho, except for two classes, where scikit-learn flips its sign
                # (and dual_coef_'s) so that f > 0 means classes_[1]
                b[m] = svc.intercept_[m] if k > 2 else -svc.intercept_[0]
                m += 1
        return alpha, b

    def fit_features(self, X, y, C, gamma, tol):
        return fit_features_by_kernel(self, X, y, C, gamma, tol)


def _fit(K, y, C, tol) -> SVC:
    # C_i = C * sample_weight_i in scikit-learn's LIBSVM fork: C = 1 gives C_i exactly.
    svc = SVC(C=1.0, kernel="precomputed", tol=tol, shrinking=True, cache_size=LIBSVM_CACHE_MB)
    # The problem reaching an engine is validated (fit_svm's check_input) or a slice of a validated
    # one: scikit-learn's own finiteness scan of K would repeat that check on every fit, and on a
    # 12k x 12k kernel it costs 40% of the fit (benchmarks/bench_search.py's MNIST notes).
    with config_context(assume_finite=True):
        svc.fit(K, y, sample_weight=C)
    return svc
