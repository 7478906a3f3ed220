"""Loading and validating a study configuration: one JSON schema plus the checks a schema cannot express.

The schema is package data, ``wsvm_span/study/config/config.schema.yaml`` (one place); the Snakefile and
the CLI both call :func:`validate_config`, which fills in the schema's defaults and then runs the semantic
checks. The file is used as it is: its enums (engines, QP solvers, tie rules) and the experiments it
defines are the code's registries and catalog, checked by ``tests/test_packaging.py``.

A config may be a part of another: ``base`` names the config whose settings it takes and ``select`` the jobs
it keeps of them (``reproduced/<part>/``: parts of ``config/paper.yaml``; :mod:`..experiments.selection`).
"""

from __future__ import annotations

import copy
import hashlib
import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping

from wsvm_span.data import BENCHMARK_NAMES, DATASETS, EXTRA_NAMES, list_datasets

from .. import catalog
from ..canonical import ConfigError, canonical_json
from ..dataset_names import is_known_dataset as _is_known, valid_names_text
from ..grid import axis_problems as _axis_problems

__all__ = ["ConfigError", "OWN_SETTINGS", "SCORED_DATASETS", "IDA_DATASETS", "find_schema", "load_schema",
           "load_config", "validate_config", "config_hash", "canonical_json", "known_datasets", "valid_names_text"]

# What the study knows about its data sets comes from the data registry (``wsvm_span.data.DATASETS``:
# sizes, realizations, whether the split uses a seed, whether it carries scores); it loads no data.
#: data sets whose Split carries importance scores q (needed by sigmoid weights)
SCORED_DATASETS = tuple(name for name in BENCHMARK_NAMES + EXTRA_NAMES if DATASETS[name].has_scores)
#: data sets with IDA benchmark realizations (``realizations`` applies to these only)
IDA_DATASETS = tuple(name for name in BENCHMARK_NAMES if DATASETS[name].realizations)


# --------------------------------------------------------------------------------------------- schema
#: the package's own schema file (package data): the one that validates, read as it is
SCHEMA_FILE = "config.schema.yaml"


def find_schema(schema: str | os.PathLike | None = None) -> Path:
    """The config schema: ``schema`` if given, else the one shipped with the package
    (``wsvm_span/study/config/config.schema.yaml``)."""
    if schema is None:
        return Path(str(resources.files(__package__).joinpath(SCHEMA_FILE)))
    path = Path(schema)
    if not path.is_file():
        raise ConfigError(f"config schema not found: {path}")
    return path


@lru_cache(maxsize=8)
def load_schema(path: str | None = None) -> dict:
    """The schema at ``path`` (default: the package's), parsed from YAML."""
    import yaml

    with open(find_schema(path), encoding="utf-8") as fh:
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


# ----------------------------------------------------------------------------------------- validation
def load_config(path: str | os.PathLike, schema: str | os.PathLike | None = None,
                workdir: str | os.PathLike | None = None) -> dict:
    """Read a YAML config file and return it validated (defaults filled in; a ``base`` read from ``workdir``:
    :func:`validate_config`)."""
    return validate_config(_read_config(Path(path)), schema=schema, workdir=workdir)


def _read_config(path: Path) -> dict:
    import yaml

    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    with open(path, encoding="utf-8") as fh:
        try:
            cfg = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: the config must be a mapping")
    return cfg


