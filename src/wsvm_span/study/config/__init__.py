"""The study configuration, by responsibility:

- :mod:`.loading`: reading and validating a config (one schema + semantic checks), its hash;
- :mod:`.grid`: grid axes and grid points of the weighting schemes;
- :mod:`.planning`: the typed grid :class:`Job` and the planner;
- :mod:`.cost`: scheduler hints (memory, run time) per job;
- :mod:`.runtime`: settings that do not change results (data locations, tracking).
"""

from .cost import approx_sizes, estimated_seconds, job_resources, memory_mb
from .grid import expand_axis, grid_axes, grid_point, grid_size
from .loading import (
    IDA_DATASETS,
    SCORED_DATASETS,
    ConfigError,
    canonical_json,
    config_hash,
    find_schema,
    known_datasets,
    load_config,
    validate_config,
)
from .planning import CHUNK_LOG_PATTERN, CHUNK_PATTERN, Job, chunk_path, experiment_datasets, job_slot, loo_models, loo_selection, plan_jobs, replicates
from .runtime import RuntimeSettings, runtime_settings

__all__ = [
    "CHUNK_LOG_PATTERN", "CHUNK_PATTERN", "ConfigError", "IDA_DATASETS", "Job", "RuntimeSettings", "SCORED_DATASETS",
    "approx_sizes", "canonical_json", "estimated_seconds", "memory_mb",
    "chunk_path", "config_hash", "expand_axis", "experiment_datasets", "find_schema", "grid_axes", "grid_point",
    "grid_size", "job_resources", "job_slot", "known_datasets", "load_config", "loo_models", "loo_selection",
    "plan_jobs", "replicates", "runtime_settings", "validate_config",
]
