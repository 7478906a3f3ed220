"""Cache of parsed arrays (``.npz`` under ``<data_dir>/.cache/arrays/``).

An entry is keyed by a logical name (e.g. ``"mnist"``), the sha256 of every source file it was
parsed from and :data:`CACHE_VERSION`; a changed source file therefore never hits a stale entry
(the stale file is removed when the new one is written). Entries are written atomically
(temporary file + ``os.replace``); an unreadable entry is ignored and rebuilt; a read-only data
directory simply disables writing. Only plain numeric arrays are stored (``allow_pickle=False``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from ..utils.atomic import atomic_write

__all__ = ["CACHE_VERSION", "ArrayCache", "SourceFiles"]

#: Bump when a parser or a reader changes what it returns.
CACHE_VERSION = 1

Arrays = dict[str, np.ndarray]


class ArrayCache:
    """Directory of ``.npz`` files; ``ArrayCache(None)`` is a cache that never stores anything."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = None if root is None else Path(root)

    def get(
        self, name: str, key: Sequence[str], compute: Callable[[], Mapping[str, np.ndarray]]
    ) -> Arrays:
        """Arrays stored under (``name``, ``key``), computing and storing them on a miss.

        Parameters
        ----------
        name : str
            Logical entry name (letters, digits, ``._-``); one live entry per name.
        key : sequence of str
            What the content depends on, typically the source files' sha256.
        compute : callable returning a mapping str -> ndarray
        """
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
            raise ValueError(f"invalid cache entry name {name!r}")
        if self.root is None:
            return {k: np.asarray(v) for k, v in compute().items()}
        digest = hashlib.sha256(json.dumps([name, CACHE_VERSION, list(key)]).encode()).hexdigest()
        path = self.root / f"{name}.{digest[:24]}.npz"
        if path.is_file():
            try:
                with np.load(path, allow_pickle=False) as npz:
                    return {k: npz[k] for k in npz.files}
            except (OSError, ValueError, EOFError, zipfile.BadZipFile):
                pass  # unreadable entry: rebuild it below
        arrays = {k: np.asarray(v) for k, v in compute().items()}
        self._store(path, name, arrays)
        return arrays

    def _store(self, path: Path, name: str, arrays: Arrays) -> None:
        try:
            with atomic_write(path) as fh:
                np.savez(fh, **arrays)
        except OSError:
            return  # read-only or full data directory: no cache
        # remove this entry's stale versions (same name, other key; exact pattern so that
        # e.g. "a1a" never matches "a1a.t.gz")
        same_name = re.compile(re.escape(name) + r"\.[0-9a-f]{24}\.npz")
        for stale in path.parent.iterdir():
            if stale != path and same_name.fullmatch(stale.name):
                with contextlib.suppress(OSError):
                    stale.unlink()


class SourceFiles:
    """Verified local files of one data set plus the parsed-array cache (what a builder sees).

    Attributes
    ----------
    paths : dict relpath -> Path
        Verified files in the data directory.
    checksums : dict relpath -> sha256
    cache : ArrayCache
    """

    def __init__(
        self, paths: Mapping[str, Path], checksums: Mapping[str, str], cache: ArrayCache
    ) -> None:
        self.paths = dict(paths)
        self.checksums = dict(checksums)
        self.cache = cache

    def path(self, relpath: str) -> Path:
        return self.paths[relpath]

    def parsed(
        self, name: str, relpaths: Sequence[str], parse: Callable[[], Mapping[str, np.ndarray]]
    ) -> Arrays:
        """``parse()`` through the cache, keyed by the sha256 of ``relpaths``."""
        return self.cache.get(name, [self.checksums[r] for r in relpaths], parse)
