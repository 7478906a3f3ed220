"""Starting points for engines that take one (``Capabilities.warm_start``): a neighbouring problem's dual
solution made feasible for the problem at hand, with the gradient there when it is cheaper to get from the
neighbour than to compute.

Almost every training in this project has a solved neighbour (issue 21): the previous weights of a grid row,
the full-data model of the same grid point for each CV fold and each leave-one-out retraining. Its alphas
are a start that SMO reaches the new optimum from in a fraction of the steps a start from zero takes; the
answer is the same optimum either way (the stopping rule is the same), only the path to it changes.

A start must be feasible: 0 <= a_i <= C_i and y'a = 0. :func:`feasible_start` makes any finite vector so
with a small, documented change; :func:`restricted_start` and :func:`rescaled_start` build the two seeds
above from a solved neighbour (a :class:`Solved`: its alphas and its kernel expansion h = K (y a)).

The gradient of the start, G = y h - 1 over the problem's points, costs the solver one pass over the start's
support vectors' kernel rows (O(n_SV l)): at a small C, where most points are bounded support vectors, more
than the steps of a warm start. From the neighbour it costs one pass over the alphas that differ (the left-out
points and those the repair changed: ``changes_cheaper``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import kernel_expansion

__all__ = ["BALANCE_RTOL", "CHANGES_CHEAPER", "Solved", "Start", "feasible_start", "rescaled_start",
           "restricted_start"]

#: y'a within this fraction of sum(a) counts as 0: the rounding of the sums themselves (a solver's own
#: solution, whose y'a is 0 up to rounding, is kept bit for bit)
BALANCE_RTOL = 1e-12
#: the start's gradient is updated from the neighbour's when fewer alphas changed than this fraction of the
#: start's support vectors (each changed alpha costs one kernel row, as each support vector does)
CHANGES_CHEAPER = 0.5


@dataclass(frozen=True)
class Start:
    """A start for the dual: feasible alphas and, when known, the gradient there.

    Parameters
    ----------
    alpha : ndarray of shape (l,)
        Dual variables, feasible for the problem they start (0 <= a_i <= C_i, y'a = 0).
    grad : ndarray of shape (l,) or None, default=None
        The gradient Qa - e at alpha (Q_ij = y_i y_j K_ij); None: the solver computes it.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.engines.warm_start import Start
    >>> Start(np.array([0.5, 0.5])).grad is None
    True
    """

    alpha: np.ndarray
    grad: np.ndarray | None = None


@dataclass(frozen=True)
class Solved:
    """A solved neighbour, the source of starts: its points, labels, weights, alphas and kernel expansion.

    Parameters
    ----------
    rows : ndarray of int or None
        Its points as indices into the kernel K that starts are built on; None: all of K.
    y : ndarray of shape (n,)
        Its labels in {-1, +1}.
    C : ndarray of shape (n,)
        Its upper bounds C_i.
    alpha : ndarray of shape (n,)
        Its solution.
    expansion : ndarray of shape (n,)
        h_t = sum_s a_s y_s K_st over its points: a model's ``decision_train - b``, or y (G + 1) from a
        solver's gradient G.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span.engines.warm_start import Solved
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, 1.0, engine="smo")
    >>> neighbour = Solved.from_model(model)
    >>> bool(np.allclose(neighbour.expansion, K @ (y * model.alpha)))
    True
    """

    rows: np.ndarray | None
    y: np.ndarray
    C: np.ndarray
    alpha: np.ndarray
    expansion: np.ndarray

    @classmethod
    def from_model(cls, model) -> "Solved":
        """A ``WeightedSVM`` trained on all of its kernel, as a neighbour.

        Parameters
        ----------
        model : WeightedSVM
            The trained model.

        Returns
        -------
        Solved
            Its alphas, labels, weights and expansion ``decision_train - b``.
        """
        return cls(None, model.y, model.C, model.alpha, model.decision_train - model.b)


def feasible_start(alpha0, y, C) -> np.ndarray:
    """A vector made feasible for the dual, with a small, documented change.

    1. Clipped to the box [0, C_i].
    2. y'a = 0 restored by lowering the alphas of the class whose sum is the larger, by exactly the
       difference, smallest alphas first: each is set to 0 in turn, the last one only as far as needed.
       Lowering keeps every alpha in its box, and taking the difference from the fewest alphas keeps the
       rest of the start as it was: spreading it over many (in proportion) turns a class's bounded alphas
       into free ones that SMO must then move back one pair at a time (measured on mnist_2_9's CV folds
       at C- = 2^-6: 4.8x the steps). An imbalance within ``BALANCE_RTOL`` of sum(a) is rounding: left as is.

    Parameters
    ----------
    alpha0 : array-like of shape (l,)
        Any finite vector.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : array-like of shape (l,)
        Upper bounds C_i > 0.

    Returns
    -------
    ndarray of shape (l,)
        A new feasible vector.

    Raises
    ------
    ValueError
        If alpha0 holds NaN or inf, or has the wrong length: a bug upstream, which no repair makes mean
        anything.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.engines.warm_start import feasible_start
    >>> y = np.array([1.0, 1.0, -1.0, -1.0])
    >>> feasible_start([3.0, 0.5, 1.0, -1.0], y, np.full(4, 2.0))
    array([1., 0., 1., 0.])
    """
    y = np.asarray(y, dtype=float)
    C = np.asarray(C, dtype=float)
    alpha = np.array(alpha0, dtype=float, copy=True)
    if alpha.shape != y.shape:
        raise ValueError(f"alpha0 must have shape {y.shape} (one dual variable per training point), got {alpha.shape}")
    if not np.isfinite(alpha).all():
        bad = np.flatnonzero(~np.isfinite(alpha))[:5]
        raise ValueError(f"alpha0 holds NaN or inf (positions {bad.tolist()}); a start must be finite")
    np.clip(alpha, 0.0, C, out=alpha)
    positive = y > 0
    excess = alpha[positive].sum() - alpha[~positive].sum()
    if abs(excess) <= BALANCE_RTOL * alpha.sum():
        return alpha
    heavy = np.flatnonzero((positive if excess > 0 else ~positive) & (alpha > 0))
    heavy = heavy[np.argsort(alpha[heavy], kind="stable")]
    # the alphas zeroed whole: those whose running sum stays within the excess; the next one takes the rest
    covered = np.cumsum(alpha[heavy])
    n_zeroed = int(np.searchsorted(covered, abs(excess), side="right"))
    alpha[heavy[:n_zeroed]] = 0.0
    if n_zeroed < heavy.size:
        rest = abs(excess) - (covered[n_zeroed - 1] if n_zeroed else 0.0)
        alpha[heavy[n_zeroed]] = max(0.0, alpha[heavy[n_zeroed]] - rest)
    return alpha


def _start(alpha0, neighbour: Solved, keep, K) -> Start:
    """``Start`` of ``alpha0`` (on the neighbour's points ``keep``), with the gradient updated from the
    neighbour's expansion when fewer alphas changed than CHANGES_CHEAPER of alpha0's support vectors."""
    if K is None:
        return Start(alpha0)
    embedded = np.zeros_like(neighbour.alpha)
    embedded[keep] = alpha0
    changed = np.flatnonzero(embedded != neighbour.alpha)
    if changed.size >= CHANGES_CHEAPER * np.count_nonzero(alpha0):
        return Start(alpha0)
    rows = np.arange(neighbour.y.size) if neighbour.rows is None else neighbour.rows
    coef = (embedded[changed] - neighbour.alpha[changed]) * neighbour.y[changed]
    h = kernel_expansion(K, coef, rows[changed], rows=rows[keep], out=np.array(neighbour.expansion[keep], dtype=float))
    return Start(alpha0, neighbour.y[keep] * h - 1.0)


def restricted_start(neighbour: Solved, keep, K=None) -> Start:
    """The start of a subproblem (a CV fold, a leave-one-out retraining) from the full problem's solution.

    Wen et al. (AAAI 2017) and Lee et al. (IEEE TNN 2004): the neighbour's alphas at the kept points, made
    feasible by :func:`feasible_start` (the left-out points take their share of y'a = 0 with them).

    Parameters
    ----------
    neighbour : Solved
        The solved full problem.
    keep : array-like of int
        The subproblem's points, as indices into the neighbour's points.
    K : ndarray, optional
        The kernel the neighbour's ``rows`` index: with it, the start's gradient is updated from the
        neighbour's (one kernel row per alpha that differs) when that is cheaper than the solver's pass.

    Returns
    -------
    Start
        The alphas and, with K and few changes, the gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span.engines.warm_start import Solved, restricted_start
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, 1.0, engine="smo")
    >>> rest = np.arange(1, 30)
    >>> start = restricted_start(Solved.from_model(model), rest, K)
    >>> sub = ws.fit_svm(K[np.ix_(rest, rest)], y[rest], 1.0, engine="smo", alpha0=start)
    >>> bool(abs(y[rest] @ start.alpha) < 1e-12)
    True
    """
    keep = np.asarray(keep)
    alpha0 = feasible_start(neighbour.alpha[keep], neighbour.y[keep], neighbour.C[keep])
    return _start(alpha0, neighbour, keep, K)


def rescaled_start(neighbour: Solved, C_new, K=None) -> Start:
    """The start for new weights on the same points from the solution at the old ones (a grid row).

    The alphas at their upper bound move with it (a_i = C_old_i becomes C_new_i), the others stay where they
    are (clipped to the new box), then :func:`feasible_start` restores y'a = 0. Bounded alphas are where
    the weights act: a point bounded at C_old is almost always bounded at a nearby C_new. In-bound alphas
    are not proportional to C_i; scaling them too would move every free alpha and lose the start's accuracy
    where the solution did not change at all (measured: mnist_2_9's folds at large C-, 5x the time of keeping
    them).

    Parameters
    ----------
    neighbour : Solved
        The solution at the old weights (``neighbour.C``).
    C_new : array-like of shape (n,)
        The new weights.
    K : ndarray, optional
        The kernel the neighbour's ``rows`` index: with it, the start's gradient is updated from the
        neighbour's when fewer alphas moved than ``CHANGES_CHEAPER`` of the start's support vectors.

    Returns
    -------
    Start
        The alphas and, with K and few changes, the gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span.engines.warm_start import Solved, rescaled_start
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, ws.class_weights(y, 1.0, 1.0), engine="smo")
    >>> C_new = ws.class_weights(y, 1.0, 2.0)
    >>> start = rescaled_start(Solved.from_model(model), C_new, K)
    >>> wider = ws.fit_svm(K, y, C_new, engine="smo", alpha0=start)
    >>> bool(np.all(start.alpha <= C_new))
    True
    """
    C_new = np.asarray(C_new, dtype=float)
    moved = np.where(neighbour.alpha >= neighbour.C, C_new, neighbour.alpha)
    alpha0 = feasible_start(moved, neighbour.y, C_new)
    return _start(alpha0, neighbour, np.arange(neighbour.y.size), K)
