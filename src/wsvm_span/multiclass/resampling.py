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
from ..resampling import FoldKernels, LeaveOneOut, fold_parts, resolve_folds
from ..resampling import leave_one_out as binary_leave_one_out
from ..utils.validation import check_class_labels, check_kernel
from .estimates import loo_predictions
from .model import OneVsOneSVM, fit_one_vs_one, vote

__all__ = ["OneVsOneLeaveOneOut", "kfold_cv_error", "leave_one_out", "loo_error"]


@dataclass(frozen=True)
class OneVsOneLeaveOneOut:
    """Exact leave-one-out of a one-vs-one classifier.

    machines : per machine, the binary ``LeaveOneOut`` of the SVs it was retrained without (positions in
        the machine's members; ``decision_loo`` = f^p(x_p), ``sets_unchanged`` = Theorem 2's premise)
    retrained : (l,) True for the points whose machines were retrained; the others keep their class
        (not an SV of any machine, or pruned: their vote stays c whatever the retraining gives)
    predictions : (l,) class positions of every point's LOO vote
    loo_error : fraction of l whose LOO vote differs from their class
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

    prune : skip the points whose vote cannot change (see the module doc); False retrains every
        (machine, SV) pair, e.g. to study the span-rule's identity on all of them.
    """
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
            loo = binary_leave_one_out(machine, K[np.ix_(idx, idx)], check_input=False, points=local)
        else:
            loo = LeaveOneOut(support=local, decision_loo=np.zeros(0), sets_unchanged=np.zeros(0, dtype=bool),
                              loo_error=0.0)
        per_machine.append(loo)
        decisions.append((idx[loo.support], loo.decision_loo))
    pred = loo_predictions(model, decisions, points)
    return OneVsOneLeaveOneOut(machines=tuple(per_machine), retrained=wanted, predictions=pred,
                               loo_error=float(np.sum(pred != model.class_index)) / model.n_train)


def loo_error(K, labels, C, *, engine: str = AUTO, tol: float = DEFAULT_TOL) -> float:
    """Exact leave-one-out error of the one-vs-one classifier (K: (l, l), labels: (l,), C: scalar or (l,))."""
    return leave_one_out(fit_one_vs_one(K, labels, C, engine=engine, tol=tol), K, check_input=False).loo_error


def kfold_cv_error(
    K, labels, C, k: int = 5, seed: int = 0, *, folds=None, engine: str = AUTO, tol: float = DEFAULT_TOL,
    check_input: bool = True, fold_kernels: FoldKernels | None = None,
) -> float:
    """Stratified k-fold CV error of the one-vs-one classifier: each fold's classifier trained with the
    weights of its training part, its vote counted on the held-out part.

    ``folds`` ((l,) fold ids, stratified over all classes by default: ``stratified_folds``) overrides
    ``k``/``seed`` so a grid can share one split; ``fold_kernels`` (built from K and the same folds) saves
    slicing the folds' kernels again.
    """
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
        if K_train is None:
            K_train = K[np.ix_(train, train)]
        model = fit_one_vs_one(K_train, class_index[train], C[train], engine=engine, tol=tol, check_input=False)
        # only the SV rows of the held-out columns: f = coef K[train_SV, held] + b
        F = model.decisions_at(K[np.ix_(train[model.support], held)])
        wrong = vote(F, model.pairs, model.n_classes) != class_index[held]
        if classes.size == 2:  # method.md's theta: f = 0 is an error for both classes
            wrong |= F[0] == 0.0
        errors += int(wrong.sum())
    return errors / l
