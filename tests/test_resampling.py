"""K-fold CV and exact LOO against independent routes (LIBSVM on raw features)."""
import numpy as np
import pytest
from sklearn.svm import SVC

import wsvm_span as ws
from conftest import make_problem


def svc_on_features(p, idx):
    """LIBSVM computing its own RBF kernel: independent of the kernel cache and slicing."""
    return SVC(C=1.0, kernel="rbf", gamma=p.gamma, tol=1e-10).fit(
        p.X[idx], p.y[idx], sample_weight=p.C[idx])


def test_stratified_folds_are_balanced_and_deterministic():
    y = np.array([1.0] * 23 + [-1.0] * 57)
    folds = ws.stratified_folds(y, 5, seed=3)
    assert np.array_equal(folds, ws.stratified_folds(y, 5, seed=3))
    assert not np.array_equal(folds, ws.stratified_folds(y, 5, seed=4))
    for label in (1.0, -1.0):
        counts = np.bincount(folds[y == label], minlength=5)
        assert counts.max() - counts.min() <= 1
    assert np.bincount(folds).max() - np.bincount(folds).min() <= 1


@pytest.mark.parametrize("seed,weighting", [(0, "class"), (1, "instance"), (2, "class")])
def test_cv_matches_independent_retraining(seed, weighting):
    p = make_problem(seed, 100, weighting)
    folds = ws.stratified_folds(p.y, 5, seed=seed)
    got = ws.kfold_cv_error(p.K, p.y, p.C, folds=folds, tol=1e-10)
    errors = 0
    for f in range(5):
        train, held = folds != f, folds == f
        svc = svc_on_features(p, np.flatnonzero(train))
        errors += int(np.sum(-p.y[held] * svc.decision_function(p.X[held]) >= 0))
    assert got == errors / 100


@pytest.mark.parametrize("seed,weighting", [(0, "class"), (3, "instance"), (5, "imbalanced")])
def test_loo_matches_brute_force_over_all_points(seed, weighting):
    """Brute force retrains without EVERY point, so it also checks that non-SVs never err."""
    p = make_problem(seed, 50, weighting)
    errors = 0
    everyone = np.arange(50)
    for i in everyone:
        rest = np.delete(everyone, i)
        svc = svc_on_features(p, rest)
        errors += int(-p.y[i] * svc.decision_function(p.X[i:i + 1])[0] >= 0)
    assert ws.loo_error(p.K, p.y, p.C, tol=1e-10) == errors / 50


def test_xi_alpha_and_test_error_recomputed_independently():
    p = make_problem(7, 120, "instance")
    model = ws.fit_svm(p.K, p.y, p.C, tol=1e-10)
    svc = svc_on_features(p, np.arange(120))
    alpha = np.zeros(120)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    xi = np.maximum(0, 1 - p.y * svc.decision_function(p.X))
    R2 = p.K.max() - p.K.min()
    assert ws.xi_alpha_bound(model, p.K) == np.mean(2 * alpha * R2 + xi - 1 >= 0)
    Xt = np.random.default_rng(0).standard_normal((300, 3))
    yt = np.where(Xt[:, 0] > 0, 1.0, -1.0)
    expected = np.mean(svc.predict(Xt) != yt)
    assert ws.test_error(model, ws.rbf_kernel(Xt, p.X, p.gamma), yt) == expected


def test_cv_rejects_single_class_fold():
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0])
    K = np.eye(10)
    folds = np.array([0, 0, 1, 1, 1, 1, 1, 2, 2, 2])
    with pytest.raises(ValueError, match="single class"):
        ws.kfold_cv_error(K, y, 1.0, folds=folds)


def test_cached_fold_kernels_give_the_same_cv_error():
    """Issue 8: the folds' kernels sliced once per grid give exactly the CV error of slicing per model."""
    p = make_problem(5, 90, "instance")
    folds = ws.stratified_folds(p.y, 5, seed=2)
    cache = ws.FoldKernels(p.K, folds)
    assert ws.FoldKernels.nbytes(folds) == sum(8 * K.size for *_, K in cache.parts)
    for scale in (0.25, 1.0, 8.0):
        C = scale * p.C
        assert ws.kfold_cv_error(p.K, p.y, C, folds=folds, fold_kernels=cache) == ws.kfold_cv_error(
            p.K, p.y, C, folds=folds)
    with pytest.raises(ValueError, match="other folds"):
        ws.kfold_cv_error(p.K, p.y, p.C, folds=ws.stratified_folds(p.y, 5, seed=3), fold_kernels=cache)
