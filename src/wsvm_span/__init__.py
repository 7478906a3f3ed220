"""wsvm_span: hyperparameter selection for weighted SVMs by leave-one-out estimates
computed from one trained model (span bound and span-rule), next to K-fold CV, the
xi-alpha bound, the SV-count bound and the exact leave-one-out error.

Numpy in, numpy out: every estimate takes the precomputed training kernel K ((l, l)),
labels y in {-1, +1} and instance weights C_i > 0.

Layout: ``model`` (the trained ``WeightedSVM``), ``engines`` (the trainers, one registry),
``span`` (span geometry and the estimates from one model), ``resampling`` (K-fold CV and exact
LOO, which retrain), ``multiclass`` (LIBSVM's one-vs-one classifier and its estimates), ``evaluation`` (one grid point), ``kernels``, ``weights``, ``solvers`` (the
QP switch and the enclosing ball), ``data`` (the study's data sets), ``study`` (the workflow's
library side), ``utils`` (input checks, atomic writes, environment).
"""
from .engines import ENGINE_NAMES, fit_features, fit_svm
from .evaluation import ModelEvaluation, evaluate_fitted, evaluate_model, test_error, test_error_by_class
from .kernels import KernelCache, kernel_radius2, rbf_kernel
from .model import WeightedSVM
from .resampling import (
    FoldKernels,
    FoldStarts,
    LeaveOneOut,
    kfold_cv_error,
    leave_one_out,
    loo_error,
    stratified_folds,
)
from .solvers.enclosing_ball import enclosing_ball_diameter, enclosing_ball_radius2
from .span import (
    SpanAnalysis,
    analyse_spans,
    inbound_diameter,
    span_bound,
    span_bound_separable,
    span_bound_standard,
    span_rule,
    span_rule_from_svs,
    sv_count_bound,
    xi_alpha_bound,
)
from .weights import class_weights, sigmoid_weights

__version__ = "0.1.0"

__all__ = [
    "ENGINE_NAMES", "FoldKernels", "FoldStarts", "KernelCache", "LeaveOneOut", "ModelEvaluation", "SpanAnalysis",
    "WeightedSVM",
    "analyse_spans", "class_weights", "enclosing_ball_diameter", "enclosing_ball_radius2", "evaluate_fitted",
    "evaluate_model", "fit_features", "fit_svm", "inbound_diameter", "kernel_radius2", "kfold_cv_error",
    "leave_one_out", "loo_error", "rbf_kernel", "sigmoid_weights", "span_bound", "span_bound_separable",
    "span_bound_standard", "span_rule", "span_rule_from_svs", "stratified_folds", "sv_count_bound", "test_error", "test_error_by_class",
    "xi_alpha_bound",
]
