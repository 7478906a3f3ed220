"""Shared fixtures: small random weighted-SVM problems with an RBF kernel."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from wsvm_span import rbf_kernel

from cluster_support import local_cluster  # noqa: F401 - session fixture of the tests marked cluster
from figure_data import drawn  # noqa: F401 - the figures a test draws, to read their plotted numbers

#: the study's data mirror: ``shared/data`` beside the repository (CI clones it there)
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_ENV_MIRROR = os.environ.get("WSVM_DATA_MIRROR")
#: a local copy of the mirror (``WSVM_DATA_MIRROR`` when it names a folder)
LOCAL_MIRROR = Path(_ENV_MIRROR) if _ENV_MIRROR and Path(_ENV_MIRROR).is_dir() else SHARED_DATA


def require_mirror() -> None:
    """A missing mirror is a failure, never a silent skip of every data check."""
    if not (LOCAL_MIRROR / "manifest.json").is_file():
        pytest.fail(f"the data mirror {LOCAL_MIRROR} is missing: CI clones shared/ beside the repository; "
                    "elsewhere set WSVM_DATA_MIRROR to a copy of shared/data")


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
    require_mirror()
    return LOCAL_MIRROR
