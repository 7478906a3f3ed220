"""Instance weights without privileged features (svm-plus.md, "Choosing weights").

A. From an estimate of P(Y|X): eta(x) = 2 P(1|x) - 1 by Nadaraya-Watson with a Gaussian
   kernel, p_i = (1 + y_i eta_i) / 2 and c_i = C p_i^tau (tau = 0: the plain SVM).
   ``nadaraya_watson`` estimates p_i at the training points leaving x_i out (with x_i in,
   a small bandwidth gives p_i -> 1 for every point and the weights carry no
   information), with the bandwidth given or chosen by the leave-one-out likelihood.
   ``probability_weights`` maps any p (e.g. human confidence scores) to weights.
B. Learned on a validation sample (``learn_weights``): minimise the mean smooth hinge
   l_d(y_v f(x_v)) over the validation points of the weighted SVM trained with weights
   c >= 0. The inner problem is solved in the DUAL, exactly, by LIBSVM on the
   precomputed kernel (any kernel, no explicit feature map). On the SV sets of the
   solution (in-bound M: 0 < a < c, bounded B: a = c) the dual KKT conditions are linear,
   a_B = c_B and [[Q_MM, y_M], [y_M', 0]] [a_M; b] = [1 - Q_MB c_B; -y_B'c_B], so f is
   piecewise linear in c and its gradient follows by implicit differentiation (one adjoint
   solve per evaluation); it is zero for weights that do not bind (c_i of non-bounded
   points). Outer loop: L-BFGS-B with c >= 0.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import cdist, pdist, squareform

from ..engines import StepLimitWarning, counting_step_limits, fit_svm, get_engine
from ..utils.validation import check_features, check_kernel, check_labels
from .equivalence import ZERO_WEIGHT
from .solver import solve_symmetric

#: Floor on estimated probabilities. A point with no same-class neighbour within reach of
#: a small bandwidth gets p_i = 0: log p_i = -inf would rule out every small bandwidth
#: for one outlier, and c_i = C * 0^tau = 0 would drop it from the SVM. The floor caps
#: each point's log-likelihood penalty at log(1e-3) and its weight at C * 1e-3^tau.
P_FLOOR = 1e-3

#: How far outside [0, 1] a probability may lie from round-off alone. A Nadaraya-Watson ratio of
#: sums, (1 + y eta) / 2, exceeds 1 by an ulp or two (2.2e-16 seen in 13 of 200 subsamples of
#: breast_cancer_wisconsin_351); such values are clipped, anything farther out is refused.
PROBABILITY_ROUNDOFF = 1e-12

#: Candidate bandwidths for the leave-one-out likelihood: the median pairwise distance
#: times 2^k, k = -5 .. 3 in steps of 1/4 (covers nearest-neighbour to nearly global
#: averaging on the scaled data sets of the study).
BANDWIDTH_FACTORS = 2.0 ** np.arange(-5.0, 3.0 + 1e-9, 0.25)

#: Stopping tolerance (LIBSVM's -e) of the inner problem of weight learning: the gradient assumes the
#: exact KKT point, and the loss must be smooth enough in c for L-BFGS-B's line search.
INNER_TOL = 1e-10


@dataclass(frozen=True)
class NWEstimate:
    """Nadaraya-Watson estimate at the training points (``nadaraya_watson``): from a validation sample, or from the
    training sample with each point left out.

    Parameters
    ----------
    eta : ndarray of shape (l,)
        Estimate of 2 P(1 | x_i) - 1 (without x_i where learned on the training sample).
    p : ndarray of shape (l,)
        (1 + y_i eta_i) / 2, floored at ``P_FLOOR``.
    bandwidth : float
        h of K_h(u) = exp(-||u||^2 / (2 h^2)).
    log_likelihood : float
        The sample's leave-one-out sum_i log p_i at that bandwidth (what chose it).

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
    >>> nw = svm_plus.nadaraya_watson(X, y, bandwidth=0.5)
    >>> nw.p.shape, bool(((nw.p > 0) & (nw.p <= 1)).all())
    ((30,), True)
    """

    eta: np.ndarray
    p: np.ndarray
    bandwidth: float
    log_likelihood: float


def nadaraya_watson(X, y, bandwidth: float | None = None, *, X_eval=None, y_eval=None) -> NWEstimate:
    """Nadaraya-Watson estimate of P(y_i | x_i) (weights A of svm-plus.md), learned on the sample (X, y) and
    evaluated at the points ``X_eval`` with labels ``y_eval``: the study's estimate from the validation sample at the
    training points. Without ``X_eval`` it is evaluated at the sample's own points, each left out of its own
    estimate (the training-sample variant: each point would otherwise vote for its own label). O(n m) memory.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Features of the sample the estimate is learned from.
    y : array-like of shape (n,)
        Its labels in {-1, +1}.
    bandwidth : float or None, default=None
        h; None: the candidate (``BANDWIDTH_FACTORS`` x the sample's median pairwise distance) with the largest
        leave-one-out log-likelihood on the sample (the larger one on ties).
    X_eval : array-like of shape (m, d), optional
        Where to evaluate it (the training points); None: at the sample's points, leave-one-out.
    y_eval : array-like of shape (m,), optional
        Labels of ``X_eval`` (p_i is the estimated probability of y_i), required with it.

    Returns
    -------
    NWEstimate
        eta and p at the evaluated points, the bandwidth and the sample's leave-one-out log-likelihood.

    Raises
    ------
    ValueError
        If the bandwidth is not positive and finite, every point of the sample coincides (none can be chosen), or
        ``X_eval`` and ``y_eval`` do not come together or do not match the sample's features.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> round(float(svm_plus.nadaraya_watson(X, y).bandwidth), 4)
    0.4429
    >>> X_val = rng.normal(size=(60, 2))
    >>> y_val = np.where(X_val[:, 0] + 0.5 * rng.normal(size=60) > 0, 1.0, -1.0)
    >>> nw = svm_plus.nadaraya_watson(X_val, y_val, X_eval=X, y_eval=y)
    >>> nw.p.shape, bool(nw.p[X[:, 0] * y > 1].min() > 0.5)
    ((30,), True)
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval come together: the points where the estimate is evaluated and their "
                         "labels")
    D2 = squareform(pdist(X, "sqeuclidean"))
    np.fill_diagonal(D2, np.inf)  # leave x_i out
    if bandwidth is None:
        positive = D2[np.isfinite(D2) & (D2 > 0)]
        if positive.size == 0:
            raise ValueError("all points of X coincide: no bandwidth can be chosen")
        median = float(np.sqrt(np.median(positive)))
        fits = [_nw(D2, y, y, median * f) for f in BANDWIDTH_FACTORS]
        bandwidth = max(reversed(fits), key=lambda fit: fit.log_likelihood).bandwidth
    elif not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be a positive finite number, got {bandwidth!r}")
    sample_fit = _nw(D2, y, y, float(bandwidth))
    if X_eval is None:
        return sample_fit
    X_eval = check_features(X_eval, name="X_eval")
    if X_eval.shape[1] != X.shape[1]:
        raise ValueError(f"X_eval has {X_eval.shape[1]} features but the sample has {X.shape[1]}")
    y_eval = check_labels(y_eval, X_eval.shape[0])
    at_eval = _nw(cdist(X_eval, X, "sqeuclidean"), y, y_eval, float(bandwidth))
    return NWEstimate(eta=at_eval.eta, p=at_eval.p, bandwidth=at_eval.bandwidth,
                      log_likelihood=sample_fit.log_likelihood)


