"""The data sets of Experiment 8 (seed 003's UCI sets and its "W" toy), loaded from the shared mirror.

Ground truth is independent of the package: the files parsed here with csv/gzip, label counts from
shared/data/manifest.json and MANIFEST.md (seed 003's sizes), the complete-rows rule and the scaling
written out here, and the W mixture's posterior computed with scipy.stats densities.
"""

from __future__ import annotations

import csv
import gzip
import io
import os

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from wsvm_span.data import DATASETS, LUPI_NAMES, dataset_checksums, load_dataset
from wsvm_span.data.splits import stratified_split_indices
from wsvm_span.data.synthetic import W_SIGMA, make_w_mixture, w_mixture_centers, w_mixture_posterior

from conftest import LOCAL_MIRROR as LOCAL, require_mirror

MIRROR = os.environ.get("WSVM_DATA_MIRROR") or os.fspath(LOCAL)

# MANIFEST.md (seed 003's Table 1): name -> (train, test, d, rows of the file used, (+1, -1) over them)
UCI = {
    "spambase": (2430, 2171, 57, 4601, (1813, 2788)),
    "mammographic": (420, 410, 4, 830, None),
    "breast_cancer_wisconsin_351": (351, 332, 9, 683, (239, 444)),
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    require_mirror()
    return tmp_path_factory.mktemp("wsvm_data")


def _load(name, data_dir, seed=0):
    return load_dataset(name, seed=seed, data_dir=data_dir, mirror=MIRROR, publishers=False)


def _rows(rel: str) -> list[list[str]]:
    raw = (LOCAL / rel).read_bytes()
    text = (gzip.decompress(raw) if rel.endswith(".gz") else raw).decode()
    return [r for r in csv.reader(io.StringIO(text)) if r]


def _ref_scale(train, test):
    lo, hi = train.min(axis=0), train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return [np.where(hi > lo, (a - lo) / span, 0.0) for a in (train, test)]


def _reference(name):
    """(X, y) of the rows the data set is built from, parsed here."""
    if name == "spambase":
        rows = _rows("spambase/spambase.data.gz")
        T = np.array(rows, dtype=float)
        return T[:, :-1], np.where(T[:, -1] == 1, 1.0, -1.0)
    if name == "mammographic":
        rows = [r for r in _rows("mammographic/mammographic_masses.data") if "?" not in r]
        T = np.array(rows, dtype=float)
        return T[:, 1:5], np.where(T[:, 5] == 1, 1.0, -1.0)  # age, shape, margin, density; BI-RADS dropped
    rows = [r for r in _rows("breast_cancer/breast-cancer-wisconsin.data") if "?" not in r]
    T = np.array(rows, dtype=float)
    return T[:, 1:10], np.where(T[:, 10] == 4, 1.0, -1.0)  # sample id dropped


def test_registry_entries():
    assert LUPI_NAMES == ("spambase", "mammographic", "breast_cancer_wisconsin_351", "w_mixture")
    for name, (n_tr, n_te, d, _, _) in UCI.items():
        spec = DATASETS[name]
        assert (spec.n_train, spec.n_test, spec.d, spec.uses_seed) == (n_tr, n_te, d, True)
        assert not spec.has_privileged and not spec.has_scores and spec.n_val == 0
    w = DATASETS["w_mixture"]
    assert (w.n_train, w.n_val, w.n_test, w.d, w.has_privileged, w.has_scores) == (400, 4000, 2000, 2, True, True)
    assert DATASETS["parkinson_speech"].has_privileged and DATASETS["bank_marketing"].has_privileged
    bcw = "402c585309c399237740f635ef9919dc512cca12cbeb20de5e563a4593f22b64"  # MANIFEST.md
    assert dataset_checksums("breast_cancer_wisconsin_351") == {"breast_cancer/breast-cancer-wisconsin.data": bcw}
    assert dataset_checksums("w_mixture") == {}


@pytest.mark.parametrize("name", list(UCI))
def test_uci_sets_against_the_files(data_dir, name):
    n_tr, n_te, d, n_rows, counts = UCI[name]
    X, y = _reference(name)
    assert X.shape == (n_rows, d)
    if counts is not None:
        assert (int(np.sum(y == 1)), int(np.sum(y == -1))) == counts
    for seed in (0, 1):
        s = _load(name, data_dir, seed)
        assert s.X_train.shape == (n_tr, d) and s.X_test.shape == (n_te, d) and s.d == d and s.seed == seed
        assert s.scores is None and s.X_priv is None and s.X_val is None
        tr, te = stratified_split_indices(y, n_tr, seed)
        ref_tr, ref_te = _ref_scale(X[tr], X[te])
        np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
        np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
        np.testing.assert_array_equal(s.y_train, y[tr])
        np.testing.assert_array_equal(s.y_test, y[te])
        # stratified: the training share of each class is the file's up to rounding
        assert abs(np.sum(s.y_train == 1) - n_tr * np.mean(y == 1)) < 1.0
    assert not np.array_equal(_load(name, data_dir, 0).X_train, _load(name, data_dir, 1).X_train)


def test_mammographic_complete_rows_drop_a_missing_bi_rads_too():
    """Seed 003's 830 rows are complete in every column: one row misses only its BI-RADS."""
    rows = _rows("mammographic/mammographic_masses.data")
    assert len(rows) == 961
    assert sum("?" not in r[1:] for r in rows) == 831 and sum("?" not in r for r in rows) == 830


# ------------------------------------------------------------------------------ the W toy
def _posterior_scipy(X):
    pos, neg = w_mixture_centers()
    cov = W_SIGMA**2 * np.eye(2)
    p = sum(multivariate_normal(c, cov).pdf(X) for c in pos)
    n = sum(multivariate_normal(c, cov).pdf(X) for c in neg)
    return p / (p + n)


def test_w_mixture_shape_and_posterior():
    pos, neg = w_mixture_centers()
    assert pos.shape == (17, 2) and np.allclose(neg - pos, [0.0, 1.2])
    # the W: its 5 vertices are components, the middle one at the top
    for v in ((-2, 1), (-1, -1), (0, 1), (1, -1), (2, 1)):
        assert np.isclose(pos, v).all(axis=1).any()
    X, y = make_w_mixture(3000, seed=7)
    p = w_mixture_posterior(X)
    np.testing.assert_allclose(p, _posterior_scipy(X), rtol=1e-10, atol=1e-12)
    # calibrated: among points with posterior in a bin, the share of +1 labels is the posterior
    # (binomial sd <= 0.5 / sqrt(count); allow 4 sd)
    for lo in np.arange(0.0, 1.0, 0.2):
        sel = (p >= lo) & (p < lo + 0.2)
        assert abs(np.mean(y[sel] == 1) - p[sel].mean()) < 4 * 0.5 / np.sqrt(sel.sum())
    # Bayes error about 10.7% (documented); sd of a 3000-point estimate ~0.006
    assert abs(np.mean(np.where(p > 0.5, 1.0, -1.0) != y) - 0.107) < 0.025


def test_w_mixture_seeding():
    a, ya = make_w_mixture(500, seed=3)
    b, yb = make_w_mixture(200, seed=3)
    np.testing.assert_array_equal(a[:200], b)  # a larger sample extends a smaller one
    np.testing.assert_array_equal(ya[:200], yb)
    c, _ = make_w_mixture(200, seed=4)
    assert not np.array_equal(b, c)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        make_w_mixture(10, seed=-1)


def test_w_mixture_data_set(tmp_path):
    s = load_dataset("w_mixture", seed=2, data_dir=tmp_path)
    again = load_dataset("w_mixture", seed=2, data_dir=tmp_path)
    other = load_dataset("w_mixture", seed=3, data_dir=tmp_path)
    assert s.X_train.shape == (400, 2) and s.X_val.shape == (4000, 2) and s.X_test.shape == (2000, 2)
    assert s.y_val.shape == (4000,) and set(np.unique(s.y_val)) == {-1.0, 1.0}
    np.testing.assert_array_equal(s.X_val, again.X_val)
    assert not np.array_equal(s.X_train, other.X_train)
    # scores: the true probability of the observed label; the privileged feature: the same, scaled
    # by its training min and max; recomputed here from the unscaled points of the same seeds
    ss = np.random.SeedSequence(2)
    X_raw, y_raw = make_w_mixture(400, np.random.SeedSequence(ss.entropy, spawn_key=(3,)))
    np.testing.assert_array_equal(s.y_train, y_raw)
    p = _posterior_scipy(X_raw)
    q = np.where(y_raw > 0, p, 1 - p)
    np.testing.assert_allclose(s.scores, q, rtol=1e-10)
    np.testing.assert_allclose(s.X_priv[:, 0], (q - q.min()) / np.ptp(q), atol=1e-10)
    # features scaled by the training min/max, validation and test with the same map
    X_val_raw, _ = make_w_mixture(4000, np.random.SeedSequence(ss.entropy, spawn_key=(4,)))
    ref_tr, ref_val = _ref_scale(X_raw, X_val_raw)
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_val, ref_val, atol=1e-12)
