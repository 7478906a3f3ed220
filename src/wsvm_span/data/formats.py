"""Parsers for the publishers' file formats (one function per format).

Every parser takes either the file's bytes or a path (``str`` / ``os.PathLike``); gzip
content is recognised by its magic bytes and decompressed transparently, whatever the file
name. Parsers only turn bytes into arrays; label conventions, splits and scaling live in
:mod:`wsvm_span.data.splits`. Malformed input raises :class:`~wsvm_span.data.errors.DataFormatError`
(a ``ValueError``) that names the offending line or header field.

Formats
-------
* LIBSVM sparse text (:func:`parse_libsvm`): ``<label> <index>:<value> ...`` per line, 1-based
  indices; read by scikit-learn's compiled :func:`~sklearn.datasets.load_svmlight_file`, returned
  as a dense ``(n, n_features)`` float64 matrix (CSR with ``sparse=True``). The project's one LIBSVM
  reader: ``wsvm-span select`` reads its data files through it too.
* IDA benchmark ``.asc`` realization files (:func:`parse_ida_asc`): whitespace-separated ``%e``
  numbers, one row per line.
* UCI numeric text tables (:func:`parse_table`): comma separated (waveform.data,
  breast-cancer-wisconsin.data, with ``?`` for a missing value) or tab separated (Skin_NonSkin.txt).
* MNIST idx (:func:`parse_idx`, :func:`parse_mnist_images`, :func:`parse_mnist_labels`).
* Parkinson speech ``train_data.txt`` (:func:`parse_parkinson_train`).
* Bank marketing ``bank-additional-full.csv`` (:func:`parse_bank_csv`): ``;``-separated with a
  quoted header.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import struct
import zlib
from typing import Union

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from .errors import DataFormatError

__all__ = [
    "GZIP_MAGIC",
    "read_bytes",
    "as_bytes",
    "parse_libsvm",
    "parse_ida_asc",
    "parse_table",
    "parse_idx",
    "parse_mnist_images",
    "parse_mnist_labels",
    "parse_parkinson_train",
    "parse_bank_csv",
    "PARKINSON_N_FEATURES",
    "BANK_COLUMNS",
]

Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]

GZIP_MAGIC = b"\x1f\x8b"
_WHITESPACE = np.frombuffer(b" \t\n\r\v\f", dtype=np.uint8)
_NEWLINES = np.frombuffer(b"\n\r", dtype=np.uint8)
_COLON = ord(":")
#: longest piece of an offending line quoted in an error message
_MAX_QUOTED = 120


# --------------------------------------------------------------------------------------------
# bytes in
# --------------------------------------------------------------------------------------------
def read_bytes(path: "str | os.PathLike[str]") -> bytes:
    """Return the content of ``path``, gunzipped when the file starts with the gzip magic."""
    with open(path, "rb") as fh:
        data = fh.read()
    return _maybe_gunzip(data, name=os.fspath(path))


def as_bytes(source: Source) -> bytes:
    """Bytes of ``source``: bytes-like objects are content, ``str``/PathLike are file paths."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _maybe_gunzip(bytes(source), name=_source_name(source))
    return read_bytes(source)