def validate_config(cfg: Mapping[str, Any], schema: str | os.PathLike | None = None,
                    workdir: str | os.PathLike | None = None) -> dict:
    """Validate ``cfg`` against the schema and the semantic rules; return a copy with defaults.

    A config with ``base`` is its base's settings (the file at ``base``, relative to ``workdir``, default the
    working directory, as the data folders are) with its own :data:`OWN_SETTINGS`, ``select`` and ``renumber``.
    A config with ``select`` keeps only the experiments it names (their jobs: ``experiments.plan_jobs``).
    Raises :class:`ConfigError` listing every problem found (one per line)."""
    schema_path = find_schema(schema)
    cfg = copy.deepcopy(dict(cfg))
    if "base" in cfg:
        cfg = _on_base(cfg, schema, workdir)
    validator = _validator_with_defaults(load_schema(str(schema_path)))
    errors = sorted(validator.iter_errors(cfg), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        lines = []
        for e in errors:
            if e.validator == "oneOf" and "grid" in e.absolute_path:
                lines.append(f"{_where(e.absolute_path)}: a grid axis needs either start, stop and step, or "
                             "values (not both)")
            elif e.validator in ("oneOf", "anyOf") and e.context:
                # alternatives (a number or a mapping, a size or "all"): what is wrong inside the branches
                # of the value's own type, not "is not of type 'integer'" from a branch it is not
                wrong_type = {c.schema_path[0] for c in e.context if c.validator == "type" and len(c.schema_path) == 2}
                inner = [c for c in e.context if c.schema_path[0] not in wrong_type] or e.context
                lines.extend(f"{_where(c.absolute_path)}: " + (
                    f"the key {c.instance!r} must be a string (quote it)" if "propertyNames" in c.schema_path
                    else c.message) for c in inner)
            else:
                lines.append(f"{_where(e.absolute_path)}: {e.message}")
        lines = list(dict.fromkeys(lines))
        raise ConfigError("invalid config (schema " + schema_path.name + "):\n  " + "\n  ".join(lines))
    problems = list(_semantic_problems(cfg))
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
    if "select" in cfg:  # the tables and figures of the experiments it selects, no others
        cfg["experiments"] = {exp: block for exp, block in cfg["experiments"].items() if exp in cfg["select"]}
    return cfg


#: what a config with ``base`` sets itself, besides ``select`` and ``renumber``: the study's name, where data and
#: runs live, figures, scheduler hints; no job's spec holds any of them, so its jobs are the base's, byte for byte
OWN_SETTINGS = ("study", "data", "tracking", "figures", "resources")


def _on_base(cfg: dict, schema: str | os.PathLike | None, workdir: str | os.PathLike | None) -> dict:
    """The settings of a config with ``base``: its base's, validated, with its own (:data:`OWN_SETTINGS`: a
    mapping merged into the base's), ``select`` and ``renumber``."""
    name = cfg.pop("base")
    if not isinstance(name, str):
        raise ConfigError(f"base: {name!r} is not a path (the config this one selects from, e.g. config/paper.yaml)")
    stray = sorted(set(cfg) - {*OWN_SETTINGS, "select", "renumber"})
    if stray:
        raise ConfigError(f"{', '.join(stray)}: a config with base takes these from its base ({name}), so that its "
                          f"jobs are the base's; it sets only {', '.join(OWN_SETTINGS)}, select and renumber")
    try:
        raw = _read_config(Path(workdir or Path.cwd()) / name)
    except ConfigError as exc:
        raise ConfigError(f"base: {exc} (a base is read relative to the working directory)") from None
    nested = [key for key in ("base", "select", "renumber") if key in raw]
    if nested:
        raise ConfigError(f"base: {name} has {', '.join(nested)} itself; a base is a full config")
    try:
        merged = validate_config(raw, schema)
    except ConfigError as exc:
        raise ConfigError(f"base {name}: {exc}") from None
    for key, value in cfg.items():
        own = key in OWN_SETTINGS and isinstance(value, Mapping) and isinstance(merged.get(key), Mapping)
        merged[key] = {**merged[key], **value} if own else value
    return merged


def _semantic_problems(cfg: Mapping[str, Any]) -> Iterator[str]:
    """Problems of a schema-valid config that a schema cannot express (one message per problem)."""
    if not cfg["seeds"]:
        yield "seeds: needs at least one seed"
    if len(set(cfg["seeds"])) != len(cfg["seeds"]):
        yield "seeds: has duplicates"
    for dataset, seeds in cfg.get("seeds_by_dataset", {}).items():
        where = f"seeds_by_dataset.{dataset}"
        if dataset not in DATASETS:
            yield f"{where}: unknown data set; known: {', '.join(sorted(DATASETS))}"
        elif not DATASETS[dataset].uses_seed:
            yield f"{where}: {dataset}'s split does not depend on the seed (it runs once, with the first of seeds)"
        if not seeds:
            yield f"{where}: needs at least one seed"
        elif len(set(seeds)) != len(seeds):
            yield f"{where}: has duplicates"
    if not cfg["realizations"]:
        yield "realizations: needs at least one realization"
    if any(r < 1 for r in cfg["realizations"]):
        yield "realizations: realizations are numbered from 1"
    if len(set(cfg["realizations"])) != len(cfg["realizations"]):
        yield "realizations: has duplicates"
    if cfg["loo"]["max_train_size"] is not None and cfg["loo"]["max_train_size"] < 1:
        yield "loo.max_train_size: must be positive or null"
    # the job kinds check their blocks, and the jobs a selection names (imported on use: the kinds are heavy)
    from ..experiments import KINDS, selection_problems

    exps = cfg["experiments"]
    for exp, sub in exps.items():
        yield from KINDS[catalog.EXPERIMENTS[exp].kind].config_problems(cfg, exp)
        kind = catalog.EXPERIMENTS[exp].datasets
        if kind in ("benchmark", "scored"):
            yield from _dataset_list_problems(cfg, exp, sub["datasets"], scored=kind == "scored")
        elif kind == "ringnorm":
            for key in ("d", "l"):
                vals = sub[key]
                if not vals:
                    yield f"experiments.{exp}.{key}: empty grid (list at least one value)"
                elif any(v < 1 for v in vals):
                    yield f"experiments.{exp}.{key}: values must be positive integers"
                elif len(set(vals)) != len(vals):
                    yield f"experiments.{exp}.{key}: has duplicates"
    for exp, spec in exps.items():
        for axis_name, axis in spec.get("grid", {}).items():  # a kind without one checks its own axes
            yield from _axis_problems(f"experiments.{exp}.grid.{axis_name}", axis)
    yield from selection_problems(cfg)


def _dataset_list_problems(cfg: Mapping[str, Any], exp: str, ds: list[str], scored: bool) -> Iterator[str]:
    valid = valid_names_text()
    if not ds:
        yield f"experiments.{exp}.datasets: empty (list at least one data set, or remove {exp})"
    for name in ds:
        if not _is_known(name):
            yield f"experiments.{exp}.datasets: unknown data set {name!r}; valid names: {valid}"
            continue
        spec = DATASETS[name]
        if scored and not spec.has_scores:
            yield (
                f"experiments.{exp}.datasets: {name!r} has no importance scores; sigmoid weights need "
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


def config_hash(cfg: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of the validated config."""
    return hashlib.sha256(canonical_json(cfg).encode()).hexdigest()


