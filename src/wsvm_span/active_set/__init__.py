"""The active-set mathematics of the weighted SVM dual (solution-path.md), below the engines.

The sets O/M/I, the margin system and its factor (``factorization``), the exact start of a model and the
event-by-event homotopy in the weights (``homotopy``). Engine ``path`` polishes LIBSVM's solution with it;
``wsvm_span.solution_path`` follows paths with it and falls back to an engine where a path fails. It imports
no engine, so that both can build on it.
"""
