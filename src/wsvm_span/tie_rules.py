"""The study's tie rules (method.md section 6): which test error to report when an estimator's
minimum over a grid is attained by several models.

A core module (numpy only): the scikit-learn adapter (``model_selection.TieRule``) and the study's
tables (``study.tables``) both select through it.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["TIE_ATOL", "TIE_RTOL", "TIE_RULES", "select_test_error"]

#: two estimate values are tied when they agree to these tolerances: estimates are counts over l
#: (span-rule, CV, bounds) or bounds computed to ~1e-10, so a real difference is far larger
TIE_RTOL = 1e-9
TIE_ATOL = 1e-12


def _lower_median(e: np.ndarray) -> float:
    """The lower median: the middle value, or the lower of the two middle values (an actual element,
    never the average of two)."""
    return float(np.sort(e)[(len(e) - 1) // 2])


#: tie rule -> the test error reported among the models tied at an estimator's minimum
TIE_RULES: dict[str, Callable[[np.ndarray], float]] = {
    "worst": lambda e: float(np.max(e)),
    "best": lambda e: float(np.min(e)),
    "median": _lower_median,
}


def select_test_error(values, test_error, tie_rule: str = "worst", rtol: float = TIE_RTOL,
                      atol: float = TIE_ATOL) -> float:
    """Test error of the model that minimises ``values``, ties broken by a tie rule.

    Parameters
    ----------
    values : array-like of shape (n_models,)
        An estimator's value for every model of a grid (lower is better). An infinite value is a
        value (a span bound of a model whose span is undefined): it can only lose the argmin.
    test_error : array-like of shape (n_models,)
        The test error of every model.
    tie_rule : {"worst", "best", "median"}, default="worst"
        Which test error to report among the models tied at the minimum of ``values``: the largest,
        the smallest or the lower median (always the error of one of the tied models).
    rtol, atol : float
        Two values are tied when ``numpy.isclose(a, b, rtol, atol)``.

    Returns
    -------
    float
        The reported test error; NaN when ``values`` is empty or has a NaN (an estimator not
        computed for every model cannot select).

    Raises
    ------
    KeyError
        If ``tie_rule`` is not one of :data:`TIE_RULES`.

    Examples
    --------
    >>> from wsvm_span.tie_rules import select_test_error
    >>> select_test_error([0.1, 0.3, 0.1], [0.20, 0.05, 0.40], "worst")
    0.4
    >>> select_test_error([0.1, 0.3, 0.1], [0.20, 0.05, 0.40], "best")
    0.2
    """
    values = np.asarray(values, dtype=float)
    test_error = np.asarray(test_error, dtype=float)
    if values.size == 0 or np.isnan(values).any():
        return math.nan
    best = values.min()
    tied = np.isclose(values, best, rtol=rtol, atol=atol)
    return TIE_RULES[tie_rule](test_error[tied])
