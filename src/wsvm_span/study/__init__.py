"""The study workflow layer: the catalog, the job kinds, configuration, MLflow tracking, tables and figures.

Modules (imported lazily; nothing heavy happens on ``import wsvm_span.study``):

- :mod:`.catalog`        every weighting, experiment, table and figure, declared once
- :mod:`.experiments`    the job-kind contract (``base.JobKind``), one module per kind, the registry and planner
- :mod:`.config`         config loading/validation (one JSON schema + semantic checks), the cost model
- :mod:`.results_schema` the parquet row schemas of the results (one per job kind's rows)
- :mod:`.runner`         running one job of any kind (its MLflow runs, its chunk file)
- :mod:`.scheduling`     cluster limits and packing of a job
- :mod:`.tracking`       MLflow: retrying, idempotent logging of jobs and models
- :mod:`.collect`        chunk files -> rows files, and the MLflow summary run
- :mod:`.tables`         the tables of the catalog (CSV, Markdown, LaTeX)
- :mod:`.figures`        the figures of the catalog
- :mod:`.provenance`     code version, machine, library versions, data checksums

Layers (docs/development.md, "Layers"; checked by ``tests/test_import_layers.py``): ``canonical``,
``catalog``, ``results_schema`` and ``experiments`` below ``config``, below the runner, the scheduler and
the CLI.
"""
