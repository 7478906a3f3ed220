"""Split rules of the study (experiments.md, "Data sets and splits") and label conventions.

Each ``build_*`` function turns verified source files (a :class:`~wsvm_span.data.cache.SourceFiles`)
into an *unscaled* :class:`~wsvm_span.data.containers.RawSplit`; the registry binds each data set
to one of them with its file names and sizes, and :func:`~wsvm_span.data.load_dataset` scales
the result. Parsed files go through the array cache.

Random splits (:func:`stratified_split_indices`) are stratified by class and driven by
``numpy.random.default_rng(seed)``: the same seed gives the same split on any machine (for a
given NumPy version; Generator streams are platform independent). Train and test indices are
returned in increasing file order.

Label conventions (+1 / -1)
---------------------------
* breast_cancer: malignant (+1 in the stored LIBSVM copy, 4 in LIBSVM's original) -> +1.
* breast_cancer_wisconsin_200_77, breast_cancer_wisconsin_351: UCI class 4 (malignant) -> +1, 2 (benign) -> -1.
* mushrooms: LIBSVM label 1 (poisonous, 3916 rows) -> +1, label 2 (edible, 4208) -> -1.
* skin_nonskin: label 1 (skin) -> +1, 2 (non-skin) -> -1.
* IDA sets, splice, adult: the files' own -1/+1.
* mnist_a_b: digit a -> +1, digit b -> -1 (e.g. mnist_2_9: 2 -> +1, 9 -> -1).
* mnist_0to4_5to9: digits 0-4 -> +1, digits 5-9 -> -1.
* parkinson_speech: class 1 (Parkinson's) -> +1, class 0 (healthy) -> -1.
* bank_marketing: y == "yes" -> +1, "no" -> -1.
* spambase: class 1 (spam) -> +1, 0 -> -1.
* mammographic: severity 1 (malignant) -> +1, 0 (benign) -> -1.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .cache import SourceFiles
from .containers import RawSplit
from .errors import DataFormatError
from .formats import (
    PARKINSON_N_FEATURES,
    parse_bank_csv,
    parse_ida_asc,
    parse_libsvm,
    parse_mnist_images,
    parse_mnist_labels,
    parse_parkinson_train,
    parse_table,
)
from .scores import bank_scores, parkinson_scores

__all__ = [
    "to_pm1",
    "stratified_split_indices",
    "build_libsvm_random",
    "build_table_random",
    "build_libsvm_head_tail",
    "build_libsvm_pair",
    "build_ida",
    "ida_relpaths",
    "build_mnist_pair",
    "build_mnist_subset",
    "build_breast_cancer_wisconsin",
    "UCI_BCW_ATTRIBUTES",
    "build_parkinson",
    "build_bank",
    "BANK_DRAWS",
    "BANK_FEATURES",
]


# ------------------------------------------------------------------------------------------
# generic helpers
# ------------------------------------------------------------------------------------------
def to_pm1(y: np.ndarray, positive: Sequence[float], negative: Sequence[float]) -> np.ndarray:
    """Map raw labels to float64 {-1, +1}; any value in neither list is an error."""
    y = np.asarray(y)
    pos = np.isin(y, positive)
    neg = np.isin(y, negative)
    if not np.all(pos | neg):
        odd = np.unique(y[~(pos | neg)])[:5]
        raise DataFormatError(
            f"unexpected label value(s) {odd.tolist()}; "
            f"expected {list(positive)} (+1) or {list(negative)} (-1)"
        )
    return np.where(pos, 1.0, -1.0)


def stratified_split_indices(
    y: np.ndarray, n_train: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded stratified random split.

    Each class c gets ``n_train * n_c / n`` training points rounded by the largest-remainder
    rule (ties: smaller label first), at least one when ``n_train`` >= number of classes. Then,
    with ``rng = numpy.random.default_rng(seed)``, classes in increasing label order, the
    training points of a class are the first ones of ``rng.permutation`` of its row indices.

    Returns
    -------
    train_idx : ndarray of shape (n_train,), int64, increasing
    test_idx : ndarray of shape (n - n_train,), int64, increasing
    """
    y = np.asarray(y)
    n = y.shape[0]
    if not 0 < n_train < n:
        raise ValueError(f"n_train must be in 1..{n - 1}, got {n_train}")
    classes, inverse = np.unique(y, return_inverse=True)
    counts = np.bincount(inverse)
    quota = n_train * counts / n
    alloc = np.floor(quota).astype(np.int64)
    order = np.lexsort((np.arange(classes.size), -(quota - alloc)))
    alloc[order[: n_train - int(alloc.sum())]] += 1
    if n_train >= classes.size:
        while np.any(alloc == 0):  # tiny classes: take one point from the largest allocation
            alloc[np.argmax(alloc)] -= 1
            alloc[np.flatnonzero(alloc == 0)[0]] += 1
    rng = np.random.default_rng(seed)
    chosen = [
        rng.permutation(np.flatnonzero(inverse == c))[: alloc[c]] for c in range(classes.size)
    ]
    train = np.sort(np.concatenate(chosen)).astype(np.int64)
    mask = np.ones(n, dtype=bool)
    mask[train] = False
    return train, np.flatnonzero(mask).astype(np.int64)


