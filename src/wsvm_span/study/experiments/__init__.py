"""What the study runs: one module per kind of job, one registry, one planner.

A kind (``weight_grid``: Experiments 1, 2 and 6; ``standard_span``: Experiment 10; ``lupi``: Experiment 8;
``reference_path``: Experiment 7; ``sampling``: Experiment 9) plans its jobs from
the config, prepares what all of a job's rows share, and evaluates the rows: the contract is
:class:`.base.JobKind`, with its declared :class:`.base.KindCapabilities`. The catalog says which kind each
experiment uses (``catalog.Experiment.kind``); :func:`plan_jobs` plans every configured experiment,
:func:`job_from_json` reads a job back from its spec, and ``study.runner.run_chunk`` runs any job. A config's
``select`` narrows what :func:`plan_jobs` plans to a part of the study (:mod:`.selection`).

Adding an experiment (docs/development.md): a kind module here, registered by one entry in :data:`KINDS`
(:func:`register_kind` checks it against the contract), an entry in ``catalog.EXPERIMENTS``, its table
builders and its config block; a new experiment that reuses a kind needs only the last three.
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import catalog
from ..canonical import ConfigError
from . import lupi, reference_path, sampling, standard_span, weight_grid
from .base import (CHUNK_BENCHMARK_PATTERN, CHUNK_LOG_PATTERN, CHUNK_PATTERN, PLACING_COLUMNS, JobIdentity, JobKind,
                   KindCapabilities, benchmark_path, chunk_path, job_slot, log_path, parse_job_json, replicates)
from .selection import select_jobs, selection_problems

__all__ = ["CHUNK_BENCHMARK_PATTERN", "CHUNK_LOG_PATTERN", "CHUNK_PATTERN", "KINDS", "JobKind", "KindCapabilities",
           "PLACING_COLUMNS", "benchmark_path", "chunk_path", "experiment_datasets", "job_from_json", "job_slot",
           "kind_of", "log_path", "plan_jobs", "register_kind", "replicates", "selection_problems"]

#: the members every kind has (:class:`.base.JobKind`); ``calibrated_seconds`` only with ``prices_own_jobs``
_MEMBERS = ("KIND", "JOB", "ROWS", "CAPABILITIES", "ROW_IDENTIFIERS", "plan", "config_problems", "prepare",
            "evaluate", "run_params", "row_params", "provenance", "resources", "job_memory_mb")


def register_kind(kind: JobKind, registry: dict[str, JobKind] | None = None) -> JobKind:
    """Add a job kind to ``registry`` (default: :data:`KINDS`) after checking it against the contract: every
    member of :class:`.base.JobKind`, ``calibrated_seconds`` where it prices its own jobs, a job class that
    derives from :class:`.base.JobIdentity` and names the kind, and a name not taken. Returns the kind."""
    registry = KINDS if registry is None else registry
    name = getattr(kind, "KIND", repr(kind))
    missing = [m for m in _MEMBERS if not hasattr(kind, m)]
    caps = getattr(kind, "CAPABILITIES", None)
    if isinstance(caps, KindCapabilities) and caps.prices_own_jobs and not hasattr(kind, "calibrated_seconds"):
        missing.append("calibrated_seconds")
    if missing:
        raise TypeError(f"job kind {name!r} lacks {missing} of the JobKind contract (study/experiments/base.py)")
    if not isinstance(caps, KindCapabilities):
        raise TypeError(f"job kind {name!r}: CAPABILITIES must be a KindCapabilities, got {caps!r}")
    if not (isinstance(kind.JOB, type) and issubclass(kind.JOB, JobIdentity) and kind.JOB.kind == kind.KIND):
        raise TypeError(f"job kind {name!r}: JOB must derive from JobIdentity with kind = {kind.KIND!r}")
    if name in registry and registry[name] is not kind:
        raise ValueError(f"job kind {name!r} is registered already")
    registry[name] = kind
    return kind


#: job kind -> its module, the one registry of kinds
KINDS: dict[str, JobKind] = {}
for _kind in (weight_grid, standard_span, lupi, reference_path, sampling):
    register_kind(_kind)


def kind_of(job) -> JobKind:
    """The kind that runs ``job`` (``KINDS[job.kind]``)."""
    return KINDS[job.kind]


def plan_jobs(cfg: Mapping[str, Any], experiments: tuple[str, ...] | None = None) -> list:
    """Every job of the config (those its ``select`` keeps: :mod:`.selection`), in a deterministic order (no data
    is loaded)."""
    jobs = []
    for exp in experiments or catalog.grid_experiments():
        if exp in cfg["experiments"]:
            jobs += KINDS[catalog.EXPERIMENTS[exp].kind].plan(cfg, exp)
    return select_jobs(cfg, jobs)


def experiment_datasets(cfg: Mapping[str, Any], experiment: str) -> list[str]:
    """The data sets of an experiment's jobs, in planning order."""
    return list(dict.fromkeys(j.dataset for j in plan_jobs(cfg, (experiment,))))


def job_from_json(text: str):
    """The job of a spec written by ``job.to_json()``."""
    kind, raw = parse_job_json(text)
    if kind not in KINDS:
        raise ConfigError(f"unknown job kind {kind!r}; this wsvm-span runs {sorted(KINDS)}")
    return KINDS[kind].JOB.from_fields(raw)
