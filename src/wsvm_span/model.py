"""The model family: a trained weighted (fuzzy) SVM (method.md section 1).

Every engine (``wsvm_span.engines``) returns the same ``WeightedSVM``: alpha (dual variables,
>= 0), b, and the index sets of method.md (support vectors, in-bound SVs 0 < a_i < C_i, bounded
SVs a_i = C_i), built from the engine's dual solution by :func:`make_model`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kernels import rbf_expansion
from .utils.validation import check_features

#: relative tolerance for "a_i = C_i" and "a_i = 0". LIBSVM clips alphas to their
#: bounds exactly, so this only absorbs the rounding of C_i itself.
BOUND_RTOL = 1e-9


@dataclass(frozen=True)
class WeightedSVM:
    """A trained weighted SVM.

    Attributes
    ----------
    alpha : (l,) dual variables, 0 for non-support vectors
    b : bias of f(x) = sum_i alpha_i y_i K(x_i, x) + b
    y : (l,) training labels in {-1, +1}
    C : (l,) instance weights C_i
    decision_train : (l,) f(x_i) on the training points, as computed from the solution
    support, inbound, bounded : sorted index arrays (in-bound: 0 < a_i < C_i; bounded: a_i = C_i)
    engine : name of the engine that trained it (``wsvm_span.engines``); estimators that retrain
        (CV, exact LOO) use the same engine
    tol : the engine's stopping tolerance
    fit_time : seconds spent in the engine (the kernel is precomputed and not counted)
    """

    alpha: np.ndarray
    b: float
    y: np.ndarray
    C: np.ndarray
    decision_train: np.ndarray
    support: np.ndarray
    inbound: np.ndarray
    bounded: np.ndarray
    engine: str
    tol: float
    fit_time: float = field(default=0.0, compare=False)

    @property
    def n_train(self) -> int:
        return int(self.y.shape[0])

    @property
    def coef(self) -> np.ndarray:
        """(l,) y_i alpha_i."""
        return self.y * self.alpha

    @property
    def margins(self) -> np.ndarray:
        """(l,) y_i f(x_i) on the training set."""
        return self.y * self.decision_train

    @property
    def slacks(self) -> np.ndarray:
        """(l,) xi_i = max(0, 1 - y_i f(x_i))."""
        return np.maximum(0.0, 1.0 - self.margins)

    def decision_function(self, K_rows) -> np.ndarray:
        """f(x) for new points. K_rows: (m, l) kernel block between them and the training set."""
        K_rows = np.asarray(K_rows, dtype=float)
        if K_rows.ndim != 2 or K_rows.shape[1] != self.n_train:
            raise ValueError(
                f"K_rows must have shape (m, {self.n_train}) (new points x training points), "
                f"got {K_rows.shape}"
            )
        # coef is zero off the support; a full row-major GEMV beats gathering SV columns
        # (which copies an m x n block: ~1 GB for skin_nonskin's 245k test points).
        return K_rows @ self.coef + self.b

    def restricted(self, idx) -> "WeightedSVM":
        """The model's quantities on the training points ``idx`` only (positions, ascending or with the
        in-bound SVs first), with ``support``/``inbound``/``bounded`` as positions in ``idx``: what the
        span computations read when handed the kernel among those points alone (K[np.ix_(idx, idx)]),
        e.g. a model's SVs. ``idx`` must hold every SV whose spans are wanted."""
        idx = np.asarray(idx)
        position = np.full(self.n_train, -1)
        position[idx] = np.arange(idx.size)

        def within(part):
            at = position[part]
            return np.sort(at[at >= 0])

        return WeightedSVM(
            alpha=self.alpha[idx], b=self.b, y=self.y[idx], C=self.C[idx], decision_train=self.decision_train[idx],
            support=within(self.support), inbound=within(self.inbound), bounded=within(self.bounded),
            engine=self.engine, tol=self.tol,
        )


def classify_dual(alpha, C):
    """(alpha, support, inbound, bounded): alphas clipped to [0, C_i] and snapped to 0 and C_i
    within BOUND_RTOL, as every engine's solution is read."""
    alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, C)
    nonzero = alpha > BOUND_RTOL * C
    support = np.flatnonzero(nonzero)
    alpha[~nonzero] = 0.0
    at_bound = alpha[support] >= C[support] * (1.0 - BOUND_RTOL)
    alpha[support[at_bound]] = C[support[at_bound]]
    return alpha, support, support[~at_bound], support[at_bound]


def make_model(K, y, C, alpha, b, *, engine: str, tol: float, fit_time: float = 0.0) -> WeightedSVM:
    """Build a ``WeightedSVM`` from a dual solution: classify SVs and compute f on the training set."""
    alpha, support, inbound, bounded = classify_dual(alpha, C)
    # K is symmetric: f = K[:, S] c_S = c_S K[S, :], and row slices copy contiguously.
    decision = (y[support] * alpha[support]) @ K[support] + b
    return WeightedSVM(
        alpha=alpha, b=float(b), y=y, C=C, decision_train=decision, support=support,
        inbound=inbound, bounded=bounded, engine=engine, tol=float(tol), fit_time=fit_time,
    )


def make_model_from_features(
    X, y, C, alpha, b, *, gamma: float, engine: str, tol: float, fit_time: float = 0.0,
    block_rows: int | None = None,
) -> WeightedSVM:
    """``make_model`` for an RBF model trained on features X, without the l x l kernel: f on the
    training set is computed in kernel blocks against the SVs only (``kernels.rbf_expansion``).

    X, y, C must be validated already (the engines' features entry point does it).
    """
    alpha, support, inbound, bounded = classify_dual(alpha, C)
    decision = rbf_expansion(X[support], y[support] * alpha[support], X, gamma, block_rows=block_rows) + b
    return WeightedSVM(
        alpha=alpha, b=float(b), y=y, C=C, decision_train=decision, support=support,
        inbound=inbound, bounded=bounded, engine=engine, tol=float(tol), fit_time=fit_time,
    )


def decision_values(model: WeightedSVM, X_train, Z, gamma: float, *, block_rows: int | None = None) -> np.ndarray:
    """f(z) for new points Z ((m, d)) of an RBF model trained on features X_train ((l, d)), in
    kernel blocks against the SVs only (``WeightedSVM.decision_function`` needs an (m, l) block)."""
    X_train = check_features(X_train, name="X_train")
    if X_train.shape[0] != model.n_train:
        raise ValueError(f"X_train has {X_train.shape[0]} rows, the model {model.n_train} points")
    Z = check_features(Z, name="Z")
    if Z.shape[1] != X_train.shape[1]:
        raise ValueError(f"Z has {Z.shape[1]} features, X_train {X_train.shape[1]}")
    sv = model.support
    return rbf_expansion(X_train[sv], model.coef[sv], Z, gamma, block_rows=block_rows) + model.b
