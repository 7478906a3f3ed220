"""What the study runs: one module per kind of job, one registry, one planner.

A kind (``weight_grid``: Experiments 1, 2 and 6; ``standard_span``: Experiment 10; ``lupi``: Experiment 8;
``sampling``: Experiment 9) plans
its jobs from the config, prepares what all of
a job's rows share, and evaluates the rows (see :mod:`.base` for the interface). The catalog says which
kind each experiment uses (``catalog.Experiment.kind``); :func:`plan_jobs` plans every configured
experiment, :func:`job_from_json` reads a job back from its spec, and ``study.runner.run_chunk`` runs any
job. A new kind is a new module here plus one entry in :data:`KINDS`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Mapping

from .. import catalog
from ..config.loading import ConfigError
from . import lupi, sampling, solution_path, standard_span, weight_grid
from .base import (CHUNK_BENCHMARK_PATTERN, CHUNK_LOG_PATTERN, CHUNK_PATTERN, benchmark_path, chunk_path, job_slot,
                   parse_job_json, replicates)

__all__ = ["CHUNK_BENCHMARK_PATTERN", "CHUNK_LOG_PATTERN", "CHUNK_PATTERN", "KINDS", "benchmark_path", "chunk_path",
           "experiment_datasets", "job_from_json", "job_slot", "kind_of", "plan_jobs", "replicates"]

#: job kind -> its module
KINDS: dict[str, ModuleType] = {m.KIND: m for m in (weight_grid, standard_span, lupi, solution_path, sampling)}


def kind_of(job) -> ModuleType:
    """The module of the job kind that runs ``job`` (``KINDS[job.kind]``).
    """
    return KINDS[job.kind]


def plan_jobs(cfg: Mapping[str, Any], experiments: tuple[str, ...] | None = None) -> list:
    """Every job of the config, in a deterministic order (no data is loaded)."""
    jobs = []
    for exp in experiments or catalog.grid_experiments():
        if exp in cfg["experiments"]:
            jobs += KINDS[catalog.EXPERIMENTS[exp].kind].plan(cfg, exp)
    return jobs


def experiment_datasets(cfg: Mapping[str, Any], experiment: str) -> list[str]:
    """The data sets of an experiment's jobs, in planning order."""
    return list(dict.fromkeys(j.dataset for j in plan_jobs(cfg, (experiment,))))


def job_from_json(text: str):
    """The job of a spec written by ``job.to_json()``."""
    kind, raw = parse_job_json(text)
    if kind not in KINDS:
        raise ConfigError(f"unknown job kind {kind!r}; this wsvm-span runs {sorted(KINDS)}")
    return KINDS[kind].JOB.from_fields(raw)
