"""SVM+ (learning using privileged information) and its weighted-SVM equivalent (svm-plus.md).

- ``SVMPlusClassifier``: SVM+ as a scikit-learn classifier (features in, privileged features as fit metadata)
- ``fit_svm_plus``: the SVM+ dual on precomputed kernels (the decomposition solver made exact by active-set
  methods, the project's QP switch, or the active-set solver), from scratch or warm-started from a neighbouring
  solution (``feasible_start``); ``fit_svm_plus_rbf_rows``: the decomposition solver on RBF rows computed on demand
- ``svm_plus_weights`` / ``to_weighted_svm`` / ``weighted_to_svm_plus``: the equivalence
- ``leave_one_out`` / ``loo_rule``: LOO of SVM+ by retraining / from one factorization
- ``nadaraya_watson`` / ``probability_weights`` / ``learn_weights``: weights without
  privileged features
- ``evaluate_svm_plus`` / ``evaluate_weighted`` / ``kfold_cv_error``: one grid point of model
  selection (validation error, K-fold CV, span-rule, LOO rule, exact LOO), Experiment 8's library side
"""
from .equivalence import rho, svm_plus_weights, to_weighted_svm, weighted_to_svm_plus, zero_weight_errors
from .loo import SVMPlusLeaveOneOut, leave_one_out, loo_rule
from .model import SVMPlus
from .selection import (
    SelectionEvaluation,
    engine_kept_unpolished,
    evaluate_svm_plus,
    evaluate_weighted,
    kfold_cv_error,
)
from .estimator import SVMPlusClassifier, make_loo_scorer
from .solver import (
    ActiveSetFailure,
    feasible_start,
    fit_svm_plus,
    fit_svm_plus_rbf_rows,
    kept_unpolished,
    unpolished_solutions,
)
from .weight_schemes import (
    LearnedWeights,
    NWEstimate,
    learn_weights,
    nadaraya_watson,
    probability_weights,
    smooth_hinge,
    validation_loss,
)

__all__ = [
    "ActiveSetFailure", "LearnedWeights", "NWEstimate", "SVMPlus", "SVMPlusClassifier", "SVMPlusLeaveOneOut",
    "SelectionEvaluation",
    "engine_kept_unpolished", "evaluate_svm_plus", "evaluate_weighted", "feasible_start", "fit_svm_plus", "fit_svm_plus_rbf_rows",
    "kept_unpolished", "make_loo_scorer",
    "kfold_cv_error", "learn_weights", "leave_one_out", "loo_rule", "nadaraya_watson", "probability_weights", "rho",
    "smooth_hinge", "svm_plus_weights", "to_weighted_svm", "unpolished_solutions", "validation_loss",
    "weighted_to_svm_plus", "zero_weight_errors",
]
