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
    and estimated on it (the interface of ``_search._GammaKernels``)."""

    def __init__(self, train, test, *, class_index, wanted, folds):
        self.train, self.test = train, test
        self.radius2 = mc.machine_radius2(train, class_index)
        self.diameters = mc.machine_diameters(train, class_index) if "span_bound" in wanted else None
        self.fold_kernels = ws.FoldKernels(train, folds) if "cv_error" in wanted else None

    def fit_model(self, class_index, C, tol, engine, previous=None):
        return mc.fit_one_vs_one(self.train, class_index, C, engine=engine, tol=tol, check_input=False,
                                 warm_from=previous)

    def estimates(self, model, wanted, folds, fold_starts=None) -> dict:
        # fold_starts: the binary walk's; the multiclass CV starts its machines from zero
        return estimate_errors_one_vs_one(model, self.train, wanted, diameters=self.diameters, radius2=self.radius2,
                                          folds=folds, fold_kernels=self.fold_kernels)

    @staticmethod
    def training_accuracy(model) -> float:
        return float(np.mean(mc.vote(model.decision_train, model.pairs, model.n_classes) == model.class_index))

    def heldout_error(self, model, class_index_held) -> float:
        return float(np.mean(model.predict_index(self.test) != class_index_held))
