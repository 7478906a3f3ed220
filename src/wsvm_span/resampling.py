"""Estimates that retrain: stratified K-fold CV and the exact leave-one-out error.

Both slice the ONE precomputed training kernel; nothing here recomputes kernel values. Every
retraining uses the engine (and tolerance) of the model it estimates. ``method="path"`` gets the
same models by following the exact solution path from the full model instead (zeroing the left-out
weights, ``wsvm_span.solution_path``); a path that fails its KKT check is replaced by LIBSVM.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .engines import AUTO, DEFAULT_TOL, fit_svm
from .model import WeightedSVM
from .utils.validation import check_class_labels, check_kernel, check_problem

#: how the left-out models are obtained: trained from scratch, or reached by the exact solution path
METHODS = ("retrain", "path")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def stratified_folds(y, k: int = 5, seed: int = 0) -> np.ndarray:
    """Fold id in 0..k-1 for every point, stratified by class and fixed by ``seed``.

    Within each class the points are shuffled and dealt round-robin, so the fold sizes of
    a class differ by at most one. Returns an (l,) int array; the same (y, k, seed) gives
    the same folds on any machine (numpy's PCG64 generator). ``y`` may hold any number of
    classes (the multiclass CV of ``wsvm_span.multiclass``); they are dealt in sorted order.
    """
    _, class_index = check_class_labels(y)
    if not (isinstance(k, (int, np.integer)) and k >= 2):
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if k > class_index.shape[0]:
        raise ValueError(f"k = {k} folds need at least {k} points, got {class_index.shape[0]}")
    rng = np.random.default_rng(seed)
    folds = np.empty(class_index.shape[0], dtype=np.int64)
    offset = 0
    for label in range(class_index.max() + 1):
        idx = np.flatnonzero(class_index == label)
        idx = idx[rng.permutation(idx.size)]
        folds[idx] = (np.arange(idx.size) + offset) % k
        offset += idx.size  # continue the deal so small classes do not all start at fold 0
    return folds


class FoldKernels:
    """The training kernel of every CV fold, ``K[np.ix_(train, train)]``, sliced once and shared by every
    model of a grid.

    Slicing a fold's kernel copies (0.8 l)^2 values: on MNIST (l = 11907) that is 0.7 GB per fold and
    costs more than training the fold model, so a grid job slices the folds once when they fit in its
    memory (:meth:`nbytes` tells how much they take: about 3.2 l^2 doubles for 5 folds).
    """

    def __init__(self, K, folds):
        K = np.asarray(K, dtype=float)
        self.folds = np.asarray(folds)
        if self.folds.shape != (K.shape[0],):
            raise ValueError(f"folds must have shape ({K.shape[0]},), got {self.folds.shape}")
        self.parts = []
        for fold in np.unique(self.folds):
            held, train = np.flatnonzero(self.folds == fold), np.flatnonzero(self.folds != fold)
            self.parts.append((fold, held, train, np.ascontiguousarray(K[np.ix_(train, train)])))

    @staticmethod
    def nbytes(folds) -> int:
        """Bytes the fold kernels of these fold ids take."""
        folds = np.asarray(folds)
        return int(sum(8 * np.sum(folds != f) ** 2 for f in np.unique(folds)))


def resolve_folds(y, k: int, seed: int, folds=None, fold_kernels: FoldKernels | None = None) -> np.ndarray:
    """The (l,) fold ids of a K-fold CV: ``fold_kernels``' folds, else ``folds``, else
    ``stratified_folds(y, k, seed)``; a ValueError when they disagree or have the wrong shape."""
    l = np.shape(y)[0]
    if fold_kernels is not None:
        if folds is not None and not np.array_equal(np.asarray(folds), fold_kernels.folds):
            raise ValueError("fold_kernels were built for other folds")
        folds = fold_kernels.folds
    folds = stratified_folds(y, k, seed) if folds is None else np.asarray(folds)
    if folds.shape != (l,):
        raise ValueError(f"folds must have shape ({l},), got {folds.shape}")
    return folds


def fold_parts(folds, fold_kernels: FoldKernels | None = None):
    """(fold, held-out indices, training indices, training kernel or None) per fold: the sliced kernels
    of ``fold_kernels`` when given (None: the caller slices)."""
    if fold_kernels is not None:
        return fold_kernels.parts
    return [(fold, np.flatnonzero(folds == fold), np.flatnonzero(folds != fold), None) for fold in np.unique(folds)]


def kfold_cv_error(
    K, y, C, k: int = 5, seed: int = 0, *, folds=None, engine: str = AUTO, tol: float = DEFAULT_TOL,
    check_input: bool = True, fold_kernels: FoldKernels | None = None, method: str = "retrain",
) -> float:
    """Stratified k-fold CV error: each fold model trained with the instance weights of
    its training part, errors counted on the held-out part (f = 0 counts as an error).

    ``folds`` ((l,) fold ids) overrides ``k``/``seed`` so a grid can share one split;
    ``fold_kernels`` (built from K and the same folds) saves slicing the fold kernels again.
    ``method="path"``: the model on all l points (``engine``, ``tol``), then each fold model by
    the exact path that zeroes the fold's weights (``fold_kernels`` is not needed then).
    """
    K, y, C = check_problem(K, y, C, check_input=check_input)
    folds = resolve_folds(y, k, seed, folds, fold_kernels)
    if _check_method(method) == "path":
        # solution_path builds on this module (its LOO result is a LeaveOneOut): imported on use
        from .solution_path.uses import kfold_cv_by_path

        model = fit_svm(K, y, C, engine=engine, tol=tol, check_input=False)
        return kfold_cv_by_path(model, K, folds, check_input=False).cv_error
    errors = 0
    for fold, held, train, K_train in fold_parts(folds, fold_kernels):
        y_tr = y[train]
        if np.all(y_tr == y_tr[0]):
            raise ValueError(f"fold {fold}'s training part holds a single class; use fewer folds")
        if K_train is None:
            K_train = K[np.ix_(train, train)]
        model = fit_svm(K_train, y_tr, C[train], engine=engine, tol=tol, check_input=False)
        sv = model.support
        # only the SV columns of the held-out rows: f = K[held, train_SV] (y a)_SV + b
        f = K[np.ix_(held, train[sv])] @ model.coef[sv] + model.b
        errors += int(np.sum(-y[held] * f >= 0))
    return errors / K.shape[0]


@dataclass(frozen=True)
class LeaveOneOut:
    """Exact leave-one-out of a trained model, SV by SV (non-SVs are never LOO errors).

    support : (n,) the SVs left out: every SV of the full model, or the ``points`` asked for
    decision_loo : (n,) f^p(x_p), the decision value of the model trained without x_p
    sets_unchanged : (n,) True where, without x_p, the in-bound and bounded sets are those
        of the full model minus p (the premise of Theorem 2)
    loo_error : fraction of l with y_p f^p(x_p) <= 0
    """

    support: np.ndarray
    decision_loo: np.ndarray
    sets_unchanged: np.ndarray
    loo_error: float


def leave_one_out(model: WeightedSVM, K, *, check_input: bool = True, method: str = "retrain",
                  points=None) -> LeaveOneOut:
    """Retrain without each SV of ``model`` (same weights, engine and tolerance) and classify it.

    ``method="path"``: each model without x_p is the end of the exact path c_p -> 0 from ``model``
    (a ``solution_path.PathLeaveOneOut``: the same fields plus the paths' events and fallbacks).
    ``points``: leave out only these SVs (ascending training indices; the multiclass LOO retrains a
    machine only for the points whose vote its LOO can change); ``support`` then holds them and
    ``loo_error`` counts their errors over l.
    """
    if _check_method(method) == "path":
        if points is not None:
            raise ValueError("points= is available with method='retrain' only")
        from .solution_path.uses import loo_by_path  # imported on use: it builds on this module

        return loo_by_path(model, K, check_input=check_input)
    K = check_kernel(K) if check_input else K
    l = model.n_train
    y, C = model.y, model.C
    sv = model.support
    if points is not None:
        points = np.asarray(points, dtype=np.int64)
        if not np.isin(points, sv).all():
            raise ValueError("points must be support vectors of the model (non-SVs are never LOO errors)")
        sv = points
    f_loo = np.empty(sv.size)
    unchanged = np.empty(sv.size, dtype=bool)
    inbound, bounded = set(model.inbound.tolist()), set(model.bounded.tolist())
    everyone = np.arange(l)
    for t, p in enumerate(sv):
        rest = np.delete(everyone, p)
        if np.all(y[rest] == y[rest][0]):
            # Removing p leaves one class: the reduced SVM is undefined, count an error.
            f_loo[t] = -y[p]
            unchanged[t] = False
            continue
        sub = fit_svm(K[np.ix_(rest, rest)], y[rest], C[rest], engine=model.engine, tol=model.tol,
                      check_input=False)
        f_loo[t] = float(K[p, rest][sub.support] @ sub.coef[sub.support] + sub.b)
        unchanged[t] = (set(rest[sub.inbound].tolist()) == inbound - {p}
                        and set(rest[sub.bounded].tolist()) == bounded - {p})
    error = float(np.sum(-y[sv] * f_loo >= 0)) / l
    return LeaveOneOut(support=sv, decision_loo=f_loo, sets_unchanged=unchanged, loo_error=error)


def loo_error(K, y, C, *, engine: str = AUTO, tol: float = DEFAULT_TOL, method: str = "retrain") -> float:
    """Exact leave-one-out error of the weighted SVM (K: (l, l), y: (l,), C: scalar or (l,));
    ``method``: as in :func:`leave_one_out`."""
    return leave_one_out(fit_svm(K, y, C, engine=engine, tol=tol), K, method=method).loo_error
