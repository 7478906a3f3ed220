"""The LIBSVM authors' binding (``libsvm-official``): class weights only (``-c 1 -w1 C+ -w-1 C-``).

Kept as an independent second LIBSVM route: the tests check that it gives the same alpha and b as
scikit-learn's fork. It is slower on a precomputed kernel because the kernel is rebuilt as LIBSVM
node lists on every call.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from libsvm import svmutil

from .base import LIBSVM_CACHE_MB, Capabilities, fit_features_by_kernel


class OfficialLibsvm:
    name = "libsvm"
    description = "the LIBSVM authors' binding (libsvm-official, precomputed kernel): class weights only"
    capabilities = Capabilities(per_instance_weights=False)

    def solve(self, K, y, C, tol):
        l = K.shape[0]
        # LIBSVM's precomputed kernel reads row i as [0:serial, 1:K_i1, ..., l:K_il] by
        # POSITION, so zero kernel values must stay explicit: build the CSR arrays by hand
        # (scipy would drop them from a dense matrix).
        data = np.empty((l, l + 1))
        data[:, 0] = np.arange(1, l + 1)
        data[:, 1:] = K
        indices = np.tile(np.arange(l + 1, dtype=np.int32), l)
        indptr = np.arange(0, l * (l + 1) + 1, l + 1, dtype=np.int64)
        X = sp.csr_matrix((data.ravel(), indices, indptr), shape=(l, l + 1))
        prob = svmutil.svm_problem(y, X, isKernel=True)
        c_plus = float(C[y > 0][0])
        c_minus = float(C[y < 0][0])
        param = svmutil.svm_parameter(
            f"-s 0 -t 4 -c 1 -w1 {c_plus!r} -w-1 {c_minus!r} -e {tol!r} -h 1 -m {LIBSVM_CACHE_MB} -q"
        )
        m = svmutil.svm_train(prob, param)
        # sv_coef has the sign of the FIRST label LIBSVM saw, rho = -b for that orientation.
        sign = 1.0 if m.get_labels()[0] == 1 else -1.0
        idx = np.asarray(m.get_sv_indices(), dtype=int) - 1
        coef = sign * np.array([c[0] for c in m.get_sv_coef()])
        alpha = np.zeros(l)
        alpha[idx] = coef * y[idx]
        b = -sign * m.rho[0]
        return alpha, float(b)

    def fit_features(self, X, y, C, gamma, tol):
        return fit_features_by_kernel(self, X, y, C, gamma, tol)
