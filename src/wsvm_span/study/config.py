"""Study configuration: loading, validation (one JSON schema + semantic checks), grid expansion, chunking.

The schema lives in ``workflow/schemas/config.schema.yaml`` (one place); the Snakefile and the CLI both
call :func:`validate_config`, which fills in the schema's defaults and then runs the checks a schema
cannot express.  Everything here works from the configuration alone: no data set is loaded, so planning
the paper-size study (``snakemake -n --configfile config/paper.yaml``) is quick.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping

from wsvm_span.data import BENCHMARK_NAMES, DATASETS, list_datasets

__all__ = [
    "ConfigError",
    "EXPERIMENTS",
    "GRID_EXPERIMENTS",
    "WEIGHTING",
    "SCORED_DATASETS",
    "IDA_DATASETS",
    "Job",
    "find_schema",
    "load_config",
    "validate_config",
    "config_hash",
    "canonical_json",
    "known_datasets",
    "expand_axis",
    "grid_axes",
    "grid_size",
    "grid_point",
    "experiment_datasets",
    "replicates",
    "plan_jobs",
    "loo_selection",
    "approx_sizes",
    "job_resources",
    "RuntimeSettings",
    "runtime_settings",
]

#: experiments that train models (one job per data set x weighting x replicate x chunk)
GRID_EXPERIMENTS = ("exp1", "exp2", "exp6")
#: every experiment of the study; exp3-exp5 are views (tables/figures) of the rows of exp1 and exp2
EXPERIMENTS = ("exp1", "exp2", "exp3", "exp4", "exp5", "exp6")
WEIGHTING = {"exp1": "class", "exp2": "sigmoid", "exp6": "class"}
# What the study knows about its data sets comes from the data registry (``wsvm_span.data.DATASETS``:
# sizes, realizations, whether the split uses a seed, whether it carries scores); it loads no data.
#: data sets whose Split carries importance scores q (needed by sigmoid weights)
SCORED_DATASETS = tuple(name for name in BENCHMARK_NAMES if DATASETS[name].has_scores)
#: data sets with IDA benchmark realizations (``realizations`` applies to these only)
IDA_DATASETS = tuple(name for name in BENCHMARK_NAMES if DATASETS[name].realizations)


class ConfigError(ValueError):
    """A configuration that fails validation; the message says where and why."""


# --------------------------------------------------------------------------------------------- schema
def find_schema(schema: str | os.PathLike | None = None) -> Path:
    """Locate ``workflow/schemas/config.schema.yaml``: the given path, $WSVM_CONFIG_SCHEMA, the project
    this package was installed from (editable install), or the current working directory."""
    candidates: list[Path] = []
    if schema is not None:
        candidates.append(Path(schema))
    if os.environ.get("WSVM_CONFIG_SCHEMA"):
        candidates.append(Path(os.environ["WSVM_CONFIG_SCHEMA"]))
    rel = Path("workflow") / "schemas" / "config.schema.yaml"
    here = Path(__file__).resolve()
    candidates += [parent / rel for parent in here.parents]
    candidates.append(Path.cwd() / rel)
    for c in candidates:
        if c.is_file():
            return c
    raise ConfigError(
        "cannot find the config schema workflow/schemas/config.schema.yaml; pass --schema or set "
        "WSVM_CONFIG_SCHEMA"
    )


@lru_cache(maxsize=8)
def _load_schema(path: str) -> dict:
    import yaml

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _validator_with_defaults(schema: dict):
    import jsonschema
    from jsonschema import validators

    base = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if validator.is_type(instance, "object"):
            for prop, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub and prop not in instance:
                    instance[prop] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, subschema)

    return validators.extend(base, {"properties": set_defaults})(schema)


def _where(path) -> str:
    parts = [str(p) if not isinstance(p, int) else f"[{p}]" for p in path]
    out = ".".join(parts).replace(".[", "[")
    return out or "<top level>"


# --------------------------------------------------------------------------------------------- names
def known_datasets() -> list[str]:
    """The data set names of the data layer (``wsvm_span.data.list_datasets``)."""
    return list(list_datasets())


def _is_known(name: str) -> bool:
    """A benchmark name or a synthetic ``ringnorm_d<d>_l<l>`` (the registry parses the name)."""
    return name in DATASETS


# ----------------------------------------------------------------------------------------- validation
def load_config(path: str | os.PathLike, schema: str | os.PathLike | None = None) -> dict:
    """Read a YAML config file and return it validated (defaults filled in)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    with open(path, encoding="utf-8") as fh:
        try:
            cfg = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: the config must be a mapping")
    return validate_config(cfg, schema=schema)


