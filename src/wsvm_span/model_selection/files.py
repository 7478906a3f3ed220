"""Reading the data files of ``wsvm-span select``: LIBSVM/svmlight sparse format and CSV.

Both readers report the file and the line number of the first malformed line. A missing file is a
``ValueError`` (``select`` prints it and exits with status 2).

LIBSVM format (what svm-train reads): ``<label> <index>:<value> ...`` with integer indices >= 1 in
ascending order; ``#`` starts a comment; blank lines are skipped. Column j of the returned matrix is
feature index j + 1. It is read by the data layer's reader, :func:`wsvm_span.data.formats.parse_libsvm`
(scikit-learn's compiled ``load_svmlight_file``; gzip recognised by its magic bytes), kept sparse.
CSV files ending in ``.gz`` are decompressed on the fly.

Range files (``write_range_file``): svm-scale's ``-s`` format, so that ``svm-scale -r`` applies the map.
"""
from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..data.formats import parse_libsvm

__all__ = ["DataFile", "read_csv", "read_data_file", "read_libsvm", "write_range_file"]


@dataclass(frozen=True)
class DataFile:
    """Features (CSR, n x d), labels (n,) as found in the file, and where they came from."""

    X: sp.csr_matrix
    y: np.ndarray
    path: Path
    format: str


def _require_file(path: Path) -> None:
    if not path.is_file():
        raise ValueError(f"{path}: no such file")


def _open_text(path: Path):
    _require_file(path)
    raw = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="")


def _number(token: str, path: Path, lineno: int, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ValueError(f"{path}:{lineno}: {what} {token!r} is not a number") from None
    if not np.isfinite(value):
        raise ValueError(f"{path}:{lineno}: {what} {token!r} is not finite")
    return value


def read_libsvm(path, n_features: int | None = None) -> DataFile:
    """Read a LIBSVM/svmlight file; ``n_features`` declares the dimension (default: highest index).

    A malformed file raises :class:`~wsvm_span.data.DataFormatError` (a ``ValueError``) naming the
    file and its first offending line.
    """
    path = Path(path)
    _require_file(path)
    X, y = parse_libsvm(path, n_features, sparse=True)
    return DataFile(X, y, path, "libsvm")


def read_csv(path, label_column: str | int = 0, n_features: int | None = None) -> DataFile:
    """Read a comma-separated file: one row per point, one label column (index or header name), the
    other columns numeric features. A first row that is not all numbers is a header."""
    path = Path(path)
    with _open_text(path) as fh:
        rows = [(n, r) for n, r in enumerate(csv.reader(fh), start=1) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: no data lines (empty file?)")
    header = None
    try:
        [float(c) for c in rows[0][1]]
    except ValueError:
        header = [c.strip() for c in rows[0][1]]
        rows = rows[1:]
        if not rows:
            raise ValueError(f"{path}: a header but no data lines") from None
    width = len(header) if header else len(rows[0][1])
    label = _label_index(label_column, header, width, path)
    data = np.empty((len(rows), width))
    for i, (lineno, row) in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"{path}:{lineno}: expected {width} comma-separated fields, got {len(row)}")
        for j, cell in enumerate(row):
            data[i, j] = _number(cell.strip(), path, lineno, f"field {j + 1}")
    X = np.delete(data, label, axis=1)
    if n_features is not None and n_features != X.shape[1]:
        raise ValueError(f"{path}: {X.shape[1]} feature columns, but n_features={n_features} was declared")
    return DataFile(sp.csr_matrix(X), data[:, label], path, "csv")


def _label_index(label_column, header, width: int, path: Path) -> int:
    try:
        j = int(label_column)
    except (TypeError, ValueError):
        if header is None or label_column not in header:
            raise ValueError(f"{path}: no column named {label_column!r} (header: {header})") from None
        return header.index(label_column)
    if not -width <= j < width:
        raise ValueError(f"{path}: label column {j} out of range for {width} columns")
    return j % width


def read_data_file(path, fmt: str = "auto", *, label_column: str | int = 0,
                   n_features: int | None = None) -> DataFile:
    """Read a data file of labelled points: LIBSVM/svmlight format, or CSV with a label column.

    Parameters
    ----------
    path : str or path-like
        The file (``.gz`` files are decompressed).
    fmt : {"auto", "libsvm", "csv"}, default="auto"
        "auto": CSV for names ending in ``.csv`` (or ``.csv.gz``), LIBSVM otherwise.
    label_column : str or int, default=0
        CSV only: the label column, by index or header name.
    n_features : int or None, default=None
        The feature dimension (default: the highest index in the file).

    Returns
    -------
    DataFile
        ``X`` (CSR, n x d), ``y`` (n,) as found in the file, ``path`` and ``format``.

    Raises
    ------
    ValueError
        If the file is missing or empty, or a line is malformed (the message names the file and line).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from wsvm_span.model_selection import read_data_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.txt"
    >>> _ = path.write_text("+1 1:0.5 3:1\\n-1 2:0.25\\n")
    >>> data = read_data_file(path)
    >>> data.X.toarray().tolist(), data.y.tolist(), data.format
    ([[0.5, 0.0, 1.0], [0.0, 0.25, 0.0]], [1.0, -1.0], 'libsvm')
    """
    name = Path(path).name.lower()
    if fmt == "auto":
        fmt = "csv" if name.endswith((".csv", ".csv.gz")) else "libsvm"
    if fmt == "csv":
        return read_csv(path, label_column, n_features)
    if fmt == "libsvm":
        return read_libsvm(path, n_features)
    raise ValueError(f"format must be 'auto', 'libsvm' or 'csv', got {fmt!r}")


def write_range_file(path, data_min, data_max, lower: float = 0.0, upper: float = 1.0) -> None:
    """Write a min-max feature map in svm-scale's range-file format (``svm-scale -s``): "x", then
    "lower upper", then "index min max" per feature (1-based, %.17g), leaving out the features constant on
    the training data as svm-scale does (it maps them to 0), so that ``svm-scale -r`` applies the same map."""
    lines = ["x", f"{lower:.17g} {upper:.17g}"]
    for j, (low, high) in enumerate(zip(data_min, data_max), start=1):
        if low != high:
            lines.append(f"{j} {low:.17g} {high:.17g}")
    Path(path).write_text("\n".join(lines) + "\n")
