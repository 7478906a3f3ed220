"""Grid axes of the weighting schemes: expanding an axis, the grid of an experiment, one grid point."""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from . import catalog
from .canonical import ConfigError

__all__ = ["axis_problems", "expand_axis", "grid_axes", "grid_size", "grid_point"]

#: ``floor((stop - start) / step)`` counts a stop that is a multiple of the step up to this rounding
#: (0.1 steps are not exact in binary: (0.9 - 0.0) / 0.1 = 8.999999999999998)
STEP_COUNT_SLACK = 1e-9
#: grid values are rounded to this many decimals so that -6 + 24 * 0.5 is exactly 6.0 in every row,
#: table and MLflow param
GRID_DECIMALS = 10


def expand_axis(axis: Mapping[str, Any]) -> list[float]:
    """Values of one grid axis; {start, stop, step} includes both ends (up to rounding)."""
    if "values" in axis:
        return [_clean(v) for v in axis["values"]]
    start, stop, step = float(axis["start"]), float(axis["stop"]), float(axis["step"])
    if step <= 0 or start > stop:
        raise ConfigError(f"bad axis {dict(axis)}")
    n = int(math.floor((stop - start) / step + STEP_COUNT_SLACK)) + 1
    return [_clean(start + i * step) for i in range(n)]


def _clean(v: float) -> float:
    v = round(float(v), GRID_DECIMALS)
    return 0.0 if v == 0 else v


def grid_axes(cfg: Mapping[str, Any], experiment: str) -> dict[str, list[float]]:
    """Ordered grid axes of a grid experiment (the last axis varies fastest in model_index order)."""
    spec = cfg["experiments"][experiment]["grid"]
    weighting = catalog.WEIGHTINGS[catalog.EXPERIMENTS[experiment].weighting]
    return {name: expand_axis(spec[name]) for name in weighting.hyperparameters}


def grid_size(axes: Mapping[str, list[float]]) -> int:
    """Models of a grid: the product of its axes' lengths.
    """
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


def axis_problems(where: str, axis: Mapping[str, Any]) -> Iterator[str]:
    """Problems of one grid axis of the config (``values``, or ``start``/``stop``/``step``), one message each."""
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
