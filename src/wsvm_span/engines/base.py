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
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Protocol

import numpy as np

from ..kernels import rbf_kernel
from ..model import WeightedSVM, make_model

#: LIBSVM's kernel-row cache (MB) for the LIBSVM engines: on a precomputed kernel a row is a copy,
#: not a computation, so the default cache suffices
LIBSVM_CACHE_MB = 200

#: the default stopping tolerance (LIBSVM ``-e``): the estimates read y_p f(x_p) and the in-bound/bounded
#: split from the solution, and LIBSVM's default 1e-3 moves margins by far more than the span terms
DEFAULT_TOL = 1e-7


class StepLimitWarning(RuntimeWarning):
    """An engine stopped at its step limit before its tolerance: the solution is feasible but not optimal to
    tol (a degenerate problem: duplicate points with opposite labels, a numerically singular kernel). Its own
    category, so that a caller counts these (``svm_plus.learn_weights``) or turns them into errors with a
    warnings filter, without matching messages."""


@contextmanager
def counting_step_limits() -> Iterator[list[str]]:
    """Collect the messages of the :class:`StepLimitWarning` raised inside (every one, not once per place),
    instead of showing them; pass every other warning on as raised."""
    messages: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StepLimitWarning)
        try:
            yield messages
        finally:
            others = [w for w in caught if not issubclass(w.category, StepLimitWarning)]
            messages.extend(str(w.message) for w in caught if issubclass(w.category, StepLimitWarning))
    for w in others:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports: the registry and ``fit_svm`` ask these instead of engine names.

    Parameters
    ----------
    per_instance_weights : bool
        Any C_i > 0 (False: one weight per class, C+ and C-).
    warm_start : bool, default=False
        ``solve`` takes ``alpha0=``, a start from a neighbouring solution (a vector, or an
        ``engines.warm_start.Start`` with its gradient), and ``solve_warm`` returns the gradient at the
        solution too, from which the next start's gradient is built (``engines.warm_start``).
    solution_path : bool, default=False
        Can follow the exact path of (alpha, b) when the weights change.
    precomputed_kernel : bool, default=True
        Trains on a precomputed kernel (``solve``, ``fit_svm``); False: from features only
        (``fit_features``), never holding the l x l kernel.
    kernel_rows : bool, default=False
        ``solve`` takes ``rows=``: the problem on K[rows][:, rows], read in place (CV folds and
        leave-one-out retrainings need no copy of their kernel).
    rows_on_demand : bool, default=False
        ``solve`` takes a ``kernels.RBFRows`` as K and computes each kernel row before its first read, so a
        search hands it a kernel whose unread rows are never computed.
    one_vs_one : bool, default=False
        ``solve_one_vs_one`` trains all k(k-1)/2 machines of a multiclass problem in one call on the whole
        kernel; otherwise ``wsvm_span.multiclass`` trains each machine by ``solve`` on its rows.

    Examples
    --------
    >>> from wsvm_span.engines import get_engine
    >>> get_engine("libsvm").capabilities
    Capabilities(per_instance_weights=False, warm_start=False, solution_path=False, precomputed_kernel=True, kernel_rows=False, rows_on_demand=False, one_vs_one=False)
    """

    per_instance_weights: bool
    warm_start: bool = False
    solution_path: bool = False
    precomputed_kernel: bool = True
    kernel_rows: bool = False
    rows_on_demand: bool = False
    one_vs_one: bool = False


class Engine(Protocol):
    """A trainer of the weighted SVM: the protocol every engine module implements.

    An engine has a ``name`` (what users pass as ``engine=`` and write in the config's ``svm.engine``), a
    one-line ``description`` (for error messages and ``--help``) and its :class:`Capabilities`. It trains
    through ``solve(K, y, C, tol) -> (alpha, b)`` on a precomputed kernel (engines with
    ``capabilities.precomputed_kernel``), and through ``fit_features(X, y, C, gamma, tol, **options) ->
    WeightedSVM`` from the features with the RBF kernel (every engine). A new engine is a module with such a
    class and one entry in the registry (``wsvm_span.engines._ENGINES``); the config schema's enum of
    ``svm.engine`` lists the registry's kernel engines (a test checks the schema file against them).

    Examples
    --------
    >>> from wsvm_span.engines import FEATURE_ENGINE_NAMES, get_engine
    >>> FEATURE_ENGINE_NAMES[:3]
    ('auto', 'sklearn', 'libsvm')
    >>> engine = get_engine("sampling")
    >>> engine.name, engine.capabilities.precomputed_kernel
    ('sampling', False)
    """

    #: the name users pass as ``engine=`` and write in the config (``svm.engine``)
    name: str
    #: one line for error messages and ``--help``
    description: str
    capabilities: Capabilities

    def solve(self, K: np.ndarray, y: np.ndarray, C: np.ndarray, tol: float) -> tuple[np.ndarray, float]:
        """Dual solution of a validated problem on a precomputed kernel.

        Only engines with ``capabilities.precomputed_kernel``; those with ``warm_start`` also take
        ``alpha0=``, those with ``kernel_rows`` also ``rows=``.

        Parameters
        ----------
        K : ndarray of shape (l, l)
            The training kernel.
        y : ndarray of shape (l,)
            Labels in {-1, +1}.
        C : ndarray of shape (l,)
            Instance weights.
        tol : float
            Stopping tolerance.

        Returns
        -------
        alpha : ndarray of shape (l,)
            Dual variables.
        b : float
            The bias.
        """
        ...

    def solve_one_vs_one(self, K: np.ndarray, class_index: np.ndarray, C: np.ndarray,
                         tol: float) -> tuple[np.ndarray, np.ndarray]:
        """Dual solutions of every one-vs-one machine of a multiclass problem, in one call.

        Only engines with ``capabilities.one_vs_one``.

        Parameters
        ----------
        K : ndarray of shape (l, l)
            The training kernel.
        class_index : ndarray of int, shape (l,)
            Class position 0..k-1 of every point (every class present).
        C : ndarray of shape (l,)
            Instance weights.
        tol : float
            Stopping tolerance.

        Returns
        -------
        alpha : ndarray of shape (k(k-1)/2, l)
            Dual variables of each machine, in LIBSVM's order (0, 1), (0, 2), ..., (1, 2), ...; zero off the
            machine's two classes. Machine (i, j) labels class i +1.
        b : ndarray of shape (k(k-1)/2,)
            The biases.
        """
        ...

    def fit_features(self, X: np.ndarray, y: np.ndarray, C: np.ndarray, gamma: float, tol: float | None,
                     **options) -> WeightedSVM:
        """The model of a validated problem with the RBF kernel exp(-gamma ||x - z||^2).

        Parameters
        ----------
        X : ndarray of shape (l, d)
            Features.
        y : ndarray of shape (l,)
            Labels in {-1, +1}.
        C : ndarray of shape (l,)
            Instance weights.
        gamma : float
            RBF parameter.
        tol : float or None
            Stopping tolerance; None takes the engine's default.
        **options
            Engine-specific options.

        Returns
        -------
        WeightedSVM
            The trained model.
        """
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
