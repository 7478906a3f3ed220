"""What a job kind is (:class:`JobKind`, the contract every kind module implements, as ``engines.base.Engine``
is for engines) and what every job shares, whatever it computes: its identity (:class:`JobIdentity`:
experiment, data set, variant, replicate, chunk), its files, its JSON spec, and the replicates of a data set.

The planner (``experiments.plan_jobs``), the runner (``study.runner``), the cost model
(``study.config.estimate``) and the scheduler (``study.scheduling``) call a kind only through
:class:`JobKind`'s members, and ask its :class:`KindCapabilities` instead of probing for optional hooks.
A kind is a module (modules implement protocols, PEP 544), registered once in ``experiments.KINDS`` by
``experiments.register_kind``, which checks it against this contract. Recipe: docs/development.md
("Adding an experiment"); the smallest example: ``tests/test_job_kinds.py``.

Shared here too: :class:`SplitProblem` (what a prepared job says about its split), :func:`warm_up_indices`
and :func:`evaluate_models` (the loop over a chunk's models), and the default hooks of a kind whose jobs
are priced and sized as a grid job's (:func:`grid_job_memory_mb`; ``study.cost.job_resources``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol

import numpy as np

from wsvm_span.data import DATASETS

from ..canonical import ConfigError, canonical_json
from ..cost import approx_sizes, memory_mb

__all__ = ["CHUNK_BENCHMARK_PATTERN", "CHUNK_LOG_PATTERN", "CHUNK_PATTERN", "JobIdentity", "JobKind", "KindCapabilities",
           "PLACING_COLUMNS", "SplitProblem", "WARM_UP_PER_CLASS", "grid_job_memory_mb",
           "benchmark_path", "chunk_path", "log_path",
           "dataset_slot", "evaluate_models", "job_slot", "replicates", "warm_up_indices"]

#: points per class of a job's warm-up problem: enough for LIBSVM, the span QPs, two CV folds, a LOO
WARM_UP_PER_CLASS = 12

#: where a job writes its rows and its log (Snakemake wildcard patterns; relative to the working
#: directory); the third component is the job's variant (for a weight grid: its weighting scheme)
CHUNK_PATTERN = "results/{experiment}/{dataset}/{variant}/chunk-{chunk}.parquet"
CHUNK_LOG_PATTERN = "results/logs/{experiment}/{dataset}/{variant}/chunk-{chunk}.log"
#: Snakemake's benchmark of a job (wall time, max RSS, CPU time)
CHUNK_BENCHMARK_PATTERN = "results/benchmarks/{experiment}/{dataset}/{variant}/chunk-{chunk}.tsv"


def chunk_path(experiment: str, dataset: str, variant: str, chunk: int) -> str:
    """The chunk file of a grid job: ``results/<experiment>/<dataset>/<variant>/chunk-<i>.parquet``
    (``CHUNK_PATTERN``).
    """
    return CHUNK_PATTERN.format(experiment=experiment, dataset=dataset, variant=variant, chunk=chunk)


_CHUNK_RE = re.compile("^" + re.escape(CHUNK_PATTERN).replace(r"\{", "{").replace(r"\}", "}").format(
    experiment=r"(?P<experiment>[^/]+)", dataset=r"(?P<dataset>[^/]+)", variant=r"(?P<variant>[^/]+)",
    chunk=r"(?P<chunk>\d+)") + "$")


def benchmark_path(chunk_file: str) -> str | None:
    """Snakemake's benchmark file of the job that wrote ``chunk_file`` (both relative to the working
    directory), or None for a path that is not a chunk file."""
    m = _CHUNK_RE.match(str(chunk_file))
    return CHUNK_BENCHMARK_PATTERN.format(**m.groupdict()) if m else None


def log_path(chunk_file: str) -> str | None:
    """The log of the job that wrote ``chunk_file`` (as :func:`benchmark_path`)."""
    m = _CHUNK_RE.match(str(chunk_file))
    return CHUNK_LOG_PATTERN.format(**m.groupdict()) if m else None


def dataset_slot(experiment, dataset, variant, seed, realization) -> str:
    """One replicate of one data set and variant in the study (the MLflow parent run of its models)."""
    return f"{experiment}/{dataset}/{variant}/s{seed}-r{realization}"


def job_slot(experiment, dataset, variant, seed, realization, chunk) -> str:
    """The job's place in the study, independent of the config's other settings."""
    return f"{dataset_slot(experiment, dataset, variant, seed, realization)}/chunk-{chunk}"


@dataclass(frozen=True)
class JobIdentity:
    """Where a job belongs in the study, the fields every kind's job has (each kind's frozen job dataclass
    derives from this one and adds what its jobs compute), with the files, slot and JSON that follow from
    them. A kind also gives its jobs a ``variant`` (the third part of their paths: a weight grid's weighting,
    Experiment 8's ratio) and ``n_models`` (the rows a job writes)."""

    kind: ClassVar[str]

    experiment: str
    dataset: str
    seed: int
    realization: int
    chunk: int

    def __post_init__(self) -> None:
        # A grid's axes number its models (the last axis varies fastest). A job reaches run-chunk as its JSON
        # spec, whose keys canonical JSON sorts, so every workflow run has numbered the models with the axes in
        # name order; a job built here must number them alike, and its spec hash cannot tell the orders apart.
        axes = getattr(self, "axes", None)
        if isinstance(axes, dict) and list(axes) != sorted(axes):
            object.__setattr__(self, "axes", dict(sorted(axes.items())))

    @property
    def n_models(self) -> int:
        """The rows the job writes: models ``model_start .. model_stop - 1`` (a kind that counts its rows
        otherwise overrides this)."""
        return self.model_stop - self.model_start

    @property
    def path(self) -> str:
        return chunk_path(self.experiment, self.dataset, self.variant, self.chunk)

    @property
    def log_path(self) -> str:
        return CHUNK_LOG_PATTERN.format(experiment=self.experiment, dataset=self.dataset, variant=self.variant,
                                        chunk=self.chunk)

    @property
    def dataset_slot(self) -> str:
        return dataset_slot(self.experiment, self.dataset, self.variant, self.seed, self.realization)

    @property
    def slot(self) -> str:
        return job_slot(self.experiment, self.dataset, self.variant, self.seed, self.realization, self.chunk)

    def to_json(self) -> str:
        return self._spec_json

    @cached_property
    def _spec_json(self) -> str:
        # computed once per job: Snakemake asks for every job's spec several times while it plans
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return canonical_json({"kind": self.kind, **fields})

    @cached_property
    def spec_hash(self) -> str:
        """sha256 of the job's JSON: what the job computes, independent of where runs are logged."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    @classmethod
    def from_fields(cls, raw: Mapping[str, Any]):
        """The job of these JSON fields; missing or unknown keys are an error that says which."""
        names = {f.name for f in dataclasses.fields(cls)}
        required = {f.name for f in dataclasses.fields(cls)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        got = set(raw)
        if not required <= got or not got <= names:
            raise ConfigError(
                f"{cls.kind} job spec does not match this version of wsvm-span: missing {sorted(required - got)}, "
                f"unknown {sorted(got - names)}; plan the job again (snakemake reruns it)"
            )
        return cls(**cls.normalise(dict(raw)))

    @staticmethod
    def normalise(raw: dict) -> dict:
        """JSON values back to the dataclass's types (lists to tuples, ...); kinds override it."""
        return raw

    @staticmethod
    def normalise_axes(raw: dict) -> dict:
        """A grid's ``axes`` (name -> values) back from JSON: float values."""
        raw["axes"] = {k: [float(v) for v in vals] for k, vals in raw["axes"].items()}
        return raw


#: numeric row columns that place a row rather than measure it, in every kind's rows (with a kind's own
#: ``ROW_IDENTIFIERS`` and its row params: not MLflow metrics)
PLACING_COLUMNS = frozenset({"seed", "realization", "l", "d", "model_index", "chunk", "gamma"})


@dataclass(frozen=True)
class KindCapabilities:
    """What a job kind declares about its jobs, so that the cost model and the scheduler ask it instead of
    probing for hooks.

    prices_own_jobs : its ``calibrated_seconds(job, cal)`` prices a job (the cost model's projection and the
        scheduler's expected time are that alone); otherwise the cost model prices the job per model from the
        calibration (``n_models``, ``loo_models``) and the scheduler also takes the rough time model's.
    trains_with_config_engine : its jobs train with the config's ``svm.engine`` (a job field ``engine``): the
        cost model prices them by that engine's ratios where the calibration has them, and says which.
    priced_engine : for a kind that prices its own jobs from laws measured with one engine, that engine (the
        cost model says so where the config trains with another); None where its price names no engine.
    """

    prices_own_jobs: bool = False
    trains_with_config_engine: bool = True
    priced_engine: str | None = None


class JobKind(Protocol):
    """A kind of job of the study: the contract every module of ``study.experiments`` implements.

    Every member is called by generic code (the planner, the runner, the cost model, the scheduler); none is
    optional, and a kind whose jobs are sized like the grid job's names the shared defaults
    (``job_memory_mb = grid_job_memory_mb``, ``resources = job_resources``). ``calibrated_seconds`` is
    called only where ``CAPABILITIES.prices_own_jobs`` (a kind without it may leave it out).
    """

    #: the kind's name (a job spec's "kind"; ``catalog.Experiment.kind``)
    KIND: str
    #: its job class: a frozen dataclass deriving from :class:`JobIdentity`
    JOB: type
    #: the name of its row schema in ``results_schema.ROW_SCHEMAS``
    ROWS: str
    CAPABILITIES: KindCapabilities
    #: numeric row columns that place a row, besides :data:`PLACING_COLUMNS` (not MLflow metrics)
    ROW_IDENTIFIERS: frozenset[str]

    def plan(self, cfg: Mapping[str, Any], experiment: str) -> list:
        """The jobs of one experiment of the config, in a deterministic order, from the config alone."""
        ...

    def config_problems(self, cfg: Mapping[str, Any], experiment: str) -> Iterable[str]:
        """Semantic problems of the experiment's config block that its schema cannot express (messages)."""
        ...

    def prepare(self, job, settings) -> Any:
        """What all of a job's rows share (data, kernels), with a ``checksums`` attribute (the data files'
        sha256) and optionally ``l``, ``d`` and ``setup_s``."""
        ...

    def evaluate(self, job, prepared, on_row: Callable[[dict], None] | None) -> list[dict]:
        """The job's rows, calling ``on_row(row)`` after each (the row's MLflow child run)."""
        ...

    def run_params(self, job, prepared) -> dict[str, Any]:
        """The MLflow params of the job's parent run."""
        ...

    def row_params(self, job, row: Mapping[str, Any]) -> dict[str, Any]:
        """The MLflow params of a row's child run (its numeric columns are the child's metrics)."""
        ...

    def provenance(self, job, prepared) -> dict[str, Any]:
        """What the kind adds to the chunk file's provenance."""
        ...

    def resources(self, cfg: Mapping[str, Any], job) -> dict[str, int]:
        """Scheduler hints of a job: ``mem_mb`` and ``runtime`` (minutes)."""
        ...

    def job_memory_mb(self, job) -> float:
        """Peak memory of a job (MB), for the cost model's peak."""
        ...

    def calibrated_seconds(self, job, cal) -> float:
        """One-core seconds of a job from a cost calibration (only with ``prices_own_jobs``)."""
        ...


def grid_job_memory_mb(job) -> float:
    """Peak memory of a job that holds a grid job's kernels (training, test and, with ``cv_folds``, the CV
    folds') of its data set's registered sizes: the default ``job_memory_mb`` of a kind."""
    l, m = approx_sizes(job.dataset)
    return memory_mb(l, m, getattr(job, "cv_folds", None))


def parse_job_json(text: str) -> tuple[str, dict]:
    """(kind, fields) of a job spec."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"job spec is not valid JSON: {exc}") from None
    if not isinstance(raw, dict) or "kind" not in raw:
        raise ConfigError("job spec must be a JSON object with a 'kind'; plan the job again (snakemake reruns it)")
    return raw.pop("kind"), raw


def replicates(cfg: Mapping[str, Any], dataset: str) -> list[tuple[int, int]]:
    """(seed, realization) pairs of a data set, as the data registry describes its split:

    - every seed for a data set whose split (or data) depends on the seed (random splits, synthetic sets): its
      own seeds where ``seeds_by_dataset`` lists them, else ``seeds``;
    - every realization for the IDA sets (waveform, banana, image), whose splits are fixed per realization;
    - one replicate for a fixed split (e.g. splice, adult, MNIST, parkinson_speech).

    Where the seeds do not apply, the first seed is used (it still offsets the CV fold seed)."""
    spec = DATASETS[dataset]
    own = cfg.get("seeds_by_dataset", {}).get(dataset)
    seeds = list(own or cfg["seeds"]) if spec.uses_seed else list(cfg["seeds"][:1])
    reals = list(cfg["realizations"]) if spec.realizations else [1]
    return [(s, r) for s in seeds for r in reals]


class SplitProblem:
    """What a prepared job says about its data (mixed into each kind's prepared dataclass, which has a
    ``split``: a :class:`wsvm_span.data.Split`)."""

    split: Any

    @property
    def l(self) -> int:
        return int(len(self.split.y_train))

    @property
    def d(self) -> int:
        return int(self.split.d)

    @property
    def checksums(self) -> dict:
        return dict(self.split.checksums or {})


def warm_up_indices(y) -> np.ndarray | None:
    """The first :data:`WARM_UP_PER_CLASS` training points of each class (a warm-up problem), or None when
    the labels hold one class only."""
    idx = np.concatenate([np.flatnonzero(y == 1)[:WARM_UP_PER_CLASS], np.flatnonzero(y == -1)[:WARM_UP_PER_CLASS]])
    return idx if len(np.unique(y[idx])) == 2 else None


def evaluate_models(job, log: logging.Logger, row_of: Callable[[int], dict],
                    on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """The rows of models ``job.model_start .. job.model_stop - 1`` (``row_of(index)``), under one BLAS
    thread; ``on_row(row)`` after each (the job's MLflow child run); progress lines in the job's log."""
    from wsvm_span.utils.environment import single_threaded

    from ..progress import Progress

    rows: list[dict] = []
    progress = Progress(job.slot, job.n_models, log)
    with single_threaded():
        for idx in range(job.model_start, job.model_stop):
            row = row_of(idx)
            rows.append(row)
            if on_row is not None:
                on_row(row)
            progress.model_done()
    return rows
