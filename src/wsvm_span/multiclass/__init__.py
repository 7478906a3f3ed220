"""Multiclass data: LIBSVM's one-vs-one classifier and its leave-one-out estimates (multiclass.md).

One training kernel for the whole problem; each of the k(k-1)/2 machines is an index set into it and a
binary ``WeightedSVM``, so every binary estimate of ``wsvm_span.span`` and ``wsvm_span.resampling`` is
reused per machine:

- :mod:`.model`: ``fit_one_vs_one``, the ``OneVsOneSVM`` and LIBSVM's ``vote``;
- :mod:`.estimates`: from ONE trained model, the span-rule (per-SV LOO decision values of Theorem 2 put
  into the vote), the union span bound, the xi-alpha and SV-count bounds, the test error;
- :mod:`.resampling`: the exact multiclass LOO error (retrains only the machines a left-out point is an SV
  of) and stratified K-fold CV.
The quantities keep the binary names (``span_rule``, ``loo_error``, ...), in this namespace.
"""
from .estimates import (
    loo_predictions,
    machine_diameters,
    machine_radius2,
    span_bound,
    span_rule,
    span_rule_decisions,
    span_rule_predictions,
    sv_count_bound,
    test_error,
    xi_alpha_bound,
)
from .model import OneVsOneSVM, fit_one_vs_one, machine_pairs, vote
from .resampling import OneVsOneLeaveOneOut, kfold_cv_error, leave_one_out, loo_error

__all__ = [
    "OneVsOneLeaveOneOut", "OneVsOneSVM", "fit_one_vs_one", "kfold_cv_error", "leave_one_out", "loo_error",
    "loo_predictions", "machine_diameters", "machine_pairs", "machine_radius2", "span_bound", "span_rule",
    "span_rule_decisions", "span_rule_predictions", "sv_count_bound", "test_error", "vote", "xi_alpha_bound",
]
