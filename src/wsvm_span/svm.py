"""Weighted (fuzzy) SVM trained by LIBSVM on a precomputed kernel (method.md section 1).

Two LIBSVM routes are available:

- ``"libsvm"``: the LIBSVM authors' binding (``libsvm-official``); class weights only
  (``-c 1 -w1 C+ -w-1 C-``).
- ``"sklearn"``: scikit-learn's ``SVC``, a LIBSVM fork whose ``sample_weight`` gives
  per-instance C_i; the only LIBSVM route for individual weights.

Both return the same ``WeightedSVM``: alpha (dual variables, >= 0), b, and the index
sets of method.md (support vectors, in-bound SVs 0 < a_i < C_i, bounded SVs a_i = C_i).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from libsvm import svmutil
from sklearn.svm import SVC

from .validation import check_problem
from .weights import is_class_constant

ENGINES = ("auto", "sklearn", "libsvm")

#: relative tolerance for "a_i = C_i" and "a_i = 0". LIBSVM clips alphas to their
#: bounds exactly, so this only absorbs the rounding of C_i itself.
BOUND_RTOL = 1e-9


@dataclass(frozen=True)
class WeightedSVM:
    """A trained weighted SVM.

    Attributes
    ----------
    alpha : (l,) dual variables, 0 for non-support vectors
    b : bias of f(x) = sum_i alpha_i y_i K(x_i, x) + b
    y : (l,) training labels in {-1, +1}
    C : (l,) instance weights C_i
    decision_train : (l,) f(x_i) on the training points, as computed from the solution
    support, inbound, bounded : sorted index arrays (in-bound: 0 < a_i < C_i; bounded: a_i = C_i)
    engine : which LIBSVM route trained it
    tol : the LIBSVM stopping tolerance used
    fit_time : seconds spent in LIBSVM (the kernel is precomputed and not counted)
    """

    alpha: np.ndarray
    b: float
    y: np.ndarray
    C: np.ndarray
    decision_train: np.ndarray
    support: np.ndarray
    inbound: np.ndarray
    bounded: np.ndarray
    engine: str
    tol: float
    fit_time: float = field(default=0.0, compare=False)

    @property
    def n_train(self) -> int:
        return int(self.y.shape[0])

    @property
    def coef(self) -> np.ndarray:
        """(l,) y_i alpha_i."""
        return self.y * self.alpha

    @property
    def margins(self) -> np.ndarray:
        """(l,) y_i f(x_i) on the training set."""
        return self.y * self.decision_train

    @property
    def slacks(self) -> np.ndarray:
        """(l,) xi_i = max(0, 1 - y_i f(x_i))."""
        return np.maximum(0.0, 1.0 - self.margins)

    def decision_function(self, K_rows) -> np.ndarray:
        """f(x) for new points. K_rows: (m, l) kernel block between them and the training set."""
        K_rows = np.asarray(K_rows, dtype=float)
        if K_rows.ndim != 2 or K_rows.shape[1] != self.n_train:
            raise ValueError(
                f"K_rows must have shape (m, {self.n_train}) (new points x training points), "
                f"got {K_rows.shape}"
            )
        # coef is zero off the support; a full row-major GEMV beats gathering SV columns
        # (which copies an m x n block: ~1 GB for skin_nonskin's 245k test points).
        return K_rows @ self.coef + self.b


def fit_svm(K, y, C, engine: str = "auto", tol: float = 1e-7, *, check_input: bool = True) -> WeightedSVM:
    """Train a weighted SVM on a precomputed training kernel.

    Parameters
    ----------
    K : (l, l) symmetric kernel matrix of the training set
    y : (l,) labels in {-1, +1}, both classes present
    C : scalar or (l,) positive instance weights
    engine : "auto" (scikit-learn's LIBSVM), "sklearn" or "libsvm" (libsvm-official,
        class weights only). Both are LIBSVM and give the same solution to tolerance;
        "auto" takes scikit-learn's route because it handles every weighting and hands
        the kernel to LIBSVM without rebuilding it as LIBSVM node lists on every call
        (see benchmarks/bench_core.py for the measured ratio)
    check_input : validate K, y, C (shapes, labels, finiteness, symmetry, C_i > 0).
        Internal callers that train on slices of an already validated problem (CV
        folds, leave-one-out, a grid over one kernel) skip it: on a 12k x 12k kernel the
        checks cost more than a LIBSVM run.
    tol : LIBSVM stopping tolerance (``-e``); keep it tight, the estimators read the
        computed y_p f(x_p) and the in-bound/bounded split from the solution
    """
    K, y, C = check_problem(K, y, C, check_input=check_input)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    engine = resolve_engine(engine, y, C)
    t0 = time.perf_counter()
    if engine == "libsvm":
        alpha, b = _fit_libsvm(K, y, C, tol)
    else:
        alpha, b = _fit_sklearn(K, y, C, tol)
    fit_time = time.perf_counter() - t0
    return make_model(K, y, C, alpha, b, engine=engine, tol=tol, fit_time=fit_time)


def resolve_engine(engine: str, y, C) -> str:
    """The LIBSVM route that can train these weights ("libsvm" or "sklearn")."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "auto":
        return "sklearn"
    if engine == "libsvm" and not is_class_constant(y, C):
        raise ValueError(
            "engine='libsvm' (libsvm-official) supports class weights only; these weights vary"
            " within a class: use engine='sklearn' or 'auto'"
        )
    return engine


def make_model(K, y, C, alpha, b, *, engine: str, tol: float, fit_time: float = 0.0) -> WeightedSVM:
    """Build a ``WeightedSVM`` from a dual solution: classify SVs and compute f on the training set."""
    alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, C)
    support = np.flatnonzero(alpha > BOUND_RTOL * C)
    alpha[np.setdiff1d(np.arange(alpha.shape[0]), support)] = 0.0
    at_bound = alpha[support] >= C[support] * (1.0 - BOUND_RTOL)
    alpha[support[at_bound]] = C[support[at_bound]]
    bounded = support[at_bound]
    inbound = support[~at_bound]
    # K is symmetric: f = K[:, S] c_S = c_S K[S, :], and row slices copy contiguously.
    decision = (y[support] * alpha[support]) @ K[support] + b
    return WeightedSVM(
        alpha=alpha, b=float(b), y=y, C=C, decision_train=decision, support=support,
        inbound=inbound, bounded=bounded, engine=engine, tol=float(tol), fit_time=fit_time,
    )


def _fit_sklearn(K, y, C, tol):
    # C_i = C * sample_weight_i in scikit-learn's LIBSVM fork: C = 1 gives C_i exactly.
    svc = SVC(C=1.0, kernel="precomputed", tol=tol, shrinking=True, cache_size=200)
    svc.fit(K, y, sample_weight=C)
    alpha = np.zeros(K.shape[0])
    # dual_coef_ holds y_i a_i with classes_ = [-1, +1] and f > 0 meaning +1.
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, float(svc.intercept_[0])


def _fit_libsvm(K, y, C, tol):
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
        f"-s 0 -t 4 -c 1 -w1 {c_plus!r} -w-1 {c_minus!r} -e {tol!r} -h 1 -m 200 -q"
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
