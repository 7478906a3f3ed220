"""Importance scores q_i of Experiment 2, for the training set only.

* parkinson_speech: q_i = UPDRS of the recording's subject, scaled to [0, 1] over the training
  set's patients (class 1, label +1): ``(u - min) / (max - min)``; q_i = 1 for healthy subjects
  (class 0, label -1).
* bank_marketing: q_i = call duration scaled to [0, 1] over the training set.

A constant quantity (max == min) scales to 0, as features do.
"""

from __future__ import annotations

import numpy as np

__all__ = ["scale_01", "parkinson_scores", "bank_scores"]


def scale_01(values: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """``(values - min) / (max - min)`` with min/max taken over ``reference`` (default: values).

    Returns a float64 array shaped like ``values``; all zeros when the reference is constant.
    """
    values = np.asarray(values, dtype=np.float64)
    ref = values if reference is None else np.asarray(reference, dtype=np.float64)
    if ref.size == 0:
        raise ValueError("empty reference set")
    lo, hi = ref.min(), ref.max()
    if hi == lo:
        return np.zeros_like(values)
    return (values - lo) / (hi - lo)


def parkinson_scores(updrs_train: np.ndarray, y_train: np.ndarray) -> np.ndarray:
    """Scores of shape (l,): patients (y = +1) get their scaled UPDRS, healthy (y = -1) get 1."""
    updrs_train = np.asarray(updrs_train, dtype=np.float64)
    patient = np.asarray(y_train) > 0
    q = np.ones(updrs_train.shape, dtype=np.float64)
    if patient.any():
        q[patient] = scale_01(updrs_train[patient])
    return q


def bank_scores(duration_train: np.ndarray) -> np.ndarray:
    """Scores of shape (l,): call duration scaled to [0, 1] over the training set."""
    return scale_01(duration_train)