def _source_name(source: Source) -> str:
    """How an error message names ``source``: its path, or ``<bytes>`` for in-memory content."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return os.fspath(source)


def _maybe_gunzip(data: bytes, name: str) -> bytes:
    if data[:2] != GZIP_MAGIC:
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(f"{name}: corrupt or truncated gzip stream ({exc})") from exc


# --------------------------------------------------------------------------------------------
# token structure (vectorised): where each whitespace-separated token starts and ends, which
# line it is on and how many colons it holds.
# --------------------------------------------------------------------------------------------
class _Tokens:
    __slots__ = ("starts", "ends", "line", "colons", "first_in_line", "n_lines")

    def __init__(self, data: bytes) -> None:
        buf = np.frombuffer(data, dtype=np.uint8)
        ws = np.isin(buf, _WHITESPACE)
        nonws = ~ws
        prev_ws = np.empty_like(ws)
        next_ws = np.empty_like(ws)
        if buf.size:
            prev_ws[0] = True
            prev_ws[1:] = ws[:-1]
            next_ws[-1] = True
            next_ws[:-1] = ws[1:]
        self.starts = np.flatnonzero(nonws & prev_ws)
        self.ends = np.flatnonzero(nonws & next_ws) + 1
        colon_cum = np.concatenate(([0], np.cumsum(buf == _COLON, dtype=np.int64)))
        self.colons = colon_cum[self.ends] - colon_cum[self.starts]
        # '\r' counts as a line break too (CRLF gives two breaks: harmless, only changes matter)
        nl_cum = np.concatenate(([0], np.cumsum(np.isin(buf, _NEWLINES), dtype=np.int64)))
        self.line = nl_cum[self.starts]
        self.first_in_line = np.ones(self.starts.size, dtype=bool)
        self.first_in_line[1:] = self.line[1:] != self.line[:-1]
        self.n_lines = int(self.first_in_line.sum())

    def describe(self, data: bytes, token: int) -> str:
        """Human description (line number, line text) of the line holding ``token``."""
        start = int(self.starts[token])
        line_start = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
        line_end = len(data)
        for sep in (b"\n", b"\r"):
            pos = data.find(sep, start)
            if pos != -1:
                line_end = min(line_end, pos)
        line_no = int(self.first_in_line[: token + 1].sum())  # 1-based among non-blank lines
        text = data[line_start:line_end].decode("latin-1")
        if len(text) > _MAX_QUOTED:
            text = text[: _MAX_QUOTED - 3] + "..."
        return f"non-blank line {line_no}: {text!r}"


def _to_float(tokens: list[bytes], data: bytes, what: str) -> np.ndarray:
    try:
        return np.array(tokens, dtype=np.float64)
    except ValueError:
        for tok in tokens:  # slow path, only to name the culprit
            try:
                float(tok)
            except ValueError:
                raise DataFormatError(f"{what}: not a number: {tok[:40]!r}") from None
        raise


# --------------------------------------------------------------------------------------------
# LIBSVM
# --------------------------------------------------------------------------------------------
def parse_libsvm(
    source: Source, n_features: int | None = None, *, zero_based: bool = False, sparse: bool = False
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Parse LIBSVM / svmlight sparse text into a matrix (:func:`sklearn.datasets.load_svmlight_file`).

    Parameters
    ----------
    source : bytes or path
        ``<label> <index>:<value> <index>:<value> ...`` one sample per line, indices ascending
        within a line (as LIBSVM itself requires). LF or CRLF line ends, with or without a final
        newline; blank lines and ``#`` comments are ignored; gzip is decompressed transparently.
    n_features : int, optional
        Number of columns of the result (e.g. 123 for a1a, whose indices 120-123 never occur).
        Default: the largest index present (1 when no index occurs at all). A larger index than
        ``n_features`` is an error.
    zero_based : bool
        Indices start at 0 instead of LIBSVM's 1.
    sparse : bool
        Return ``X`` as the CSR matrix sklearn reads (for files too wide to densify).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64, C-contiguous
        Absent entries are 0. With ``sparse=True`` a ``scipy.sparse.csr_matrix`` instead.
    y : ndarray of shape (n_samples,), float64
        The labels exactly as written (e.g. 1/2 for mushrooms, -1/+1 for splice).

    Raises
    ------
    DataFormatError
        The text is not LIBSVM (a malformed token, a missing label, an index below 1 (0 with
        ``zero_based``), indices not ascending, an index beyond ``n_features``, a label or value
        that is nan or infinite), it holds no sample at all, or a gzip stream is corrupt or
        truncated; the message names the source and the first offending line.

    Examples
    --------
    >>> X, y = parse_libsvm(b"+1 1:0.5 3:2\\n-1 2:1.5\\n", n_features=4)
    >>> X.tolist(), y.tolist()
    ([[0.5, 0.0, 2.0, 0.0], [0.0, 1.5, 0.0, 0.0]], [1.0, -1.0])
    """
    name = _source_name(source)
    data = as_bytes(source)
    try:
        X, y = _load_svmlight(data, n_features, zero_based)
    except ValueError as exc:
        raise DataFormatError(
            f"{name}: not LIBSVM text, {_first_bad_line(data, n_features, zero_based)}{exc}"
        ) from None
    if not y.size:
        raise DataFormatError(f"{name}: no data lines (empty file?)")
    if not sparse:
        return X.toarray(), np.asarray(y, dtype=np.float64)
    # the reader's index arrays are int64, which SVC's sparse libsvm refuses (predict): scipy's
    # constructor takes int32 ones whenever the values fit
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape), np.asarray(y, dtype=np.float64)


def _load_svmlight(data: bytes, n_features: int | None, zero_based: bool):
    """``load_svmlight_file`` on in-memory bytes, its ``ValueError`` for any malformed input.

    The bytes (already gunzipped by :func:`as_bytes`) are handed over as a stream: sklearn would
    pick a decompressor by the file name, the project goes by the gzip magic. Its compiled parser
    raises ``OverflowError`` for an index beyond a C int, reported like any other bad index, and
    reads ``nan`` and ``inf`` as numbers, which no SVM can train on: a ``ValueError`` here too.
    """
    try:
        X, y = load_svmlight_file(
            io.BytesIO(data), n_features=n_features, dtype=np.float64, zero_based=zero_based
        )
    except OverflowError as exc:
        raise ValueError(f"feature index out of range ({exc})") from None
    if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
        raise ValueError("a label or value is not finite (nan or inf)")
    return X, y


