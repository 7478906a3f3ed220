"""Multiclass estimates that retrain: the exact LOO error of the one-vs-one classifier and stratified
K-fold CV (multiclass.md). Both slice the ONE training kernel; retraining uses the model's engine.

Exact LOO (the ground truth the span-rule estimates): without p (class c) only the machines (c, j) where
p is an SV change, so exactly those are retrained without p (the binary ``resampling.leave_one_out`` of
each machine, for the SVs it is asked for) and p's vote is taken with their new decision values.
Pruning skips points whose vote provably stays c: if c still wins when every one of those machines votes
against it, no retraining can make p an error. The result equals retraining on all points but p.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engines import AUTO, DEFAULT_TOL
from ..kernels import _BLOCK_ELEMENTS, RBFRows, kernel_entries
from ..resampling import FoldKernels, LeaveOneOut, fold_parts, resolve_folds
from ..resampling import leave_one_out as binary_leave_one_out
from ..utils.validation import check_class_labels, check_kernel
from .estimates import loo_predictions
from .model import OneVsOneSVM, fit_one_vs_one, vote

__all__ = ["OneVsOneLeaveOneOut", "kfold_cv_error", "leave_one_out", "loo_error"]


@dataclass(frozen=True)
class OneVsOneLeaveOneOut:
    """Exact leave-one-out of a one-vs-one classifier (built by :func:`leave_one_out`).

    Parameters
    ----------
    machines : tuple of LeaveOneOut
        Per machine, the binary ``LeaveOneOut`` of the SVs it was retrained without (positions in the
        machine's members; ``decision_loo`` = f^p(x_p), ``sets_unchanged`` = Theorem 2's premise).
    retrained : ndarray of bool, shape (l,)
        True for the points whose machines were retrained; the others keep their class (not an SV of any
        machine, or pruned: their vote stays their class whatever the retraining gives).
    predictions : ndarray of int, shape (l,)
        Class positions of every point's LOO vote.
    loo_error : float
        Fraction of l whose LOO vote differs from their class.

    Attributes
    ----------
    n_retrained : int
        Machines retrained in all, one per (machine, left-out SV) pair.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> loo = mc.leave_one_out(mc.fit_one_vs_one(K, labels, C=1.0), K)
    >>> round(loo.loo_error, 4), loo.n_retrained, int(loo.retrained.sum())
    (0.2667, 61, 34)
    """

    machines: tuple
    retrained: np.ndarray
    predictions: np.ndarray
    loo_error: float

    @property
    def n_retrained(self) -> int:
        """Machines retrained in all (one per (machine, left-out SV) pair)."""
        return int(sum(loo.support.size for loo in self.machines))


def _undecided(model: OneVsOneSVM) -> np.ndarray:
    """SV points whose LOO vote can differ from their class: with every machine where they are an SV
    voting against them (the worst case of retraining), they lose."""
    points = model.support
    against = [(idx[m.support], np.where(m.y[m.support] > 0, -np.inf, np.inf))
               for idx, m in zip(model.members, model.machines)]
    worst = loo_predictions(model, against, points)
    return points[worst[points] != model.class_index[points]]


def leave_one_out(model: OneVsOneSVM, K, *, check_input: bool = True, prune: bool = True) -> OneVsOneLeaveOneOut:
    """Retrain, for every SV point p, the machines where p is an SV without p, and take p's vote.

    Each machine's retrainings are the binary ``wsvm_span.leave_one_out`` of that machine (its engine and
    tolerance, and its warm starts where the engine has them) for the SVs that need them.

    Parameters
    ----------
    model : OneVsOneSVM
        The classifier trained on all l points.
    K : array-like of shape (l, l) or kernels.RBFRows
        Its training kernel; or a row cache of it (``RBFRows.cached``): each machine's retrainings then read a row
        cache of the machine's points, of the same size.
    check_input : bool, default=True
        Validate K.
    prune : bool, default=True
        Skip the points whose vote cannot change (see the module doc); False retrains every (machine, SV)
        pair, e.g. to study the span-rule's identity on all of them. The result is the same.

    Returns
    -------
    OneVsOneLeaveOneOut
        Per-machine retrainings, every point's LOO vote and the LOO error.

    Raises
    ------
    ValueError
        If K does not match the model.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> loo = mc.leave_one_out(model, K)
    >>> round(loo.loo_error, 4), model.classes[loo.predictions[:4]].tolist()
    (0.2667, ['a', 'b', 'a', 'b'])
    """
    rows_cache = isinstance(K, RBFRows) and not K.in_place
    if not rows_cache:
        K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    if K.shape != (model.n_train, model.n_train):
        raise ValueError(f"K must be the ({model.n_train}, {model.n_train}) training kernel of the model, got {K.shape}")
    points = _undecided(model) if prune else model.support
    wanted = np.zeros(model.n_train, dtype=bool)
    wanted[points] = True
    per_machine, decisions = [], []
    for idx, machine in zip(model.members, model.machines):
        local = machine.support[wanted[idx[machine.support]]]
        if local.size:
            # a row cache: the machine's retrainings on a row cache of its points, of the same size
            K_machine = (RBFRows.cached(K.X[idx], K.gamma, K.cache_mb, sq_norms=K.sq_norms[idx]) if rows_cache
                         else K[np.ix_(idx, idx)])
            loo = binary_leave_one_out(machine, K_machine, check_input=False, points=local)
        else:
            loo = LeaveOneOut(support=local, decision_loo=np.zeros(0), sets_unchanged=np.zeros(0, dtype=bool),
                              loo_error=0.0)
        per_machine.append(loo)
        decisions.append((idx[loo.support], loo.decision_loo))
    pred = loo_predictions(model, decisions, points)
    return OneVsOneLeaveOneOut(machines=tuple(per_machine), retrained=wanted, predictions=pred,
                               loo_error=float(np.sum(pred != model.class_index)) / model.n_train)


def loo_error(K, labels, C, *, engine: str = AUTO, tol: float = DEFAULT_TOL) -> float:
    """Exact leave-one-out error of the one-vs-one classifier: trains on all l points, then without each SV.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    labels : array-like of shape (l,)
        Labels of two or more classes.
    C : float or array-like of shape (l,)
        Positive instance weights.
    engine : str, default="auto"
        The engine (``ENGINE_NAMES``).
    tol : float, default=1e-7
        Its stopping tolerance.

    Returns
    -------
    float
        The LOO error, a fraction of l.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> round(mc.loo_error(K, labels, 1.0), 4)
    0.2667
    """
    return leave_one_out(fit_one_vs_one(K, labels, C, engine=engine, tol=tol), K, check_input=False).loo_error


def _held_out_decisions(model: OneVsOneSVM, K, sv_rows, held) -> np.ndarray:
    """The machines' decision values at the held-out points, f = coef K[SV rows, held] + b, from blocks of held-out
    columns of at most ``_BLOCK_ELEMENTS`` kernel entries (a row cache computes them from the features)."""
    F = np.empty((model.n_machines, held.size))
    step = max(1, _BLOCK_ELEMENTS // max(1, sv_rows.size))
    for start in range(0, held.size, step):
        cols = held[start:start + step]
        F[:, start:start + step] = model.decisions_at(kernel_entries(K, sv_rows, cols))
    return F


def kfold_cv_error(
    K, labels, C, k: int = 5, seed: int = 0, *, folds=None, engine: str = AUTO, tol: float = DEFAULT_TOL,
    check_input: bool = True, fold_kernels: FoldKernels | None = None,
) -> float:
    """Stratified k-fold CV error of the one-vs-one classifier: each fold's classifier is trained with the
    weights of its training part, and its vote is counted on the held-out part.

    Parameters
    ----------
    K : array-like of shape (l, l) or kernels.RBFRows
        The training kernel; or a row cache of it (``RBFRows.cached``): each fold's machines then train on a row
        cache of the fold's training points, of the same size, and the held-out votes read blocks of the SVs' rows.
    labels : array-like of shape (l,)
        Labels of two or more classes.
    C : float or array-like of shape (l,)
        Positive instance weights.
    k : int, default=5
        Number of folds (with ``seed``; not used when ``folds`` is given).
    seed : int, default=0
        Seed of ``wsvm_span.stratified_folds`` (stratified over all classes).
    folds : array-like of int, shape (l,), optional
        Fold ids, overriding k and seed, so that a grid can share one split.
    engine : str, default="auto"
        The engine that trains the folds' classifiers.
    tol : float, default=1e-7
        Its stopping tolerance.
    check_input : bool, default=True
        Validate K.
    fold_kernels : FoldKernels, optional
        The folds' kernels, built from K and the same folds, to save slicing them again.

    Returns
    -------
    float
        The CV error, a fraction of l (for k = 2, f = 0 counts as an error, as in the binary CV).

    Raises
    ------
    ValueError
        If the folds do not fit the labels, or a fold's training part lacks a class.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> round(mc.kfold_cv_error(K, labels, 1.0, k=5, seed=0), 4)
    0.2889
    """
    rows_cache = isinstance(K, RBFRows) and not K.in_place
    if not rows_cache:
        K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    classes, class_index = check_class_labels(labels, K.shape[0], name="labels")
    l = class_index.shape[0]
    C = np.broadcast_to(np.asarray(C, dtype=float), (l,))
    folds = resolve_folds(class_index, k, seed, folds, fold_kernels)
    errors = 0
    for fold, held, train, K_train in fold_parts(folds, fold_kernels):
        missing = np.setdiff1d(np.arange(classes.size), class_index[train])
        if missing.size:
            raise ValueError(f"fold {fold}'s training part has no point of class {classes[missing[0]]!r}; "
                             "use fewer folds")
        if rows_cache:
            # the fold's training points as a row cache of their own, of the same size (its machines' rows restricted
            # to them), freed with the fold
            K_train = RBFRows.cached(K.X[train], K.gamma, K.cache_mb, sq_norms=K.sq_norms[train])
        elif K_train is None:
            K_train = K[np.ix_(train, train)]
        model = fit_one_vs_one(K_train, class_index[train], C[train], engine=engine, tol=tol, check_input=False)
        F = _held_out_decisions(model, K, train[model.support], held)
        wrong = vote(F, model.pairs, model.n_classes) != class_index[held]
        if classes.size == 2:  # method.md's theta: f = 0 is an error for both classes
            wrong |= F[0] == 0.0
        errors += int(wrong.sum())
    return errors / l
