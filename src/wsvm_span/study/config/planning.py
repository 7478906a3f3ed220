"""Planning: the grid jobs of a validated config, each a typed :class:`Job`.

A job is one chunk of the models of one (experiment, data set, weighting, seed, realization). The
:class:`Job` is the one definition of what a grid job computes: the planner builds it from the config
alone (no data is loaded, so planning the paper-size study is quick), the Snakemake rule passes it to
``wsvm-span run-chunk`` as JSON, and the runner reads it back with :meth:`Job.from_json`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from wsvm_span.data import DATASETS

from .. import catalog
from .grid import grid_axes, grid_size
from .loading import ConfigError, canonical_json

__all__ = ["CHUNK_LOG_PATTERN", "CHUNK_PATTERN", "Job", "experiment_datasets", "replicates", "loo_selection", "loo_models", "plan_jobs", "chunk_path",
           "job_slot"]


@dataclass(frozen=True)
class Job:
    """One grid job: models ``model_start .. model_stop - 1`` of one data set's grid, one replicate.

    axes : the grid (name -> values, in grid order; model ``i`` is ``grid_point(axes, i)``)
    engine, qp_solver, tol : how models are trained and span QPs solved (config ``svm``)
    cv_folds, cv_seed : the stratified folds of K-fold CV (the fold seed is ``cv.seed + seed``)
    loo_models : the model indices of this chunk that get exact LOO (decided by the planner from the
        config's ``loo`` settings and the data set's training size)
    sigma : the floor of the sigmoid weights (sigmoid weighting only)
    """

    experiment: str
    dataset: str
    weighting: str
    seed: int
    realization: int
    chunk: int
    model_start: int
    model_stop: int
    axes: dict[str, list[float]] = field(hash=False)
    engine: str
    qp_solver: str
    tol: float
    cv_folds: int
    cv_seed: int
    loo_models: tuple[int, ...]
    sigma: float | None = None

    @property
    def n_models(self) -> int:
        return self.model_stop - self.model_start

    @property
    def path(self) -> str:
        return chunk_path(self.experiment, self.dataset, self.weighting, self.chunk)

    @property
    def log_path(self) -> str:
        return CHUNK_LOG_PATTERN.format(experiment=self.experiment, dataset=self.dataset, weighting=self.weighting,
                                        chunk=self.chunk)

    @property
    def slot(self) -> str:
        return job_slot(self.experiment, self.dataset, self.weighting, self.seed, self.realization, self.chunk)

    def to_json(self) -> str:
        return canonical_json(dataclasses.asdict(self))

    @property
    def spec_hash(self) -> str:
        """sha256 of the job's JSON: what the job computes, independent of where runs are logged."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str) -> "Job":
        """The job of :meth:`to_json`; a spec with missing or unknown keys is an error that says which."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"job spec is not valid JSON: {exc}") from None
        names = {f.name for f in dataclasses.fields(cls)}
        required = {f.name for f in dataclasses.fields(cls)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        if not isinstance(raw, dict) or not required <= set(raw) or not set(raw) <= names:
            got = set(raw) if isinstance(raw, dict) else set()
            raise ConfigError(
                f"job spec does not match this version of wsvm-span: missing {sorted(required - got)}, "
                f"unknown {sorted(got - names)}; plan the job again (snakemake reruns it)"
            )
        raw["axes"] = {k: [float(v) for v in vals] for k, vals in raw["axes"].items()}
        raw["loo_models"] = tuple(int(i) for i in raw["loo_models"])
        return cls(**raw)


#: where a grid job writes its rows and its log (Snakemake wildcard patterns; relative to the working
#: directory)
CHUNK_PATTERN = "results/{experiment}/{dataset}/{weighting}/chunk-{chunk}.parquet"
CHUNK_LOG_PATTERN = "results/logs/{experiment}/{dataset}/{weighting}/chunk-{chunk}.log"


def chunk_path(experiment: str, dataset: str, weighting: str, chunk: int) -> str:
    return CHUNK_PATTERN.format(experiment=experiment, dataset=dataset, weighting=weighting, chunk=chunk)


def job_slot(experiment, dataset, weighting, seed, realization, chunk) -> str:
    """The job's place in the study, independent of the config's other settings."""
    return f"{experiment}/{dataset}/{weighting}/s{seed}-r{realization}/chunk-{chunk}"


def experiment_datasets(cfg: Mapping[str, Any], experiment: str) -> list[str]:
    spec = cfg["experiments"].get(experiment)
    if spec is None:
        return []
    if catalog.EXPERIMENTS[experiment].datasets == "ringnorm":
        return [f"ringnorm_d{d}_l{l}" for d in spec["d"] for l in spec["l"]]
    return list(spec["datasets"])


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


def _loo_fraction(cfg: Mapping[str, Any], experiment: str) -> float:
    override = cfg["experiments"].get(experiment, {}).get("loo_fraction")
    return float(cfg["loo"]["fraction"] if override is None else override)


def loo_selection(cfg: Mapping[str, Any], experiment: str, dataset: str, n_models: int) -> frozenset[int]:
    """Model indices of a data set's grid in the seeded exact-LOO sample: the same for every chunking
    and every replicate (:func:`loo_models` applies the training-size limits)."""
    import numpy as np

    fraction = _loo_fraction(cfg, experiment)
    if fraction <= 0 or n_models == 0:
        return frozenset()
    n_sel = min(n_models, max(1, int(round(fraction * n_models))))
    if n_sel == n_models:
        return frozenset(range(n_models))
    rng = np.random.default_rng([int(cfg["loo"]["seed"]) & 0xFFFFFFFF, zlib.crc32(f"{experiment}/{dataset}".encode())])
    return frozenset(int(i) for i in rng.permutation(n_models)[:n_sel])


def loo_models(cfg: Mapping[str, Any], experiment: str, dataset: str, n_models: int) -> frozenset[int]:
    """The models of a data set's grid that get exact LOO: all of them on training sets up to
    ``loo.all_up_to`` points, none above ``loo.max_train_size``, else the seeded sample; none at all
    when the experiment's LOO fraction is 0."""
    if _loo_fraction(cfg, experiment) <= 0:
        return frozenset()
    l = int(DATASETS[dataset].n_train)
    largest = cfg["loo"]["max_train_size"]
    if largest is not None and l > int(largest):
        return frozenset()
    if l <= int(cfg["loo"]["all_up_to"]):
        return frozenset(range(n_models))
    return loo_selection(cfg, experiment, dataset, n_models)