def _nw(D2, y, y_at, h) -> NWEstimate:
    """eta and p at the rows of D2 (squared distances to the sample's points, inf where left out) for labels y_at."""
    # Shift each row by its nearest neighbour's distance: the ratio is unchanged and the
    # nearest weight is exp(0) = 1, so a small h cannot underflow every weight to 0.
    W = np.exp(-(D2 - D2.min(axis=1, keepdims=True)) / (2.0 * h * h))
    # |eta| <= 1 exactly (a weighted mean of labels +-1); the two sums round differently
    eta = np.clip((W @ y) / W.sum(axis=1), -1.0, 1.0)
    p = np.maximum((1.0 + y_at * eta) / 2.0, P_FLOOR)
    return NWEstimate(eta=eta, p=p, bandwidth=h, log_likelihood=float(np.log(p).sum()))


def probability_weights(p, C: float, tau: float) -> np.ndarray:
    """Weights from label probabilities: c_i = C max(p_i, P_FLOOR)^tau.

    Parameters
    ----------
    p : array-like of shape (l,)
        Probabilities of the observed labels, in [0, 1]; a value within PROBABILITY_ROUNDOFF of
        [0, 1] (round-off of an estimate) is clipped into it.
    C : float
        The largest weight, > 0.
    tau : float
        Exponent, >= 0 (0 is the plain SVM).

    Returns
    -------
    ndarray of shape (l,)
        The weights.

    Raises
    ------
    ValueError
        If p is not a 1-d array of finite probabilities (beyond round-off), C is not positive or tau
        is negative.

    Examples
    --------
    >>> from wsvm_span.svm_plus import probability_weights
    >>> probability_weights([0.25, 1.0], C=2.0, tau=0.5).tolist()
    [1.0, 2.0]
    """
    p = np.asarray(p, dtype=float)
    if p.ndim != 1 or not np.isfinite(p).all():
        raise ValueError("p must be a 1-D array of finite probabilities in [0, 1]")
    outside = (p < -PROBABILITY_ROUNDOFF) | (p > 1.0 + PROBABILITY_ROUNDOFF)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(f"p must hold probabilities in [0, 1]: p[{i}] = {p[i]!r} "
                         f"({int(outside.sum())} values outside [0, 1] by more than round-off)")
    p = np.clip(p, 0.0, 1.0)
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be positive, got {C!r}")
    if not (np.isfinite(tau) and tau >= 0):
        raise ValueError(f"tau must be >= 0 (tau = 0 is the plain SVM), got {tau!r}")
    return C * np.maximum(p, P_FLOOR) ** tau


