"""Experiment 6 generator: class priors and per-class moments, seeding, the ringnorm split."""

from __future__ import annotations

import numpy as np
import pytest

from wsvm_span.data import DATASETS, load_dataset, make_ringnorm_variant

N = 100_000
D = 20


@pytest.fixture(scope="module")
def sample():
    return make_ringnorm_variant(N, D, seed=2024)


def test_shapes_and_labels(sample):
    X, y = sample
    assert X.shape == (N, D) and y.shape == (N,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_class_prior(sample):
    _, y = sample
    p = np.mean(y == 1)
    # Binomial(N, 0.3): sd = sqrt(0.3 * 0.7 / N) = 0.00145; allow 5 sd
    assert abs(p - 0.3) < 5 * np.sqrt(0.3 * 0.7 / N)


def test_class_moments(sample):
    """Per coordinate: +1 ~ N(1, 1), -1 ~ N(0, 4); independent coordinates.

    Tolerances are 5 standard errors (the chance that any of the 20 coordinates exceeds
    them by luck is ~1e-5): mean SE = sigma / sqrt(n); variance SE = sigma^2 sqrt(2 / (n - 1));
    correlation SE ~ 1 / sqrt(n).
    """
    X, y = sample
    for label, mean, var in ((1.0, 1.0, 1.0), (-1.0, 0.0, 4.0)):
        Z = X[y == label]
        n = Z.shape[0]
        m = Z.mean(axis=0)
        v = Z.var(axis=0, ddof=1)
        assert np.all(np.abs(m - mean) < 5 * np.sqrt(var / n)), (label, m)
        assert np.all(np.abs(v - var) < 5 * var * np.sqrt(2 / (n - 1))), (label, v)
        corr = np.corrcoef(Z[:, :5], rowvar=False)[np.triu_indices(5, 1)]
        assert np.all(np.abs(corr) < 5 / np.sqrt(n)), (label, corr)


def test_seeding_is_deterministic_and_nested():
    X1, y1 = make_ringnorm_variant(1024, 40, seed=7)
    X2, y2 = make_ringnorm_variant(1024, 40, seed=7)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    Xs, ys = make_ringnorm_variant(128, 40, seed=7)  # smaller l = prefix of the larger sample
    np.testing.assert_array_equal(Xs, X1[:128])
    np.testing.assert_array_equal(ys, y1[:128])
    X3, _ = make_ringnorm_variant(1024, 40, seed=8)
    assert not np.array_equal(X1, X3)


def test_bad_arguments():
    with pytest.raises(ValueError):
        make_ringnorm_variant(0, 20, seed=0)
    with pytest.raises(ValueError):
        make_ringnorm_variant(10, 20, seed=-1)


def test_ringnorm_split():
    s = load_dataset("ringnorm_d40_l256", seed=3)
    assert s.X_train.shape == (256, 40) and s.X_test.shape == (2000, 40)
    assert s.d == 40 and s.seed == 3 and s.realization is None and s.scores is None
    assert s.checksums == {}
    assert s.X_train.min() == 0.0 and s.X_train.max() == 1.0
    assert s.X_train.flags.c_contiguous and s.X_test.dtype == np.float64
    # training points: the generator's with this seed, scaled by their min/max
    X, y = make_ringnorm_variant(256, 40, seed=3)
    np.testing.assert_array_equal(s.y_train, y)
    lo, hi = X.min(axis=0), X.max(axis=0)
    np.testing.assert_allclose(s.X_train, (X - lo) / (hi - lo), atol=1e-12)
    # test points: independent of the training points, the same for every l
    other = load_dataset("ringnorm_d40_l128", seed=3)
    np.testing.assert_array_equal(other.y_test, s.y_test)
    assert not np.array_equal(s.y_test[:256], s.y_train)
    assert abs(np.mean(s.y_test == 1) - 0.3) < 5 * np.sqrt(0.21 / 2000)
    assert not np.array_equal(load_dataset("ringnorm_d40_l256", seed=4).y_test, s.y_test)


def test_any_d_and_l_by_name():
    spec = DATASETS["ringnorm_d3_l50"]
    assert (spec.d, spec.n_train, spec.n_test) == (3, 50, 2000)
    s = load_dataset("ringnorm_d3_l50")
    assert s.X_train.shape == (50, 3)
