"""``load_dataset``: registry -> verified files -> split rule -> scaling -> :class:`Split`."""

from __future__ import annotations

import os

import numpy as np

from .cache import ArrayCache, SourceFiles
from .containers import Split
from .files import CACHE_DIRNAME, ensure_file, resolve_data_dir
from .registry import DATASETS
from .scaling import MinMaxScaler01

__all__ = ["load_dataset"]


def load_dataset(
    name: str,
    seed: int = 0,
    realization: int = 1,
    data_dir: str | os.PathLike[str] | None = None,
    mirror: str | os.PathLike[str] | None = None,
    *,
    publishers: bool | None = None,
    cache: bool = True,
) -> Split:
    """Load the train/test split of a data set of the study, scaled to [0, 1].

    Parameters
    ----------
    name : str
        One of :func:`~wsvm_span.data.list_datasets` (or any ``ringnorm_d<d>_l<l>``).
    seed : int
        Seed of the random split (breast_cancer, mushrooms, skin_nonskin, bank_marketing, spambase,
        mammographic, breast_cancer_wisconsin_351) and of the synthetic data; ignored (and recorded
        as None) for fixed splits.
    realization : int
        IDA realization (waveform, banana, image; 1-10 are pinned); ignored (recorded as None)
        for the other data sets.
    data_dir : path, optional
        Data directory (default ``$WSVM_DATA_DIR`` or ``<project root>/resources/data``).
    mirror : str or path, optional
        Where to fetch absent files from (default ``$WSVM_DATA_MIRROR``): a directory or an
        http(s) URL with the layout of ``shared/data``.
    publishers : bool, optional
        Fall back to the publishers' URLs (default: yes unless ``$WSVM_DATA_OFFLINE`` is set).
    cache : bool
        Use the parsed-array cache in ``<data_dir>/.cache/arrays``.

    Returns
    -------
    Split
        ``X_train`` (l, p), ``y_train`` (l,), ``X_test`` (m, p), ``y_test`` (m,), all float64
        and C-contiguous; features scaled with the training set's min/max (constant -> 0);
        ``d`` for gamma = 1/d; ``scores`` (l,) for parkinson_speech, bank_marketing and w_mixture;
        ``X_priv`` (l, p~) privileged features where the data set has them (scaled to [0, 1] by
        their own min and max); ``X_val``, ``y_val`` for a data set with a separate validation
        sample (w_mixture).

    Raises
    ------
    UnknownDatasetError
        If the name is not in the registry (the message lists the valid names).
    ValueError
        If the seed or realization is not valid for the data set.
    DataIntegrityError
        If a file is corrupt, truncated or has the wrong sha256 (the message names both checksums).
    DataUnavailableError
        If a file is absent and no source could provide it.

    Examples
    --------
    A synthetic set needs no file; the benchmark sets are read from the data directory, a mirror or their
    publishers, and checked against their pinned sha256:

    >>> from wsvm_span.data import load_dataset
    >>> split = load_dataset("ringnorm_d2_l40", seed=0)
    >>> split.X_train.shape, split.X_test.shape, split.d
    ((40, 2), (2000, 2), 2)
    >>> float(split.X_train.min()), float(split.X_train.max())
    (0.0, 1.0)
    """
    spec = DATASETS[name]
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    if spec.realizations:
        if isinstance(realization, bool) or not isinstance(realization, (int, np.integer)):
            raise ValueError(f"realization must be an integer, got {realization!r}")
        realization = int(realization)
        spec.check_realization(realization)
        used_realization: int | None = realization
    else:
        used_realization = None

    files = spec.files_for(used_realization)
    if files:
        root = resolve_data_dir(data_dir)
        paths = {f.relpath: ensure_file(f, root, mirror, publishers=publishers) for f in files}
        arrays = ArrayCache(root / CACHE_DIRNAME / "arrays" if cache else None)
    else:
        paths, arrays = {}, ArrayCache(None)
    checksums = {f.relpath: f.sha256 for f in files}
    raw = spec.builder(SourceFiles(paths, checksums, arrays), seed, used_realization)

    scaler = MinMaxScaler01().fit(raw.X_train)
    X_train = scaler.transform(raw.X_train)
    X_test = scaler.transform(raw.X_test)
    X_val = None if raw.X_val is None else scaler.transform(raw.X_val)
    y_train = np.ascontiguousarray(raw.y_train, dtype=np.float64)
    y_test = np.ascontiguousarray(raw.y_test, dtype=np.float64)
    y_val = None if raw.y_val is None else np.ascontiguousarray(raw.y_val, dtype=np.float64)
    scores = None if raw.scores is None else np.ascontiguousarray(raw.scores, dtype=np.float64)
    # privileged features exist for training points only: scaled by their own min and max
    X_priv = None if raw.X_priv is None else MinMaxScaler01().fit_transform(raw.X_priv)

    n_val = 0 if X_val is None else X_val.shape[0]
    if (X_train.shape[0], X_test.shape[0], n_val) != (spec.n_train, spec.n_test, spec.n_val) or (
        X_train.shape[1] != spec.n_features
    ) or (X_priv is None) == spec.has_privileged:
        raise RuntimeError(
            f"{name}: built {X_train.shape} / {X_test.shape} / {n_val} validation points, privileged "
            f"features {'none' if X_priv is None else X_priv.shape}; registry says {spec.n_train} / "
            f"{spec.n_test} / {spec.n_val} x {spec.n_features}, privileged: {spec.has_privileged}"
        )
    return Split(
        name=spec.name,
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        d=spec.d,
        scores=scores,
        X_priv=X_priv,
        X_val=X_val,
        y_val=y_val,
        seed=seed if spec.uses_seed else None,
        realization=used_realization,
        checksums=checksums,
    )
