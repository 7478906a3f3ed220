"""The result every QP backend returns."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class QPResult:
    x: np.ndarray | None
    objective: float  # 1/2 x'Px + q'x, nan unless status == "optimal"
    status: str  # "optimal", "infeasible" or "failed:<solver status>"
    solver: str
    # Multipliers nu of A_eq x = b_eq in the convention of the Lagrangian
    # 1/2 x'Px + q'x + nu'(A_eq x - b_eq) + (bound and G terms), i.e. stationarity reads
    # P x + q + A_eq' nu + ... = 0 (the SVM+ dual reads its two biases from them);
    # None unless status == "optimal".
    eq_dual: np.ndarray | None = None
