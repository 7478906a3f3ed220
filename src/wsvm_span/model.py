"""The model family: a trained weighted (fuzzy) SVM (method.md section 1).

Every engine (``wsvm_span.engines``) returns the same ``WeightedSVM``: alpha (dual variables,
>= 0), b, and the index sets of method.md (support vectors, in-bound SVs 0 < a_i < C_i, bounded
SVs a_i = C_i), built from the engine's dual solution by :func:`make_model`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kernels import kernel_expansion, rbf_expansion
from .utils.validation import check_features

#: relative tolerance for "a_i = C_i" and "a_i = 0". LIBSVM clips alphas to their
#: bounds exactly, so this only absorbs the rounding of C_i itself.
BOUND_RTOL = 1e-9


@dataclass(frozen=True)
class WeightedSVM:
    """A trained weighted SVM: f(x) = sum_i alpha_i y_i K(x_i, x) + b.

    Every engine returns one (``fit_svm``, ``fit_features``); it is built from an engine's dual solution,
    not by hand. Frozen: its fields are the solution.

    Parameters
    ----------
    alpha : ndarray of shape (l,)
        Dual variables, 0 for non-support vectors.
    b : float
        The bias.
    y : ndarray of shape (l,)
        Training labels in {-1, +1}.
    C : ndarray of shape (l,)
        Instance weights C_i.
    decision_train : ndarray of shape (l,)
        f(x_i) on the training points, as computed from the solution.
    support, inbound, bounded : ndarray of int
        Sorted index arrays: the support vectors, the in-bound ones (0 < a_i < C_i) and the bounded
        ones (a_i = C_i).
    engine : str
        Name of the engine that trained it (``wsvm_span.engines``); estimators that retrain (CV, exact
        LOO) use the same engine.
    tol : float
        The engine's stopping tolerance.
    fit_time : float, default=0.0
        Seconds spent in the engine (a precomputed kernel is not counted).

    Attributes
    ----------
    n_train : int
        l, the number of training points.
    coef : ndarray of shape (l,)
        y_i alpha_i.
    margins : ndarray of shape (l,)
        y_i f(x_i) on the training set.
    slacks : ndarray of shape (l,)
        xi_i = max(0, 1 - y_i f(x_i)).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> model = ws.fit_svm(ws.rbf_kernel(X, gamma=0.5), y, C=1.0)
    >>> f = model.decision_function(ws.rbf_kernel(X[:3], X, gamma=0.5))
    >>> bool(np.allclose(f, model.decision_train[:3]))
    True
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
        """f(x) for new points.

        Parameters
        ----------
        K_rows : array-like of shape (m, l)
            Kernel block between the new points and the training set.

        Returns
        -------
        ndarray of shape (m,)
            The decision values; the predicted label is their sign.

        Raises
        ------
        ValueError
            If ``K_rows`` is not (m, l).
        """
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
        """The model's quantities on the training points ``idx`` only.

        What the span computations read when handed the kernel among those points alone
        (``K[np.ix_(idx, idx)]``), e.g. a model's SVs: ``support``, ``inbound`` and ``bounded`` become
        positions in ``idx``.

        Parameters
        ----------
        idx : array-like of int
            Training indices, ascending or with the in-bound SVs first; they must hold every SV whose spans
            are wanted.

        Returns
        -------
        WeightedSVM
            The restricted model (same b, engine and tolerance).

        Examples
        --------
        >>> import numpy as np
        >>> import wsvm_span as ws
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
        >>> K = ws.rbf_kernel(X, gamma=0.5)
        >>> model = ws.fit_svm(K, y, C=1.0)
        >>> sv = model.support
        >>> ws.span_rule(model.restricted(sv), K[np.ix_(sv, sv)]) * sv.size == ws.span_rule(model, K) * 40
        True
        """
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


def classify_alpha(alpha, C):
    """(alpha, support, inbound, bounded): alphas clipped to [0, C_i] and snapped to 0 and C_i
    within BOUND_RTOL, as every engine's solution is read (a ``WeightedSVM``'s sets, and those of the
    retrainings that CV and leave-one-out do not build a model for)."""
    alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, C)
    is_sv = alpha > BOUND_RTOL * C
    alpha[~is_sv] = 0.0
    support = np.flatnonzero(is_sv)
    at_bound = alpha[support] >= C[support] * (1.0 - BOUND_RTOL)
    alpha[support[at_bound]] = C[support[at_bound]]
    return alpha, support, support[~at_bound], support[at_bound]


def make_model(K, y, C, alpha, b, *, engine: str, tol: float, fit_time: float = 0.0,
               expansion=None) -> WeightedSVM:
    """Build a ``WeightedSVM`` from a dual solution: classify SVs and compute f on the training set.

    ``expansion``: h = K (y alpha) on the training points when the engine has it already (SMO's gradient G
    gives h = y (G + 1)): f = h + b then costs no kernel pass, only a correction for the alphas that
    ``classify_alpha`` snapped to their bounds.
    """
    raw = np.asarray(alpha, dtype=float)
    alpha, support, inbound, bounded = classify_alpha(raw, C)
    if expansion is None:
        decision = kernel_expansion(K, y[support] * alpha[support], support) + b
    else:
        snapped = np.flatnonzero(alpha != raw)
        decision = kernel_expansion(K, y[snapped] * (alpha[snapped] - raw[snapped]), snapped,
                                    out=np.array(expansion, dtype=float)) + b
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
    alpha, support, inbound, bounded = classify_alpha(alpha, C)
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
