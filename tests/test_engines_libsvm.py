"""Weighted SVM training: KKT conditions, LIBSVM sign conventions, engine agreement."""
import numpy as np
import pytest
from sklearn.svm import SVC

import wsvm_span as ws
from conftest import make_problem

CASES = [(s, l, w) for s in range(6) for l, w in ((60, "class"), (150, "class"), (80, "instance"))]


def kkt_violation(a, y, C, f):
    """Largest violation of the weighted-SVM KKT conditions (method.md section 1) of a dual solution a with
    decision values f on the training points; the sets by the values of a themselves (LIBSVM puts an alpha
    that reaches a bound exactly on it)."""
    yf = y * f
    free = (a > 0) & (a < C)
    return max(
        abs(float(np.dot(a, y))) / C.max(),  # sum a_i y_i = 0
        float(np.max(np.maximum(0, 1 - yf[a == 0]), initial=0)),  # non-SV: y f >= 1
        float(np.max(np.abs(yf[free] - 1), initial=0)),  # in-bound: y f = 1
        float(np.max(np.maximum(0, yf[a == C] - 1), initial=0)),  # bounded: y f <= 1
    )


@pytest.mark.parametrize("seed,l,weighting", CASES)
def test_solution_satisfies_kkt(seed, l, weighting):
    """LIBSVM's own solution, read in the test from scikit-learn's SVC (per-instance C_i = C * sample_weight_i),
    satisfies the KKT conditions; the model the library builds from it has LIBSVM's alphas, support vectors and
    bounded set (the alphas LIBSVM put exactly on C_i), not values snapped into place."""
    p = make_problem(seed, l, weighting)
    svc = SVC(C=1.0, kernel="precomputed", tol=1e-9).fit(p.K, p.y, sample_weight=p.C)
    raw = np.zeros(l)
    raw[svc.support_] = np.abs(svc.dual_coef_[0])
    assert np.all(raw >= 0) and np.all(raw <= p.C)  # LIBSVM's box, as it returned it
    # LIBSVM caches kernel rows in single precision (Qfloat, relative rounding 6e-8),
    # so its margins are accurate to about 6e-8 * sum_j a_j |K_ij| <= 6e-8 * sum_j a_j.
    f = p.K[:, svc.support_] @ svc.dual_coef_[0] + svc.intercept_[0]  # SVC's decision values (+1 = classes_[1])
    np.testing.assert_array_equal(np.sign(svc.dual_coef_[0]), p.y[svc.support_])  # dual_coef_ = y_i a_i
    assert kkt_violation(raw, p.y, p.C, f) < 1e-7 * max(1.0, raw.sum())
    model = ws.fit_svm(p.K, p.y, p.C, tol=1e-9)
    np.testing.assert_array_equal(model.support, np.sort(svc.support_))
    np.testing.assert_array_equal(model.bounded, np.flatnonzero(raw == p.C))
    np.testing.assert_array_equal(model.inbound, np.flatnonzero((raw > 0) & (raw < p.C)))
    np.testing.assert_allclose(model.alpha, raw, rtol=1e-12, atol=0)
    assert model.bounded.size and model.inbound.size  # both sets occur


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
