"""What an engine is: the small protocol every trainer of the weighted SVM implements.

An engine solves the dual of method.md section 1 and returns a ``WeightedSVM``, from one of two
entry points:
- ``solve(K, y, C, tol)`` on a precomputed training kernel, returning (alpha, b);
  :func:`wsvm_span.engines.fit_svm` turns that into a ``WeightedSVM`` (engines with
  ``capabilities.precomputed_kernel``);
- ``fit_features(X, y, C, gamma, tol, **options)`` from the features and the RBF parameter
  (:func:`wsvm_span.engines.fit_features`): every engine has it, so that a caller switches engines
  by name; the kernel engines build the l x l kernel (:func:`fit_features_by_kernel`), the others
  (``sklearn-rbf``, ``sampling``) never do.
Each engine declares what it can do (:class:`Capabilities`), so that callers and the config schema
can ask the registry instead of hard-coding engine names.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..kernels import rbf_kernel
from ..model import WeightedSVM, make_model

#: LIBSVM's kernel-row cache (MB) for the LIBSVM engines: on a precomputed kernel a row is a copy,
#: not a computation, so the default cache suffices
LIBSVM_CACHE_MB = 200

#: the default stopping tolerance (LIBSVM ``-e``): the estimates read y_p f(x_p) and the in-bound/bounded
#: split from the solution, and LIBSVM's default 1e-3 moves margins by far more than the span terms
DEFAULT_TOL = 1e-7


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports.

    per_instance_weights : any C_i > 0 (False: one weight per class, C+ and C-)
    warm_start : can start from an earlier solution
    solution_path : can follow the exact path of (alpha, b) when the weights change
    precomputed_kernel : trains on a precomputed kernel (``solve``, ``fit_svm``); False: from
        features only (``fit_features``), never holding the l x l kernel
    one_vs_one : trains all k(k-1)/2 machines of a multiclass problem in one call on the whole kernel
        (``solve_one_vs_one``); otherwise ``wsvm_span.multiclass`` trains each machine by ``solve`` on
        its own kernel slice
    """

    per_instance_weights: bool
    warm_start: bool = False
    solution_path: bool = False
    precomputed_kernel: bool = True
    one_vs_one: bool = False


class Engine(Protocol):
    """A trainer of the weighted SVM."""

    #: the name users pass as ``engine=`` and write in the config (``svm.engine``)
    name: str
    #: one line for error messages and ``--help``
    description: str
    capabilities: Capabilities

    def solve(self, K: np.ndarray, y: np.ndarray, C: np.ndarray, tol: float) -> tuple[np.ndarray, float]:
        """Dual solution (alpha (l,), b) for the validated problem (K, y, C) at stopping tolerance tol.
        Only engines with ``capabilities.precomputed_kernel``."""
        ...

    def solve_one_vs_one(self, K: np.ndarray, class_index: np.ndarray, C: np.ndarray,
                         tol: float) -> tuple[np.ndarray, np.ndarray]:
        """Dual solutions of every one-vs-one machine of a multiclass problem: (alpha (n_machines, l), b
        (n_machines,)), machines in LIBSVM's order (0, 1), (0, 2), ..., (1, 2), ...; alpha[m] is zero off
        machine m's two classes, and machine (i, j) labels class i +1. ``class_index`` (l,) holds every
        class position 0..k-1. Only engines with ``capabilities.one_vs_one``."""
        ...

    def fit_features(self, X: np.ndarray, y: np.ndarray, C: np.ndarray, gamma: float, tol: float | None,
                     **options) -> WeightedSVM:
        """The model of the validated problem (X, y, C) with the RBF kernel exp(-gamma ||x - z||^2);
        tol None takes the engine's default."""
        ...


def fit_features_by_kernel(engine: Engine, X, y, C, gamma: float, tol: float | None) -> WeightedSVM:
    """``fit_features`` of a kernel engine: the l x l RBF kernel, then ``engine.solve``. fit_time
    counts both (training from features)."""
    tol = DEFAULT_TOL if tol is None else tol
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    t0 = time.perf_counter()
    K = rbf_kernel(X, None, gamma)
    alpha, b = engine.solve(K, y, C, tol)
    return make_model(K, y, C, alpha, b, engine=engine.name, tol=tol, fit_time=time.perf_counter() - t0)
