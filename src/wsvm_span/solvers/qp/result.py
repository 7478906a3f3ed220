"""The result every QP backend returns."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class QPResult:
    """The result every QP backend returns (``solve_qp``).

    Parameters
    ----------
    x : ndarray of shape (n,) or None
        The minimiser (None unless optimal).
    objective : float
        1/2 x'Px + q'x; nan unless ``status == "optimal"``.
    status : str
        "optimal", "infeasible" or "failed:<solver status>".
    solver : str
        The backend that ran.
    eq_dual : ndarray of shape (k,) or None, default=None
        Multipliers nu of A_eq x = b_eq in the convention of the Lagrangian
        1/2 x'Px + q'x + nu'(A_eq x - b_eq) + (bound and G terms), i.e. stationarity reads
        P x + q + A_eq' nu + ... = 0 (the SVM+ dual reads its two biases from them); None unless optimal.

    Examples
    --------
    >>> from wsvm_span.solvers.qp import solve_qp
    >>> solve_qp([[2.0]], [-2.0], [[1.0]], [0.5], solver="clarabel").eq_dual.round(6).tolist()
    [1.0]
    """

    x: np.ndarray | None
    objective: float
    status: str
    solver: str
    eq_dual: np.ndarray | None = None
