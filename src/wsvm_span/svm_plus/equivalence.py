"""SVM+ <-> weighted SVM (svm-plus.md).

SVM+ -> weighted SVM (always): the weights c_i = C + a~_i = a_i + beta_i make the SVM+
solution (a, b, f) a solution of the weighted SVM with those weights.

Weighted SVM -> SVM+ (not always): a weighted-SVM solution (weights c, slacks xi*) is an
SVM+ solution iff some equivalent weight vector has rho(c, xi*) = <c - mean(c) 1, xi*> > 0;
then C = mean(c), gamma = rho and the 1-D privileged feature x~_i = xi*_i - b~ with a
linear kernel, b~ = <c, xi*> / <c, 1>, reproduce it (w~ = 1).

Zero weights. c_i = 0 where a_i = 0 and beta_i = 0 (a~_i = -C): the correcting function
pays the whole slack, the point drops out of the weighted SVM and may even be a training
error (y_i f(x_i) < 0 is allowed when xi_i > 1). On parkinson_speech more than half of the
points end up there. The weighted-SVM estimators count non-SVs as never being LOO errors,
which presumes c_i > 0; a zero-weight point leaves the model unchanged when removed, so
it is a LOO error exactly when it is a training error (``zero_weight_errors``).
"""
from __future__ import annotations

import numpy as np

from ..engines import AUTO, engine_for
from ..model import WeightedSVM, make_model
from .model import SVMPlus
from .solver import WEIGHTED_SVM

#: LIBSVM tolerance recorded in the converted model; ``resampling.leave_one_out`` retrains the
#: weighted SVM with it, so it must be tight (method.md section 1).
RETRAIN_TOL = 1e-7

#: Stand-in for a zero weight in the converted model. ``fit_svm`` rejects C_i = 0, and
#: scikit-learn's LIBSVM drops zero-weight samples and then reports SV indices of the
#: reduced problem (measured: the alphas land on the wrong points). C_i = 1e-300 bounds
#: a_i by 1e-300, which removes the point from the model exactly in double precision.
ZERO_WEIGHT = 1e-300

#: rho below this (relative to sum_i c_i xi*_i) counts as zero: gamma = rho would be 0
#: up to round-off and no SVM+ with gamma > 0 reproduces the solution.
RHO_RTOL = 1e-12


def svm_plus_weights(model: SVMPlus) -> np.ndarray:
    """The weights c_i = C + a~_i = a_i + beta_i >= 0 of the weighted SVM equivalent to an SVM+.

    Parameters
    ----------
    model : SVMPlus
        The trained SVM+.

    Returns
    -------
    ndarray of shape (l,)
        The weights.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> c = svm_plus.svm_plus_weights(model)
    >>> bool(np.allclose(c, model.C + model.alpha_tilde)), bool((c >= 0).all())
    (True, True)
    """
    # c >= 0 holds at any feasible point (a >= 0, beta >= 0); the clip removes round-off.
    return np.maximum(model.C + model.alpha_tilde, 0.0)


def to_weighted_svm(model: SVMPlus, K, *, tol: float = RETRAIN_TOL, engine: str = AUTO) -> WeightedSVM:
    """The weighted SVM with weights ``svm_plus_weights(model)`` and the SVM+ alpha and b.

    The result goes to ``analyse_spans``, ``span_rule``, ``span_bound`` and ``leave_one_out`` of ``wsvm_span``
    (which retrains it with ``engine`` at ``tol``: "smo" starts each retraining from this solution);
    add ``zero_weight_errors`` to their LOO counts. Its in-bound / bounded split is that of the SVM+ solution
    (exact for the active-set solver). Zero weights are stored as ``ZERO_WEIGHT``.

    Parameters
    ----------
    model : SVMPlus
        The trained SVM+.
    K : array-like of shape (l, l)
        The ordinary-feature kernel it was trained on.
    tol : float, default=1e-7
        The tolerance recorded for retraining.
    engine : str, default="auto"
        The engine recorded for retraining (``engines.ENGINE_NAMES`` that take per-instance weights; "auto":
        LIBSVM).

    Returns
    -------
    WeightedSVM
        The equivalent weighted SVM.

    Raises
    ------
    ValueError
        If K is not the model's (l, l) training kernel.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> weighted = svm_plus.to_weighted_svm(model, K)
    >>> bool(np.allclose(weighted.decision_train, model.decision_train))
    True
    """
    K = np.asarray(K, dtype=float)
    l = model.n_train
    if K.shape != (l, l):
        raise ValueError(f"K must be the ({l}, {l}) training kernel of the SVM+ model, got {K.shape}")
    weights = np.maximum(svm_plus_weights(model), ZERO_WEIGHT)
    return make_model(K, model.y, weights, model.alpha, model.b,
                      engine=engine_for(engine, model.y, weights).name, tol=tol, fit_time=model.fit_time)


