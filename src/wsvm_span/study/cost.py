"""Scheduler hints for a grid job (SLURM ``mem_mb`` and ``runtime``) from the config alone."""

from __future__ import annotations

import math
from typing import Any, Mapping

from wsvm_span.data import DATASETS


__all__ = ["approx_sizes", "estimated_seconds", "fold_cache_factor", "job_resources", "memory_mb"]

#: l x l float64 arrays alive at once besides the fold kernels: the training kernel, a temporary
#: slice (a CV fold's when the folds are not cached, a leave-one-out slice when exact LOO runs)
KERNEL_COPIES = 2
#: headroom over the estimated arrays (Python objects, temporaries, allocator fragmentation)
MEMORY_HEADROOM = 1.5
#: resident size of an idle job: interpreter, numpy/scipy/sklearn/mlflow imports (MB)
BASE_MEMORY_MB = 600
#: rough time model: seconds per model at l = REFERENCE_L, growing as l ** TIME_EXPONENT (LIBSVM
#: training, the span QPs and CV together), padded by TIME_PADDING, plus a fixed start-up cost
SECONDS_PER_MODEL_AT_REFERENCE = 0.02
REFERENCE_L = 500
TIME_EXPONENT = 2.5
TIME_PADDING = 10
STARTUP_SECONDS = 120


def approx_sizes(dataset: str) -> tuple[int, int]:
    """(train, test) sizes of a data set, from the data registry (no data is loaded)."""
    spec = DATASETS[dataset]
    return int(spec.n_train), int(spec.n_test)


def estimated_seconds(job) -> float:
    """A rough one-thread run time of a job, before any of its kind has been measured."""
    l, _ = approx_sizes(job.dataset)
    return job.n_models * SECONDS_PER_MODEL_AT_REFERENCE * (l / REFERENCE_L) ** TIME_EXPONENT


def fold_cache_factor(folds: int) -> float:
    """Size of the cached CV fold kernels in units of l^2: k folds of ((k-1)/k l)^2 each."""
    return (folds - 1) ** 2 / folds


def memory_mb(l: int, m: int, folds: int | None) -> float:
    """Peak memory of a job (MB): its kernels (training l x l, test m x l, a temporary slice and, with
    ``folds`` given, the cached kernels of that many CV folds), with headroom, plus the interpreter."""
    squares = KERNEL_COPIES + (fold_cache_factor(folds) if folds else 0.0)
    return (squares * l * l + m * l) * 8 / 2**20 * MEMORY_HEADROOM + BASE_MEMORY_MB


def job_resources(cfg: Mapping[str, Any], job) -> dict[str, int]:
    """Scheduler hints: memory for the job's kernels with its CV fold kernels cached (the job uses the
    cache only when its memory allows it), run time from the model count and training size (padded),
    never below the config's minimums."""
    l, m = approx_sizes(job.dataset)
    mem = memory_mb(l, m, job.cv_folds)
    secs = estimated_seconds(job) * TIME_PADDING + STARTUP_SECONDS
    return {
        "mem_mb": max(int(cfg["resources"]["mem_mb_min"]), int(math.ceil(mem / 100.0) * 100)),
        "runtime": max(int(cfg["resources"]["runtime_min"]), int(math.ceil(secs / 60))),
    }
