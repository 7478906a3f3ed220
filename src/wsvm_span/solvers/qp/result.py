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
