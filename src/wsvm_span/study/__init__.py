"""The study workflow layer: configuration, grid jobs, MLflow tracking, tables and figures.

Modules (imported lazily; nothing heavy happens on ``import wsvm_span.study``):

- :mod:`.config`     config loading/validation (one JSON schema + semantic checks), grid expansion, chunking
- :mod:`.schema`     the one parquet row schema of the results
- :mod:`.runner`     the grid job (kernel cache once, then every model of a chunk)
- :mod:`.tracking`   MLflow: retrying, idempotent logging of jobs and models
- :mod:`.collect`    chunk files -> rows files, and the MLflow summary run
- :mod:`.tables`     Tables 2-6 (CSV, Markdown, LaTeX)
- :mod:`.figures`    Experiment 3 and 6 figures and span-rule vs exact LOO
- :mod:`.provenance` code version, machine, library versions, data checksums
"""
