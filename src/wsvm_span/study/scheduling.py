"""Cluster scheduling of the study's jobs: their limits, scaled by attempt, and packing of tiny jobs.

Limits: a job's memory (``mem_mb``) and time limit (``runtime``, minutes) are its kind's scheduler hints
(``resources(cfg, job)``; the grid job's: :func:`wsvm_span.study.cost.job_resources`), doubled on
every retry (:func:`scaled_for_attempt`), so that a job killed for memory (OUT_OF_MEMORY) or time
(TIMEOUT) comes back bigger.

Packing (a scheduler round-trip per job of a few seconds costs more than the job): a job whose expected
compute time is under :data:`TARGET_JOB_S` joins a Snakemake *group* named ``pack<n>``; the SLURM profile
runs ``n`` such jobs one after another in ONE cluster job (``group-components: pack<n>=<n>``,
``cores: 1``), with ``n`` the smallest pack size that brings the cluster job to the target. Packing keeps
every job as it is (its chunk file, its MLflow slot, its retry and resume), so local and cluster runs plan
the same jobs and produce the same rows; only the scheduler sees fewer, longer jobs. A local run ignores
groups. The expected time is the larger of the calibrated cost model's (``study.config.estimate``, the
calibration shipped with the package) and the config's rough time model (``study.cost``): the
calibration extrapolates data sets it has not measured from the training size alone (it prices an MNIST
model's CV at a tenth of what it costs), and packing a long job is the costly mistake (its pack's time
limit is short), while leaving a short job alone only costs a scheduler round-trip.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Mapping

__all__ = [
    "TARGET_JOB_S",
    "PACK_SIZES",
    "expected_job_seconds",
    "pack_size",
    "packed_runtime_min",
    "scaled_for_attempt",
    "job_limits",
    "job_group",
]

#: wanted compute time of one cluster job (at least about a minute)
TARGET_JOB_S = 60.0
#: pack sizes the profile declares (``group-components: pack<n>=<n>``); the largest bounds how many
#: process start-ups (a few seconds each: imports, data, kernel, MLflow) one cluster job strings together
PACK_SIZES = (2, 4, 8, 16, 32, 64, 128)
# A packed job's own time limit (a group's limit is the sum over its members): its expected compute this
# many times over plus the process start-up, and never under a few minutes, because on a busy node (or the
# rehearsal cluster, which runs more jobs than it has cores) starting Python, MLflow and the data takes
# minutes where it takes seconds on an idle one.
PACKED_RUNTIME_SAFETY = 3.0
STARTUP_S = 60.0
PACKED_MIN_RUNTIME_MIN = 5


@lru_cache(maxsize=1)
def _calibration():
    from .config.estimate import load_calibration

    return load_calibration()


def expected_job_seconds(job) -> float:
    """Expected one-core compute time of a job: the larger of the shipped calibration's projection and the
    rough time model's, or the projection alone for a kind that prices its own jobs (``prices_own_jobs``;
    its data sets need not be in the data registry)."""
    from .cost import estimated_seconds
    from .config.estimate import job_seconds
    from .experiments import kind_of

    projected = job_seconds(job, _calibration())
    if kind_of(job).CAPABILITIES.prices_own_jobs:
        return projected
    return max(projected, estimated_seconds(job))


def pack_size(expected_s: float) -> int:
    """How many jobs of this expected compute time one cluster job runs (1 = not packed)."""
    if expected_s >= TARGET_JOB_S:
        return 1
    wanted = TARGET_JOB_S / max(expected_s, 1e-3)
    return next((n for n in PACK_SIZES if n >= wanted), PACK_SIZES[-1])


def packed_runtime_min(expected_s: float) -> int:
    """Time limit (minutes) of one member of a pack."""
    return max(PACKED_MIN_RUNTIME_MIN, math.ceil((STARTUP_S + PACKED_RUNTIME_SAFETY * expected_s) / 60.0))


def scaled_for_attempt(resources: Mapping[str, Any], attempt: int) -> dict[str, int]:
    """Memory and time limits for Snakemake's ``attempt`` (1, 2, ...): doubled on every retry."""
    if attempt < 1:
        raise ValueError(f"attempt must be >= 1 (got {attempt})")
    factor = 2 ** (attempt - 1)
    return {k: int(math.ceil(v * factor)) for k, v in resources.items()}


def _base_limits(cfg: Mapping[str, Any], job) -> dict[str, int]:
    from .experiments import kind_of

    return dict(kind_of(job).resources(cfg, job))


def job_limits(cfg: Mapping[str, Any], job, attempt: int = 1) -> dict[str, int]:
    """SLURM limits of a job for Snakemake's ``attempt``: ``mem_mb`` and ``runtime`` (minutes); a packed
    job's time limit is its own share (the group sums its members')."""
    limits = _base_limits(cfg, job)
    expected = expected_job_seconds(job)
    if pack_size(expected) > 1:
        limits["runtime"] = min(limits["runtime"], packed_runtime_min(expected))
    return scaled_for_attempt(limits, attempt)


def job_group(job) -> str | None:
    """The Snakemake group (``pack<n>``) of a job, None when it runs as a cluster job of its own."""
    n = pack_size(expected_job_seconds(job))
    return f"pack{n}" if n > 1 else None