def validate_config(cfg: Mapping[str, Any], schema: str | os.PathLike | None = None) -> dict:
    """Validate ``cfg`` against the schema and the semantic rules; return a copy with defaults.

    Raises :class:`ConfigError` listing every problem found (one per line)."""
    schema_path = find_schema(schema)
    cfg = copy.deepcopy(dict(cfg))
    validator = _validator_with_defaults(_load_schema(str(schema_path)))
    errors = sorted(validator.iter_errors(cfg), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        lines = []
        for e in errors:
            msg = e.message
            if e.validator == "oneOf":  # only grid axes use oneOf
                msg = "a grid axis needs either start, stop and step, or values (not both)"
            lines.append(f"{_where(e.absolute_path)}: {msg}")
        raise ConfigError("invalid config (schema " + schema_path.name + "):\n  " + "\n  ".join(lines))
    problems = list(_semantic_problems(cfg))
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
    return cfg


def _axis_problems(where: str, axis: Mapping[str, Any]) -> Iterator[str]:
    if "values" in axis:
        values = axis["values"]
        if not values:
            yield f"{where}: empty grid (values is an empty list)"
        elif any(not math.isfinite(v) for v in values):
            yield f"{where}: values must be finite numbers"
        elif len(set(values)) != len(values):
            yield f"{where}: values has duplicates"
        return
    start, stop, step = axis["start"], axis["stop"], axis["step"]
    if not all(math.isfinite(v) for v in (start, stop, step)):
        yield f"{where}: start, stop and step must be finite numbers"
    elif step <= 0:
        yield f"{where}: step must be positive (got {step})"
    elif start > stop:
        yield f"{where}: empty grid: start ({start}) is greater than stop ({stop})"


def _semantic_problems(cfg: Mapping[str, Any]) -> Iterator[str]:
    valid = ", ".join(BENCHMARK_NAMES) + ", ringnorm_d<d>_l<l>"
    if not cfg["seeds"]:
        yield "seeds: needs at least one seed"
    if len(set(cfg["seeds"])) != len(cfg["seeds"]):
        yield "seeds: has duplicates"
    if not cfg["realizations"]:
        yield "realizations: needs at least one realization"
    if any(r < 1 for r in cfg["realizations"]):
        yield "realizations: realizations are numbered from 1"
    if len(set(cfg["realizations"])) != len(cfg["realizations"]):
        yield "realizations: has duplicates"
    if cfg["loo"]["max_train_size"] is not None and cfg["loo"]["max_train_size"] < 1:
        yield "loo.max_train_size: must be positive or null"
    exps = cfg["experiments"]
    for exp in ("exp1", "exp2"):
        if exp not in exps:
            continue
        ds = exps[exp]["datasets"]
        if not ds:
            yield f"experiments.{exp}.datasets: empty (list at least one data set, or remove {exp})"
        for name in ds:
            if not _is_known(name):
                yield f"experiments.{exp}.datasets: unknown data set {name!r}; valid names: {valid}"
                continue
            spec = DATASETS[name]
            if exp == "exp2" and not spec.has_scores:
                yield (
                    f"experiments.exp2.datasets: {name!r} has no importance scores; sigmoid weights need "
                    f"one of {', '.join(SCORED_DATASETS)}"
                )
            elif spec.realizations and not set(cfg["realizations"]) <= set(spec.realizations):
                missing = sorted(set(cfg["realizations"]) - set(spec.realizations))
                yield (
                    f"realizations: {name!r} has realizations {spec.realizations[0]}-{spec.realizations[-1]}, "
                    f"not {', '.join(map(str, missing))}"
                )
        if len(set(ds)) != len(ds):
            yield f"experiments.{exp}.datasets: has duplicates"
    if "exp6" in exps:
        for key in ("d", "l"):
            vals = exps["exp6"][key]
            if not vals:
                yield f"experiments.exp6.{key}: empty grid (list at least one value)"
            elif any(v < 1 for v in vals):
                yield f"experiments.exp6.{key}: values must be positive integers"
            elif len(set(vals)) != len(vals):
                yield f"experiments.exp6.{key}: has duplicates"
    for exp, spec in exps.items():
        for axis_name, axis in spec["grid"].items():
            yield from _axis_problems(f"experiments.{exp}.grid.{axis_name}", axis)


def canonical_json(obj: Any) -> str:
    """Canonical JSON (sorted keys, no whitespace): the input of every hash in the study."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def config_hash(cfg: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of the validated config."""
    return hashlib.sha256(canonical_json(cfg).encode()).hexdigest()


# ------------------------------------------------------------------------------------------------ grid
def expand_axis(axis: Mapping[str, Any]) -> list[float]:
    """Values of one grid axis; {start, stop, step} includes both ends (up to rounding)."""
    if "values" in axis:
        return [_clean(v) for v in axis["values"]]
    start, stop, step = float(axis["start"]), float(axis["stop"]), float(axis["step"])
    if step <= 0 or start > stop:
        raise ConfigError(f"bad axis {dict(axis)}")
    n = int(math.floor((stop - start) / step + 1e-9)) + 1
    return [_clean(start + i * step) for i in range(n)]


def _clean(v: float) -> float:
    v = round(float(v), 10)
    return 0.0 if v == 0 else v


def grid_axes(cfg: Mapping[str, Any], experiment: str) -> dict[str, list[float]]:
    """Ordered grid axes of a grid experiment (the last axis varies fastest in model_index order)."""
    from .schema import HYPERPARAMETERS

    spec = cfg["experiments"][experiment]["grid"]
    return {name: expand_axis(spec[name]) for name in HYPERPARAMETERS[WEIGHTING[experiment]]}


def grid_size(axes: Mapping[str, list[float]]) -> int:
    return math.prod(len(v) for v in axes.values())


def grid_point(axes: Mapping[str, list[float]], index: int) -> dict[str, float]:
    """The hyperparameters of model ``index`` (row-major over the axes, last axis fastest)."""
    sizes = [len(v) for v in axes.values()]
    out = {}
    for name, size in zip(reversed(list(axes)), reversed(sizes)):
        index, k = divmod(index, size)
        out[name] = axes[name][k]
    if index:
        raise IndexError("model index outside the grid")
    return {name: out[name] for name in axes}


def experiment_datasets(cfg: Mapping[str, Any], experiment: str) -> list[str]:
    spec = cfg["experiments"].get(experiment)
    if spec is None:
        return []
    if experiment == "exp6":
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
    """Model indices of a data set's grid that get exact LOO: a seeded sample, the same for every
    chunking and every replicate (the training-size limit is applied by the job)."""
    import numpy as np

    fraction = _loo_fraction(cfg, experiment)
    if fraction <= 0 or n_models == 0:
        return frozenset()
    n_sel = min(n_models, max(1, int(round(fraction * n_models))))
    if n_sel == n_models:
        return frozenset(range(n_models))
    rng = np.random.default_rng([int(cfg["loo"]["seed"]) & 0xFFFFFFFF, zlib.crc32(f"{experiment}/{dataset}".encode())])
    return frozenset(int(i) for i in rng.permutation(n_models)[:n_sel])


@dataclass(frozen=True)
class Job:
    """One grid job: a chunk of the models of one (experiment, data set, weighting, seed, realization)."""

    experiment: str
    dataset: str
    weighting: str
    seed: int
    realization: int
    chunk: int
    model_start: int
    model_stop: int
    spec: dict = field(repr=False, compare=False, hash=False)

    @property
    def n_models(self) -> int:
        return self.model_stop - self.model_start

    @property
    def path(self) -> str:
        return chunk_path(self.experiment, self.dataset, self.weighting, self.chunk)

    @property
    def slot(self) -> str:
        return job_slot(self.experiment, self.dataset, self.weighting, self.seed, self.realization, self.chunk)

    @property
    def spec_json(self) -> str:
        return canonical_json(self.spec)


def chunk_path(experiment: str, dataset: str, weighting: str, chunk: int) -> str:
    return f"results/{experiment}/{dataset}/{weighting}/chunk-{chunk}.parquet"


def job_slot(experiment, dataset, weighting, seed, realization, chunk) -> str:
    """The job's place in the study, independent of the config's other settings."""
    return f"{experiment}/{dataset}/{weighting}/s{seed}-r{realization}/chunk-{chunk}"


def _chunk_size(cfg: Mapping[str, Any], experiment: str) -> int:
    return int(cfg["experiments"][experiment].get("chunk_size") or cfg["chunk_size"])


def plan_jobs(cfg: Mapping[str, Any], experiments: tuple[str, ...] = GRID_EXPERIMENTS) -> list[Job]:
    """Every grid job of the config, in a deterministic order (no data is loaded)."""
    jobs: list[Job] = []
    for exp in experiments:
        if exp not in cfg["experiments"]:
            continue
        axes = grid_axes(cfg, exp)
        n = grid_size(axes)
        size = _chunk_size(cfg, exp)
        n_chunks = -(-n // size)
        common = {
            "experiment": exp,
            "weighting": WEIGHTING[exp],
            "axes": axes,
            "svm": cfg["svm"],
            "cv": cfg["cv"],
            "loo": {"all_up_to": cfg["loo"]["all_up_to"], "max_train_size": cfg["loo"]["max_train_size"]},
        }
        if exp == "exp2":
            common["sigma"] = cfg["experiments"]["exp2"]["sigma"]
        if _loo_fraction(cfg, exp) <= 0:  # no exact LOO at all in this experiment
            common["loo"] = {"all_up_to": 0, "max_train_size": 0}
        for dataset in experiment_datasets(cfg, exp):
            loo = loo_selection(cfg, exp, dataset, n)
            for rep, (seed, realization) in enumerate(replicates(cfg, dataset)):
                for j in range(n_chunks):
                    start, stop = j * size, min(n, (j + 1) * size)
                    chunk = rep * n_chunks + j
                    spec = dict(common, dataset=dataset, seed=seed, realization=realization, chunk=chunk,
                                models=[start, stop], loo_models=sorted(i for i in loo if start <= i < stop))
                    jobs.append(Job(exp, dataset, WEIGHTING[exp], seed, realization, chunk, start, stop, spec))
    return jobs


# ---------------------------------------------------------------------------------------- resources
def approx_sizes(dataset: str) -> tuple[int, int]:
    """(train, test) sizes of a data set, from the data registry (no data is loaded)."""
    spec = DATASETS[dataset]
    return int(spec.n_train), int(spec.n_test)


def job_resources(cfg: Mapping[str, Any], job: Job) -> dict[str, int]:
    """Scheduler hints: memory from the kernel matrices (train l x l several times, test m x l),
    run time from the model count and training size (a rough cubic model, padded)."""
    l, m = approx_sizes(job.dataset)
    mem = (4 * l * l + m * l) * 8 / 2**20 * 1.5 + 600
    secs = job.n_models * 0.02 * (l / 500) ** 2.5 * 10 + 120
    return {
        "mem_mb": max(int(cfg["resources"]["mem_mb_min"]), int(math.ceil(mem / 100.0) * 100)),
        "runtime": max(int(cfg["resources"]["runtime_min"]), int(math.ceil(secs / 60))),
    }


# ----------------------------------------------------------------------------------- runtime settings
@dataclass(frozen=True)
class RuntimeSettings:
    """Settings that do not change results (where data come from, where runs are logged)."""

    tracking_enabled: bool
    tracking_uri: str | None
    experiment_prefix: str
    artifact_root: str | None
    child_runs: bool
    sqlite_wal: bool
    data_dir: str
    data_mirror: str | None
    config_hash: str

    def cli_args(self) -> list[str]:
        args = ["--config-hash", self.config_hash, "--experiment-prefix", self.experiment_prefix,
                "--data-dir", self.data_dir]
        if self.data_mirror:
            args += ["--data-mirror", self.data_mirror]
        if not self.tracking_enabled:
            args += ["--no-tracking"]
        else:
            args += ["--tracking-uri", self.tracking_uri]
            if self.artifact_root:
                args += ["--artifact-root", self.artifact_root]
            if not self.child_runs:
                args += ["--no-child-runs"]
        return args


def _is_url(s: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", s))


def runtime_settings(cfg: Mapping[str, Any], workdir: str | os.PathLike | None = None) -> RuntimeSettings:
    """Resolve tracking URI, artifact root and data locations against the working directory.

    Tracking URI: config tracking.uri, else $MLFLOW_TRACKING_URI, else sqlite:///<workdir>/results/mlflow.db.
    Data mirror: a local folder that does not exist means "no mirror" (download from the publishers)."""
    workdir = Path(workdir or os.getcwd()).resolve()
    tr = cfg["tracking"]
    uri = tr["uri"] or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{workdir / 'results' / 'mlflow.db'}"
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        rel = uri[len("sqlite:///"):]
        uri = f"sqlite:///{(workdir / rel).resolve()}"
    local_store = uri.startswith("sqlite:") or uri.startswith("file:") or not _is_url(uri)
    artifact_root = None
    if local_store:
        artifact_root = str((workdir / (tr["artifact_root"] or "results/mlartifacts")).resolve())
    mirror = cfg["data"]["mirror"]
    if mirror and not _is_url(mirror):
        p = (workdir / mirror).resolve()
        mirror = str(p) if p.is_dir() else None
    return RuntimeSettings(
        tracking_enabled=bool(tr["enabled"]),
        tracking_uri=uri,
        experiment_prefix=cfg["study"],
        artifact_root=artifact_root,
        child_runs=bool(tr["child_runs"]),
        sqlite_wal=bool(tr["sqlite_wal"]),
        data_dir=str((workdir / cfg["data"]["dir"]).resolve()),
        data_mirror=mirror,
        config_hash=config_hash(cfg),
    )