def _first_bad_line(data: bytes, n_features: int | None, zero_based: bool) -> str:
    """``"line <k>: <text>: "`` for the first line that fails alone, else ``""`` (error path only).

    sklearn's messages do not say where the problem is; parsing line by line finds it (every
    LIBSVM check is per line once ``n_features`` is fixed), at a cost paid only for a bad file.
    """
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            _load_svmlight(line, n_features, zero_based)
        except ValueError:
            text = line.rstrip(b"\r").decode("latin-1")
            if len(text) > _MAX_QUOTED:
                text = text[: _MAX_QUOTED - 3] + "..."
            return f"line {number}: {text!r}: "
    return ""


# --------------------------------------------------------------------------------------------
# whitespace / delimiter separated numeric tables (IDA .asc, UCI text)
# --------------------------------------------------------------------------------------------
_MISSING = re.compile(rb"(?<![^\s])\?(?![^\s])")


def parse_table(
    source: Source, delimiter: str | None = None, *, missing: str | None = "?"
) -> np.ndarray:
    """Parse a numeric text table (one row per line) into a float64 matrix.

    Parameters
    ----------
    source : bytes or path
        Text with one row per line (LF or CRLF, final newline optional, blank lines ignored).
    delimiter : str, optional
        Field separator, e.g. ``","`` (UCI csv) or ``"\\t"`` (Skin_NonSkin). ``None``: any run
        of whitespace (IDA ``.asc``). Whitespace around fields is always ignored.
    missing : str, optional
        A field equal to this string becomes NaN (UCI writes ``?``).

    Returns
    -------
    ndarray of shape (n_rows, n_columns), float64
        Every row must have the same number of fields.
    """
    data = as_bytes(source)
    if delimiter is not None:
        data = data.replace(delimiter.encode("ascii"), b" ")
    if missing is not None and missing.encode("ascii") in data:
        if missing == "?":
            data = _MISSING.sub(b"nan", data)
        else:
            pat = re.compile(rb"(?<![^\s])" + re.escape(missing.encode("ascii")) + rb"(?![^\s])")
            data = pat.sub(b"nan", data)
    tok = _Tokens(data)
    n = tok.n_lines
    if n == 0:
        return np.zeros((0, 0), dtype=np.float64)
    line_id = np.cumsum(tok.first_in_line) - 1
    counts = np.bincount(line_id, minlength=n)
    n_cols = int(counts[0])
    bad = np.flatnonzero(counts != n_cols)
    if bad.size:
        first_tok = int(np.flatnonzero(tok.first_in_line)[bad[0]])
        raise DataFormatError(
            f"table, {tok.describe(data, first_tok)}: {int(counts[bad[0]])} fields, "
            f"expected {n_cols} like the first line"
            + ("" if delimiter is None else f" (an empty field between two {delimiter!r}?)")
        )
    values = _to_float(data.split(), data, "table")
    return values.reshape(n, n_cols)


def parse_ida_asc(source: Source) -> np.ndarray:
    """Parse an IDA benchmark ``.asc`` file (whitespace separated ``%e`` numbers).

    Returns
    -------
    ndarray of shape (n_rows, n_columns), float64
        For a ``*_labels_<r>.asc`` file the shape is ``(n_rows, 1)``; use ``.ravel()``.
    """
    return parse_table(source, delimiter=None, missing=None)


# --------------------------------------------------------------------------------------------
# MNIST idx
# --------------------------------------------------------------------------------------------
_IDX_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
MNIST_IMAGES_MAGIC = 0x00000803  # 2051: uint8, 3 dimensions
MNIST_LABELS_MAGIC = 0x00000801  # 2049: uint8, 1 dimension