def _chunk_size(cfg: Mapping[str, Any], experiment: str) -> int:
    return int(cfg["experiments"][experiment].get("chunk_size") or cfg["chunk_size"])


def plan_jobs(cfg: Mapping[str, Any], experiments: tuple[str, ...] | None = None) -> list[Job]:
    """Every grid job of the config, in a deterministic order (no data is loaded)."""
    jobs: list[Job] = []
    for exp in experiments or catalog.grid_experiments():
        if exp not in cfg["experiments"]:
            continue
        axes = grid_axes(cfg, exp)
        n = grid_size(axes)
        size = _chunk_size(cfg, exp)
        n_chunks = -(-n // size)
        weighting = catalog.EXPERIMENTS[exp].weighting
        sigma = cfg["experiments"][exp].get("sigma") if weighting == "sigmoid" else None
        for dataset in experiment_datasets(cfg, exp):
            with_loo = loo_models(cfg, exp, dataset, n)
            for rep, (seed, realization) in enumerate(replicates(cfg, dataset)):
                for j in range(n_chunks):
                    start, stop = j * size, min(n, (j + 1) * size)
                    jobs.append(Job(
                        experiment=exp, dataset=dataset, weighting=weighting, seed=seed, realization=realization,
                        chunk=rep * n_chunks + j, model_start=start, model_stop=stop, axes=axes,
                        engine=cfg["svm"]["engine"], qp_solver=cfg["svm"]["qp_solver"], tol=float(cfg["svm"]["tol"]),
                        cv_folds=int(cfg["cv"]["folds"]), cv_seed=int(cfg["cv"]["seed"]) + seed,
                        loo_models=tuple(sorted(i for i in with_loo if start <= i < stop)), sigma=sigma,
                    ))
    return jobs
