"""Synthetic data: Experiment 6's ringnorm variant and the "W" toy of Experiment 8.

Ringnorm variant (Experiment 6)
-------------------------------

Class +1 ~ N(1_d, I_d) with prior 0.3, class -1 ~ N(0, 4 I_d) (standard deviation 2) with
prior 0.7; labels are drawn independently (Bernoulli(0.3)), so class counts vary around 0.3 l.

Seeding
-------
``make_ringnorm_variant(l, d, seed)`` draws the labels and the Gaussian noise from two
independent child streams of ``numpy.random.SeedSequence(seed)`` (spawn keys (0,) and (1,)).
Both are read sequentially, so for a fixed (seed, d) the sample of size l is the prefix of the
sample of any larger size: training sets of increasing l are nested.

The data set ``ringnorm_d{d}_l{l}`` (see :func:`build_ringnorm`) has l training points from
``seed`` and :data:`N_TEST` = 2000 test points from the derived seed
``SeedSequence(seed, spawn_key=(2,))``: independent of the training points and the same test
set for every l.
"""

from __future__ import annotations

import re

import numpy as np

from .containers import RawSplit

__all__ = [
    "POSITIVE_PRIOR",
    "N_TEST",
    "RINGNORM_DIMS",
    "RINGNORM_SIZES",
    "make_ringnorm_variant",
    "ringnorm_name",
    "parse_ringnorm_name",
    "derived_test_seed",
    "build_ringnorm",
    "W_SHIFT",
    "W_SIGMA",
    "W_SIZES",
    "w_mixture_centers",
    "w_mixture_posterior",
    "make_w_mixture",
    "build_w_mixture",
]

POSITIVE_PRIOR = 0.3
NEGATIVE_STD = 2.0  # N(0, 4 I)
N_TEST = 2000
RINGNORM_DIMS = (20, 40, 80)
RINGNORM_SIZES = tuple(2**k for k in range(7, 15))  # 128 .. 16384
_NAME = re.compile(r"ringnorm_d([1-9][0-9]*)_l([1-9][0-9]*)")