def smooth_hinge(t, d: float) -> tuple[np.ndarray, np.ndarray]:
    """The smooth hinge l_d of svm-plus.md and its derivative, at margins t.

    l_d(t) = 1 - t - d for t <= 1 - 2d, (1 - t)^3 (t - 1 + 4d) / (16 d^3) on (1 - 2d, 1), 0 for t >= 1
    (C^2: value d, slope -1, curvature 0 at t = 1 - 2d).

    Parameters
    ----------
    t : array-like
        Margins y f(x).
    d : float
        Smoothing width, in [0.01, 1].

    Returns
    -------
    value : ndarray
        l_d(t).
    derivative : ndarray
        l_d'(t).

    Raises
    ------
    ValueError
        If d is outside [0.01, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.svm_plus import smooth_hinge
    >>> value, slope = smooth_hinge(np.array([0.0, 0.9, 1.0]), 0.1)
    >>> value.round(4).tolist(), slope.round(4).tolist()
    ([0.9, 0.0187, 0.0], [-1.0, -0.5, 0.0])
    """
    _check_d(d)
    t = np.asarray(t, dtype=float)
    s = 1.0 - t
    mid = (s > 0) & (s < 2 * d)
    loss = np.where(s >= 2 * d, s - d, 0.0)
    grad = np.where(s >= 2 * d, -1.0, 0.0)
    sm = s[mid]
    loss[mid] = sm**3 * (4 * d - sm) / (16 * d**3)
    grad[mid] = -(12 * d * sm**2 - 4 * sm**3) / (16 * d**3)
    return loss, grad


def _check_d(d) -> None:
    if not 0.01 <= d <= 1:
        raise ValueError(f"d must be in [0.01, 1], got {d!r}")


@dataclass(frozen=True)
class LearnedWeights:
    """Result of ``learn_weights`` (weights B of svm-plus.md).

    Parameters
    ----------
    c : ndarray of shape (l,)
        The learned weights, >= 0.
    loss : float
        Validation loss at c.
    initial_loss : float
        Validation loss at the start c0.
    n_iter, n_evaluations : int
        L-BFGS-B's iteration and evaluation counts.
    success : bool
        L-BFGS-B's success flag.
    message : str
        Its message.
    n_unconverged_inner : int, default=0
        Inner solves (of the n_evaluations) that the engine stopped at its step limit short of ``INNER_TOL``
        (``engines.StepLimitWarning``; engines that report it: "smo"): the loss and gradient there rest on a
        feasible but inexact solution, so where this is not 0 the weights may be too.

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
    >>> Xv = rng.normal(size=(40, 2))
    >>> yv = np.where(Xv[:, 0] > 0, 1.0, -1.0)
    >>> K_val = ws.rbf_kernel(Xv, X, gamma=0.5)
    >>> learned = svm_plus.learn_weights(K, y, K_val, yv, C=1.0, max_iter=20)
    >>> bool(learned.loss <= learned.initial_loss), learned.c.shape
    (True, (30,))
    """

    c: np.ndarray
    loss: float
    initial_loss: float
    n_iter: int
    n_evaluations: int
    success: bool
    message: str
    n_unconverged_inner: int = 0


