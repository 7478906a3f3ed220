"""Input checks shared by every public entry point.

Each checker returns a clean float64 array or raises ``ValueError`` with a message
that says what is wrong and how to fix it.
"""
from __future__ import annotations

import numpy as np

#: a training kernel is symmetric up to this fraction of max |K_ii|: kernels computed in two
#: triangles differ by rounding (~1e-16), a kernel of the wrong points by far more
SYMMETRY_RTOL = 1e-10

#: a kernel counts as positive semidefinite when K + PSD_RTOL * l * max |K_ii| I has a Cholesky factor. Rounding moves
#: a Gram matrix's eigenvalues by up to l times its entries' errors, and an RBF kernel computed as
#: exp(-gamma (|x|^2 + |x'|^2 - 2 x.x')) on features far from 0 has entries off by ~eps gamma |x|^2: at |x| ~ 1e4,
#: l = 400, gamma = 0.1 the smallest eigenvalue came out at -5.5e-7. A matrix that is no kernel (a distance, a sign
#: error) has negative eigenvalues of the size of its entries.
PSD_RTOL = 1e-8


def check_labels(y, n: int | None = None, *, name: str = "y") -> np.ndarray:
    """Return ``y`` as a float64 vector in {-1, +1} holding both classes.

    Raises ValueError for a wrong length, labels outside {-1, +1} or a single class.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels, got shape {y.shape}")
    if n is not None and y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} labels but the kernel matrix has {n} rows")
    bad = ~np.isin(y, (-1.0, 1.0))
    if bad.any():
        values = np.unique(y[bad])[:5]
        raise ValueError(f"{name} must hold labels in {{-1, +1}}; found {values.tolist()}")
    if np.all(y == y[0]):
        raise ValueError(
            f"{name} holds a single class ({int(y[0]):+d}) on {y.shape[0]} points; "
            "an SVM needs both classes in its training set"
        )
    return y


def check_class_labels(labels, n: int | None = None, *, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """(classes, class_index) of labels of any number of classes: ``classes`` sorted (as
    ``SVC.classes_``), ``class_index`` (l,) the position of each label in it.

    Raises ValueError for a wrong length, non-finite numeric labels or fewer than two classes.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels, got shape {labels.shape}")
    if n is not None and labels.shape[0] != n:
        raise ValueError(f"{name} has {labels.shape[0]} labels but the kernel matrix has {n} rows")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError(f"{name} contains NaN or inf labels")
    classes, class_index = np.unique(labels, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"{name} holds a single class ({classes.tolist()}) on {labels.shape[0]} points; "
            "a classifier needs at least two classes in its training set"
        )
    return classes, class_index


def check_kernel(K, *, name: str = "K", square: bool = True, symmetric: bool = True) -> np.ndarray:
    """Return ``K`` as a finite float64 C-contiguous matrix.

    ``square``/``symmetric`` are required for a training kernel (LIBSVM's dual assumes a
    symmetric Gram matrix); test blocks are rectangular.
    """
    K = np.ascontiguousarray(K, dtype=float)
    if K.ndim != 2:
        raise ValueError(f"{name} must be a 2-D kernel matrix, got shape {K.shape}")
    if square and K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be square (l x l) for training, got shape {K.shape}")
    # Row blocks keep the temporaries small: a 12k x 12k kernel is 1.1 GiB.
    block = max(1, 2**22 // max(1, K.shape[1]))
    for start in range(0, K.shape[0], block):
        if not np.isfinite(K[start:start + block]).all():
            raise ValueError(f"{name} contains NaN or inf; check the features and the kernel parameter")
    if square and symmetric:
        scale = max(1.0, float(np.abs(np.diag(K)).max(initial=0.0)))
        asym = max(
            (float(np.abs(K[s:s + block] - K[:, s:s + block].T).max()) for s in range(0, K.shape[0], block)),
            default=0.0,
        )
        if asym > SYMMETRY_RTOL * scale:
            raise ValueError(
                f"{name} is not symmetric (max |K - K'| = {asym:.3g}); a training kernel must be"
                " the Gram matrix K_ij = K(x_i, x_j) of the training set"
            )
    return K


def check_positive_semidefinite(K, *, name: str = "K") -> None:
    """Raise ``ValueError`` unless the symmetric matrix ``K`` is positive semidefinite to round-off
    (``PSD_RTOL``): one Cholesky factorization of a shifted copy, O(l^3 / 3)."""
    import scipy.linalg as sla

    l = K.shape[0]
    shift = PSD_RTOL * l * max(1.0, float(np.abs(np.diag(K)).max(initial=0.0)))
    try:
        sla.cholesky(K + shift * np.eye(l), lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        smallest = float(sla.eigh(K, eigvals_only=True, subset_by_index=[0, 0], check_finite=False)[0])
        raise ValueError(
            f"{name} is not positive semidefinite (smallest eigenvalue {smallest:.3g}): a kernel matrix is the Gram "
            "matrix of a feature map; check the kernel function (a sigmoid or a distance is not one)"
        ) from None


def check_weights(C, n: int, *, name: str = "C") -> np.ndarray:
    """Return per-instance weights C_i > 0 as a length-``n`` float64 vector.

    A scalar is broadcast (standard soft-margin SVM, C_i = C).
    """
    C = np.asarray(C, dtype=float)
    if C.ndim == 0:
        C = np.full(n, float(C))
    if C.ndim != 1 or C.shape[0] != n:
        raise ValueError(f"{name} must be a scalar or a vector of length {n}, got shape {C.shape}")
    if not np.isfinite(C).all():
        raise ValueError(f"{name} contains NaN or inf")
    if (C <= 0).any():
        i = int(np.flatnonzero(C <= 0)[0])
        raise ValueError(
            f"{name} must be positive (C_i > 0 for every instance); {name}[{i}] = {C[i]!r}. "
            "Drop zero-weight points from the training set instead"
        )
    return C


def check_features(X, *, name: str = "X") -> np.ndarray:
    """Return a finite float64 feature matrix of shape (n, d)."""
    X = np.ascontiguousarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if not np.isfinite(X).all():
        rows = np.flatnonzero(~np.isfinite(X).all(axis=1))[:5]
        raise ValueError(f"{name} contains NaN or inf (rows {rows.tolist()}...); clean or impute them")
    return X


def check_problem(K, y, C, *, check_input: bool = True):
    """(K, y, C) of a training problem: validated, or only converted to arrays when
    ``check_input`` is False (slices of an already validated problem)."""
    if check_input:
        K = check_kernel(K)
        return K, check_labels(y, K.shape[0]), check_weights(C, K.shape[0])
    y = np.asarray(y, dtype=float)
    return K, y, np.broadcast_to(np.asarray(C, dtype=float), y.shape).astype(float)


def check_int(value, name: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``; bools and floats are refused (4.0 draws is a typo)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_features_problem(X, y, C, gamma):
    """(X, y, C) of a training problem given by features and an RBF parameter gamma, validated:
    X finite (l, d), y in {-1, +1} with both classes, C_i > 0, gamma positive and finite."""
    X = check_features(X, name="X")
    if X.shape[0] == 0:
        raise ValueError("X has no rows")
    y = np.asarray(y)
    if y.ndim == 1 and y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} labels but X has {X.shape[0]} rows")
    y = check_labels(y)
    C = check_weights(C, X.shape[0])
    if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, (int, float, np.integer, np.floating)) \
            or not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a positive finite number, got {gamma!r}")
    return X, y, C, float(gamma)