def _seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def _child(ss: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    # explicit child (does not advance ss's spawn counter, so calls are pure)
    return np.random.SeedSequence(
        ss.entropy, spawn_key=tuple(ss.spawn_key) + (i,), pool_size=ss.pool_size
    )


def make_ringnorm_variant(
    l: int, d: int, seed: int | np.random.SeedSequence = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``l`` points of the ringnorm variant in dimension ``d`` (Experiment 6).

    Parameters
    ----------
    l : int
        Number of points (>= 1).
    d : int
        Dimension (>= 1).
    seed : int or numpy.random.SeedSequence, default=0
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (l, d)
        float64, unscaled.
    y : ndarray of shape (l,)
        float64 in {-1, +1}; +1 with probability 0.3.

    Raises
    ------
    ValueError
        If l or d is not positive.

    Examples
    --------
    >>> from wsvm_span.data import make_ringnorm_variant
    >>> X, y = make_ringnorm_variant(5, 2, seed=0)
    >>> X.shape, y.tolist()
    ((5, 2), [-1.0, -1.0, -1.0, 1.0, -1.0])
    """
    if int(l) < 1 or int(d) < 1:
        raise ValueError(f"l and d must be positive, got l={l}, d={d}")
    ss = _seed_sequence(seed)
    u = np.random.default_rng(_child(ss, 0)).random(int(l))
    z = np.random.default_rng(_child(ss, 1)).standard_normal((int(l), int(d)))
    positive = u < POSITIVE_PRIOR
    X = np.where(positive[:, None], 1.0 + z, NEGATIVE_STD * z)
    y = np.where(positive, 1.0, -1.0)
    return np.ascontiguousarray(X), y


def ringnorm_name(d: int, l: int) -> str:
    """``ringnorm_d<d>_l<l>``: the registry name of the synthetic set of dimension d and training size l.
    """
    return f"ringnorm_d{int(d)}_l{int(l)}"


def parse_ringnorm_name(name: str) -> tuple[int, int] | None:
    """``"ringnorm_d20_l1024"`` -> ``(20, 1024)``; None if ``name`` is not of that form."""
    m = _NAME.fullmatch(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def derived_test_seed(seed: int) -> np.random.SeedSequence:
    """Seed of the 2000 test points of ``ringnorm_d*_l*`` for training seed ``seed``."""
    ss = _seed_sequence(seed)
    return _child(ss, 2)


def build_ringnorm(d: int, l: int, seed: int) -> RawSplit:
    """Unscaled split of ``ringnorm_d{d}_l{l}``: l training and 2000 test points."""
    X_train, y_train = make_ringnorm_variant(l, d, seed)
    X_test, y_test = make_ringnorm_variant(N_TEST, d, derived_test_seed(seed))
    return RawSplit(X_train, y_train, X_test, y_test)


# ------------------------------------------------------------------------------------ "W" mixture
#: vertices of the W polyline (class +1); class -1 is the same W shifted up by W_SHIFT
W_VERTICES = ((-2.0, 1.0), (-1.0, -1.0), (0.0, 1.0), (1.0, -1.0), (2.0, 1.0))
#: mixture components per segment of the polyline (besides its start vertex)
W_PER_SEGMENT = 4
W_SHIFT = 1.2
W_SIGMA = 0.25
#: (train, validation, test) sizes of the data set ``w_mixture`` (seed 003's toy)
W_SIZES = (400, 4000, 2000)


def w_mixture_centers() -> tuple[np.ndarray, np.ndarray]:
    """(17, 2) component centers of class +1 and of class -1."""
    V = np.asarray(W_VERTICES)
    points = [V[0]] + [a + (b - a) * k / W_PER_SEGMENT for a, b in zip(V[:-1], V[1:])
                       for k in range(1, W_PER_SEGMENT + 1)]
    positive = np.asarray(points)
    return positive, positive + np.array([0.0, W_SHIFT])


def w_mixture_posterior(X) -> np.ndarray:
    """(n,) the true P(y = +1 | x) of the W mixture (equal priors, equal component weights)."""
    from scipy.special import logsumexp

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2), got {X.shape}")
    positive, negative = w_mixture_centers()
    log_p = logsumexp(-((X[:, None, :] - positive[None]) ** 2).sum(-1) / (2 * W_SIGMA**2), axis=1)
    log_n = logsumexp(-((X[:, None, :] - negative[None]) ** 2).sum(-1) / (2 * W_SIGMA**2), axis=1)
    return 1.0 / (1.0 + np.exp(log_n - log_p))


def make_w_mixture(n: int, seed: int | np.random.SeedSequence = 0) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` points of the W mixture (Experiment 8's toy).

    Parameters
    ----------
    n : int
        Number of points (>= 1).
    seed : int or numpy.random.SeedSequence, default=0
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n, 2)
        float64.
    y : ndarray of shape (n,)
        In {-1, +1}, +1 with probability 1/2.

    Raises
    ------
    ValueError
        If n is not positive.

    Examples
    --------
    >>> from wsvm_span.data import make_w_mixture
    >>> X, y = make_w_mixture(4, seed=0)
    >>> X.shape, y.tolist()
    ((4, 2), [-1.0, 1.0, -1.0, 1.0])
    """
    if int(n) < 1:
        raise ValueError(f"n must be positive, got {n}")
    ss = _seed_sequence(seed)
    u = np.random.default_rng(_child(ss, 0)).random(int(n))
    positive, negative = w_mixture_centers()
    k = np.random.default_rng(_child(ss, 1)).integers(0, positive.shape[0], int(n))
    z = np.random.default_rng(_child(ss, 2)).standard_normal((int(n), 2))
    y = np.where(u < 0.5, 1.0, -1.0)
    centers = np.where((y > 0)[:, None], positive[k], negative[k])
    return np.ascontiguousarray(centers + W_SIGMA * z), y


def build_w_mixture(seed: int) -> RawSplit:
    """Unscaled split of ``w_mixture``: 400 training points with their privileged feature and score
    (the true P(y_i | x_i)), 4000 validation and 2000 test points, each sample from its own seed."""
    ss = _seed_sequence(seed)
    (X, y), (X_val, y_val), (X_test, y_test) = (
        make_w_mixture(n, _child(ss, 3 + i)) for i, n in enumerate(W_SIZES))
    p = w_mixture_posterior(X)
    q = np.where(y > 0, p, 1.0 - p)
    return RawSplit(X, y, X_test, y_test, scores=q, X_priv=q[:, None], X_val=X_val, y_val=y_val)
