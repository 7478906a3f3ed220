"""Leave-one-out of SVM+: exact by retraining, and from one factorization.

Leaving x_p out of SVM+ is not leaving it out of the equivalent weighted SVM: the
constraint 1'a~ = 0 loses a~_p, so the correcting function and every weight
c_i = C + a~_i move, and even a point with a_p = 0 changes the model when a~_p != 0 (on
the training set such a point can be misclassified when xi_p > 1). So every point with
a_p > 0 or a~_p != 0 is retrained without (a point with a_p = a~_p = 0 leaves the
solution optimal when removed, and has xi_p = 0, y_p f(x_p) >= 1: never an error).

``loo_rule`` is the SVM+ counterpart of the span-rule (method.md section 4): if the active
sets Z = {a_i = 0} and B = {beta_i = 0} do not change when x_p is left out, the reduced
problem is the active-set KKT system of the full solution (``SVMPlusProblem.reduced_system``)
with p's unknowns deleted and p's constant terms (a~_p = -C on B) dropped, so f^p(x_p)
follows from ONE inverse of that system by bordering (a 1x1 or 2x2 solve per point):
O(n^3 + l n^2) for all l points, n = number of free variables. It is exact under that
premise (checked against retraining in the tests) and needs no in-bound SVs, unlike the
weighted-SVM span-rule of the equivalent model, which degenerates for SVM+ (few SVs are
in-bound there: beta_i > 0 forces xi_i = 0, and the correcting function touches 0 at few
points).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .model import SVMPlus
from .solver import ACTIVE_SET, KKT_TOL, ActiveSetFailure, SVMPlusProblem, solve_symmetric, with_fit_time


@dataclass(frozen=True)
class SVMPlusLeaveOneOut:
    """Leave-one-out of SVM+ (``leave_one_out``, ``loo_rule``).

    Parameters
    ----------
    points : ndarray of int, shape (k,)
        Points left out (every point with a_p > 0 or a~_p != 0).
    decision_loo : ndarray of shape (k,)
        f^p(x_p), the decision value of the model trained without x_p.
    sets_unchanged : ndarray of bool, shape (k,), or None
        True where the refit's active sets are the full model's minus p (retraining only; None for
        ``loo_rule``, which assumes it).
    error : float
        Fraction of l with y_p f^p(x_p) <= 0.

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
    >>> loo = svm_plus.leave_one_out(model, K, K_priv)
    >>> round(loo.error, 4)
    0.1667
    """

    points: np.ndarray
    decision_loo: np.ndarray
    sets_unchanged: np.ndarray | None
    error: float


def active_sets(model: SVMPlus) -> tuple[np.ndarray, np.ndarray]:
    """(Z, B): a_i = 0 and beta_i = 0 (to ``solver.KKT_TOL``) of a solution."""
    return model.alpha == 0.0, model.beta <= KKT_TOL * model.C


def _points(model: SVMPlus) -> np.ndarray:
    return np.flatnonzero((model.alpha != 0.0) | (model.alpha_tilde != 0.0))


def refit_without(model: SVMPlus, K, K_priv, p: int) -> tuple[SVMPlus, np.ndarray]:
    """SVM+ retrained without training point p, warm-started from ``model``'s active sets.

    Returns the model on the l - 1 other points and their indices; falls back to the QP
    route (then polished) if the warm-started active-set method fails.
    """
    rest = np.delete(np.arange(model.n_train), p)
    problem = SVMPlusProblem.build(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], model.y[rest],
                                   model.C, model.gamma)
    Z, B = active_sets(model)
    t0 = time.perf_counter()
    try:
        sub = problem.active_set(Z[rest], B[rest], ACTIVE_SET)
    except ActiveSetFailure:
        sub = problem.qp("auto", True, prefix=f"{ACTIVE_SET}->")
    return with_fit_time(sub, time.perf_counter() - t0), rest


def leave_one_out(model: SVMPlus, K, K_priv) -> SVMPlusLeaveOneOut:
    """Exact leave-one-out of SVM+: retrain without each point that can change it (warm-started).

    Parameters
    ----------
    model : SVMPlus
        The model trained on all l points.
    K, K_priv : array-like of shape (l, l)
        Its ordinary and privileged kernels.

    Returns
    -------
    SVMPlusLeaveOneOut
        The LOO decision values and error.

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
    >>> round(svm_plus.leave_one_out(model, K, K_priv).error, 4)
    0.1667
    """
    y = model.y
    Z, B = active_sets(model)
    points = _points(model)
    f_loo = np.empty(points.size)
    unchanged = np.empty(points.size, dtype=bool)
    for t, p in enumerate(points):
        rest = np.delete(np.arange(model.n_train), p)
        if np.all(y[rest] == y[rest][0]):
            f_loo[t], unchanged[t] = -y[p], False  # one class left: count an error
            continue
        sub, rest = refit_without(model, K, K_priv, p)
        f_loo[t] = float(K[p, rest] @ (sub.y * sub.alpha) + sub.b)
        Z_sub, B_sub = active_sets(sub)
        unchanged[t] = np.array_equal(Z_sub, Z[rest]) and np.array_equal(B_sub, B[rest])
    return SVMPlusLeaveOneOut(points=points, decision_loo=f_loo, sets_unchanged=unchanged,
                              error=_error(y[points], f_loo, model.n_train))


def loo_rule(model: SVMPlus, K, K_priv) -> SVMPlusLeaveOneOut:
    """SVM+'s LOO rule: f^p(x_p) for every point that matters, from one inverse of the active-set KKT system.

    Exact when leaving x_p out does not change the active sets (the module's doc).

    Parameters
    ----------
    model : SVMPlus
        The model trained on all l points.
    K, K_priv : array-like of shape (l, l)
        Its ordinary and privileged kernels.

    Returns
    -------
    SVMPlusLeaveOneOut
        The estimated LOO decision values and error (``sets_unchanged`` None).

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
    >>> svm_plus.loo_rule(model, K, K_priv).error
    0.2
    """
    K = np.asarray(K, dtype=float)
    y, C = model.y, model.C
    problem = SVMPlusProblem.build(K, np.asarray(K_priv, dtype=float), y, C, model.gamma)
    Z, B = active_sets(model)
    system = problem.reduced_system(Z, B)
    F, N, J, posJ, n = system.F, system.N, system.J, system.posJ, system.n
    # the inverse, or the pseudo-inverse when the system is singular (non-unique minimiser)
    Minv = solve_symmetric(system.M, np.eye(system.M.shape[0]))
    z = Minv @ system.rhs
    # Leaving p out of B removes its constant a~_p = -C: rhs loses C d_p with
    # d_p = [T_Jp at posJ; 1 in the row of 1'a~ = 0].
    B_idx = np.flatnonzero(B)
    D = np.zeros((n + 2, B_idx.size))
    D[posJ] = problem.T[np.ix_(J, B_idx)]
    D[n + 1] = 1.0
    shift = Minv @ D
    column_of_B = np.full(y.size, -1)
    column_of_B[B_idx] = np.arange(B_idx.size)
    pos_u = np.full(y.size, -1)
    pos_u[F] = np.arange(F.size)
    pos_v = np.full(y.size, -1)
    pos_v[N] = F.size + np.arange(N.size)
    points = _points(model)
    f_loo = np.empty(points.size)
    yK_F = y[F][:, None] * K[np.ix_(F, points)]  # column t: y_j K(x_j, x_p) over F
    for t, p in enumerate(points):
        w = z - C * shift[:, column_of_B[p]] if B[p] else z
        E = [pos for pos in (pos_u[p], pos_v[p]) if pos >= 0]
        if E:
            # Border p's unknowns to zero: z' = w - Minv_E (Minv_EE)^-1 w_E.
            w = w - Minv[:, E] @ np.linalg.solve(Minv[np.ix_(E, E)], w[E])
        f_loo[t] = float(w[:F.size] @ yK_F[:, t] + w[n])
    return SVMPlusLeaveOneOut(points=points, decision_loo=f_loo, sets_unchanged=None,
                              error=_error(y[points], f_loo, model.n_train))


def _error(y, f_loo, l: int) -> float:
    return float(np.sum(-y * f_loo >= 0)) / l
