"""Data-set names as a config writes them: the registry's benchmark and extra names, and the synthetic family
by its pattern (for the config checks of the loader and of the job kinds, below both)."""

from __future__ import annotations

from wsvm_span.data import BENCHMARK_NAMES, DATASETS, EXTRA_NAMES

__all__ = ["is_known_dataset", "valid_names_text"]


def valid_names_text() -> str:
    """The valid data set names, for error messages (the synthetic family as its pattern)."""
    return ", ".join(BENCHMARK_NAMES + EXTRA_NAMES) + ", ringnorm_d<d>_l<l>"


def is_known_dataset(name: str) -> bool:
    """A benchmark name or a synthetic ``ringnorm_d<d>_l<l>`` (the registry parses the name)."""
    return name in DATASETS