def zero_weight_errors(model: SVMPlus) -> int:
    """Points with weight c_i = 0 that the SVM+ misclassifies on the training set (f = 0 counts as an error):
    LOO errors the weighted-SVM estimators do not see.

    Parameters
    ----------
    model : SVMPlus
        The trained SVM+.

    Returns
    -------
    int
        Their number.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> svm_plus.zero_weight_errors(model)
    3
    """
    zero = svm_plus_weights(model) == 0.0
    return int(np.count_nonzero(zero & (model.y * model.decision_train <= 0)))


def rho(c, xi) -> float:
    """rho(c, xi*) = <c - mean(c) 1, xi*>: positive exactly when an SVM+ with gamma > 0 reproduces the weighted
    SVM with weights c and slacks xi* (svm-plus.md).

    Parameters
    ----------
    c : array-like of shape (l,)
        Weights.
    xi : array-like of shape (l,)
        Slacks.

    Returns
    -------
    float
        rho.

    Raises
    ------
    ValueError
        If c and xi are not vectors of the same length.

    Examples
    --------
    >>> from wsvm_span.svm_plus import rho
    >>> rho([1.0, 3.0], [0.0, 1.0])
    1.0
    """
    c = np.asarray(c, dtype=float)
    xi = np.asarray(xi, dtype=float)
    if c.shape != xi.shape or c.ndim != 1:
        raise ValueError(f"c and xi must be vectors of the same length, got shapes {c.shape} and {xi.shape}")
    return float((c - c.mean()) @ xi)


def weighted_to_svm_plus(model: WeightedSVM, xi=None) -> tuple[SVMPlus, np.ndarray]:
    """The SVM+ that reproduces a weighted-SVM solution, when one exists.

    The weights are the model's own when rho(C_i, xi*) > 0, else the equivalent weights c_i = a_i (the
    solution stays optimal when a weight is lowered to a_i where xi*_i = 0; this maximises rho over all
    equivalent weights).

    Parameters
    ----------
    model : WeightedSVM
        The weighted-SVM solution.
    xi : array-like of shape (l,) or None, default=None
        Its slacks xi*; default ``model.slacks`` with the in-bound SVs set to 0 (their KKT value; LIBSVM
        leaves round-off there).

    Returns
    -------
    svm_plus : SVMPlus
        The SVM+ solution (alpha and b of the weighted SVM, a~ = c - C, correcting values xi*).
    x_priv : ndarray of shape (l, 1)
        The privileged feature to train it on with the linear kernel ``x_priv @ x_priv.T``,
        C = ``svm_plus.C``, gamma = ``svm_plus.gamma``.

    Raises
    ------
    ValueError
        If even the equivalent weights give rho <= 0: no SVM+ with gamma > 0 has this solution (svm-plus.md's
        necessary condition), or xi is not l finite non-negative slacks.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> weighted = ws.fit_svm(K, y, 1.0)
    >>> plus, x_priv = svm_plus.weighted_to_svm_plus(weighted)
    >>> x_priv.shape, bool(np.allclose(plus.alpha, weighted.alpha))
    ((30, 1), True)
    """
    l = model.n_train
    if xi is None:
        xi = model.slacks.copy()
        xi[model.inbound] = 0.0
    xi = np.asarray(xi, dtype=float)
    if xi.shape != (l,) or not np.isfinite(xi).all() or (xi < 0).any():
        raise ValueError(f"xi must be {l} finite nonnegative slacks, got shape {xi.shape}")
    candidates = (model.C, model.alpha)
    values = [rho(c, xi) for c in candidates]
    for c, value in zip(candidates, values):
        if value > RHO_RTOL * float(c @ xi):
            break
    else:
        raise ValueError(
            f"this weighted-SVM solution is not reachable by SVM+: rho(c, xi*) = <c - mean(c), xi*> is "
            f"{values[0]:.6g} for its weights and {values[1]:.6g} for the equivalent weights c = alpha; "
            "SVM+ needs rho > 0 (gamma = rho)"
        )
    C_plus = float(c.mean())
    b_tilde = float(c @ xi / c.sum())
    x_priv = (xi - b_tilde)[:, None]
    plus = SVMPlus(
        alpha=model.alpha.copy(), alpha_tilde=c - C_plus, b=model.b, b_tilde=b_tilde, y=model.y,
        C=C_plus, gamma=value, decision_train=model.decision_train.copy(), correcting_train=xi,
        ridge=0.0, solver=WEIGHTED_SVM, iterations=0,
    )
    return plus, x_priv
