"""The engine registry: every trainer of the weighted SVM, one module each, and one dispatch point.

``fit_svm(K, y, C, engine=...)`` validates the problem, asks the registry for the engine, checks
that the engine can express the weights (its :class:`~.base.Capabilities`) and builds the
``WeightedSVM``. A new engine is a new module with a class following :class:`~.base.Engine`, plus
one entry in ``_ENGINES`` below; its name then appears in :data:`ENGINE_NAMES`, which feeds the
config schema's enum of ``svm.engine``.
"""
from __future__ import annotations

import time

from ..model import WeightedSVM, make_model
from ..utils.validation import check_problem
from ..weights import is_class_constant
from .base import Capabilities, Engine
from .official_libsvm import OfficialLibsvm
from .path import PathEngine
from .sklearn_libsvm import SklearnLibsvm

__all__ = ["AUTO", "Capabilities", "DEFAULT_TOL", "ENGINE_NAMES", "Engine", "engine_for", "fit_svm", "get_engine"]

_ENGINES: dict[str, Engine] = {e.name: e for e in (SklearnLibsvm(), OfficialLibsvm(), PathEngine())}

#: "auto" picks scikit-learn's LIBSVM: it handles every weighting and is the faster route
AUTO = "auto"
_AUTO_CHOICE = "sklearn"

#: the default stopping tolerance (LIBSVM ``-e``): the estimates read y_p f(x_p) and the in-bound/bounded
#: split from the solution, and LIBSVM's default 1e-3 moves margins by far more than the span terms
DEFAULT_TOL = 1e-7

#: every name ``engine=`` accepts ("auto" first)
ENGINE_NAMES: tuple[str, ...] = (AUTO, *_ENGINES)


def get_engine(name: str) -> Engine:
    """The engine registered under ``name`` ("auto" resolves to the default engine)."""
    if name == AUTO:
        name = _AUTO_CHOICE
    try:
        return _ENGINES[name]
    except KeyError:
        lines = "; ".join(f"{n!r}: {e.description}" for n, e in _ENGINES.items())
        raise ValueError(f"unknown engine {name!r}; available: 'auto' (= {_AUTO_CHOICE!r}); {lines}") from None


def engine_for(name: str, y, C) -> Engine:
    """The engine ``name``, checked to be able to train the weights C on labels y."""
    engine = get_engine(name)
    if not engine.capabilities.per_instance_weights and not is_class_constant(y, C):
        able = [n for n, e in _ENGINES.items() if e.capabilities.per_instance_weights]
        raise ValueError(
            f"engine={engine.name!r} supports class weights only and these weights vary within a class;"
            f" use one of {able} or 'auto'"
        )
    return engine


def fit_svm(K, y, C, engine: str = AUTO, tol: float = DEFAULT_TOL, *, check_input: bool = True) -> WeightedSVM:
    """Train a weighted SVM on a precomputed training kernel.

    Parameters
    ----------
    K : (l, l) symmetric kernel matrix of the training set
    y : (l,) labels in {-1, +1}, both classes present
    C : scalar or (l,) positive instance weights
    engine : a name of :data:`ENGINE_NAMES`; "auto" is scikit-learn's LIBSVM
    tol : the engine's stopping tolerance (LIBSVM ``-e``); keep it tight, the estimators read the
        computed y_p f(x_p) and the in-bound/bounded split from the solution
    check_input : validate K, y, C (shapes, labels, finiteness, symmetry, C_i > 0).
        Internal callers that train on slices of an already validated problem (CV
        folds, leave-one-out, a grid over one kernel) skip it: on a 12k x 12k kernel the
        checks cost more than a LIBSVM run.
    """
    K, y, C = check_problem(K, y, C, check_input=check_input)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    solver = engine_for(engine, y, C)
    t0 = time.perf_counter()
    alpha, b = solver.solve(K, y, C, tol)
    fit_time = time.perf_counter() - t0
    return make_model(K, y, C, alpha, b, engine=solver.name, tol=tol, fit_time=fit_time)
