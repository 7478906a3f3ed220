"""wsvm_span: hyperparameter selection for weighted SVMs by leave-one-out estimates
computed from one trained model (span bound and span-rule), next to K-fold CV, the
xi-alpha bound, the SV-count bound and the exact leave-one-out error.

Numpy in, numpy out: every estimator takes the precomputed training kernel K ((l, l)),
labels y in {-1, +1} and instance weights C_i > 0.
"""
from .enclosing_ball import enclosing_ball_diameter, enclosing_ball_radius2
from .environment import library_versions, machine_info, single_threaded
from .estimators import (
    SpanAnalysis,
    analyse_spans,
    span_bound,
    span_rule,
    sv_count_bound,
    test_error,
    xi_alpha_bound,
)
from .evaluation import ModelEvaluation, evaluate_model
from .kernels import KernelCache, kernel_radius2, rbf_kernel
from .qp import SolverUnavailableError, qp_fallback_reason, qp_solver_name, solve_qp
from .resampling import LeaveOneOut, kfold_cv_error, leave_one_out, loo_error, stratified_folds
from .svm import WeightedSVM, fit_svm
from .weights import class_weights, sigmoid_weights

__version__ = "0.1.0"

__all__ = [
    "KernelCache", "LeaveOneOut", "ModelEvaluation", "SolverUnavailableError", "SpanAnalysis",
    "WeightedSVM", "analyse_spans", "class_weights", "enclosing_ball_diameter",
    "enclosing_ball_radius2", "evaluate_model", "fit_svm", "kernel_radius2", "kfold_cv_error",
    "leave_one_out", "library_versions", "loo_error", "machine_info", "qp_fallback_reason",
    "qp_solver_name", "rbf_kernel", "sigmoid_weights", "single_threaded", "solve_qp",
    "span_bound", "span_rule", "stratified_folds", "sv_count_bound", "test_error",
    "xi_alpha_bound",
]