def parse_idx(source: Source, *, expected_magic: int | None = None) -> np.ndarray:
    """Parse an idx file (the MNIST container format), vectorised with ``numpy.frombuffer``.

    The header is a big-endian magic number ``0x0000TTNN`` (TT = element type, NN = number of
    dimensions) followed by NN big-endian uint32 sizes; the data follow, C order.

    Parameters
    ----------
    source : bytes or path (gzip is decompressed transparently)
    expected_magic : int, optional
        e.g. 0x803 for MNIST images, 0x801 for labels; a different magic is an error.

    Returns
    -------
    ndarray with the header's shape and element type (native byte order, writeable).

    Raises
    ------
    DataFormatError
        Wrong magic number, unknown element type, or a size that does not match the header
        (truncated file or trailing bytes).
    """
    data = as_bytes(source)
    if len(data) < 4:
        raise DataFormatError(f"idx: {len(data)} bytes, too short for a header")
    (magic,) = struct.unpack(">I", data[:4])
    if expected_magic is not None and magic != expected_magic:
        raise DataFormatError(f"idx: magic number 0x{magic:08x}, expected 0x{expected_magic:08x}")
    type_code, ndim = data[2], data[3]
    if data[0] != 0 or data[1] != 0 or type_code not in _IDX_DTYPES or ndim == 0:
        raise DataFormatError(f"idx: invalid magic number 0x{magic:08x}")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataFormatError(f"idx: {len(data)} bytes, too short for a {ndim}-d header")
    dims = struct.unpack(f">{ndim}I", data[4:header])
    dtype = _IDX_DTYPES[type_code]
    count = int(np.prod(dims, dtype=np.int64))
    expected = header + count * dtype.itemsize
    if len(data) != expected:
        raise DataFormatError(
            f"idx: {len(data)} bytes but the header {tuple(dims)} of {dtype} needs {expected} "
            f"({'truncated' if len(data) < expected else 'trailing bytes'})"
        )
    arr = np.frombuffer(data, dtype=dtype, count=count, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="), copy=True)


def parse_mnist_images(source: Source) -> np.ndarray:
    """MNIST image file -> uint8 array of shape (n_images, rows * cols) (784 for MNIST)."""
    arr = parse_idx(source, expected_magic=MNIST_IMAGES_MAGIC)
    return np.ascontiguousarray(arr.reshape(arr.shape[0], -1))


def parse_mnist_labels(source: Source) -> np.ndarray:
    """MNIST label file -> uint8 array of shape (n_images,) with digits 0-9."""
    arr = parse_idx(source, expected_magic=MNIST_LABELS_MAGIC)
    if arr.size and arr.max() > 9:
        raise DataFormatError(f"idx labels: value {int(arr.max())} is not a digit")
    return arr


# --------------------------------------------------------------------------------------------
# Parkinson speech (UCI, Sakar et al. 2013)
# --------------------------------------------------------------------------------------------
PARKINSON_N_FEATURES = 26


def parse_parkinson_train(source: Source) -> dict[str, np.ndarray]:
    """Parse ``train_data.txt`` (comma separated, no header, CRLF).

    Columns: subject id, 26 acoustic features, UPDRS, class (1 = Parkinson's, 0 = healthy).

    Returns
    -------
    dict with ``subject`` (n,) int64, ``X`` (n, 26) float64, ``updrs`` (n,) float64 and
    ``cls`` (n,) int64.
    """
    table = parse_table(source, delimiter=",", missing=None)
    if table.shape[1] != PARKINSON_N_FEATURES + 3:
        raise DataFormatError(
            f"parkinson train_data: {table.shape[1]} columns, expected {PARKINSON_N_FEATURES + 3}"
        )
    subject = table[:, 0]
    cls = table[:, -1]
    if np.any(subject != np.round(subject)) or not np.all(np.isin(cls, (0, 1))):
        raise DataFormatError("parkinson train_data: subject ids must be integers, class 0/1")
    return {
        "subject": subject.astype(np.int64),
        "X": np.ascontiguousarray(table[:, 1 : 1 + PARKINSON_N_FEATURES]),
        "updrs": table[:, -2].copy(),
        "cls": cls.astype(np.int64),
    }


# --------------------------------------------------------------------------------------------
# Bank marketing (UCI, Moro et al. 2014)
# --------------------------------------------------------------------------------------------
BANK_COLUMNS = (
    "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month",
    "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate",
    "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed", "y",
)  # fmt: skip


def parse_bank_csv(source: Source):
    """Parse ``bank-additional-full.csv`` (``;``-separated, quoted header, CRLF).

    Returns
    -------
    pandas.DataFrame of shape (n_rows, 21) with the UCI column names (:data:`BANK_COLUMNS`);
    numeric columns are numbers, the others strings.
    """
    import pandas as pd

    data = as_bytes(source)
    try:
        df = pd.read_csv(io.BytesIO(data), sep=";", quotechar='"', low_memory=False)
    except Exception as exc:  # pandas raises several types
        raise DataFormatError(f"bank csv: {exc}") from exc
    missing = [c for c in BANK_COLUMNS if c not in df.columns]
    if missing:
        raise DataFormatError(f"bank csv: missing columns {missing}; header is {list(df.columns)}")
    return df
