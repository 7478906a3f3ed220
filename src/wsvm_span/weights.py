"""Weighting schemes: map hyperparameters to per-instance weights C_i > 0."""
from __future__ import annotations

import numpy as np

from .utils.validation import check_labels


def class_weights(y, C_plus: float, C_minus: float) -> np.ndarray:
    """Class weights: C_i = C+ for y_i = +1 and C- for y_i = -1 (Experiment 1; LIBSVM ``-w1 C+ -w-1 C-``).

    Parameters
    ----------
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C_plus, C_minus : float
        The positive class's and the negative class's weight, both positive.

    Returns
    -------
    ndarray of shape (l,)
        The weights C_i, float64.

    Raises
    ------
    ValueError
        If a weight is not positive or a label is not -1 or +1.

    Examples
    --------
    >>> import wsvm_span as ws
    >>> ws.class_weights([1, -1, 1], C_plus=4.0, C_minus=1.0).tolist()
    [4.0, 1.0, 4.0]
    """
    y = np.asarray(y, dtype=float)
    if not (C_plus > 0 and C_minus > 0):
        raise ValueError(f"class weights must be positive, got C+={C_plus!r}, C-={C_minus!r}")
    if not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("y must hold labels in {-1, +1}")
    return np.where(y > 0, float(C_plus), float(C_minus))


def sigmoid_weights(q, A: float, B: float, C: float, sigma: float = 0.01) -> np.ndarray:
    """Sigmoid weights from importance scores: C_i = max(C / (1 + exp(-A (q_i - B))), sigma) (Experiment 2).

    Parameters
    ----------
    q : array-like of shape (l,)
        Importance scores in [0, 1].
    A : float
        Steepness of the sigmoid.
    B : float
        Its midpoint (the score that gets C / 2).
    C : float
        The largest weight, positive.
    sigma : float, default=0.01
        The floor that keeps every weight positive.

    Returns
    -------
    ndarray of shape (l,)
        The weights C_i.

    Raises
    ------
    ValueError
        If q is not a finite 1-d array, or C or sigma is not positive.

    Examples
    --------
    >>> import wsvm_span as ws
    >>> ws.sigmoid_weights([0.0, 0.5, 1.0], A=10.0, B=0.5, C=2.0).round(3).tolist()
    [0.013, 1.0, 1.987]
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 1 or not np.isfinite(q).all():
        raise ValueError("importance scores q must be a finite 1-D array")
    if not (C > 0 and sigma > 0):
        raise ValueError(f"C and sigma must be positive, got C={C!r}, sigma={sigma!r}")
    # exp overflow for very negative A (q - B) is harmless: C / inf = 0, then sigma.
    with np.errstate(over="ignore"):
        w = C / (1.0 + np.exp(-A * (q - B)))
    return np.maximum(w, sigma)


def is_class_constant(y, C) -> bool:
    """True when C is constant within each class (LIBSVM class weights can express it)."""
    y = check_labels(y)
    C = np.asarray(C, dtype=float)
    if C.ndim == 0:
        return True
    return all(np.all(C[y == s] == C[y == s][0]) for s in (-1.0, 1.0))
