"""SpanSearchCV's grid points on more than two classes: LIBSVM's one-vs-one classifier and its
estimates (``wsvm_span.multiclass``, multiclass.md), behind the same four calls as the binary
``_search._GammaKernels``.

Per kernel, shared by every point: the machines' R_ij^2 (xi-alpha bound, always reported), their
enclosing-ball diameters D_ij (span bound) and the CV folds' kernels (cv_error), each only when wanted.
Labels are class positions (``SVC.classes_`` order). The counts n_sv, n_inbound, n_bounded of a point are
the training points that are an SV (in-bound, bounded SV) of at least one machine.
"""
from __future__ import annotations

import numpy as np

import wsvm_span as ws
from wsvm_span import multiclass as mc
from wsvm_span.kernels import _BLOCK_ELEMENTS, RBFRows, rbf_kernel

from ._memory import check_point_memory, row_loo_bytes, row_point_bytes

__all__ = ["OneVsOneKernels", "estimate_errors_one_vs_one"]


def estimate_errors_one_vs_one(model, K, wanted, *, diameters=None, radius2=None, folds=None,
                               fold_kernels=None) -> dict:
    """Multiclass error estimates of one trained ``OneVsOneSVM`` (fractions of l) for the criteria in
    ``wanted``, plus the free ones (xi-alpha, SV count): the binary ``estimate_errors``' counterpart."""
    out = {"xi_alpha_bound": mc.xi_alpha_bound(model, K, radius2=radius2), "sv_count_bound": mc.sv_count_bound(model)}
    if "span_bound" in wanted:
        out["span_bound"] = mc.span_bound(model, K, diameters=diameters)
    if wanted & {"span_rule", "span_bound"}:
        out["span_rule"] = mc.span_rule(model, K)
    if "cv_error" in wanted:
        out["cv_error"] = mc.kfold_cv_error(K, model.class_index, model.C, folds=folds, engine=model.engine,
                                            tol=model.tol, check_input=False, fold_kernels=fold_kernels)
    if "loo_error" in wanted:
        out["loo_error"] = mc.leave_one_out(model, K, check_input=False).loo_error
    return out


class OneVsOneKernels:
    """What every grid point of one kernel shares on a multiclass problem, and how a point is trained
    and estimated on it (the interface of ``_search._SharedKernel``).

    On a row cache (``kernels.RBFRows.cached``: no l x l array) each machine trains on the cache's rows restricted to
    its points, the span-rule reads each machine's SVs' blocks (``multiclass.span_rule``; each point first checks
    its largest machine's blocks against ``point_budget`` bytes), the machines' R_ij^2 come from the largest squared
    distances between the classes (``max_d2``: ``kernels.class_max_squared_distances``) and the held-out vote from
    blocks of the held-out rows (``X_held``) against the SVs."""

    def __init__(self, train, test, *, class_index, wanted, folds, max_d2=None, X_held=None, point_budget=None):
        self.train, self.test = train, test
        self.X_held, self.point_budget = X_held, point_budget
        self.row_cache = isinstance(train, RBFRows) and not train.in_place
        if self.row_cache:
            # K's largest entry is K_ii = 1, its smallest exp(-gamma max D2) over the machine's two classes
            self.radius2 = np.array([train.radius2(max(max_d2[i, i], max_d2[j, j], max_d2[i, j]))
                                     for i, j in mc.machine_pairs(max_d2.shape[0])])
            self.diameters = self.fold_kernels = None
            return
        self.radius2 = mc.machine_radius2(train, class_index)
        self.diameters = mc.machine_diameters(train, class_index) if "span_bound" in wanted else None
        self.fold_kernels = ws.FoldKernels(train, folds) if "cv_error" in wanted else None

    def fit_model(self, class_index, C, tol, engine, previous=None):
        return mc.fit_one_vs_one(self.train, class_index, C, engine=engine, tol=tol, check_input=False,
                                 warm_from=previous)

    def estimates(self, model, wanted, folds, fold_starts=None) -> dict:
        # fold_starts: the binary walk's; the multiclass CV starts its machines from zero
        if self.row_cache and "span_rule" in wanted:
            # the machines' spans one after another: the largest machine's blocks at once
            largest = max(model.machines, key=lambda m: row_point_bytes(m.inbound.size, m.bounded.size))
            check_point_memory(row_point_bytes(largest.inbound.size, largest.bounded.size), self.point_budget,
                               f"span-rule on a machine of {largest.inbound.size:,} in-bound SVs")
        if self.row_cache and "loo_error" in wanted:
            largest = max(model.machines, key=lambda m: row_loo_bytes(m.inbound.size, m.bounded.size))
            check_point_memory(row_loo_bytes(largest.inbound.size, largest.bounded.size), self.point_budget,
                               f"exact LOO on a machine of {largest.inbound.size:,} in-bound SVs")
        return estimate_errors_one_vs_one(model, self.train, wanted, diameters=self.diameters, radius2=self.radius2,
                                          folds=folds, fold_kernels=self.fold_kernels)

    @staticmethod
    def training_accuracy(model) -> float:
        return float(np.mean(mc.vote(model.decision_train, model.pairs, model.n_classes) == model.class_index))

    def heldout_error(self, model, class_index_held) -> float:
        if not self.row_cache:
            return float(np.mean(model.predict_index(self.test) != class_index_held))
        # the machines' decision values at blocks of held-out rows against the SVs' features (no m x l block)
        K, sup = self.train, model.support
        X_sv = K.X[sup]
        step = max(1, _BLOCK_ELEMENTS // max(1, sup.size))
        wrong = 0
        for start in range(0, self.X_held.shape[0], step):
            block = rbf_kernel(X_sv, self.X_held[start:start + step], K.gamma)
            voted = mc.vote(model.decisions_at(block), model.pairs, model.n_classes)
            wrong += int(np.sum(voted != class_index_held[start:start + step]))
        return wrong / self.X_held.shape[0]
