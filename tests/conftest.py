"""Shared fixtures: small random weighted-SVM problems with an RBF kernel."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from wsvm_span import rbf_kernel

#: the study's data mirror: ``shared/data`` beside the repository (CI clones it there)
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Problem:
    X: np.ndarray
    y: np.ndarray
    K: np.ndarray
    C: np.ndarray
    gamma: float


def make_problem(seed: int, l: int, weighting: str = "class", d: int = 3) -> Problem:
    """Two overlapping Gaussian classes, RBF kernel, class or per-instance weights.

    "imbalanced": 10% positives weighted 10x, a regime where Lemma 1 often fails.
    """
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(l) < (0.1 if weighting == "imbalanced" else 0.4), 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    X = rng.standard_normal((l, d)) + 0.9 * y[:, None] * np.eye(d)[0]
    if weighting == "imbalanced":  # strongly overlapping classes
        X = rng.standard_normal((l, 2)) + 0.3 * y[:, None]
    gamma = 0.05 if weighting == "imbalanced" else float(rng.choice([0.1, 0.3, 1.0]))
    K = rbf_kernel(X, None, gamma)
    if weighting == "imbalanced":
        C = np.where(y > 0, 10.0, 1.0) * 2.0 ** rng.uniform(-1, 1)
    elif weighting == "class":
        c_plus, c_minus = 2.0 ** rng.uniform(-2, 5, size=2)
        C = np.where(y > 0, c_plus, c_minus)
    else:
        C = 2.0 ** rng.uniform(-2, 5) * rng.lognormal(0.0, 0.7, size=l)
    return Problem(X, y, K, C, gamma)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the data mirror {SHARED_DATA} is missing (CI clones shared/ beside the repo)")
    return SHARED_DATA
