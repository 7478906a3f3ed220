"""What an engine is: the small protocol every trainer of the weighted SVM implements.

An engine solves the dual of method.md section 1 on a precomputed training kernel and returns
(alpha, b); :func:`wsvm_span.engines.fit_svm` turns that into a ``WeightedSVM``. Each engine
declares what it can do (:class:`Capabilities`), so that callers and the config schema can ask
the registry instead of hard-coding engine names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

#: LIBSVM's kernel-row cache (MB) for the LIBSVM engines: on a precomputed kernel a row is a copy,
#: not a computation, so the default cache suffices
LIBSVM_CACHE_MB = 200


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports.

    per_instance_weights : any C_i > 0 (False: one weight per class, C+ and C-)
    warm_start : can start from an earlier solution
    solution_path : can follow the exact path of (alpha, b) when the weights change
    """

    per_instance_weights: bool
    warm_start: bool = False
    solution_path: bool = False


class Engine(Protocol):
    """A trainer of the weighted SVM on a precomputed kernel."""

    #: the name users pass as ``engine=`` and write in the config (``svm.engine``)
    name: str
    #: one line for error messages and ``--help``
    description: str
    capabilities: Capabilities

    def solve(self, K: np.ndarray, y: np.ndarray, C: np.ndarray, tol: float) -> tuple[np.ndarray, float]:
        """Dual solution (alpha (l,), b) for the validated problem (K, y, C) at stopping tolerance tol."""
        ...
