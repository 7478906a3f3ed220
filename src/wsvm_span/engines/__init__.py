"""The engine registry: every trainer of the weighted SVM, one module each, and one dispatch point.

``fit_svm(K, y, C, engine=...)`` validates the problem, asks the registry for the engine, checks
that the engine can express the weights (its :class:`~.base.Capabilities`) and builds the
``WeightedSVM``. ``fit_features(X, y, C, gamma=..., engine=...)`` trains from the features with the
RBF kernel instead, with every engine (the kernel engines build the l x l kernel; ``sklearn-rbf`` and
``sampling`` never do). A new engine is a new module with a class following :class:`~.base.Engine`,
plus one entry in ``_ENGINES`` below; its name then appears in :data:`FEATURE_ENGINE_NAMES`, and in
:data:`ENGINE_NAMES` (which feeds the config schema's enum of ``svm.engine``) when it trains on a
precomputed kernel.
"""
from __future__ import annotations

import time

from ..model import WeightedSVM, make_model
from ..utils.validation import check_features_problem, check_problem
from ..weights import is_class_constant
from .base import DEFAULT_TOL, Capabilities, Engine, StepLimitWarning, counting_step_limits
from .official_libsvm import OfficialLibsvm
from .path import PathEngine
from .random_sampling import Sampling
from .sklearn_libsvm import SklearnLibsvm
from .sklearn_rbf import SklearnRbf
from .smo import Smo

__all__ = [
    "AUTO", "Capabilities", "DEFAULT_TOL", "ENGINE_NAMES", "Engine", "FEATURE_ENGINE_NAMES", "engine_for",
    "StepLimitWarning", "counting_step_limits", "fit_features", "fit_svm", "get_engine",
]

_ENGINES: dict[str, Engine] = {
    e.name: e for e in (SklearnLibsvm(), OfficialLibsvm(), Smo(), PathEngine(), SklearnRbf(), Sampling())
}

#: "auto" picks scikit-learn's LIBSVM: it handles every weighting. The project's SMO ("smo") is faster and as
#: exact (docs/engines.md) and is what the study's configs and SpanSearchCV name; "auto" keeps its meaning so
#: that a config or a call written with "auto" gives the numbers it gave when it was written
AUTO = "auto"
_AUTO_CHOICE = "sklearn"

#: every name ``fit_svm``'s ``engine=`` accepts ("auto" first): the engines on a precomputed kernel
ENGINE_NAMES: tuple[str, ...] = (AUTO, *(n for n, e in _ENGINES.items() if e.capabilities.precomputed_kernel))
#: every name ``fit_features``'s ``engine=`` accepts ("auto" first): all engines
FEATURE_ENGINE_NAMES: tuple[str, ...] = (AUTO, *_ENGINES)


def get_engine(name: str) -> Engine:
    """The engine registered under a name.

    Parameters
    ----------
    name : str
        A name of :data:`FEATURE_ENGINE_NAMES`; "auto" resolves to the default engine (scikit-learn's
        LIBSVM).

    Returns
    -------
    Engine
        The engine.

    Raises
    ------
    ValueError
        If no engine has that name (the message lists every engine with its description).

    Examples
    --------
    >>> from wsvm_span.engines import get_engine
    >>> get_engine("auto").name
    'sklearn'
    """
    if name == AUTO:
        name = _AUTO_CHOICE
    try:
        return _ENGINES[name]
    except KeyError:
        lines = "; ".join(f"{n!r}: {e.description}" for n, e in _ENGINES.items())
        raise ValueError(f"unknown engine {name!r}; available: 'auto' (= {_AUTO_CHOICE!r}); {lines}") from None


def engine_for(name: str, y, C, *, precomputed_kernel: bool = True) -> Engine:
    """The engine ``name``, checked to be able to train the weights C on labels y.

    Parameters
    ----------
    name : str
        A name of :data:`FEATURE_ENGINE_NAMES`.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : float or array-like of shape (l,)
        Instance weights.
    precomputed_kernel : bool, default=True
        The caller trains on a precomputed kernel (False: from features).

    Returns
    -------
    Engine
        The engine.

    Raises
    ------
    ValueError
        If the engine is unknown, trains from features only while ``precomputed_kernel`` is True, or supports
        class weights only while C varies within a class (the message names the engines that can).

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.engines import engine_for
    >>> y = np.array([1.0, 1.0, -1.0])
    >>> engine_for("libsvm", y, np.array([2.0, 2.0, 1.0])).name
    'libsvm'
    >>> engine_for("libsvm", y, np.array([2.0, 3.0, 1.0]))
    Traceback (most recent call last):
    ...
    ValueError: engine='libsvm' supports class weights only and these weights vary within a class; use one of ['sklearn', 'smo', 'path'] or 'auto'
    """
    engine = get_engine(name)
    usable = {n: e for n, e in _ENGINES.items() if e.capabilities.precomputed_kernel or not precomputed_kernel}
    if engine.name not in usable:
        raise ValueError(
            f"engine={engine.name!r} trains from features only (it never forms the l x l kernel): call "
            f"wsvm_span.fit_features(X, y, C, gamma=..., engine={engine.name!r}), or use one of "
            f"{list(usable)} on a precomputed kernel"
        )
    if not engine.capabilities.per_instance_weights and not is_class_constant(y, C):
        able = [n for n, e in usable.items() if e.capabilities.per_instance_weights]
        raise ValueError(
            f"engine={engine.name!r} supports class weights only and these weights vary within a class;"
            f" use one of {able} or 'auto'"
        )
    return engine


