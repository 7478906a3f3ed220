"""Feature scaling of the study: each feature mapped linearly to [0, 1] by the training set.

``x -> (x - min_train) / (max_train - min_train)``; a feature that is constant on the training
set maps to 0 (on the training *and* the test set). The test set goes through the same map, so
its values may fall outside [0, 1]; that is intended (no clipping).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MinMaxScaler01"]


class MinMaxScaler01:
    """scikit-learn style min-max scaler to [0, 1] with constant features mapped to 0.

    Attributes (after :meth:`fit`)
    ------------------------------
    data_min_ : ndarray of shape (n_features,)
    data_range_ : ndarray of shape (n_features,)
        ``max - min`` on the training set (0 for a constant feature).
    n_features_in_ : int
    """

    def fit(self, X: np.ndarray) -> "MinMaxScaler01":
        """Learn per-feature min and range from ``X`` of shape (n_samples, n_features)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"expected a non-empty 2-d array, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values")
        self.data_min_ = X.min(axis=0)
        self.data_range_ = X.max(axis=0) - self.data_min_
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Map ``X`` (n_samples, n_features) -> new float64 C-contiguous array, same shape.

        Training rows land in [0, 1] exactly (min -> 0.0, max -> 1.0); other rows may not.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected shape (n, {self.n_features_in_}), got {X.shape}")
        out = np.subtract(X, self.data_min_, dtype=np.float64)
        varying = self.data_range_ > 0
        out[:, varying] /= self.data_range_[varying]
        out[:, ~varying] = 0.0
        return np.ascontiguousarray(out)

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        return self.fit(X).transform(X)