def validation_loss(c, K, y, K_val, y_val, d: float, *, engine: str = "auto") -> tuple[float, np.ndarray]:
    """Mean smooth-hinge loss on the validation points of the weighted SVM trained with weights c, and its
    gradient with respect to c (implicit differentiation, the module's doc).

    Weights at most ``ZERO_WEIGHT`` are 0: the point is left out of training (LIBSVM would leave ~1e-301
    alphas on it and count it in-bound); its derivative is the one-sided one as c_i grows from 0: that of a
    bounded SV (a_i = c_i) when it violates the margin, else 0.

    Parameters
    ----------
    c : array-like of shape (l,)
        Weights, >= 0.
    K : array-like of shape (l, l)
        Training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    K_val : array-like of shape (n_val, l)
        Validation-by-training kernel.
    y_val : array-like of shape (n_val,)
        Validation labels.
    d : float
        Smoothing width of the hinge.
    engine : str, default="auto"
        The inner solve's engine (``engines.ENGINE_NAMES``; "auto": LIBSVM), at ``INNER_TOL``.

    Returns
    -------
    loss : float
        The mean validation loss.
    gradient : ndarray of shape (l,)
        Its gradient with respect to c.

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
    >>> Xv = rng.normal(size=(40, 2))
    >>> yv = np.where(Xv[:, 0] > 0, 1.0, -1.0)
    >>> K_val = ws.rbf_kernel(Xv, X, gamma=0.5)
    >>> loss, gradient = svm_plus.validation_loss(np.ones(30), K, y, K_val, yv, 0.1)
    >>> gradient.shape, bool(loss > 0)
    ((30,), True)
    """
    loss, grad, _ = _validation_loss(np.asarray(c, dtype=float), K, y, K_val, y_val, d, engine, None)
    return loss, grad


def _validation_loss(c, K, y, K_val, y_val, d: float, engine: str, start):
    """(loss, gradient, alpha on all l points: 0 where c_i is a zero weight) of ``validation_loss``, the
    inner solve started from ``start`` (the alpha of an earlier evaluation, or None: from zero).

    Weights that leave a class without a positive weight are outside the method's domain: no weighted SVM is
    trained on one class (y'a = 0 forces a = 0 and b is undetermined). There the loss is +inf, its gradient 0
    and alpha None, so that L-BFGS-B's line search steps back from them (it drove every weight of a class to
    zero on 9 of 40 small random problems with one-class validation sets, and in a paper-size Experiment 8 job).
    """
    keep = np.flatnonzero(c > ZERO_WEIGHT)
    if np.unique(y[keep]).size < 2:
        return np.inf, np.zeros_like(c), None
    dropped = np.flatnonzero(c <= ZERO_WEIGHT)
    model = fit_svm(K[np.ix_(keep, keep)], y[keep], c[keep], engine=engine, tol=INNER_TOL, check_input=False,
                    alpha0=None if start is None else start[keep])
    alpha = np.zeros(c.size)
    alpha[keep] = model.alpha
    t = y_val * (K_val[:, keep] @ model.coef + model.b)
    loss, dloss = smooth_hinge(t, d)
    g = dloss * y_val / y_val.size  # dL / df_v
    M, B = keep[model.inbound], keep[model.bounded]
    f_dropped = K[np.ix_(dropped, keep)] @ model.coef + model.b
    B = np.concatenate([B, dropped[y[dropped] * f_dropped < 1.0]])
    grad = np.zeros_like(c)
    if B.size:
        # [da_M; db] / dc_B = -G^-1 [Q_MB; y_B'], G = [[Q_MM, y_M], [y_M', 0]]: one adjoint solve.
        G = np.zeros((M.size + 1, M.size + 1))
        G[:M.size, :M.size] = K[np.ix_(M, M)] * np.outer(y[M], y[M])
        G[:M.size, M.size] = G[M.size, :M.size] = y[M]
        h = np.append(y[M] * (g @ K_val[:, M]), g.sum())
        lam = solve_symmetric(G, h)
        grad[B] = y[B] * (g @ K_val[:, B]) - y[B] * (K[np.ix_(B, M)] @ (y[M] * lam[:M.size])) - y[B] * lam[M.size]
    return float(loss.mean()), grad, alpha


