"""Weighted SVM training: KKT conditions, LIBSVM sign conventions, engine agreement."""
import numpy as np
import pytest
from sklearn.svm import SVC

import wsvm_span as ws
from conftest import make_problem

CASES = [(s, l, w) for s in range(6) for l, w in ((60, "class"), (150, "class"), (80, "instance"))]


def kkt_violation(model, K):
    """Largest violation of the weighted-SVM KKT conditions (method.md section 1)."""
    a, C, yf = model.alpha, model.C, model.margins
    free = (a > 0) & (a < C)
    v = [
        abs(float(np.dot(a, model.y))) / C.max(),  # sum a_i y_i = 0
        float(np.max(np.maximum(0, 1 - yf[a == 0]), initial=0)),  # non-SV: y f >= 1
        float(np.max(np.abs(yf[free] - 1), initial=0)),  # in-bound: y f = 1
        float(np.max(np.maximum(0, yf[a == C] - 1), initial=0)),  # bounded: y f <= 1
    ]
    assert np.all(a >= 0) and np.all(a <= C)
    return max(v)


@pytest.mark.parametrize("seed,l,weighting", CASES)
def test_solution_satisfies_kkt(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    model = ws.fit_svm(p.K, p.y, p.C, tol=1e-9)
    # LIBSVM caches kernel rows in single precision (Qfloat, relative rounding 6e-8),
    # so its margins are accurate to about 6e-8 * sum_j a_j |K_ij| <= 6e-8 * sum_j a_j.
    assert kkt_violation(model, p.K) < 1e-7 * max(1.0, model.alpha.sum())
    # the index sets partition the SVs as method.md defines them
    assert np.array_equal(np.union1d(model.inbound, model.bounded), model.support)
    assert np.all(model.alpha[model.bounded] == model.C[model.bounded])


@pytest.mark.parametrize("seed", range(5))
def test_engines_agree_on_class_weights(seed):
    p = make_problem(seed, 120, "class")
    a = ws.fit_svm(p.K, p.y, p.C, engine="libsvm", tol=1e-10)
    b = ws.fit_svm(p.K, p.y, p.C, engine="sklearn", tol=1e-10)
    assert a.engine == "libsvm" and b.engine == "sklearn"
    np.testing.assert_allclose(a.alpha, b.alpha, atol=1e-6 * p.C.max())
    assert abs(a.b - b.b) < 1e-6
    np.testing.assert_array_equal(a.support, b.support)


@pytest.mark.parametrize("seed", range(3))
def test_decision_function_matches_libsvm_on_raw_features(seed):
    """Independent route: LIBSVM computing its own RBF kernel from the features."""
    p = make_problem(seed, 100, "instance")
    model = ws.fit_svm(p.K, p.y, p.C, tol=1e-10)
    svc = SVC(C=1.0, kernel="rbf", gamma=p.gamma, tol=1e-10).fit(p.X, p.y, sample_weight=p.C)
    Xnew = np.random.default_rng(seed).standard_normal((50, p.X.shape[1]))
    f = model.decision_function(ws.rbf_kernel(Xnew, p.X, p.gamma))
    np.testing.assert_allclose(f, svc.decision_function(Xnew), atol=1e-6)


def test_libsvm_label_order_does_not_flip_signs():
    """LIBSVM orients sv_coef and rho by the first label it sees: both orders must agree."""
    p = make_problem(3, 80, "class")
    order = np.argsort(-p.y, kind="stable")  # +1 first
    rev = order[::-1]  # -1 first
    for idx in (order, rev):
        K, y, C = p.K[np.ix_(idx, idx)], p.y[idx], p.C[idx]
        m = ws.fit_svm(K, y, C, engine="libsvm", tol=1e-10)
        ref = ws.fit_svm(K, y, C, engine="sklearn", tol=1e-10)
        np.testing.assert_allclose(m.decision_train, ref.decision_train, atol=1e-6)


def test_libsvm_engine_rejects_instance_weights():
    p = make_problem(0, 40, "instance")
    with pytest.raises(ValueError, match="class weights only"):
        ws.fit_svm(p.K, p.y, p.C, engine="libsvm")


def test_libsvm_keeps_zero_kernel_values():
    """Far-apart points give K_ij = 0 exactly; LIBSVM's precomputed rows must keep them."""
    X = np.array([[0.0], [0.1], [100.0], [100.1], [0.05], [100.05]])
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0, 1.0])
    K = ws.rbf_kernel(X, None, 1.0)
    assert (K == 0).any()
    a = ws.fit_svm(K, y, 1.0, engine="libsvm", tol=1e-10)
    b = ws.fit_svm(K, y, 1.0, engine="sklearn", tol=1e-10)
    np.testing.assert_allclose(a.decision_train, b.decision_train, atol=1e-7)