def balanced_split_indices(y: np.ndarray, n_train: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded class-balanced random split: ``n_train / k`` training points of each of the k classes.

    With ``rng = numpy.random.default_rng(seed)``, classes in increasing label order, the training
    points of a class are the first ones of ``rng.permutation`` of its row indices (as in
    :func:`stratified_split_indices`). Returns (train_idx, test_idx), increasing int64 arrays.
    """
    y = np.asarray(y)
    classes, inverse = np.unique(y, return_inverse=True)
    per_class, rest = divmod(n_train, classes.size)
    counts = np.bincount(inverse)
    if rest or per_class < 1 or np.any(counts <= per_class):
        raise ValueError(
            f"a balanced split of {n_train} training points needs {classes.size} classes of more than "
            f"n_train / {classes.size} points each and an n_train divisible by {classes.size}; "
            f"class sizes: {dict(zip(classes.tolist(), counts.tolist()))}"
        )
    rng = np.random.default_rng(seed)
    chosen = [rng.permutation(np.flatnonzero(inverse == c))[:per_class] for c in range(classes.size)]
    train = np.sort(np.concatenate(chosen)).astype(np.int64)
    mask = np.ones(y.shape[0], dtype=bool)
    mask[train] = False
    return train, np.flatnonzero(mask).astype(np.int64)


def _random_split(X: np.ndarray, y: np.ndarray, n_train: int, seed: int) -> RawSplit:
    tr, te = stratified_split_indices(y, n_train, seed)
    return RawSplit(X[tr], y[tr], X[te], y[te])


def _libsvm_arrays(src: SourceFiles, relpath: str, n_features: int, entry: str) -> dict:
    def parse() -> dict:
        X, y = parse_libsvm(src.path(relpath), n_features)
        return {"X": X, "y": y}

    return src.parsed(entry, [relpath], parse)


def _entry(relpath: str) -> str:
    return relpath.replace("/", "__")


# ------------------------------------------------------------------------------------------
# builders (bound to files and sizes by the registry)
# ------------------------------------------------------------------------------------------
def build_libsvm_random(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    relpath: str,
    n_features: int,
    n_train: int,
    positive: Sequence[float],
    negative: Sequence[float],
) -> RawSplit:
    """LIBSVM file, seeded stratified random split (breast_cancer, mushrooms)."""
    a = _libsvm_arrays(src, relpath, n_features, _entry(relpath))
    return _random_split(a["X"], to_pm1(a["y"], positive, negative), n_train, seed)


def build_table_random(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    relpath: str,
    delimiter: str | None,
    n_train: int,
    positive: Sequence[float],
    negative: Sequence[float],
    features: Sequence[int] | None = None,
    complete_rows: bool = False,
) -> RawSplit:
    """Numeric table whose last column is the label, stratified random split (skin_nonskin, spambase,
    mammographic).

    ``features``: the table's columns kept as features (default: all but the label); with
    ``complete_rows`` the rows with a missing value ("?", which UCI uses) in any column are dropped
    first (seed 003's "complete rows": mammographic has one row missing only its BI-RADS, which is
    not a feature, and it is dropped too: 830 rows), else a missing value is an error."""
    a = src.parsed(
        _entry(relpath), [relpath], lambda: {"T": parse_table(src.path(relpath), delimiter)}
    )
    T = a["T"]
    missing = np.isnan(T).any(axis=1)
    if missing.any():
        if not complete_rows:
            raise DataFormatError(f"{relpath}: {int(missing.sum())} rows with a missing value")
        T = T[~missing]
    cols = list(range(T.shape[1] - 1)) if features is None else list(features)
    X = np.ascontiguousarray(T[:, cols])
    return _random_split(X, to_pm1(T[:, -1], positive, negative), n_train, seed)


def build_libsvm_head_tail(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    relpath: str,
    n_features: int,
    n_train: int,
    n_test: int,
) -> RawSplit:
    """One LIBSVM file = training rows then test rows (splice: first 1000 / last 2175)."""
    a = _libsvm_arrays(src, relpath, n_features, _entry(relpath))
    X, y = a["X"], to_pm1(a["y"], (1,), (-1,))
    if X.shape[0] != n_train + n_test:
        raise DataFormatError(f"{relpath}: {X.shape[0]} rows, expected {n_train} + {n_test}")
    return RawSplit(X[:n_train], y[:n_train], X[n_train:], y[n_train:])


def build_libsvm_pair(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    train_relpath: str,
    test_relpath: str,
    n_features: int,
) -> RawSplit:
    """LIBSVM training and test files (adult: a1a / a1a.t, 123 features)."""
    tr = _libsvm_arrays(src, train_relpath, n_features, _entry(train_relpath))
    te = _libsvm_arrays(src, test_relpath, n_features, _entry(test_relpath))
    return RawSplit(tr["X"], to_pm1(tr["y"], (1,), (-1,)), te["X"], to_pm1(te["y"], (1,), (-1,)))


def ida_relpaths(folder: str, stem: str, realization: int) -> dict[str, str]:
    """Relative paths of IDA realization ``r``: keys train_data, train_labels, test_data, test_labels."""
    return {
        f"{part}_{kind}": f"{folder}/ida/{stem}_{part}_{kind}_{realization}.asc.gz"
        for part in ("train", "test")
        for kind in ("data", "labels")
    }


def build_ida(
    src: SourceFiles, seed: int, realization: int | None, *, folder: str, stem: str
) -> RawSplit:
    """IDA benchmark realization r: files ``<stem>_{train,test}_{data,labels}_<r>.asc.gz``."""
    rel = ida_relpaths(folder, stem, int(realization))

    def parse() -> dict:
        return {k: parse_ida_asc(src.path(p)) for k, p in rel.items()}

    a = src.parsed(f"ida-{stem}-r{int(realization)}", list(rel.values()), parse)
    out = []
    for part in ("train", "test"):
        X, y = a[f"{part}_data"], a[f"{part}_labels"]
        if y.shape[1] != 1 or X.shape[0] != y.shape[0]:
            raise DataFormatError(
                f"IDA {stem} r={realization} {part}: data {X.shape}, labels {y.shape}"
            )
        out += [X, to_pm1(y[:, 0], (1,), (-1,))]
    return RawSplit(*out)


def _mnist_arrays(src: SourceFiles, rel: dict[str, str]) -> dict:
    def parse() -> dict:
        return {
            "train_images": parse_mnist_images(src.path(rel["train_images"])),
            "train_labels": parse_mnist_labels(src.path(rel["train_labels"])),
            "test_images": parse_mnist_images(src.path(rel["test_images"])),
            "test_labels": parse_mnist_labels(src.path(rel["test_labels"])),
        }

    return src.parsed("mnist", [rel[k] for k in sorted(rel)], parse)


def build_mnist_pair(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    rel: dict[str, str],
    positive_digit: int,
    negative_digit: int,
) -> RawSplit:
    """MNIST train (test) images of two digits: ``positive_digit`` -> +1, ``negative_digit`` -> -1.

    All 784 pixels are kept as features (the paper's d = 780 is used only for gamma).
    """
    a = _mnist_arrays(src, rel)
    out = []
    for part in ("train", "test"):
        images, labels = a[f"{part}_images"], a[f"{part}_labels"]
        keep = np.flatnonzero((labels == positive_digit) | (labels == negative_digit))
        y = np.where(labels[keep] == positive_digit, 1.0, -1.0)
        out += [images[keep].astype(np.float64), y]
    return RawSplit(*out)


def build_mnist_subset(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    rel: dict[str, str],
    positive_digits: Sequence[int],
    subset_size: int,
    permutation_seed: int,
) -> RawSplit:
    """Training subset ``seed`` of the MNIST training images, the whole MNIST test set.

    One fixed permutation of the 60000 training images (``numpy.random.default_rng(permutation_seed)``)
    is cut into consecutive blocks of ``subset_size``; subset s is block s, so different seeds give
    disjoint training sets (s = 0 .. 60000 // subset_size - 1). Labels: a digit in ``positive_digits``
    -> +1, any other -> -1.
    """
    a = _mnist_arrays(src, rel)
    images, labels = a["train_images"], a["train_labels"]
    n_subsets = images.shape[0] // subset_size
    if not 0 <= seed < n_subsets:
        raise ValueError(
            f"MNIST holds {n_subsets} disjoint training subsets of {subset_size} images: the seed (the subset "
            f"number) must be in 0..{n_subsets - 1}, got {seed}"
        )
    block = np.random.default_rng(permutation_seed).permutation(images.shape[0])
    train = np.sort(block[seed * subset_size:(seed + 1) * subset_size])

    def pm1(digits: np.ndarray) -> np.ndarray:
        return np.where(np.isin(digits, positive_digits), 1.0, -1.0)

    return RawSplit(images[train].astype(np.float64), pm1(labels[train]),
                    a["test_images"].astype(np.float64), pm1(a["test_labels"]))


#: the 9 attributes of the UCI Breast Cancer Wisconsin (Original) file, in its column order (column 1 is
#: the sample code number, column 11 the class)
UCI_BCW_ATTRIBUTES = (
    "clump_thickness", "cell_size_uniformity", "cell_shape_uniformity", "marginal_adhesion",
    "single_epithelial_cell_size", "bare_nuclei", "bland_chromatin", "normal_nucleoli", "mitoses",
)  # fmt: skip


def _breast_cancer_wisconsin_arrays(src: SourceFiles, relpath: str) -> dict:
    """The complete rows of breast-cancer-wisconsin.data: X (the 9 attributes), y (+1 malignant)."""

    def parse() -> dict:
        T = parse_table(src.path(relpath), ",")
        if T.shape[1] != 2 + len(UCI_BCW_ATTRIBUTES):
            raise DataFormatError(f"{relpath}: {T.shape[1]} columns, expected {2 + len(UCI_BCW_ATTRIBUTES)}")
        complete = np.flatnonzero(np.isfinite(T).all(axis=1))
        return {"X": np.ascontiguousarray(T[complete, 1:-1]), "y": to_pm1(T[complete, -1], (4,), (2,))}

    return src.parsed(_entry(relpath) + "__complete_rows", [relpath], parse)


def build_breast_cancer_wisconsin(
    src: SourceFiles, seed: int, realization: int | None, *, relpath: str, n_train: int, n_test: int
) -> RawSplit:
    """UCI Breast Cancer Wisconsin (Original): the rows with a missing value ("?", 16 rows, all in bare
    nuclei) are dropped, the sample code number is not a feature; a seeded stratified random training set
    of ``n_train`` rows, then ``n_test`` test rows drawn (stratified, same seed) from the rest."""
    a = _breast_cancer_wisconsin_arrays(src, relpath)
    X, y = a["X"], a["y"]
    if n_train + n_test > y.shape[0]:
        raise ValueError(f"{relpath} has {y.shape[0]} complete rows, fewer than {n_train} + {n_test}")
    train, rest = stratified_split_indices(y, n_train, seed)
    test = rest if n_test == rest.size else rest[stratified_split_indices(y[rest], n_test, seed)[0]]
    return RawSplit(X[train], y[train], X[test], y[test])


def build_parkinson(
    src: SourceFiles,
    seed: int,
    realization: int | None,
    *,
    relpath: str,
    train_subjects: Sequence[int],
    test_subjects: Sequence[int],
) -> RawSplit:
    """Subject split of train_data.txt; 26 acoustic features; class 1 -> +1; UPDRS scores; the UPDRS
    (the file has 1 for every healthy subject) is the privileged feature."""
    a = src.parsed(_entry(relpath), [relpath], lambda: parse_parkinson_train(src.path(relpath)))
    subject = a["subject"]
    tr = np.flatnonzero(np.isin(subject, train_subjects))
    te = np.flatnonzero(np.isin(subject, test_subjects))
    y = to_pm1(a["cls"], (1,), (0,))
    X = a["X"]
    if X.shape[1] != PARKINSON_N_FEATURES:
        raise DataFormatError(f"{relpath}: {X.shape[1]} features, expected {PARKINSON_N_FEATURES}")
    return RawSplit(X[tr], y[tr], X[te], y[te], scores=parkinson_scores(a["updrs"][tr], y[tr]),
                    X_priv=a["updrs"][tr][:, None])


#: The 11 bank features of experiments.md, in this column order.
BANK_FEATURES = (
    "age", "previous", "emp.var.rate", "cons.price.idx", "cons.conf.idx", "euribor3m",
    "nr.employed", 'default == "yes"', 'housing == "yes"', 'loan == "yes"', 'marital == "married"',
)  # fmt: skip
_BANK_NUMERIC = BANK_FEATURES[:7]
_BANK_BOOLEAN = (("default", "yes"), ("housing", "yes"), ("loan", "yes"), ("marital", "married"))


def _bank_arrays(src: SourceFiles, relpath: str) -> dict:
    def parse() -> dict:
        df = parse_bank_csv(src.path(relpath))
        numeric = df.loc[:, list(_BANK_NUMERIC)].to_numpy(dtype=np.float64)
        boolean = np.column_stack(
            [(df[col].astype(str).str.strip() == val).to_numpy() for col, val in _BANK_BOOLEAN]
        ).astype(np.float64)
        y_raw = df["y"].astype(str).str.strip().to_numpy()
        if not np.all(np.isin(y_raw, ["yes", "no"])):
            raise DataFormatError(f"{relpath}: y must be yes/no")
        return {
            "X": np.ascontiguousarray(np.hstack([numeric, boolean])),
            "duration": df["duration"].to_numpy(dtype=np.float64),
            "y": np.where(y_raw == "yes", 1.0, -1.0),
        }

    return src.parsed(_entry(relpath), [relpath], parse)


#: how a bank_marketing training set is drawn from the file: "balanced" (n_train / 2 of each class) or
#: "stratified" (the file's class ratio, about 11% subscribed)
BANK_DRAWS = {"balanced": balanced_split_indices, "stratified": stratified_split_indices}


def build_bank(
    src: SourceFiles, seed: int, realization: int | None, *, relpath: str, n_train: int, draw: str = "balanced"
) -> RawSplit:
    """bank-additional-full.csv: 11 features (not duration), y == "yes" -> +1, a seeded random training set
    drawn by ``draw`` (:data:`BANK_DRAWS`): class-balanced (n_train / 2 subscribed, n_train / 2 not;
    experiments.md: a random draw holds about 34 positives, and its models almost never predict a
    subscription) or stratified (the file's class ratio: the variant reported beside it); the rest is the
    test set; scores = call duration scaled to [0, 1] over the training set; the duration is the privileged
    feature (known after the call only, so never an ordinary feature)."""
    a = _bank_arrays(src, relpath)
    tr, te = BANK_DRAWS[draw](a["y"], n_train, seed)
    X, y = a["X"], a["y"]
    return RawSplit(X[tr], y[tr], X[te], y[te], scores=bank_scores(a["duration"][tr]),
                    X_priv=a["duration"][tr][:, None])
