"""The data sets of the original span experiments (standard-svm-span.md), loaded from the shared mirror.

Ground truth is independent of the package: the UCI file read here with the csv module, MNIST idx
files read with gzip + numpy, counts from shared/data/manifest.json, the subset and split rules and
the [0, 1] scaling written out here.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json

import numpy as np
import pytest

from conftest import LOCAL_MIRROR as LOCAL, require_mirror
from test_data_datasets import _ref_scale
from wsvm_span.data import DATASETS, EXTRA_NAMES, dataset_checksums, load_dataset

BCW = "breast_cancer_wisconsin_200_77"
DIGITS = "mnist_0to4_5to9"


@pytest.fixture(autouse=True, scope="module")
def _require_mirror():
    require_mirror()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("wsvm_data_span")


def _load(name, seed, data_dir, **kw):
    return load_dataset(name, seed=seed, data_dir=data_dir, mirror=str(LOCAL), publishers=False, **kw)


def _bcw_reference():
    """(complete rows' 9 attributes, class 2/4, number of rows with '?') from the UCI file, by csv."""
    rows = list(csv.reader(io.StringIO((LOCAL / "breast_cancer/breast-cancer-wisconsin.data").read_text())))
    complete = [r for r in rows if "?" not in r]
    X = np.array([[float(v) for v in r[1:10]] for r in complete])
    return X, np.array([int(r[10]) for r in complete]), len(rows) - len(complete)


def test_registry_entries_and_checksums():
    assert EXTRA_NAMES[:2] == (BCW, DIGITS)  # then bank_marketing's stratified draw
    manifest = {f["path"]: f for ds in json.loads((LOCAL / "manifest.json").read_text())["datasets"]
                for f in ds["files"]}
    sums = dataset_checksums(BCW)
    assert list(sums) == ["breast_cancer/breast-cancer-wisconsin.data"]
    rel = "breast_cancer/breast-cancer-wisconsin.data"
    assert sums[rel] == manifest[rel]["sha256"] == hashlib.sha256((LOCAL / rel).read_bytes()).hexdigest()
    assert dataset_checksums(DIGITS) == dataset_checksums("mnist_2_9")
    spec = DATASETS[BCW]
    assert (spec.n_train, spec.n_test, spec.d, spec.uses_seed) == (200, 77, 9, True)
    spec = DATASETS[DIGITS]
    assert (spec.n_train, spec.n_test, spec.d, spec.uses_seed) == (317, 10000, 784, True)


def test_breast_cancer_wisconsin_rows_and_labels():
    X, cls, n_missing = _bcw_reference()
    assert n_missing == 16 and X.shape == (683, 9)
    assert (np.sum(cls == 2), np.sum(cls == 4)) == (444, 239)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_breast_cancer_wisconsin_split(data_dir, seed):
    """Seeded stratified 200 / 77 split of the complete rows, written out here: stratified_split_indices'
    rule (largest remainder, rng.permutation per class in increasing label order) for the training set,
    then the same rule on the rest for the 77 test rows."""
    X, cls, _ = _bcw_reference()
    y = np.where(cls == 4, 1.0, -1.0)

    def stratified(labels, n, seed):
        classes, inv = np.unique(labels, return_inverse=True)
        counts = np.bincount(inv)
        quota = n * counts / labels.size
        alloc = np.floor(quota).astype(int)
        order = np.lexsort((np.arange(classes.size), -(quota - alloc)))
        alloc[order[: n - alloc.sum()]] += 1
        rng = np.random.default_rng(seed)
        return np.sort(np.concatenate([rng.permutation(np.flatnonzero(inv == c))[: alloc[c]]
                                       for c in range(classes.size)]))

    train = stratified(y, 200, seed)
    rest = np.setdiff1d(np.arange(y.size), train)
    test = rest[stratified(y[rest], 77, seed)]
    s = _load(BCW, seed, data_dir)
    ref_tr, ref_te = _ref_scale(X[train], X[test])
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(s.y_train, y[train])
    np.testing.assert_array_equal(s.y_test, y[test])
    assert s.X_train.min() == 0.0 and s.X_train.max() == 1.0
    assert s.seed == seed and s.d == 9
    # stratified: each class's share within one point of the complete rows' share
    assert abs(np.sum(s.y_train == 1) - 200 * 239 / 683) < 1 and abs(np.sum(s.y_test == 1) - 77 * 239 / 683) < 1


def test_breast_cancer_wisconsin_splits_differ_and_repeat(data_dir):
    a, again, other = _load(BCW, 3, data_dir), _load(BCW, 3, data_dir, cache=False), _load(BCW, 4, data_dir)
    np.testing.assert_array_equal(a.X_train, again.X_train)
    np.testing.assert_array_equal(a.y_test, again.y_test)
    assert not np.array_equal(a.X_train, other.X_train)


def _mnist():
    def idx(rel, header):
        return np.frombuffer(gzip.decompress((LOCAL / rel).read_bytes()), dtype=np.uint8, offset=header)

    return (idx("mnist/train-images-idx3-ubyte.gz", 16).reshape(60000, 784),
            idx("mnist/train-labels-idx1-ubyte.gz", 8),
            idx("mnist/t10k-images-idx3-ubyte.gz", 16).reshape(10000, 784),
            idx("mnist/t10k-labels-idx1-ubyte.gz", 8))


def test_digit_subsets_are_disjoint_blocks_of_one_permutation(data_dir):
    """Subset s = images 317 s .. 317 (s + 1) - 1 of default_rng(0).permutation(60000); labels 0-4 -> +1;
    the test set is the whole MNIST test set; scaling by the subset's min and max."""
    img, lab, timg, tlab = _mnist()
    perm = np.random.default_rng(0).permutation(60000)
    seen = set()
    for seed in (0, 1, 22):
        rows = np.sort(perm[317 * seed: 317 * (seed + 1)])
        assert seen.isdisjoint(rows.tolist())
        seen.update(rows.tolist())
        s = _load(DIGITS, seed, data_dir)
        ref_tr, ref_te = _ref_scale(img[rows].astype(float), timg.astype(float))
        np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
        np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
        np.testing.assert_array_equal(s.y_train, np.where(lab[rows] <= 4, 1.0, -1.0))
        np.testing.assert_array_equal(s.y_test, np.where(tlab <= 4, 1.0, -1.0))
        assert 0.3 < np.mean(s.y_train == 1) < 0.7


def test_digit_subset_number_is_checked(data_dir):
    with pytest.raises(ValueError, match=r"0\.\.188"):
        _load(DIGITS, 189, data_dir)
