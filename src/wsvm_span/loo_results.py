"""The result of an exact leave-one-out, :class:`LeaveOneOut`: what ``resampling.leave_one_out`` returns by
retraining and ``solution_path.loo_by_path`` by following paths. Its own module so that the solution path
need not import ``resampling``, which dispatches ``method="path"`` to it (layers import downward only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LeaveOneOut"]


@dataclass(frozen=True)
class LeaveOneOut:
    """Exact leave-one-out of a trained model, SV by SV (non-SVs are never LOO errors).

    Parameters
    ----------
    support : ndarray of int, shape (n,)
        The SVs left out: every SV of the full model, or the ``points`` asked for.
    decision_loo : ndarray of shape (n,)
        f^p(x_p), the decision value of the model trained without x_p.
    sets_unchanged : ndarray of bool, shape (n,)
        True where, without x_p, the in-bound and bounded sets are those of the full model minus p (the
        premise of Theorem 2).
    loo_error : float
        Fraction of l with y_p f^p(x_p) <= 0.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> loo = ws.leave_one_out(model, K)
    >>> loo.loo_error, loo.support.size
    (0.15, 22)
    """

    support: np.ndarray
    decision_loo: np.ndarray
    sets_unchanged: np.ndarray
    loo_error: float
