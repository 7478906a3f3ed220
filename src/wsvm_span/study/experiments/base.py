"""What every job of the study shares, whatever it computes: its place (experiment, data set, variant,
replicate, chunk), its files, its JSON spec, and the replicates of a data set.

A job kind is one module of this package defining:

- ``KIND`` (its name) and ``JOB``: a frozen dataclass that mixes in :class:`JobIdentity`, with at least
  the fields ``experiment, dataset, seed, realization, chunk``, a ``variant`` (the third part of its
  paths; for a weight grid, its weighting scheme) and ``n_models`` (the rows it writes);
- ``ROWS``: the name of its row schema in ``results_schema.ROW_SCHEMAS``;
- ``plan(cfg, experiment) -> list[JOB]``: its jobs, from the config alone;
- ``prepare(job, settings) -> prepared``: what all of a job's rows share (data, kernels), with a
  ``checksums`` attribute (the data files' sha256) and optionally ``l`` and ``d``;
- ``evaluate(job, prepared, on_row) -> rows``: the rows, calling ``on_row(row)`` after each;
- ``run_params(job, prepared)``, ``row_params(job, row)``: the MLflow params of the job's parent run
  and of a row's child run (the numeric columns are the child's metrics);
- ``provenance(job, prepared)``: what it adds to the chunk file's provenance;
- optionally ``config_problems(cfg, experiment)``: semantic checks of its config block (messages),
  and ``resources(cfg, job)``: its scheduler hints ({"mem_mb", "runtime"}; default: the grid job's).

See ``weight_grid.py``. Shared here: :class:`JobIdentity`, :class:`SplitProblem` (what a prepared job
says about its split), :func:`warm_up_indices` and :func:`evaluate_models` (the loop over a chunk's models).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from functools import cached_property
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from wsvm_span.data import DATASETS

from ..config.loading import ConfigError, canonical_json

__all__ = ["CHUNK_BENCHMARK_PATTERN", "CHUNK_LOG_PATTERN", "CHUNK_PATTERN", "JobIdentity", "SplitProblem", "WARM_UP_PER_CLASS",
           "benchmark_path", "chunk_path",
           "dataset_slot", "evaluate_models", "job_slot", "replicates", "warm_up_indices"]

#: points per class of a job's warm-up problem: enough for LIBSVM, the span QPs, two CV folds, a LOO
WARM_UP_PER_CLASS = 12

#: where a job writes its rows and its log (Snakemake wildcard patterns; relative to the working
#: directory); the third component is the job's variant (for a weight grid: its weighting scheme)
CHUNK_PATTERN = "results/{experiment}/{dataset}/{weighting}/chunk-{chunk}.parquet"
CHUNK_LOG_PATTERN = "results/logs/{experiment}/{dataset}/{weighting}/chunk-{chunk}.log"
#: Snakemake's benchmark of a job (wall time, max RSS, CPU time)
CHUNK_BENCHMARK_PATTERN = "results/benchmarks/{experiment}/{dataset}/{weighting}/chunk-{chunk}.tsv"


def chunk_path(experiment: str, dataset: str, variant: str, chunk: int) -> str:
    """The chunk file of a grid job: ``results/<experiment>/<dataset>/<weighting>/chunk-<i>.parquet``
    (``CHUNK_PATTERN``).
    """
    return CHUNK_PATTERN.format(experiment=experiment, dataset=dataset, weighting=variant, chunk=chunk)


_CHUNK_RE = re.compile("^" + re.escape(CHUNK_PATTERN).replace(r"\{", "{").replace(r"\}", "}").format(
    experiment=r"(?P<experiment>[^/]+)", dataset=r"(?P<dataset>[^/]+)", weighting=r"(?P<weighting>[^/]+)",
    chunk=r"(?P<chunk>\d+)") + "$")


def benchmark_path(chunk_file: str) -> str | None:
    """Snakemake's benchmark file of the job that wrote ``chunk_file`` (both relative to the working
    directory), or None for a path that is not a chunk file."""
    m = _CHUNK_RE.match(str(chunk_file))
    return CHUNK_BENCHMARK_PATTERN.format(**m.groupdict()) if m else None


def dataset_slot(experiment, dataset, variant, seed, realization) -> str:
    """One replicate of one data set and variant in the study (the MLflow parent run of its models)."""
    return f"{experiment}/{dataset}/{variant}/s{seed}-r{realization}"


def job_slot(experiment, dataset, variant, seed, realization, chunk) -> str:
    """The job's place in the study, independent of the config's other settings."""
    return f"{dataset_slot(experiment, dataset, variant, seed, realization)}/chunk-{chunk}"


class JobIdentity:
    """Files, slot and JSON of a job (mixed into each kind's frozen dataclass)."""

    kind: ClassVar[str]

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
        return CHUNK_LOG_PATTERN.format(experiment=self.experiment, dataset=self.dataset, weighting=self.variant,
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

    - every seed for a data set whose split (or data) depends on the seed (random splits, synthetic sets);
    - every realization for the IDA sets (waveform, banana, image), whose splits are fixed per realization;
    - one replicate for a fixed split (e.g. splice, adult, MNIST, parkinson_speech).

    Where the seeds do not apply, the first seed is used (it still offsets the CV fold seed)."""
    spec = DATASETS[dataset]
    seeds = list(cfg["seeds"]) if spec.uses_seed else list(cfg["seeds"][:1])
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
