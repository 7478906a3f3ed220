"""Grid definitions shared by the search estimator and the ``select`` command (import-light: the
command line builds its parser from these without importing scikit-learn)."""
from __future__ import annotations

import math

#: criteria a search can select by, named as the library's estimates (and the study's result columns);
#: each is an estimate of the error rate (fraction of l); "cv_error" retrains on K folds, "loo_error"
#: (the exact LOO error) without each SV
CRITERIA = ("span_rule", "span_bound", "xi_alpha_bound", "sv_count_bound", "cv_error", "loo_error")
#: estimates that cost nothing once the model is trained: always reported
FREE_CRITERIA = ("xi_alpha_bound", "sv_count_bound")
#: the trainer of the grid points and of their CV and LOO retrainings: this project's SMO, which starts each
#: point from the previous C's solution and each fold from its point's model (issue 21; docs/engines.md).
#: ``best_estimator_`` is always scikit-learn's SVC.
DEFAULT_ENGINE = "smo"
#: LIBSVM tools/grid.py's default ranges (begin, end, step) of log2 C and log2 gamma
GRIDPY_LOG2C = (-5, 15, 2)
GRIDPY_LOG2G = (3, -15, -2)
#: criteria of SVM+ (``SVMPlusSearchCV``), named as the study's result columns: SVM+'s LOO rule (from the one
#: model), its exact LOO error (retrained without each point that can change it), K-fold CV
SVM_PLUS_CRITERIA = ("loo_rule", "loo_error", "cv_error")
#: SVM+'s own axes beside grid.py's C x gamma, kept short (each multiplies the 110 points): log2 of gamma_plus
#: (the correcting function's weight) and of priv_gamma (the privileged RBF kernel's parameter)
SVM_PLUS_LOG2GP = (-2, 2, 2)
SVM_PLUS_LOG2PG = (-3, 3, 3)


def gridpy_param_grid(log2c=GRIDPY_LOG2C, log2g=GRIDPY_LOG2G) -> dict:
    """The C x gamma grid of LIBSVM's ``tools/grid.py``: {"C": 2^log2c..., "gamma": 2^log2g...}.

    Parameters
    ----------
    log2c : tuple of (begin, end, step), default=GRIDPY_LOG2C
        Range of log2 C, end included (grid.py's default: -5, 15, 2).
    log2g : tuple of (begin, end, step), default=GRIDPY_LOG2G
        Range of log2 gamma, end included (grid.py's default: 3, -15, -2).

    Returns
    -------
    dict
        A ``param_grid`` for ``SpanSearchCV`` or ``GridSearchCV``.

    Raises
    ------
    ValueError
        If a range never reaches its end (a step of the wrong sign, or 0).

    Examples
    --------
    >>> from wsvm_span.model_selection import gridpy_param_grid
    >>> gridpy_param_grid(log2c=(-1, 3, 2), log2g=(0, -2, -1))
    {'C': [0.5, 2.0, 8.0], 'gamma': [1.0, 0.5, 0.25]}
    >>> grid = gridpy_param_grid()
    >>> len(grid["C"]) * len(grid["gamma"])
    110
    """
    return {"C": [2.0 ** e for e in log2_range(*log2c)], "gamma": [2.0 ** e for e in log2_range(*log2g)]}


def svm_plus_param_grid(log2c=GRIDPY_LOG2C, log2g=GRIDPY_LOG2G, log2gp=SVM_PLUS_LOG2GP, log2pg=SVM_PLUS_LOG2PG) -> dict:
    """grid.py's C x gamma grid (``gridpy_param_grid``) times SVM+'s gamma_plus and priv_gamma: 2^log2 values each.

    Parameters
    ----------
    log2c, log2g : tuple of (begin, end, step), default=GRIDPY_LOG2C, GRIDPY_LOG2G
        Ranges of log2 C and log2 gamma, end included.
    log2gp : tuple of (begin, end, step), default=SVM_PLUS_LOG2GP
        Range of log2 gamma_plus (default -2, 2, 2: 0.25, 1, 4).
    log2pg : tuple of (begin, end, step), default=SVM_PLUS_LOG2PG
        Range of log2 priv_gamma (default -3, 3, 3: 0.125, 1, 8).

    Returns
    -------
    dict
        A ``param_grid`` for ``SVMPlusSearchCV``.

    Raises
    ------
    ValueError
        If a range never reaches its end.

    Examples
    --------
    >>> from wsvm_span.model_selection import svm_plus_param_grid
    >>> grid = svm_plus_param_grid(log2c=(0, 2, 2), log2g=(0, 0, 1))
    >>> grid["C"], grid["gamma_plus"], grid["priv_gamma"]
    ([1.0, 4.0], [0.25, 1.0, 4.0], [0.125, 1.0, 8.0])
    """
    return {**gridpy_param_grid(log2c, log2g), "gamma_plus": [2.0 ** e for e in log2_range(*log2gp)],
            "priv_gamma": [2.0 ** e for e in log2_range(*log2pg)]}


def log2_range(begin, end, step) -> list[float]:
    """begin, begin + step, ... up to end included (grid.py's range_f without its permutation)."""
    if step == 0 or (end - begin) * step < 0:
        raise ValueError(f"log2 range ({begin}, {end}, {step}) never reaches its end: check the step's sign")
    n = int(math.floor((end - begin) / step + 1e-9)) + 1
    return [begin + i * step for i in range(n)]
