"""The reference experiment of the solution path (solution-path.md): four 2-D Gaussians.

n/4 points each of
  class +1: N([1, 0], diag(1, .5)) (group D1),  N([0, 0], diag(.5, .5)) (group D2);
  class -1: N([0, 1], diag(1, .5)) (group D1),  N([1, 1], diag(.5, .5)) (group D2)
(diag(...) are covariance matrices), inputs min-max scaled to [0, 1]^2 over the sample.
The cost-weighted experiment moves the weight of group D1 from ~0 to 10 with D2 fixed at 10;
the kernel is exp(-(gamma / p) ||x - x'||^2) with gamma = 1, p = 2.
"""
from __future__ import annotations

import numpy as np

__all__ = ["FOUR_GAUSSIANS", "make_four_gaussians"]

#: (mean, covariance diagonal, label, group) of the four components, in draw order
FOUR_GAUSSIANS = (
    ((1.0, 0.0), (1.0, 0.5), 1.0, 1),
    ((0.0, 0.0), (0.5, 0.5), 1.0, 2),
    ((0.0, 1.0), (1.0, 0.5), -1.0, 1),
    ((1.0, 1.0), (0.5, 0.5), -1.0, 2),
)


def make_four_gaussians(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw the four-Gaussian data set of size ``n`` (a multiple of 4).

    Returns X (n, 2) scaled to [0, 1]^2, y (n,) in {-1, +1} and group (n,) in {1, 2}
    (1 = D1, 2 = D2), components in the order of ``FOUR_GAUSSIANS``. ``seed`` fixes the
    draw (numpy's PCG64), so (n, seed) gives the same data on any machine.
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 4 or n % 4:
        raise ValueError(f"n must be a positive multiple of 4 (n/4 points per Gaussian), got {n!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    q = int(n) // 4
    X = np.concatenate([
        np.asarray(mean) + rng.standard_normal((q, 2)) * np.sqrt(np.asarray(var))
        for mean, var, _, _ in FOUR_GAUSSIANS
    ])
    y = np.repeat([label for _, _, label, _ in FOUR_GAUSSIANS], q)
    group = np.repeat([g for _, _, _, g in FOUR_GAUSSIANS], q)
    lo, hi = X.min(axis=0), X.max(axis=0)
    X = (X - lo) / (hi - lo)
    return np.ascontiguousarray(X), y.astype(float), group.astype(np.int64)
