"""Result types: :class:`Split` (what :func:`~wsvm_span.data.load_dataset` returns) and
:class:`RawSplit` (a builder's unscaled output)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Split", "RawSplit"]


@dataclass(frozen=True, eq=False)
class RawSplit:
    """Unscaled train/test arrays produced by a data set's split rule.

    X_train : (l, p) float64, y_train : (l,) float64 in {-1, +1},
    X_test : (m, p) float64, y_test : (m,) float64 in {-1, +1},
    scores : (l,) float64 in [0, 1] or None,
    X_priv : (l, p~) float64 privileged features of the training points (unscaled) or None,
    X_val : (v, p) float64, y_val : (v,) float64 in {-1, +1}: a separate validation sample, or None.
    """

    X_train: np.ndarray = field(repr=False)
    y_train: np.ndarray = field(repr=False)
    X_test: np.ndarray = field(repr=False)
    y_test: np.ndarray = field(repr=False)
    scores: np.ndarray | None = field(default=None, repr=False)
    X_priv: np.ndarray | None = field(default=None, repr=False)
    X_val: np.ndarray | None = field(default=None, repr=False)
    y_val: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class Split:
    """A scaled train/test split of one data set, ready for the SVM code.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"splice"`` or ``"ringnorm_d20_l1024"``.
    X_train : ndarray of shape (l, p), float64, C-contiguous
        Each feature scaled to [0, 1] by the training set's min and max (constant -> 0).
    y_train : ndarray of shape (l,), float64, values in {-1.0, +1.0}
        Training labels.
    X_test : ndarray of shape (m, p), float64, C-contiguous
        Same map as the training set; values may fall outside [0, 1].
    y_test : ndarray of shape (m,), float64, values in {-1.0, +1.0}
        Test labels.
    d : int
        Feature count of the paper, used for the RBF width gamma = 1 / d. Equal to p except
        for MNIST (d = 780, p = 784 pixels).
    scores : ndarray of shape (l,), float64 in [0, 1], or None
        Importance scores q_i of the training points (parkinson_speech, bank_marketing, w_mixture).
    X_priv : ndarray of shape (l, p~), float64, or None
        Privileged features of the training points (available for training only: SVM+), each
        scaled to [0, 1] by the training set's min and max (parkinson_speech: UPDRS;
        bank_marketing: call duration; w_mixture: the true P(y_i | x_i)).
    X_val : ndarray of shape (v, p), float64, or None
        A separate validation sample (w_mixture), scaled like the test set.
    y_val : ndarray of shape (v,), float64 in {-1.0, +1.0}, or None
        Validation labels.
    seed : int or None
        Seed of the random split (None when the split rule is not random).
    realization : int or None
        IDA realization (None for the other data sets).
    checksums : dict relpath -> sha256
        Pinned sha256 (decompressed content) of every file the split was built from.

    Examples
    --------
    >>> from wsvm_span.data import load_dataset
    >>> split = load_dataset("ringnorm_d2_l40", seed=0)
    >>> split.name, split.seed, split.realization, split.scores is None
    ('ringnorm_d2_l40', 0, None, True)
    """

    name: str
    X_train: np.ndarray = field(repr=False)
    y_train: np.ndarray = field(repr=False)
    X_test: np.ndarray = field(repr=False)
    y_test: np.ndarray = field(repr=False)
    d: int
    scores: np.ndarray | None = field(default=None, repr=False)
    X_priv: np.ndarray | None = field(default=None, repr=False)
    X_val: np.ndarray | None = field(default=None, repr=False)
    y_val: np.ndarray | None = field(default=None, repr=False)
    seed: int | None = None
    realization: int | None = None
    checksums: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def n_test(self) -> int:
        return int(self.X_test.shape[0])

    @property
    def n_features(self) -> int:
        """Columns of X (p), which may differ from :attr:`d`."""
        return int(self.X_train.shape[1])

    @property
    def gamma(self) -> float:
        """RBF kernel width of the study, 1 / d."""
        return 1.0 / self.d

    def __repr__(self) -> str:
        return (
            f"Split(name={self.name!r}, train={self.X_train.shape}, test={self.X_test.shape}, "
            f"d={self.d}, scores={'yes' if self.scores is not None else 'no'}, "
            f"privileged={'no' if self.X_priv is None else self.X_priv.shape[1]}, "
            f"validation={'no' if self.X_val is None else self.X_val.shape[0]}, "
            f"seed={self.seed}, realization={self.realization})"
        )