def fit_svm(K, y, C, engine: str = AUTO, tol: float = DEFAULT_TOL, *, check_input: bool = True,
            alpha0=None) -> WeightedSVM:
    """Train a weighted SVM on a precomputed training kernel.

    Parameters
    ----------
    K : ndarray of shape (l, l)
        Symmetric kernel matrix of the training set.
    y : ndarray of shape (l,)
        Labels in {-1, +1}, both classes present.
    C : float or ndarray of shape (l,)
        Positive instance weights C_i (a scalar: the same C for every point).
    engine : str, default="auto"
        A name of :data:`ENGINE_NAMES`; "auto" is scikit-learn's LIBSVM. "sklearn", "smo" and "path"
        take per-instance weights, "libsvm" class weights only.
    tol : float, default=1e-7
        The engine's stopping tolerance (LIBSVM ``-e``). Keep it tight: the estimators read the computed
        y_p f(x_p) and the in-bound/bounded split from the solution.
    check_input : bool, default=True
        Validate K, y, C (shapes, labels, finiteness, symmetry, C_i > 0). Internal callers that train on
        slices of an already validated problem (CV folds, leave-one-out, a grid over one kernel) skip it:
        on a 12k x 12k kernel the checks cost more than a LIBSVM run.
    alpha0 : ndarray of shape (l,) or warm_start.Start, optional
        A start for the dual, e.g. a neighbouring model's alpha (engines with ``capabilities.warm_start``:
        "smo"), made feasible first (``engines.warm_start.feasible_start``) and refused when it holds NaN
        or inf; or an ``engines.warm_start.Start`` (built from a solved neighbour, with the gradient
        there). The optimum reached is the one a cold start reaches (to tol).

    Returns
    -------
    WeightedSVM
        The trained model; it remembers its engine, which the estimates that retrain (K-fold CV, exact
        LOO) use too.

    Raises
    ------
    ValueError
        If the inputs are invalid (the message says what to fix), ``tol`` is not positive, the engine
        is unknown, trains from features only, or cannot express weights that vary within a class; or
        ``alpha0`` is given to an engine that cannot start from it, or holds NaN or inf.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> model.engine, model.support.size, model.inbound.size, model.bounded.size
    ('sklearn', 22, 7, 15)
    """
    K, y, C = check_problem(K, y, C, check_input=check_input)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    solver = engine_for(engine, y, C)
    options = {}
    if alpha0 is not None:
        if not solver.capabilities.warm_start:
            able = [n for n, e in _ENGINES.items() if e.capabilities.warm_start]
            raise ValueError(f"engine={solver.name!r} cannot start from alpha0; engines that can: {able}")
        options["alpha0"] = alpha0
    t0 = time.perf_counter()
    expansion = None
    if solver.capabilities.warm_start:
        # its gradient G at the solution gives f on the training points without a kernel pass: h = y (G + 1)
        alpha, b, grad = solver.solve_warm(K, y, C, tol, **options)
        expansion = y * (grad + 1.0)
    else:
        alpha, b = solver.solve(K, y, C, tol, **options)
    fit_time = time.perf_counter() - t0
    return make_model(K, y, C, alpha, b, engine=solver.name, tol=tol, fit_time=fit_time, expansion=expansion)


def fit_features(X, y, C, *, gamma: float, engine: str = AUTO, tol: float | None = None, **options) -> WeightedSVM:
    """Train a weighted SVM with the RBF kernel exp(-gamma ||x - z||^2) from the features, with any engine.

    Parameters
    ----------
    X : ndarray of shape (l, d)
        Training features.
    y : ndarray of shape (l,)
        Labels in {-1, +1}, both classes present.
    C : float or ndarray of shape (l,)
        Positive instance weights C_i.
    gamma : float
        RBF parameter.
    engine : str, default="auto"
        A name of :data:`FEATURE_ENGINE_NAMES`. "sklearn" and "libsvm" build the l x l kernel and give
        exactly ``fit_svm(rbf_kernel(X, None, gamma), ...)``; "sklearn-rbf" is scikit-learn's LIBSVM
        evaluating the RBF itself (option ``cache_mb``); "sampling" is ``engines.random_sampling.fit_sampling``
        (its options; the ``SamplingRecord`` is dropped).
    tol : float or None, default=None
        The engine's tolerance (LIBSVM ``-e``; for "sampling" the KKT certificate's); None: its default.
    **options
        Options of the engine ("sklearn-rbf": ``cache_mb``; "sampling": those of ``fit_sampling``).

    Returns
    -------
    WeightedSVM
        The trained model. Its ``fit_time`` counts everything from the features (for the kernel
        engines, the kernel too).

    Raises
    ------
    ValueError
        If the inputs are invalid, ``gamma`` is not positive, or the engine is unknown or cannot express
        the weights.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> model = ws.fit_features(X, y, 1.0, gamma=0.5, engine="sklearn-rbf")
    >>> ws.span_rule_from_svs(model, X, gamma=0.5)
    0.175
    """
    X, y, C, gamma = check_features_problem(X, y, C, gamma)
    return engine_for(engine, y, C, precomputed_kernel=False).fit_features(X, y, C, gamma, tol, **options)
