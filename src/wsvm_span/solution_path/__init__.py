"""Exact solution path of the instance-weighted SVM (solution-path.md) and its uses.

``follow_path(model, K, c_new)`` moves an exact solution from weights model.C to c_new event
by event; ``loo_by_path``, ``kfold_cv_by_path``, ``sweep_class_grid``, ``sweep_chords`` and
``best_theta_on_segment`` build on it; ``measure_reference_path`` measures the reference experiment and
``trace_reference_path`` traces one of its paths (alphas, validation error) for the figure.
"""
from .solver import (
    PathEventLimitError,
    PathResult,
    PathStart,
    PathStartError,
    fit_with_zero_weights,
    follow_path,
    kkt_violation,
    start_path,
)
from .reference import ReferencePath, ReferenceTrace, measure_reference_path, trace_reference_path
from .uses import (
    BestTheta,
    ChordSweep,
    GridSweep,
    PathCV,
    PathLeaveOneOut,
    Segment,
    best_theta_on_segment,
    kfold_cv_by_path,
    loo_by_path,
    snake_order,
    sweep_chords,
    sweep_class_grid,
    validation_error_pieces,
)

__all__ = [
    "BestTheta", "ChordSweep", "GridSweep", "PathCV", "PathEventLimitError", "PathLeaveOneOut",
    "PathResult", "PathStart", "PathStartError", "ReferencePath", "ReferenceTrace", "Segment",
    "best_theta_on_segment", "fit_with_zero_weights", "follow_path", "kfold_cv_by_path", "kkt_violation",
    "loo_by_path", "measure_reference_path", "snake_order", "start_path", "sweep_chords", "sweep_class_grid",
    "trace_reference_path", "validation_error_pieces",
]
