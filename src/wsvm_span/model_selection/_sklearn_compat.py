"""The one place that touches scikit-learn's private API, for the versions this package supports.

``SpanSearchCV`` is a ``BaseSearchCV`` (so that ``cv_results_``, ranks, ``refit`` and scoring are
scikit-learn's own), which means private names: the base class's module, its result formatter and
best-index chooser, the fit-failure report, the parameter-validation decorator and constraint types,
the sample-weight check, SVC's resolved ``_gamma``, and, from scikit-learn 1.9 on, the fit-callback
context (``_init_callback_context``). Every other module of the package imports these from here.

The supported range is ``SUPPORTED_RANGE`` (the same as ``pyproject.toml``'s requirement, which a test
checks); CI runs the model-selection tests against its oldest version in a venv of its own. Importing
this module under another version raises an ImportError that names both.
"""

from __future__ import annotations

import contextlib

import sklearn

__all__ = [
    "SUPPORTED_RANGE", "BaseSearchCV", "HasMethods", "Interval", "StrOptions", "check_sample_weight", "fit_context",
    "format_results", "has_fit_callbacks", "init_callback_context", "select_best_index", "svc_gamma",
    "warn_or_raise_about_fit_failures",
]

#: the scikit-learn versions this module was written and tested for: [oldest, first unsupported)
SUPPORTED_RANGE = ((1, 6), (1, 10))


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _check_version(version: str) -> None:
    low, high = SUPPORTED_RANGE
    if not low <= _release(version) < high:
        raise ImportError(
            f"wsvm_span.model_selection supports scikit-learn >={low[0]}.{low[1]},<{high[0]}.{high[1]} "
            f"(it builds on private parts of sklearn.model_selection that change between releases); "
            f"scikit-learn {version} is installed: pip install 'scikit-learn>={low[0]}.{low[1]},"
            f"<{high[0]}.{high[1]}'"
        )


_check_version(sklearn.__version__)

from sklearn.base import _fit_context as fit_context  # noqa: E402
from sklearn.model_selection._search import BaseSearchCV  # noqa: E402
from sklearn.model_selection._validation import (  # noqa: E402
    _warn_or_raise_about_fit_failures as warn_or_raise_about_fit_failures,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions  # noqa: E402
from sklearn.utils.validation import _check_sample_weight  # noqa: E402


def check_sample_weight(sample_weight, X):
    """``sample_weight`` as a float64 array of one non-negative weight per row of X (ones if None)."""
    import numpy as np

    return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)


def svc_gamma(svc) -> float:
    """The numeric gamma a fitted ``SVC`` used ('scale' and 'auto' resolved)."""
    return svc._gamma


def has_fit_callbacks() -> bool:
    """Whether this scikit-learn has fit callbacks (``set_callbacks``, 1.9 on)."""
    return hasattr(BaseSearchCV, "_init_callback_context")


class _NoCallbacks:
    """The callback context of a scikit-learn without fit callbacks: every hook does nothing."""

    def subcontext(self, **kwargs) -> "_NoCallbacks":
        return self

    def call_on_fit_task_begin(self, **kwargs) -> None:
        pass

    def call_on_fit_task_end(self, **kwargs) -> None:
        pass

    def propagate_callback_context(self, estimator):
        return contextlib.nullcontext()


def init_callback_context(search, *, max_subtasks: int):
    """The root callback context of one ``fit`` of ``search`` (a no-op context before 1.9)."""
    if has_fit_callbacks():
        return search._init_callback_context(max_subtasks=max_subtasks)
    return _NoCallbacks()


def format_results(search, candidate_params, out, more_results) -> dict:
    """``cv_results_`` of one-split candidates, by ``BaseSearchCV``'s own formatter."""
    return search._format_results(candidate_params, 1, out, more_results)


def select_best_index(refit, results) -> int:
    """The index a callable ``refit`` picks from ``results``, as ``BaseSearchCV`` asks it."""
    return int(BaseSearchCV._select_best_index(refit, "score", results))
