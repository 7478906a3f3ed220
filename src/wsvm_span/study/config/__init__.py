"""The study configuration, by responsibility:

- :mod:`.loading`: reading and validating a config (one schema + semantic checks, each configured
  experiment's block by its job kind's ``config_problems``), its hash;
- :mod:`.estimate`: the calibrated cost model of a config's jobs (by their kinds' hooks), and calibrating it;
- :mod:`.runtime`: settings that do not change results (data locations, tracking).

The jobs a config plans are in ``wsvm_span.study.experiments``, below this package (it reads the kinds;
the kinds do not read it). Below both: the grid axes (``study.grid``), the scheduler hints (``study.cost``)
and the cost calibration (``study.calibration``), re-exported here where the config's users found them.
"""

from ..cost import approx_sizes, estimated_seconds, job_resources, memory_mb
from ..grid import expand_axis, grid_axes, grid_point, grid_size
from .loading import (
    IDA_DATASETS,
    SCORED_DATASETS,
    ConfigError,
    canonical_json,
    config_hash,
    find_schema,
    known_datasets,
    load_config,
    load_schema,
    validate_config,
)
from .runtime import RuntimeSettings, runtime_settings

__all__ = [
    "ConfigError", "IDA_DATASETS", "RuntimeSettings", "SCORED_DATASETS",
    "approx_sizes", "canonical_json", "estimated_seconds", "memory_mb",
    "config_hash", "expand_axis", "find_schema", "grid_axes", "grid_point", "grid_size", "job_resources",
    "known_datasets", "load_config", "load_schema", "runtime_settings", "validate_config",
]
