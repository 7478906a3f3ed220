"""Instance weights from a Nadaraya-Watson estimate of P(Y | X) (svm-plus.md, "Choosing weights A").

eta(x) = sum_j K_h(x - x_j) y_j / sum_j K_h(x - x_j) with a Gaussian K_h, p_i = (1 + y_i eta_i) / 2
(the estimated probability of the label actually observed), c_i = C p_i^tau; tau = 0 is the plain SVM.

Minimal stand-alone version for the search estimator (no other module of the project has it yet).
Two choices the spec leaves open, made here:
- eta_i leaves x_i itself out of the sums: with it, a narrow bandwidth gives eta_i -> y_i and every
  p_i -> 1, so the weights would say nothing about the point;
- p_i is floored at ``P_FLOOR`` so that c_i stays positive (a weighted SVM needs C_i > 0).
"""
from __future__ import annotations

import numpy as np

import wsvm_span as ws
from wsvm_span.utils.validation import check_labels

#: smallest p_i used in c_i = C p_i^tau: a point whose neighbours all carry the other label would
#: otherwise get C_i = 0 (LIBSVM drops it). 1e-3 keeps its weight at C * 1e-3^tau > 0.
P_FLOOR = 1e-3


def nadaraya_watson_label_probability(X, y, bandwidth: float) -> np.ndarray:
    """p_i = (1 + y_i eta_i) / 2 for every training point: the Nadaraya-Watson probability of its observed label.

    eta_i = sum_j K_h(x_i - x_j) y_j / sum_j K_h(x_i - x_j) over j != i (see the module's doc), with the
    Gaussian K_h(u) = exp(-||u||^2 / (2 h^2)). A point with no neighbour within floating-point reach gets
    eta_i = 0 (p_i = 1/2: no information).

    Parameters
    ----------
    X : array-like of shape (l, d)
        Features.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    bandwidth : float
        h > 0.

    Returns
    -------
    ndarray of shape (l,)
        p_i in [0, 1].

    Raises
    ------
    ValueError
        If the bandwidth is not positive, a label is not -1 or +1, or X and y disagree in length.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.model_selection import nadaraya_watson_label_probability
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1]])
    >>> y = np.array([-1.0, -1.0, 1.0, 1.0, 1.0])
    >>> nadaraya_watson_label_probability(X, y, bandwidth=0.5).round(2).tolist()
    [0.51, 0.5, 0.0, 1.0, 1.0]
    """
    y = check_labels(y)
    if not bandwidth > 0:
        raise ValueError(f"nw_bandwidth must be positive, got {bandwidth!r}")
    K = ws.rbf_kernel(X, gamma=1.0 / (2.0 * float(bandwidth) ** 2))
    if K.shape[0] != y.shape[0]:
        raise ValueError(f"X has {K.shape[0]} rows but y has {y.shape[0]} labels")
    np.fill_diagonal(K, 0.0)
    total = K.sum(axis=1)
    signed = K @ y
    eta = np.divide(signed, total, out=np.zeros_like(total), where=total > 0)
    return 0.5 * (1.0 + y * eta)


def nadaraya_watson_weights(p, tau: float) -> np.ndarray:
    """Per-instance factor max(p_i, P_FLOOR)^tau of the Nadaraya-Watson weights (c_i = C times it).

    Parameters
    ----------
    p : array-like of shape (l,)
        Label probabilities from :func:`nadaraya_watson_label_probability`.
    tau : float
        Exponent, >= 0 (0: the plain SVM, every factor 1).

    Returns
    -------
    ndarray of shape (l,)
        The factors, positive.

    Raises
    ------
    ValueError
        If tau is negative.

    Examples
    --------
    >>> from wsvm_span.model_selection import nadaraya_watson_weights
    >>> nadaraya_watson_weights([0.0, 0.25, 1.0], tau=0.5).round(4).tolist()
    [0.0316, 0.5, 1.0]
    """
    if not tau >= 0:
        raise ValueError(f"nw_tau must be non-negative, got {tau!r}")
    return np.maximum(np.asarray(p, dtype=float), P_FLOOR) ** float(tau)
