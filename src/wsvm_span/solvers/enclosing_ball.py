"""D: diameter of the smallest ball enclosing the training set in feature space.

R^2 = max_beta  sum_i beta_i K_ii - beta' K beta,  beta >= 0, sum beta = 1  (method.md 3).

The full QP has l variables (12k for MNIST). Its solution is supported on a few points,
so it is solved exactly by a working-set method: solve the QP on a working set W, add the
points of the whole set that lie outside the ball, repeat until none does. At the end
every point satisfies ||phi(x_i) - c||^2 <= R^2 (1 + rtol), which is the optimality
condition of the full problem, so the result is the exact optimum to that tolerance.
"""
from __future__ import annotations

import numpy as np

from .qp import solve_qp

#: a point is inside the ball when its squared distance to the centre is at most R^2 (1 + rtol) plus
#: an absolute floor: the working-set QP is solved to ~1e-12, so a smaller slack would chase rounding
INSIDE_RTOL = 1e-9
INSIDE_ATOL = 1e-14
#: duality-gap tolerance of each working-set QP (D enters the span bound linearly)
BALL_QP_TOL = 1e-12
#: points added to the working set per round (the farthest outside ones)
MAX_ADDED_PER_ROUND = 64


def enclosing_ball_radius2(K, solver: str = "auto", rtol: float = INSIDE_RTOL,
                           max_add: int = MAX_ADDED_PER_ROUND) -> float:
    """R^2 of the smallest ball enclosing the points whose kernel matrix is K, in feature space.

    A working-set method: the ball of a few points (a QP on their kernel), grown by the farthest points
    outside it until every point is inside (certified on all l points).

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    solver : str, default="auto"
        QP solver of each working-set QP (``wsvm_span.solvers.qp.SOLVERS``).
    rtol : float
        A point is inside when its squared distance to the center is at most R^2 (1 + rtol).
    max_add : int
        Points added to the working set per round (the farthest outside ones).

    Returns
    -------
    float
        R^2 (0 for one point).

    Raises
    ------
    RuntimeError
        If a working-set QP fails.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> K = ws.rbf_kernel(np.array([[0.0], [1.0], [0.5]]), gamma=np.log(2.0))
    >>> round(ws.enclosing_ball_radius2(K), 6)  # phi(0), phi(1) at squared distance 2 - 2 * 0.5
    0.25
    """
    K = np.asarray(K, dtype=float)
    l = K.shape[0]
    diag = np.diag(K).copy()
    if l == 1:
        return 0.0
    # Start from the farthest pair seen from point 0 (a diameter-ish pair).
    d0 = diag + diag[0] - 2.0 * K[0]
    i = int(np.argmax(d0))
    di = diag + diag[i] - 2.0 * K[i]
    j = int(np.argmax(di))
    work = sorted({i, j})
    for _ in range(l):
        Kw = K[np.ix_(work, work)]
        res = solve_qp(2.0 * Kw, -diag[work], np.ones((1, len(work))), [1.0],
                       lb=np.zeros(len(work)), solver=solver, tol=BALL_QP_TOL)
        if res.status != "optimal":
            raise RuntimeError(f"enclosing-ball QP failed ({res.status}) on {len(work)} points")
        beta = np.maximum(res.x, 0.0)
        beta /= beta.sum()
        Kb = K[:, work] @ beta
        center_sq = float(beta @ Kb[work])
        radius2 = max(float(beta @ diag[work]) - center_sq, 0.0)
        dist2 = diag - 2.0 * Kb + center_sq
        outside = np.flatnonzero(dist2 > radius2 * (1.0 + rtol) + INSIDE_ATOL)
        outside = np.setdiff1d(outside, work)
        if outside.size == 0:
            return radius2
        worst = outside[np.argsort(dist2[outside])[::-1][:max_add]]
        # W only grows, so R^2(W) increases monotonically and the loop ends in at most
        # l / max_add rounds.
        work = sorted(set(work) | set(worst.tolist()))
    raise RuntimeError("enclosing-ball working-set method did not converge")


def enclosing_ball_diameter(K, solver: str = "auto") -> float:
    """D = 2 R, the diameter of the smallest ball enclosing the training points in feature space.

    The span bound's constant (method.md section 2.2); for RBF kernels D <= 2.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    solver : str, default="auto"
        QP solver (``wsvm_span.solvers.qp.SOLVERS``).

    Returns
    -------
    float
        D.

    Raises
    ------
    RuntimeError
        If a working-set QP fails.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> K = ws.rbf_kernel(np.array([[0.0], [1.0], [0.5]]), gamma=np.log(2.0))
    >>> round(ws.enclosing_ball_diameter(K), 6)
    1.0
    """
    return 2.0 * float(np.sqrt(enclosing_ball_radius2(K, solver=solver)))
