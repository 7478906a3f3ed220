"""Data layer: the study's 14 data sets, those of the original span experiments and bank_marketing's
stratified draw (``EXTRA_NAMES``),
the data sets of Experiment 8 (``LUPI_NAMES``: seed 003's UCI sets and its "W" toy) and the synthetic
family of Experiment 6.

>>> from wsvm_span.data import load_dataset, list_datasets
>>> split = load_dataset("splice")              # doctest: +SKIP
>>> split.X_train.shape, split.d                # doctest: +SKIP
((1000, 60), 60)

Modules: :mod:`.formats` (parsers), :mod:`.files` (data directory, mirror/publisher fetch through pooch,
sha256, atomic writes), :mod:`.cache` (parsed-array cache), :mod:`.registry` (data sets, files,
checksums, sources), :mod:`.splits` (split rules, labels), :mod:`.scaling` ([0, 1] scaling),
:mod:`.scores` (importance scores), :mod:`.synthetic` (Experiment 6 and 8 generators),
:mod:`.loader` (:func:`load_dataset`).
"""

from .containers import Split
from .errors import (
    DataError,
    DataFormatError,
    DataIntegrityError,
    DataUnavailableError,
    UnknownDatasetError,
)
from .files import FileSpec
from .loader import load_dataset
from .registry import (
    BENCHMARK_NAMES,
    DATASETS,
    EXTRA_NAMES,
    LUPI_NAMES,
    DatasetSpec,
    dataset_checksums,
    list_datasets,
)
from .synthetic import make_ringnorm_variant, make_w_mixture

__all__ = [
    "load_dataset",
    "list_datasets",
    "dataset_checksums",
    "make_ringnorm_variant",
    "make_w_mixture",
    "Split",
    "DATASETS",
    "BENCHMARK_NAMES",
    "EXTRA_NAMES",
    "LUPI_NAMES",
    "DatasetSpec",
    "FileSpec",
    "DataError",
    "DataFormatError",
    "DataIntegrityError",
    "DataUnavailableError",
    "UnknownDatasetError",
]