def learn_weights(K, y, K_val, y_val, C: float, *, d: float = 0.1, c0=None, max_iter: int = 100,
                  engine: str = "auto") -> LearnedWeights:
    """Weights c >= 0 minimising the validation smooth-hinge loss (scheme B), by L-BFGS-B from c0.

    Warns when n_val < l: with more weights than validation points it overfits (svm-plus.md).

    Each evaluation solves the weighted SVM at ``INNER_TOL``. By an engine that starts from a neighbouring
    solution (``capabilities.warm_start``: "smo"), each solve starts from the previous evaluation's alpha, which
    costs 2.6-9.7x less on the study's slowest models (docs/experiments.md, Experiment 8 at paper size). Where
    the inner optimum is not unique (duplicate points), the start decides which optimum is returned, and
    with it the split into in-bound and bounded SVs that the gradient reads, so the learned weights depend on
    the engine there (not the errors measured: docs/experiments.md); by "auto" (LIBSVM, from zero) they are
    what they always were.

    Parameters
    ----------
    K : array-like of shape (l, l)
        Training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    K_val : array-like of shape (n_val, l)
        Kernel between validation and training points.
    y_val : array-like of shape (n_val,)
        Validation labels.
    C : float
        The start's weight (c0 = C 1) when c0 is None.
    d : float, default=0.1
        Smoothing width of l_d, in [0.01, 1].
    c0 : array-like of shape (l,) or None, default=None
        The start (default: C for every point, the plain SVM).
    max_iter : int, default=100
        L-BFGS-B's iteration cap.
    engine : str, default="auto"
        The inner solves' engine (``engines.ENGINE_NAMES``; "auto": LIBSVM from zero).

    Returns
    -------
    LearnedWeights
        The weights and the losses before and after.

    Raises
    ------
    ValueError
        If the validation kernel or labels do not fit, C is not positive, or c0 is not l non-negative weights.

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
    >>> Xv = rng.normal(size=(40, 2))
    >>> yv = np.where(Xv[:, 0] > 0, 1.0, -1.0)
    >>> K_val = ws.rbf_kernel(Xv, X, gamma=0.5)
    >>> learned = svm_plus.learn_weights(K, y, K_val, yv, C=1.0, max_iter=20)
    >>> bool(learned.loss < learned.initial_loss)
    True
    """
    K = check_kernel(K)
    l = K.shape[0]
    y = check_labels(y, l)
    K_val = check_kernel(K_val, name="K_val", square=False)
    y_val = np.asarray(y_val, dtype=float)
    if K_val.shape[1] != l or y_val.shape != (K_val.shape[0],) or not np.isin(y_val, (-1.0, 1.0)).all():
        raise ValueError(f"K_val must be (n_val, {l}) and y_val n_val labels in {{-1, +1}}; "
                         f"got {K_val.shape} and {y_val.shape}")
    _check_d(d)
    if not (np.ndim(C) == 0 and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite scalar (the start c0 = C 1), got {C!r}")
    c0 = np.full(l, float(C)) if c0 is None else np.asarray(c0, dtype=float)
    if c0.shape != (l,) or not np.isfinite(c0).all() or (c0 < 0).any():
        raise ValueError(f"c0 must be {l} finite nonnegative weights")
    if y_val.size < l:
        warnings.warn(f"{y_val.size} validation points for {l} weights: weight learning overfits the"
                      " validation set unless it is at least comparable in size (svm-plus.md)",
                      UserWarning, stacklevel=2)
    # c_i = 0 removes point i; LIBSVM needs C_i > 0, and ZERO_WEIGHT is zero in effect.
    c0 = np.maximum(c0, ZERO_WEIGHT)
    if np.unique(y[c0 > ZERO_WEIGHT]).size < 2:
        raise ValueError("c0 must give a positive weight to at least one point of each class "
                         "(a weighted SVM is not trained on one class)")
    warm = get_engine(engine).capabilities.warm_start
    last = {"c": None, "value": None, "alpha": None}
    unconverged = []

    def loss(c):
        # L-BFGS-B evaluates c0 again after initial_loss: the same solve, not made twice
        if last["c"] is not None and np.array_equal(c, last["c"]):
            return last["value"][0], last["value"][1].copy()
        with counting_step_limits() as stopped:
            value, grad, alpha = _validation_loss(np.array(c, dtype=float), K, y, K_val, y_val, d, engine,
                                                  last["alpha"] if warm else None)
        unconverged.extend(stopped)
        last.update(c=np.array(c, dtype=float), value=(value, grad))
        if alpha is not None:  # outside the domain (one class left): the next solve starts from the last model
            last["alpha"] = alpha
        return value, grad.copy()

    initial_loss, _ = loss(c0)
    res = minimize(loss, c0, jac=True, method="L-BFGS-B", bounds=[(ZERO_WEIGHT, None)] * l,
                   options={"maxiter": max_iter})
    if unconverged:
        # one warning per weight learning, not one per inner solve (a grid point can have dozens)
        warnings.warn(f"weight learning: {len(unconverged)} inner solve(s) stopped at the engine's step limit short "
                      f"of INNER_TOL={INNER_TOL:g}, so the learned weights rest on inexact solutions there (the "
                      f"first: {unconverged[0]})", StepLimitWarning, stacklevel=2)
    return LearnedWeights(c=res.x, loss=float(res.fun), initial_loss=initial_loss, n_iter=int(res.nit),
                          n_evaluations=int(res.nfev), success=bool(res.success), message=str(res.message),
                          n_unconverged_inner=len(unconverged))
