"""scikit-learn adapters: hyperparameter search scored by the span-rule (an adapter package: it
imports the core library; the core never imports it).

- ``SpanSearchCV``: GridSearchCV-like search over SVC's kernels, one model per grid point, each kernel computed once;
- ``HalvingSpanSearchCV``: successive halving with the training size as the resource, each stage scored so;
- ``SVMPlusSearchCV``: the same search for SVM+ (privileged features), by its LOO rule, exact LOO or K-fold CV;
- ``make_span_scorer`` + ``WholeTrainingSet``: the span-rule inside plain ``GridSearchCV``;
- ``TieRule``: the study's tie rule as a ``refit`` callable;
- ``select``: the ``wsvm-span select`` command (LIBSVM grid.py's job, scored by the span-rule).

Names are imported on first use (PEP 562) so that the command line, which imports ``select`` to
build its parser, does not pay for scikit-learn's model-selection machinery on every subcommand.
"""
from importlib import import_module

_EXPORTS = {
    "CRITERIA": "._grid", "HalvingSpanSearchCV": "._halving", "GRIDPY_LOG2C": "._grid", "GRIDPY_LOG2G": "._grid",
    "SVM_PLUS_CRITERIA": "._grid", "SVMPlusSearchCV": "._svm_plus_search", "SpanSearchCV": "._search", "TieRule": "._search", "WholeTrainingSet": "._search",
    "gridpy_param_grid": "._grid", "svm_plus_param_grid": "._grid", "make_span_scorer": "._search",
    "nadaraya_watson_label_probability": "._nadaraya_watson", "nadaraya_watson_weights": "._nadaraya_watson",
    "read_data_file": ".files", "SearchMemoryError": "._memory",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
